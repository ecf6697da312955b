#!/bin/sh
# Issue 9 D on the GPU: --check-bounds on the CUDA target reports an
# out-of-bounds access like the C target does (kernel, buffer, index,
# source line; exit status 1), and in-bounds kernels, checked, still pass
# their check against the C target.  Every case prints what it ran and its
# result, and the last line says how many passed and failed: a run that
# prints nothing, or not "ok", has not shown anything.  Needs a CUDA
# device: skipped (77), saying why, only when the driver reports none.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fails=0 passes=0
fail() { echo "FAILED: $*"; fails=$((fails + 1)); }
pass() { echo "passed: $*"; passes=$((passes + 1)); }
echo "cuda_bounds_check: $("$tool" --version 2>&1 | head -1), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
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
# (the only skip: the driver or device is absent, in the library's own words)
"$tool" run "$d/k.py" --entry add_ok -D M=64 -D N=64 --target cuda >"$d/out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "no CUDA driver found\|no CUDA device" "$d/out"; then
  echo "skipped: $(grep -o "no CUDA[^(]*" "$d/out" | head -1)"
  exit 77
fi
[ $rc -eq 0 ] && pass "plain CUDA run of an in-bounds kernel (64x64)" || { cat "$d/out"; fail "plain CUDA run: exit status $rc"; }

# one row past the tensors in the last block row and column (M = N = 100, 32x32 tiles)
"$tool" run "$d/k.py" --entry add -D M=100 -D N=100 --target cuda --check-bounds >"$d/out" 2>"$d/err"
rc=$?
echo "  out-of-bounds kernel, --check-bounds: exit status $rc; stderr:"
sed 's/^/    /' "$d/err" | head -8
[ $rc -eq 1 ] && pass "out-of-bounds CUDA kernel exits with status 1" || fail "out-of-bounds CUDA kernel: exit status $rc (want 1)"
if grep -Eq "k.py:[0-9]+:[0-9]+: error: kernel 'main': out-of-bounds access to global buffer '[ABC]': index 1[0-9][0-9] of dimension [01] is outside \\[0, 100\\) in block" "$d/err"; then
  pass "message names the kernel, the buffer, the index and the source line"
else
  fail "CUDA out-of-bounds message (want file:line:col: error: kernel 'main': out-of-bounds access to ... buffer ...)"
fi

# the same unguarded kernel where the tiles divide the tensors: checked, and nothing to report
"$tool" run "$d/k.py" --entry add -D M=96 -D N=96 --target cuda --check-bounds --check-target c >"$d/out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^PASS$' "$d/out" && pass "checked kernel with whole tiles (96x96) passes against the C target" ||
  { cat "$d/out"; fail "checked whole-tile CUDA kernel: exit status $rc"; }

"$tool" run "$d/k.py" --entry add_ok -D M=100 -D N=100 --target cuda --check-bounds --check-target c >"$d/out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^PASS$' "$d/out" && pass "checked guarded kernel (100x100) passes against the C target" ||
  { cat "$d/out"; fail "checked in-bounds CUDA kernel: exit status $rc"; }

# an example with shared memory and a pipelined gemm, checked
"$tool" run examples/gemm.py --entry matmul -D M=100 -D N=72 -D K=52 -D block_M=32 -D block_N=32 -D block_K=16 \
  --target cuda --check-bounds --check-target c --seed 5 >"$d/out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^PASS$' "$d/out" && pass "checked gemm with partial tiles passes against the C target" ||
  { cat "$d/out"; fail "checked gemm: exit status $rc"; }

echo "$passes passed, $fails failed"
[ $fails -eq 0 ] || exit 1
echo ok
