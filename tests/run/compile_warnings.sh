#!/bin/sh
# Compile warnings on the command line (issue 5 A, the conflict fallback):
#  - two gemms fixing different layouts for one accumulator compile (the
#    fragments stay in shared memory) with exit status 0, the generated
#    code on stdout, and on stderr one `file:line:col: warning:` at the
#    second gemm naming the fragment, both layouts and the first gemm's
#    position, with the source line and a caret;
#  - `tilescale run` of the same kernel on the C target (no layouts there)
#    and the examples the bench compiles for CUDA print no warning.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

f=tests/golden/ir_layout_conflict.py
"$tool" compile $f --entry twoacc -D M=64 -D N=64 -D K=32 --target cuda --emit cuda >"$d/out" 2>"$d/err" ||
  { cat "$d/err"; fail "compile of $f failed"; }
grep -q "__global__" "$d/out" || fail "no CUDA source on stdout"
[ "$(grep -c ': warning: ' "$d/err")" = 1 ] || { cat "$d/err"; fail "want exactly one warning"; }
grep -qF "$f:23:15: warning: fragment Cl needs two layouts: mma_c(64 x 64, warps 4 x 1) for the accumulator of T.gemm (at $f:22:15) and mma_c(64 x 64, warps 1 x 4) for the accumulator of T.gemm (at $f:23:15); the kernel's fragments stay in shared memory" "$d/err" ||
  { cat "$d/err"; fail "the warning does not name the fragment, both layouts and both uses"; }
grep -qxF "                T.gemm(As, Bs, Cl, policy=T.GemmWarpPolicy.FullCol)" "$d/err" || fail "no source line"
grep -qxF "                  ^" "$d/err" || fail "no caret"
# the IR note says the same
"$tool" compile $f --entry twoacc -D M=64 -D N=64 -D K=32 --target cuda --dump-after layout_inference >"$d/ir" 2>/dev/null ||
  fail "--dump-after failed"
grep -q "^ *# fragments stay in shared memory: fragment Cl needs two layouts" "$d/ir" || fail "no IR note"

# no warning where nothing conflicts
"$tool" run $f --entry twoacc -D M=64 -D N=64 -D K=32 --target c >"$d/out" 2>"$d/err" || { cat "$d/err"; fail "run on C"; }
[ ! -s "$d/err" ] || { cat "$d/err"; fail "run on the C target printed something on stderr"; }
for spec in "gemm.py matmul -D M=256 -D N=256 -D K=256" "flash_attention.py flashattn -D batch=1 -D heads=2 -D seq_len=128 -D dim=64 -D is_causal=1" \
            "softmax.py softmax -D M=64 -D N=256" "rms_norm.py rms_norm -D M=64 -D N=256"; do
  set -- $spec
  ex=$1; ent=$2; shift 2
  "$tool" compile "examples/$ex" --entry "$ent" "$@" --target cuda --emit cuda >/dev/null 2>"$d/err" ||
    { cat "$d/err"; fail "compile of examples/$ex failed"; }
  [ ! -s "$d/err" ] || { cat "$d/err"; fail "examples/$ex printed something on stderr"; }
done
echo "compile warnings: ok"
