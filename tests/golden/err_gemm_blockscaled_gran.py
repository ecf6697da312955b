# ARGS: compile FILE --entry kern
# T.mma_gemm_blockscaled takes the NVFP4 form only: one UE4M3 scale byte per
# 16 K elements (MXFP4's 32 with UE8M0 scales is not TileLang's either).
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((64, 128), T.float4_e2m1fn), B: T.Tensor((64, 128), T.float4_e2m1fn),
             S: T.Tensor((64, 2), T.uint32), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            acc = T.alloc_fragment((64, 64), "float32")
            T.mma_gemm_blockscaled(A, B, acc, S, S, transpose_B=True, k_start=0,
                                   sf_a_granularity_k=32, sf_b_granularity_k=32)
            T.copy(acc, C)

    return main
