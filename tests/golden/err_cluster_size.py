# ARGS: compile FILE --entry kern --target c
# At most 8 blocks to a cluster (CUDA's portable cluster size).
import tilelang.language as T


def kern():
    @T.prim_func
    def main(R: T.Tensor((8, 8), "int32")):
        with T.ClusterKernel(8, 8, cluster_dims=(4, 4), threads=32) as (bx, by):
            R[by, bx] = T.block_rank_in_cluster()

    return main
