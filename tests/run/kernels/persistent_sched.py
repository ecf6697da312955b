# T.PersistentTileScheduler (tests/run/persistent_sched.sh runs it):
# `blocks` persistent blocks walk the tiles of an M x N problem in TileLang's
# order (swizzle panels, column- or row-major, cluster rows), each tile
# exactly once.  Y += X * 2 on the tile's elements (Y in place: a tile done
# twice or never shows in Y), and Owner[tm, tn] = block * 1000 +
# current_iter (who took the tile, in which wave).  The naive reference
# enumerates the tiles in traversal order (panel by panel) instead of
# decoding the linear index, and deals them out to the blocks in turn.
# blocks=0: a grid of driver.get_num_sms() blocks and the scheduler's
# default num_workers (the same count).  persist_coord: the stateless form
# (sched.coord(t) in a `for w` loop over waves).
import tilelang
import tilelang.language as T
from tilelang.carver.arch import driver


@tilelang.jit
def persist(M=50, N=70, TM=16, TN=16, blocks=3, swizzle=2, col=True, cluster=1):
    mt = T.ceildiv(M, TM)
    nt = T.ceildiv(N, TN)
    nblocks = driver.get_num_sms() if blocks == 0 else blocks
    workers = None if blocks == 0 else blocks // cluster

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32"),
             Owner: T.Tensor((mt, nt), "int32")):
        with T.Kernel(nblocks, threads=32) as block_id:
            x_f = T.alloc_fragment((TM, TN), "float32")
            y_f = T.alloc_fragment((TM, TN), "float32")
            sched = T.PersistentTileScheduler(mt, nt, num_workers=workers, swizzle_size=swizzle,
                                              column_major=col, cluster_size=cluster, name="sched")
            sched.init(block_id // cluster)
            while sched.valid():
                bx = sched.m_idx * cluster + block_id % cluster
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


@tilelang.jit
def persist_naive(M=50, N=70, TM=16, TN=16, blocks=3, swizzle=2, col=True, cluster=1):
    mt = T.ceildiv(M, TM)
    nt = T.ceildiv(N, TN)
    mc = T.ceildiv(mt, cluster)
    prim = mc if col else nt
    sec = nt if col else mc
    workers = (driver.get_num_sms() if blocks == 0 else blocks) // cluster

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32"),
             Owner: T.Tensor((mt, nt), "int32")):
        with T.Kernel(1, threads=1) as b:
            for i in T.serial(M):
                for j in T.serial(N):
                    Y[i, j] = Y[i, j] + X[i, j] * 2
            t = T.alloc_var("int32")
            t = 0
            for p in T.serial(T.ceildiv(sec, swizzle)):
                for f in T.serial(prim):
                    for s in T.serial(swizzle):
                        if p * swizzle + s < sec:
                            for r in T.serial(cluster):
                                cm = (f if col else p * swizzle + s)
                                tm = cm * cluster + r
                                tn = (p * swizzle + s if col else f)
                                if tm < mt:
                                    Owner[tm, tn] = ((t % workers) * cluster + r) * 1000 + t // workers
                            t = t + 1

    return main


@tilelang.jit
def persist_coord(M=50, N=70, TM=16, TN=16, blocks=3, swizzle=2, col=True, cluster=1):
    mt = T.ceildiv(M, TM)
    nt = T.ceildiv(N, TN)
    waves = T.ceildiv(T.ceildiv(mt, cluster) * nt, blocks // cluster)

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32"),
             Owner: T.Tensor((mt, nt), "int32")):
        with T.Kernel(blocks, threads=32) as block_id:
            sched = T.PersistentTileScheduler(mt, nt, num_workers=blocks // cluster, swizzle_size=swizzle,
                                              column_major=col, cluster_size=cluster, stateful=False)
            for w in T.serial(waves):
                cm, by = sched.coord(sched.num_workers * w + block_id // cluster)
                bx = cm * cluster + block_id % cluster
                if bx < mt and by < nt:
                    for i, j in T.Parallel(TM, TN):
                        if bx * TM + i < M and by * TN + j < N:
                            Y[bx * TM + i, by * TN + j] = Y[bx * TM + i, by * TN + j] + X[bx * TM + i, by * TN + j] * 2
                    Owner[bx, by] = block_id * 1000 + w

    return main


# A persistent GEMM (TileLang's example_gemm_persistent shape, with the
# scheduler): a pipelined k loop and a tensor-core gemm inside the while.
@tilelang.jit(out_idx=[2])
def persist_gemm(M=200, N=136, K=264, BM=64, BN=64, BK=32, blocks=5, swizzle=2, stages=2):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(blocks, threads=128) as block_id:
            A_s = T.alloc_shared((BM, BK), "float16")
            B_s = T.alloc_shared((BK, BN), "float16")
            C_l = T.alloc_fragment((BM, BN), "float32")
            sched = T.PersistentTileScheduler(T.ceildiv(M, BM), T.ceildiv(N, BN), num_workers=blocks,
                                              swizzle_size=swizzle)
            sched.init(block_id)
            while sched.valid():
                bx, by = sched.m_idx, sched.n_idx
                T.clear(C_l)
                for k in T.Pipelined(T.ceildiv(K, BK), num_stages=stages):
                    T.copy(A[bx * BM, k * BK], A_s)
                    T.copy(B[k * BK, by * BN], B_s)
                    T.gemm(A_s, B_s, C_l)
                T.copy(C_l, C[bx * BM, by * BN])
                sched.next_tile()

    return main


@tilelang.jit(out_idx=[2])
def gemm_naive(M=200, N=136, K=264, BM=64, BN=64, BK=32, blocks=5, swizzle=2, stages=2):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(M, threads=1) as i:
            for j in T.serial(N):
                acc = T.alloc_var("float32")
                acc = 0.0
                for k in T.serial(K):
                    acc += T.cast(A[i, k], "float32") * T.cast(B[k, j], "float32")
                C[i, j] = acc

    return main
