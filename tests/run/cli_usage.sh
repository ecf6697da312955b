#!/bin/sh
# Issue 9 F, the command line itself:
#  - --version prints the version of the header, of the library (a C program
#    calling ts_version) and of the Python package, all the same;
#  - an unknown command, an unknown option, an option of another command:
#    each named as what it is, with the nearest spelling where one is close,
#    exit status 2, one `tilescale: error:` line; --help exits 0;
#  - `list`: the entries it names compile with the -D values it says are
#    required (and fail without them), on the golden's file and on every
#    example;
#  - every numeric option validated, in distributed runs too.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
# expect STATUS 'TEXT' ARGS...: exit status STATUS and TEXT (fixed string) on stderr
expect() {
  want_rc="$1"; want="$2"; shift 2
  "$tool" "$@" >"$d/out" 2>"$d/err"
  rc=$?
  [ $rc -eq "$want_rc" ] || { cat "$d/out" "$d/err"; fail "tilescale $*: exit status $rc, not $want_rc"; }
  grep -qF -- "$want" "$d/err" || { cat "$d/err"; fail "tilescale $*: no '$want'"; }
  [ "$want_rc" -eq 0 ] || grep -qE '^(tilescale|[^:]+:[0-9]+:[0-9]+): error: ' "$d/err" ||
    fail "tilescale $*: neither 'tilescale: error:' nor 'file:line:col: error:'"
}

# -- version --
v=$(sed -n 's/^#define TILESCALE_VERSION "\(.*\)"$/\1/p' include/tilescale.h)
[ -n "$v" ] || fail "no TILESCALE_VERSION in include/tilescale.h"
[ "$("$tool" --version)" = "tilescale $v" ] || fail "--version: '$("$tool" --version)', header says $v"
[ "$("$tool" run --version)" = "tilescale $v" ] || fail "run --version"
grep -q "^version = \"$v\"" pyproject.toml || fail "pyproject.toml's version is not $v"
grep -q "^__version__ = \"$v\"" python/tilescale/__init__.py || fail "python/tilescale's __version__ is not $v"

# -- usage errors --
expect 2 "unknown command 'rn'; did you mean 'run'?" rn examples/gemm.py --entry matmul
expect 2 "unknown command 'frobnicate' (the commands are run, compile, list, cache and launch)" frobnicate
expect 2 "the command comes first (tilescale run examples/gemm.py --entry NAME)" examples/gemm.py
expect 2 "unknown option '--chek-against'; did you mean '--check-against'?" run examples/gemm.py --entry matmul --chek-against x
expect 2 "unknown option '--zzzzzzzz'" run examples/gemm.py --entry matmul --zzzzzzzz
expect 2 "write the value as the next argument (--entry VALUE)" run examples/gemm.py --entry=matmul
expect 2 "--emit is an option of 'compile', not of 'run'" run examples/gemm.py --entry matmul --emit c
expect 2 "--seed is an option of 'run', not of 'compile'" compile examples/gemm.py --entry matmul --seed 1
expect 2 "--heap is an option of a distributed 'run' (--ranks N)" run examples/gemm.py --entry matmul --heap 100
expect 2 "--check-target is an option of a single-rank 'run'" run examples/gemm.py --entry matmul --ranks 2 --check-target c
expect 2 "'run' needs --entry NAME (\`tilescale list examples/gemm.py\` lists them)" run examples/gemm.py
expect 2 "'list' needs a FILE" list
expect 2 "unknown cache command 'clear'; did you mean 'clean'?" cache clear
expect 2 "--entry needs a value" run examples/gemm.py --entry
"$tool" --help >"$d/out" 2>&1 || fail "--help: non-zero exit"
grep -q "tilescale list FILE" "$d/out" || fail "--help does not mention list"
grep -q "tilescale cache info" "$d/out" || fail "--help does not mention cache"

# -- numeric options, distributed runs included --
dr="run tests/run/dist_bad.py --entry bad_peer -D P=2"
expect 2 "--ranks expects an integer" $dr --ranks abc
expect 2 "--ranks expects an integer" $dr --ranks 0
expect 2 "--ranks expects an integer from 1 to" $dr --ranks 100000
expect 2 "--heap expects an integer" $dr --ranks 2 --heap -5
expect 2 "--timeout expects a finite number" $dr --ranks 2 --timeout abc
expect 2 "--bench expects an integer" $dr --ranks 2 --bench 1x
expect 2 "--seed expects an integer" $dr --ranks 2 --seed 0x10
expect 2 "--atol expects a finite number" $dr --ranks 2 --atol inf
expect 2 "--shape expects an integer" $dr --ranks 2 --shape n=-1
# launch: the same error format, its numbers validated
expect 2 "tilescale: error: launch: unknown option '--bogus'" launch --bogus 1 -- true
expect 2 "-n expects an integer from 1 to" launch -n 0 -- true
expect 2 "-n expects an integer" launch -n two -- true
expect 2 "--timeout expects a finite number" launch -n 1 --timeout soon -- true
expect 2 "unknown command 'lanch'; did you mean 'launch'?" lanch -n 2 -- true
"$tool" launch --help | grep -q "^usage: tilescale launch" || fail "launch --help"
# the launcher's seed comes from the OS's entropy: two launches in the same second differ
s1=$(env -u TILESCALE_SEED "$tool" launch -n 1 -- sh -c 'echo $TILESCALE_SEED')
s2=$(env -u TILESCALE_SEED "$tool" launch -n 1 -- sh -c 'echo $TILESCALE_SEED')
[ -n "$s1" ] && [ "$s1" != "$s2" ] || fail "launch seeds $s1 and $s2 (the clock's second?)"
[ "$(TILESCALE_SEED=42 "$tool" launch -n 1 -- sh -c 'echo $TILESCALE_SEED')" = 42 ] || fail "TILESCALE_SEED=42 not kept"
TILESCALE_SEED=0x10 expect 2 "TILESCALE_SEED='0x10' is not a seed" launch -n 1 -- true
TILESCALE_SEED=abc TILESCALE_WORLD_SIZE=1 TILESCALE_RANK=0 expect 2 "TILESCALE_SEED='abc' is not a seed" $dr

# -- list: what it names compiles with what it says --
"$tool" list tests/golden/cli_list.py >"$d/list" || fail "list"
L=tests/golden/cli_list.py
"$tool" compile $L --entry factory -D M=8 -D N=8 >/dev/null 2>&1 || fail "listed factory does not compile"
"$tool" compile $L --entry factory -D M=8 >/dev/null 2>&1 && fail "factory compiled without its required N"
"$tool" compile $L --entry tuned -D M=8 -D K=8 -D block_M=32 >/dev/null 2>&1 || fail "listed nested factory"
"$tool" compile $L --entry eager -D factor=2.0 -D N=8 -D L=8 >/dev/null 2>&1 || fail "listed eager kernel"
"$tool" compile $L --entry direct >/dev/null 2>&1 || fail "listed prim_func"
"$tool" compile $L --entry helper >/dev/null 2>&1 && fail "helper (not listed) compiled"
# every entry listed in an example is one the compiler knows, and the first
# -D value it lists as required is the one the compiler asks for first
for f in examples/*.py examples/distributed/*.py; do
  "$tool" list "$f" >"$d/l" || fail "list $f"
  n=$(grep -c '^examples/.*:[0-9]*: ' "$d/l")
  [ "$n" -ge 1 ] || { cat "$d/l"; fail "list $f: $n entries"; }
  grep -q "(does not parse)" "$d/l" && fail "list $f: an example does not parse"
  awk '/^examples\/.*:[0-9]+: / { if (e != "") print e, r; e = $2; r = "-"; next }
       /^    -D .*=\.\.\.  \(required\)/ { if (r == "-") { r = $2; sub(/=.*/, "", r) } }
       END { if (e != "") print e, r }' "$d/l" >"$d/entries"
  while read -r e r; do
    echo x >>"$d/checked"
    "$tool" compile "$f" --entry "$e" >/dev/null 2>"$d/e" && [ "$r" = "-" ] && continue
    grep -q "no function '$e'\|is a .*, not a kernel" "$d/e" && { cat "$d/e"; fail "list $f: '$e' is not an entry"; }
    [ "$r" = "-" ] && continue
    grep -q "missing compile-time value for '$r' of '$e'" "$d/e" ||
      { cat "$d/e"; fail "list $f: '$e' first requires '$r' by the listing"; }
  done <"$d/entries"
done
[ "$(wc -l <"$d/checked")" -ge 30 ] || fail "only $(wc -l <"$d/checked") listed entries checked"
"$tool" list examples/gemm.py >"$d/l"
grep -q '^examples/gemm.py:12: matmul  (kernel factory, out_idx=\[-1\])$' "$d/l" || fail "gemm's matmul line"
grep -q '^    -D block_M=128$' "$d/l" || fail "gemm's block_M default"
grep -q '^    tensor A: T.Tensor((M, K), dtype)$' "$d/l" || fail "eager tensor A"
"$tool" run examples/gemm.py --entry matmul -D M=64 -D N=64 -D K=32 -D block_M=32 -D block_N=32 -D block_K=32 \
  --check-against matmul_naive >/dev/null || fail "the run line list suggests"
expect 1 "cannot read: No such file or directory" list "$d/none.py"
printf 'x = """never closed\n' >"$d/bad.py"
expect 1 "error:" list "$d/bad.py"
printf 'x = 1\n' >"$d/empty.py"
"$tool" list "$d/empty.py" | grep -q "no kernel entries" || fail "list of a file without entries"
echo ok
