# ARGS: compile FILE --entry kern --target c
# A cluster is a box of the grid: each grid extent must be a multiple of
# the cluster's.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(R: T.Tensor((8,), "int32")):
        with T.ClusterKernel(5, cluster_dims=2, threads=32) as b:
            R[b] = T.block_rank_in_cluster()

    return main
