#!/bin/sh
# The index_width pass (src/pass/index_width.c): a CUDA kernel whose
# integer values all provably fit in int32 is marked index32 and printed
# with `int` arithmetic; a tensor too large for 32-bit offsets, a run-time
# shape or TILESCALE_CUDA_INDEX32=0 keep it 64-bit.  No NVRTC needed.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
cat >$d/k.py <<'PY'
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def copy2(M, N, bm=32, bn=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float16"), Y: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            S = T.alloc_shared((bm, bn), "float16")
            T.copy(X[by * bm, bx * bn], S)
            T.copy(S, Y[by * bm, bx * bn])

    return main


@tilelang.jit(out_idx=[1])
def copyd(N, bn=64):
    M = T.symbolic("M")

    @T.prim_func
    def main(X: T.Tensor((M, N), "float16"), Y: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, 32), threads=128) as (bx, by):
            S = T.alloc_shared((32, bn), "float16")
            T.copy(X[by * 32, bx * bn], S)
            T.copy(S, Y[by * 32, bx * bn])

    return main
PY
dump() { $tool compile $d/k.py --target cuda --dump-after index_width "$@" 2>&1; }
# static and small: 32-bit, and the generated code says int
dump --entry copy2 -D M=1000 -D N=512 | grep -q '^    index32$' || fail "1000x512: not index32"
$tool compile $d/k.py --entry copy2 -D M=1000 -D N=512 --target cuda --emit cuda >$d/s.cu 2>&1 || fail "compile"
grep -q 'const int ts_bidx0 = (int)blockIdx.x;' $d/s.cu || fail "index32 kernel printed without int block indices"
grep -q 'const int X_0_s0 = 512;' $d/s.cu || fail "index32 kernel: the contiguous stride is not an int constant"
# 65536 x 65536 elements: offsets pass 2^31
dump --entry copy2 -D M=65536 -D N=65536 | grep -q 'index32' && fail "65536^2: index32 although offsets pass 2^31"
# 32768 x 65535: the largest offset is just below 2^31 - it fits
dump --entry copy2 -D M=32768 -D N=65472 | grep -q '^    index32$' || fail "32768x65472: offsets fit but not index32"
# a run-time extent: its range is unknown
dump --entry copyd -D N=512 | grep -q 'index32' && fail "symbolic M: index32"
# the switch
TILESCALE_CUDA_INDEX32=0 dump --entry copy2 -D M=1000 -D N=512 | grep -q 'index32' && fail "TILESCALE_CUDA_INDEX32=0: index32"
echo "index_width: ok"
