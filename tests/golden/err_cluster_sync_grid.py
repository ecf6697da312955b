# ARGS: compile FILE --entry kern --target c
# A cluster with grid barriers inside a loop (a cooperative kernel, pass
# split_grid): a cooperative launch takes no cluster, refused by pass
# lower_cluster at the T.ClusterKernel.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(R: T.Tensor((8,), "int32")):
        with T.ClusterKernel(8, cluster_dims=2, threads=32) as b:
            for i in T.serial(2):
                R[b] = R[b] + T.block_rank_in_cluster()
                T.sync_grid()

    return main
