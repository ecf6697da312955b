# ARGS: compile FILE --entry kern --target c --emit ir
# T.ClusterKernel on the C target (no clusters): pass lower_cluster writes
# the block's rank in its cluster from the block indices, x % cx + (y % cy)
# cx, and the kernel keeps no cluster.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(R: T.Tensor((4, 8), "int32")):
        with T.ClusterKernel(8, 4, cluster_dims=(2, 2, 1), threads=32) as (bx, by):
            R[by, bx] = T.block_rank_in_cluster()

    return main
