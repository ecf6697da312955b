# ARGS: compile FILE --entry kern --target cuda --emit cuda
# ENV: TILESCALE_CUDA_ARCH=sm_90a
# T.ClusterKernel on sm_90a: the kernel carries __cluster_dims__ (a
# compile-time cluster, launched as any kernel) and T.block_rank_in_cluster
# reads %cluster_ctarank (pass lower_cluster keeps both for sm_90+).
import tilelang.language as T


def kern():
    @T.prim_func
    def main(R: T.Tensor((4, 8), "int32")):
        with T.ClusterKernel(8, 4, cluster_dims=(2, 2, 1), threads=32) as (bx, by):
            R[by, bx] = T.block_rank_in_cluster()

    return main
