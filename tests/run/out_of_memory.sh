#!/bin/sh
# Issue 9 E: running out of memory is TS_ERR_NOMEM through the context (a
# clean "out of memory" error, exit status 1), never abort() or a crash.
# The address space is limited (ulimit -v) so that allocations fail at
# many different points of a compile of a large file and of a small run.
# Sanitizer builds reserve terabytes of address space and cannot start
# under a limit: there the test reports itself skipped (77).
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
( ulimit -v 400000 && "$tool" --help >/dev/null 2>&1 ) || { echo "skipped: the tool cannot start under ulimit -v (sanitizer build?)"; exit 77; }
fails=0
fail() { echo "FAILED: $*"; fails=$((fails + 1)); }
python3 - "$d/big.py" <<'PY'
import sys
out = ["import tilelang.language as T", ""]
for i in range(20000):
    out.append(f"def helper_{i}(x):\n    return x + {i}\n")
out.append('''
def kern(n=4):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            A[0] = helper_19999(1)

    return main
''')
open(sys.argv[1], "w").write("\n".join(out))
PY
for lim in 8000 12000 16000 24000 32000 48000 64000 96000 128000; do
  ( ulimit -v $lim; "$tool" compile "$d/big.py" --entry kern >/dev/null 2>"$d/err" ); rc=$?
  if [ $rc -ne 0 ]; then
    [ $rc -eq 1 ] || { fail "compile under ulimit -v $lim: status $rc"; cat "$d/err"; continue; }
    grep -q "error: " "$d/err" || { fail "compile under ulimit -v $lim: no error message"; cat "$d/err"; }
  fi
  ( ulimit -v $lim; "$tool" run examples/elementwise_add.py --entry elementwise_add -D M=40 -D N=70 >/dev/null 2>"$d/err" ); rc=$?
  if [ $rc -ne 0 ]; then
    [ $rc -eq 1 ] || { fail "run under ulimit -v $lim: status $rc"; cat "$d/err"; continue; }
    grep -q "error: " "$d/err" || { fail "run under ulimit -v $lim: no error message"; cat "$d/err"; }
  fi
done
[ $fails -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
echo ok
