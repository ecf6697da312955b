# ARGS: compile FILE --entry kern --dump-after lower_tile_ops
# T.mma_gemm_blockscaled as the generic gemm loops: each product scaled by
# A's and B's UE4M3 scale bytes (byte (k % 64) / 16 of a uint32 word; the
# blockscaled_chunk_kmajor tile order f = (k / 64) R + (r % 32) (R / 32) + r / 32),
# before resolve_views decodes the float4_e2m1fn codes.
# ENV: TILESCALE_CUDA_ARCH=sm_90a
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((64, 128), T.float4_e2m1fn), B: T.Tensor((32, 128), T.float4_e2m1fn),
             SA: T.Tensor((64, 2), T.uint32), SB: T.Tensor((32, 2), T.uint32), C: T.Tensor((64, 32), "float32")):
        with T.Kernel(1, threads=128) as bx:
            acc = T.alloc_fragment((64, 32), "float32")
            T.mma_gemm_blockscaled(A, B, acc, SA, SB, transpose_B=True, clear_accum=True, k_start=0,
                                   sf_a_granularity_k=16, sf_b_granularity_k=16, sf_layout="blockscaled_chunk_kmajor")
            T.copy(acc, C)

    return main
