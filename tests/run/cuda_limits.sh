#!/bin/sh
# Issue 9 A: a CUDA kernel that cannot run is an error at compile time (no
# GPU needed): more shared memory per block than the architecture has,
# naming the buffers and their bytes.  (It used to emit 40 GB of shared
# memory or a grid of 4,000,000,000 blocks without a word.)  Constant grid
# extents beyond CUDA's limits are a warning at compile time (session 11:
# compiling is not launching; TileLang's analyze/example_conv_analyze.py
# elaborates a grid of 262144 blocks in y only to analyse it) and an error
# at the launch, at the T.Kernel extent, before any device is touched.
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
# grids: compiled with a warning at the T.Kernel extent
c sm_90 -D rows=1 -D gx=4000000000 --emit cuda || { fail "4e9 blocks refused at compile time"; cat "$d/err"; }
grep -q "k.py:7:[0-9]*: warning: kernel 'main': a grid of 4000000000 blocks in x is more than CUDA allows (2147483647); compiled, but a launch will be refused" "$d/err" || { fail "grid x warning"; cat "$d/err"; }
grep -q "with T.Kernel(gx, gy)" "$d/err" || { fail "grid x warning: no source line"; cat "$d/err"; }
grep -q "__global__" "$d/out" || fail "no CUDA code for the 4e9 grid"
c sm_90 -D rows=1 -D gy=70000 --emit ir && grep -q "a grid of 70000 blocks in y is more than CUDA allows (65535)" "$d/err" || { fail "grid y"; cat "$d/err"; }
c sm_90 -D rows=1 -D gx=2147483647 -D gy=65535 || { fail "the largest grid"; cat "$d/err"; }
grep -q "warning" "$d/err" && { fail "a warning for the largest grid"; cat "$d/err"; }
# ... and refused at the launch (status 1, TS_ERR_SHAPE), at the extent, before the driver
# is asked for a device (so on a machine without a GPU too), where NVRTC builds the module
TILESCALE_CUDA_ARCH=sm_90 "$tool" run "$d/k.py" --entry kern --target cuda -D rows=1 -D gy=70000 >"$d/out" 2>"$d/err"
rc=$?
if grep -qi "nvrtc" "$d/err"; then echo "(no NVRTC: the launch of a grid beyond the limits not checked)"
else
  [ $rc -eq 1 ] || fail "a grid of 70000 blocks in y launched (status $rc)"
  grep -q "k.py:7:[0-9]*: error: kernel 'main': a grid of 70000 blocks in y is more than CUDA allows (65535): it cannot be launched" "$d/err" || { fail "grid y launch message"; cat "$d/err"; }
  grep -qi "driver" "$d/err" && { fail "the driver was asked before the grid was refused"; cat "$d/err"; }
fi
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
