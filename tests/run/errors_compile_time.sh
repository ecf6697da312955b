#!/bin/sh
# Issue 9, part A: bad compile-time input is a clear error, never a crash,
# a hang, a wrapped value or silent acceptance.  Each case writes a small
# kernel factory whose body evaluates one expression (or passes one -D
# value) and requires: exit status 1 (not a signal, not 0), the diagnostic
# format `file:line:col: error:` or `tilescale: error:`, and the expected
# words.  The good cases check the exact Python value that reaches the IR.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAILED: $*"; fails=$((fails + 1)); }

# factory FILE EXPR: a kernel factory computing c = EXPR, stored into A[0]
factory() {
  cat >"$1" <<PY
import tilelang
import tilelang.language as T


def kern(n=4, flag=False):
    c = $2
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            if flag:
                A[1] = 1.0
            A[0] = c

    return main
PY
}

# bad 'EXPR or empty' 'expected words' [extra args...]
bad() {
  expr=$1; want=$2; shift 2
  factory "$d/k.py" "${expr:-0}"
  timeout 20 "$tool" compile "$d/k.py" --entry kern "$@" >"$d/out" 2>&1
  rc=$?
  if [ $rc -ne 1 ]; then fail "[$expr $*] exit status $rc (want 1)"; cat "$d/out"; return; fi
  if ! head -n1 "$d/out" | grep -Eq '^([^:]+:[0-9]+:[0-9]+|tilescale): error: '; then
    fail "[$expr $*] diagnostic format"; cat "$d/out"; return
  fi
  grep -Fq -- "$want" "$d/out" || { fail "[$expr $*] message lacks '$want'"; cat "$d/out"; }
}

# good 'EXPR' 'value as printed in the IR'
good() {
  factory "$d/k.py" "$1"
  timeout 20 "$tool" compile "$d/k.py" --entry kern >"$d/out" 2>&1 || { fail "[$1] rejected"; cat "$d/out"; return; }
  grep -Fq "A[0] = $2" "$d/out" || { fail "[$1] want A[0] = $2"; cat "$d/out"; }
}

# integer overflow and Python's edge cases
bad '(-9223372036854775807 - 1) // -1' 'does not fit in 64 bits'
bad '1 << 100000' 'integer overflow: 1 << 100000'
bad '10 ** 100000' 'integer overflow: 10 ** 100000'
bad '10 ** 1000000000000000000' 'integer overflow'
bad '1 << -1' 'negative shift count'
bad '1 >> -3' 'negative shift count'
bad '2**62 + 2**62' 'integer overflow'
bad '(-2**63) - 1' 'integer overflow'
bad '3037000500 * 3037000500' 'integer overflow'
bad '-(-9223372036854775807 - 1)' 'integer overflow'
bad '3 ** 40' 'integer overflow'
bad 'T.ceildiv(-9223372036854775807 - 1, 3)' 'overflow'
bad 'int(1e300)' 'does not fit in a 64-bit integer'
bad 'int(float("nan"))' 'NaN'
bad 'tilelang.next_power_of_2(2**62 + 1)' 'does not fit in 64 bits'
bad '~1.5' "operator '~'"
good '(-9223372036854775807 - 1) % -1' '0'
good '9223372036854775807 // -1' '-9.22337204e+18'
good '7 // -2' '-4.0'
good '-7 % 3' '2.0'
good '1 >> 100' '0.0'
good '-1 >> 100' '-1.0'
good '~True' '-2.0'
good '~5' '-6.0'
good '3 ** 39' '4.05255522e+18'
good '1 << 62' '4.61168602e+18'
good 'T.ceildiv(9223372036854775807, 2)' '4.61168602e+18'
good 'T.ceildiv(-7, 2)' '-3.0'

# ~ on a float inside a kernel (was "IR verification failed")
cat >"$d/inv.py" <<'PY'
import tilelang
import tilelang.language as T


def kern(n=4):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            S = T.alloc_shared((n,), "float32")
            T.copy(A, S)
            A[0] = ~S[1]

    return main


def kern2(n=4):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            A[0] = ~-T.infinity("float32")

    return main
PY
for e in kern kern2; do
  "$tool" compile "$d/inv.py" --entry $e >"$d/out" 2>&1
  rc=$?
  [ $rc -eq 1 ] || fail "~ on a float ($e): exit status $rc"
  grep -q "inv.py:[0-9]*:[0-9]*: error: operator '~' needs an integer or bool operand, not float32" "$d/out" ||
    { fail "~ on a float ($e) message"; cat "$d/out"; }
done

# -D values read as Python literals
bad '' 'extent 0 of tensor parameter' -D n=-100
bad '' 'not a Python number' -D n=010
bad '' 'does not fit in 64 bits' -D n=99999999999999999999999
bad '' 'not a Python number' -D n=12abc
bad '' "the -D value 'maybe' is used as a condition" -D flag=maybe
bad '' "the -D value 'true' is used as a condition" -D flag=true
good '0x10 + 0o10 + 0b10 + 1_000' '1026.0'
factory "$d/k.py" 0
"$tool" compile "$d/k.py" --entry kern -D n=0x10 >"$d/out" 2>&1 && grep -q 'float32\[16\]' "$d/out" ||
  { fail "-D n=0x10"; cat "$d/out"; }
"$tool" compile "$d/k.py" --entry kern -D n=00 >"$d/out" 2>&1 && grep -q 'float32\[0\]' "$d/out" ||
  { fail "-D n=00 (zero is a valid literal)"; cat "$d/out"; }
"$tool" compile "$d/k.py" --entry kern -D flag=True >"$d/out" 2>&1 && grep -q 'A\[1\] = 1' "$d/out" ||
  { fail "-D flag=True"; cat "$d/out"; }
"$tool" compile "$d/k.py" --entry kern -D flag=0 >"$d/out" 2>&1 && ! grep -q 'A\[1\] = 1' "$d/out" ||
  { fail "-D flag=0"; cat "$d/out"; }

[ $fails -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
echo ok
