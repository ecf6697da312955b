# ARGS: compile FILE --entry matmul -D M=128 -D N=64 --target cuda --emit cuda
# ENV: TILESCALE_CUDA_ARCH=sm_90
# A kernel written for AMD's HIP backend (@tilelang.jit(target="hip ..."), as
# dequantize_gemm/example_dequant_gemm_bf16_mxfp4_cdna4.py is: its host code
# asks TileLang for gfx950's HIP C++ intrinsics through
# tvm.target.Target("hip -mcpu=gfx950")) is refused at its target, before its
# body runs, naming the target; target="cuda" kernels compile as before.
import tilelang
import tilelang.language as T
from tilelang import tvm as tvm


@tilelang.jit(out_idx=[-1], target="hip -mcpu=gfx950")
def matmul(M, N, block=64):
    target = tvm.target.Target("hip -mcpu=gfx950")

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
            for i, j in T.Parallel(block, N):
                B[bx * block + i, j] = A[bx * block + i, j]

    return main
