#!/bin/sh
# Issue 9 D: checked kernels on the C target.  Out-of-bounds accesses on a
# multi-block grid, many threads, negative indices, atomics: each is one
# clean error (exit 1, nothing but the run header on stdout) naming the
# kernel, the buffer, the index and the source line; --no-check-bounds
# removes the checks from the generated code, and the default keeps them.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAILED: $*"; fails=$((fails + 1)); }
cat >"$d/k.py" <<'PY'
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def add(M, N, bm=32, bn=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm)) as (bx, by):
            for i, j in T.Parallel(bm, bn):
                C[by * bm + i, bx * bn + j] = A[by * bm + i, bx * bn + j] + B[by * bm + i, bx * bn + j]

    return main


@tilelang.jit(out_idx=[-1])
def back(n):
    @T.prim_func
    def kback(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 16)) as bx:
            for i in T.Parallel(16):
                if bx * 16 + i < n:
                    B[bx * 16 + i] = A[bx * 16 + i - 1]

    return kback


@tilelang.jit(out_idx=[-1])
def hist(n):
    @T.prim_func
    def khist(A: T.Tensor((n,), "int32"), H: T.Tensor((4,), "int32")):
        with T.Kernel(1) as bx:
            for i in T.serial(n):
                T.atomic_add(H[A[i] - 9], 1)

    return khist
PY
# expect 'entry' 'words' args...
expect() {
  entry=$1; want=$2; shift 2
  timeout 120 "$tool" run "$d/k.py" --entry "$entry" "$@" >"$d/out" 2>"$d/err"
  rc=$?
  [ $rc -eq 1 ] || { fail "[$entry $*] exit status $rc (want 1)"; cat "$d/err"; return; }
  grep -Eq "^$d/k.py:[0-9]+:[0-9]+: error: $want" "$d/err" || { fail "[$entry $*] message"; cat "$d/err"; }
  [ "$(grep -c . "$d/out")" -le 1 ] || { fail "[$entry $*] stdout has more than the run header"; cat "$d/out"; }
  [ "$(grep -c 'error:' "$d/err")" -eq 1 ] || { fail "[$entry $*] not exactly one error"; cat "$d/err"; }
}
# many blocks on many threads run past a 100 x 100 tensor: one report
expect add "kernel 'main': out-of-bounds (load from|store to) global buffer '[ABC]': index 1[0-9][0-9] of dimension [01] is outside \[0, 100\)" -D M=100 -D N=100 --threads 4
# the source line and a caret follow the message
grep -q "C\[by \* bm + i, bx \* bn + j\] = A\[" "$d/err" || fail "source line missing"
grep -q '^ *\^$' "$d/err" || fail "caret missing"
# a negative index (A[-1] in block 0)
expect back "kernel 'kback': out-of-bounds load from global buffer 'A': index -1 of dimension 0 is outside \[0, 40\) in block \(0, 0, 0\)" -D n=40
# an atomic add at an index read from data (random int32 data in [-8, 8], so A[i] - 9 < 0)
expect hist "kernel 'khist': out-of-bounds atomic add to global buffer 'H': index -[0-9]+ of dimension 0 is outside \[0, 4\)" -D n=64 --seed 3

# the checks are in the generated code by default, and gone with --no-check-bounds
"$tool" compile "$d/k.py" --entry add -D M=64 -D N=64 --emit c >"$d/c" 2>&1 || fail "compile --emit c"
grep -q 'ts_ck(ts_a, ts_b, ts_jb' "$d/c" || fail "default C code has no bounds checks"
"$tool" compile "$d/k.py" --entry add -D M=64 -D N=64 --emit c --no-check-bounds >"$d/c" 2>&1 || fail "compile --no-check-bounds"
grep -q 'ts_ck(' "$d/c" && fail "--no-check-bounds left checks in"
# in-bounds kernels are unaffected: 64 x 64 with 32 x 32 tiles runs clean
"$tool" run "$d/k.py" --entry add -D M=64 -D N=64 --seed 2 >"$d/out" 2>&1 || { fail "in-bounds run"; cat "$d/out"; }

[ $fails -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
echo ok
