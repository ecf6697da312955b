# T.ClusterKernel and T.block_rank_in_cluster (tests/run/cluster.sh runs
# them): thread block clusters of cluster_dims blocks (CUDA sm_90+:
# __cluster_dims__, the rank read from %cluster_ctarank; the C target: the
# rank from the block indices, pass lower_cluster).
#   cluster_rank: every block writes its rank; the naive kernel writes
#     x % cx + (y % cy) cx + (z % cz) cx cy for every block.
#   persist_cluster: a persistent scheduler over cluster rows, as TileLang's
#     2-CTA examples use it (sched.init(block_id // cluster), bx =
#     sched.m_idx * cluster + rank), against persistent_sched.py's naive
#     enumeration (the same signature).
import tilelang
import tilelang.language as T
from persistent_sched import persist_naive  # noqa: F401  (the reference, --check-against)


@tilelang.jit
def cluster_rank(gx=8, gy=3, gz=2, cx=2, cy=3, cz=1):
    @T.prim_func
    def main(R: T.Tensor((gz, gy, gx), "int32")):
        with T.ClusterKernel(gx, gy, gz, cluster_dims=(cx, cy, cz), threads=32) as (bx, by, bz):
            r = T.block_rank_in_cluster()
            R[bz, by, bx] = r

    return main


@tilelang.jit
def cluster_rank_naive(gx=8, gy=3, gz=2, cx=2, cy=3, cz=1):
    @T.prim_func
    def main(R: T.Tensor((gz, gy, gx), "int32")):
        with T.Kernel(1, threads=1) as b:
            for z in T.serial(gz):
                for y in T.serial(gy):
                    for x in T.serial(gx):
                        R[z, y, x] = x % cx + (y % cy) * cx + (z % cz) * cx * cy

    return main


@tilelang.jit
def persist_cluster(M=200, N=150, TM=16, TN=16, blocks=8, swizzle=2, col=True, cluster=2):
    mt = T.ceildiv(M, TM)
    nt = T.ceildiv(N, TN)

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32"),
             Owner: T.Tensor((mt, nt), "int32")):
        with T.ClusterKernel(blocks, threads=32, cluster_dims=cluster) as block_id:
            x_f = T.alloc_fragment((TM, TN), "float32")
            y_f = T.alloc_fragment((TM, TN), "float32")
            cta = T.block_rank_in_cluster()
            sched = T.PersistentTileScheduler(mt, nt, num_workers=blocks // cluster, swizzle_size=swizzle,
                                              column_major=col, cluster_size=cluster)
            sched.init(block_id // cluster)
            while sched.valid():
                bx = sched.m_idx * cluster + cta
                by = sched.n_idx
                if bx < mt:
                    T.copy(X[bx * TM, by * TN], x_f)
                    T.copy(Y[bx * TM, by * TN], y_f)
                    for i, j in T.Parallel(TM, TN):
                        y_f[i, j] = y_f[i, j] + x_f[i, j] * 2
                    T.copy(y_f, Y[bx * TM, by * TN])
                    Owner[bx, by] = block_id * 1000 + sched.current_iter
                sched.next_tile()

    return main
