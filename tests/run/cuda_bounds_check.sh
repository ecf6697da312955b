#!/bin/sh
# Issue 9 D on the GPU: --check-bounds on the CUDA target reports an
# out-of-bounds access like the C target does (kernel, buffer, index,
# source line; exit status 1), and an in-bounds kernel still passes its
# check against the C target.  Needs a CUDA device: skipped (77) without.
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
            S = T.alloc_shared((bm, bn), "float32")
            T.copy(A[by * bm, bx * bn], S)
            for i, j in T.Parallel(bm, bn):
                C[by * bm + i, bx * bn + j] = S[i, j] + B[by * bm + i, bx * bn + j]

    return main


@tilelang.jit(out_idx=[-1])
def add_ok(M, N, bm=32, bn=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm)) as (bx, by):
            for i, j in T.Parallel(bm, bn):
                if by * bm + i < M and bx * bn + j < N:
                    C[by * bm + i, bx * bn + j] = A[by * bm + i, bx * bn + j] + B[by * bm + i, bx * bn + j]

    return main
PY
"$tool" run "$d/k.py" --entry add_ok -D M=64 -D N=64 --target cuda >"$d/out" 2>&1 ||
  { grep -qi "no CUDA\|driver\|device" "$d/out" && { echo "skipped: no CUDA device"; exit 77; }; cat "$d/out"; fail "plain CUDA run"; }

"$tool" run "$d/k.py" --entry add -D M=100 -D N=100 --target cuda --check-bounds >"$d/out" 2>"$d/err"
rc=$?
[ $rc -eq 1 ] || { fail "out-of-bounds CUDA kernel: exit status $rc"; cat "$d/err"; }
grep -Eq "k.py:[0-9]+:[0-9]+: error: kernel 'main': out-of-bounds access to global buffer '[ABC]': index 1[0-9][0-9] of dimension [01] is outside \[0, 100\) in block" "$d/err" ||
  { fail "CUDA out-of-bounds message"; cat "$d/err"; }
"$tool" run "$d/k.py" --entry add_ok -D M=100 -D N=100 --target cuda --check-bounds --check-target c >"$d/out" 2>&1 &&
  grep -q '^PASS$' "$d/out" || { fail "checked in-bounds CUDA kernel"; cat "$d/out"; }
[ $fails -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
echo ok
