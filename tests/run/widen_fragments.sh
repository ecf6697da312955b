#!/bin/sh
# Fragments indexed by a T.Parallel nest's own loop variables past their
# declared extent (pass widen_fragments; doc/LANGUAGE.md "Fragments indexed
# past their extent"): widened to the loop's extent as TileLang's layout
# inference makes them, with one warning naming the fragment, both shapes
# and the loop variables at file:line:col, the source line and a caret.
#  - sink_rows (the attention-sink pattern) and grid2 run on the C target
#    against naive kernels without fragments, on random inputs;
#  - the CUDA target keeps them in registers (no shared-memory fallback
#    note) and prints the same one warning;
#  - what is not that pattern is still refused by check_bounds: a serial
#    loop, a shared buffer, an index of part of the nest, a fragment with a
#    view; and TileLang's attention-sink backward forward kernel (when the
#    examples are there) compiles with the warning.
# tests/unit/test_interp_examples.c runs the CUDA passes' IR of both thread
# by thread against the C target.
. tests/run/lib.sh
f=tests/run/kernels/widen_frag.py
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

check $f --entry sink_rows --target c --check-against sink_rows_naive
check $f --entry sink_rows --target c -D heads=2 -D block_M=32 -D N=16 -D threads=64 --check-against sink_rows_naive
check $f --entry grid2 --target c --check-against grid2_naive
check $f --entry grid2 --target c -D M=24 -D N=8 --check-against grid2_naive

# the warning: exactly one, at the first widening access, with the source line and caret
"$tool" compile $f --entry sink_rows --target c >"$d/out" 2>"$d/err" || { cat "$d/err"; fail "compile (c)"; }
[ "$(grep -c ': warning: ' "$d/err")" = 1 ] || { cat "$d/err"; fail "want exactly one warning"; }
grep -qF "$f:32:17: warning: fragment 'sinks' is declared [4] (line 27), but this T.Parallel nest indexes it at its loop variable (i) over [64]: it is widened to [64], as TileLang's layout inference gives it the loop's layout" "$d/err" ||
  { cat "$d/err"; fail "the warning does not name the fragment, its shapes and the loop"; }
grep -qxF "                    sinks[i] = Sinks[by] + i * 0.5" "$d/err" || { cat "$d/err"; fail "no source line"; }
grep -qxF "                    ^" "$d/err" || fail "no caret"
"$tool" compile $f --entry grid2 --target c >"$d/out" 2>"$d/err" || { cat "$d/err"; fail "compile grid2"; }
grep -qF "fragment 'f' is declared [2, 8] (line 70), but this T.Parallel nest indexes it at its loop variables (i, j) over [16, 32]: it is widened to [16, 32]" "$d/err" ||
  { cat "$d/err"; fail "grid2's warning"; }
# the IR after the pass has the widened shape
"$tool" compile $f --entry sink_rows --target c --dump-after widen_fragments >"$d/ir" 2>/dev/null || fail "--dump-after"
grep -q "sinks.*\[64\]" "$d/ir" || { grep -n sinks "$d/ir" | head -3; fail "the IR does not show sinks as [64]"; }

# CUDA: registers, one warning, no fallback
for e in sink_rows grid2; do
  TILESCALE_CUDA_ARCH=sm_90a "$tool" compile $f --entry $e --target cuda --emit cuda >"$d/cu" 2>"$d/err" ||
    { cat "$d/err"; fail "compile $e (cuda)"; }
  [ "$(grep -c ': warning: ' "$d/err")" = 1 ] || { cat "$d/err"; fail "$e (cuda): want exactly one warning"; }
  grep -q "shared memory" "$d/err" && { cat "$d/err"; fail "$e (cuda): fragments fell back to shared memory"; }
  grep -q "0 bytes of dynamic shared memory" "$d/cu" || { head -1 "$d/cu"; fail "$e (cuda): shared memory used"; }
done

# still refused
for how in serial shared partial view; do
  if "$tool" compile $f --entry refused -D how=$how --target c >"$d/out" 2>"$d/err"; then
    fail "refused how=$how compiled"
  fi
  grep -q "error: index i of .* reaches 63, outside its extent 4" "$d/err" || { cat "$d/err"; fail "how=$how: not check_bounds' error"; }
  grep -q "warning" "$d/err" && { cat "$d/err"; fail "how=$how: widened"; }
done

# TileLang's own attention-sink backward (its forward kernel), where the examples were fetched
ex=.tl-examples/attention_sink/example_mha_sink_bwd_bhsd.py
[ -f "$ex" ] || ex=/work/main/$ex
if [ -f "$ex" ]; then
  TILESCALE_CUDA_ARCH=sm_90a "$tool" compile "$ex" --entry flashattn_fwd -D batch=1 -D heads=1 -D seq_len=128 -D dim=64 \
    --target cuda --emit cuda >"$d/cu" 2>"$d/err" || { cat "$d/err"; fail "$ex flashattn_fwd"; }
  grep -q "fragment 'sinks' is declared \[1\] (line [0-9]*), but this T.Parallel nest indexes it at its loop variable (i) over \[64\]" "$d/err" ||
    { cat "$d/err"; fail "$ex: no warning"; }
fi
echo "widen fragments: ok"
