#!/bin/sh
# Issue 9 A: a CUDA kernel that cannot run is an error at compile time (no
# GPU needed): more shared memory per block than the architecture has,
# naming the buffers and their bytes, and constant grid extents beyond
# CUDA's limits.  (It used to emit 40 GB of shared memory or a grid of
# 4,000,000,000 blocks without a word.)
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAILED: $*"; fails=$((fails + 1)); }
cat >"$d/k.py" <<'PY'
import tilelang.language as T


def kern(n=4, rows=1 << 20, gx=1, gy=1):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(gx, gy) as (bx, by):
            S = T.alloc_shared((rows, 10000), "float32")
            R = T.alloc_shared((64, 64), "float16")
            S[0, 0] = 1.0
            R[0, 0] = 1.0
            A[0] = S[0, 0] + R[0, 0]

    return main
PY
c() { TILESCALE_CUDA_ARCH=$1; export TILESCALE_CUDA_ARCH; shift; "$tool" compile "$d/k.py" --entry kern --target cuda "$@" >"$d/out" 2>"$d/err"; }

c sm_90; [ $? -eq 1 ] || fail "40 GB of shared memory accepted"
grep -q "k.py:8:[0-9]*: error: kernel 'main' needs 4194304[0-9]* bytes of shared memory per block, more than the 232448 bytes sm_90 allows" "$d/err" || { fail "message"; cat "$d/err"; }
grep -q "'S' shared float32\[1048576, 10000\]: 41943040000 bytes" "$d/err" || { fail "buffer S and its bytes"; cat "$d/err"; }
grep -q "'R' shared float16\[64, 64\]: 8192 bytes" "$d/err" || { fail "buffer R and its bytes"; cat "$d/err"; }
# 5 x 10000 float32 = 200,000 bytes: fits sm_90's 227 KB, not sm_80's 163 KB nor sm_86's 99 KB
c sm_90 -D rows=5 || { fail "200 KB on sm_90"; cat "$d/err"; }
c sm_80 -D rows=5; [ $? -eq 1 ] && grep -q "more than the 166912 bytes sm_80 allows" "$d/err" || { fail "200 KB on sm_80"; cat "$d/err"; }
c sm_86 -D rows=5; [ $? -eq 1 ] && grep -q "more than the 101376 bytes sm_86 allows" "$d/err" || { fail "200 KB on sm_86"; cat "$d/err"; }
# grids
c sm_90 -D rows=1 -D gx=4000000000; [ $? -eq 1 ] || fail "4e9 blocks accepted"
grep -q "a grid of 4000000000 blocks in x is more than CUDA allows (2147483647)" "$d/err" || { fail "grid x message"; cat "$d/err"; }
c sm_90 -D rows=1 -D gy=70000; [ $? -eq 1 ] && grep -q "a grid of 70000 blocks in y" "$d/err" || { fail "grid y"; cat "$d/err"; }
c sm_90 -D rows=1 -D gx=2147483647 -D gy=65535 || { fail "the largest grid"; cat "$d/err"; }
# the C target has no such limits on the grid
"$tool" compile "$d/k.py" --entry kern -D rows=1 -D gx=4000000000 >"$d/out" 2>&1 || { fail "C target grid"; cat "$d/out"; }

# --check-bounds on CUDA: every element index goes through ts_cuda's ts_ck, the
# report slot is declared; without it the code has no checks
cat >"$d/b.py" <<'PY'
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
PY
TILESCALE_CUDA_ARCH=sm_90 "$tool" compile "$d/b.py" --entry add -D M=100 -D N=100 --target cuda --emit cuda --check-bounds \
  >"$d/cu" 2>"$d/err" || { fail "--check-bounds --emit cuda"; cat "$d/err"; }
grep -q '__device__ unsigned long long ts_oob\[8\]' "$d/cu" || fail "no report slot in checked CUDA code"
grep -q 'ts_ck((ts_i64)(.*), C_[0-9]*_n0, [0-9]*, 0)' "$d/cu" || fail "no checked index of C"
TILESCALE_CUDA_ARCH=sm_90 "$tool" compile "$d/b.py" --entry add -D M=100 -D N=100 --target cuda --emit cuda \
  >"$d/cu" 2>"$d/err" || { fail "--emit cuda"; cat "$d/err"; }
grep -q 'ts_ck(' "$d/cu" && fail "checks in CUDA code without --check-bounds"
# where NVRTC is present, the checked code compiles (to PTX)
TILESCALE_CUDA_ARCH=sm_90 "$tool" compile "$d/b.py" --entry add -D M=100 -D N=100 --target cuda --emit ptx --check-bounds \
  >"$d/ptx" 2>"$d/err"
if [ $? -eq 0 ]; then grep -q 'ts_oob' "$d/ptx" || fail "PTX lacks ts_oob"
elif ! grep -qi 'nvrtc' "$d/err"; then fail "checked CUDA code does not compile"; cat "$d/err"; fi

[ $fails -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
echo ok
