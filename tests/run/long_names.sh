#!/bin/sh
# Issue 9: two buffers whose names share a 255-character prefix hung the IR
# printer (its name-uniquing retried a truncated candidate forever).  Now
# they print under their full names, the third same-named buffer as NAME_1,
# and the kernel compiles and runs on the C target.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
n=$(printf 'x%.0s' $(seq 1 300))
cat >"$d/long.py" <<PY
import tilelang.language as T


def kern(n=4):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            ${n}a = T.alloc_shared((n,), "float32")
            ${n}b = T.alloc_shared((n,), "float32")
            ${n}a = T.alloc_shared((n,), "float32")
            T.copy(A, ${n}a)
            T.copy(${n}a, ${n}b)
            T.copy(${n}b, A)

    return main
PY
timeout 20 "$tool" compile "$d/long.py" --entry kern >"$d/ir" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$d/ir"; fail "compile (status $rc; 124: hung)"; }
grep -q "^ *${n}a = alloc_shared" "$d/ir" || fail "first buffer's full name"
grep -q "^ *${n}b = alloc_shared" "$d/ir" || fail "second buffer's full name"
grep -q "^ *${n}a_1 = alloc_shared" "$d/ir" || fail "the redefined buffer as NAME_1"
timeout 60 "$tool" run "$d/long.py" --entry kern --seed 3 >"$d/out" 2>&1 || { cat "$d/out"; fail "run"; }
# T.print lines are never cut (the generated helper had a 1 KB line buffer)
m=$(printf 'm%.0s' $(seq 1 3000))
cat >"$d/pr.py" <<PY
import tilelang.language as T


def kern(n=4):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            T.print(A[1], msg="${m}")

    return main
PY
timeout 60 "$tool" run "$d/pr.py" --entry kern --seed 3 >"$d/out" 2>&1 || { cat "$d/out"; fail "T.print run"; }
grep -q "^${m}: block (0, 0, 0): " "$d/out" || fail "T.print line cut"
echo ok
