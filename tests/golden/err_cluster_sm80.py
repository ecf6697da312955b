# ARGS: compile FILE --entry kern --target cuda --emit cuda
# ENV: TILESCALE_CUDA_ARCH=sm_80
# Thread block clusters (T.ClusterKernel) need sm_90: refused for sm_80 by
# pass lower_cluster, at the T.ClusterKernel.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(R: T.Tensor((8,), "int32")):
        with T.ClusterKernel(8, cluster_dims=2, threads=32) as b:
            R[b] = T.block_rank_in_cluster()

    return main
