# TileScale's warp-level primitives as its own examples call them
# (primitives/example_put_warp.py): every warp of a block computes its own
# range from T.get_thread_binding and calls T.put_warp / T.get_warp /
# T.putmem_signal_nbi_warp with it.  On CUDA the lanes that call a warp
# primitive together with one range share it (src/target/cuda/comm_cuda.c);
# partition_threads makes the call per-thread code because its operands
# differ between threads.  On the C target (sim ranks) thread_loops_c runs
# it per thread and lane 0 of each warp does the warp's call.  Pairs of
# ranks (r and r ^ 1):
#   Y (rank r ^ 1) <- X (rank r)        T.put_warp
#   Z (rank r)     <- X (rank r ^ 1)    T.get_warp
#   W (rank r ^ 1) <- X (rank r)        T.putmem_signal_nbi_warp, sig[0] += 1 there
# then thread 0 of every block waits for all of its peer's warps' signals
# and sets done[bx] = 1.
#   tilescale run examples/distributed/warp_prims.py --entry warp_prims --ranks 2 --target cuda \
#       -D M=65536 -D block_M=4096 -D threads=128 --check-against warp_prims_ref
import tilelang
import tilelang.language as T


def warp_prims(M, block_M, threads, dtype="float32"):
    warps = threads // 32
    chunk = T.ceildiv(block_M, warps)
    nb = T.ceildiv(M, block_M)

    @T.prim_func
    def main(
        X: T.Tensor((M,), dtype),
        Y: T.Tensor((M,), dtype),
        Z: T.Tensor((M,), dtype),
        W: T.Tensor((M,), dtype),
        sig: T.Tensor((1,), "int32"),
        done: T.Tensor((nb,), "float32"),
    ):
        with T.Kernel(nb, threads=threads) as (bx):
            peer = T.get_rank() ^ 1
            tx = T.get_thread_binding(0)
            start = bx * block_M + chunk * (tx // 32)
            T.put_warp(src=T.address_of(X[start]), dst=T.address_of(Y[start]), size=chunk, dst_pe=peer)
            T.get_warp(src=T.address_of(X[start]), dst=T.address_of(Z[start]), size=chunk, src_pe=peer)
            T.putmem_signal_nbi_warp(T.address_of(W[start]), T.address_of(X[start]), chunk * 4,
                                     T.address_of(sig[0]), 1, T.Amo.SIGNAL_ADD, peer)
            if tx == 0:
                T.signal_wait_until(T.address_of(sig[0]), T.CmpType.GE, nb * warps)
                done[bx] = 1.0

    return main


def warp_prims_ref(M, block_M, threads, P, dtype="float32"):
    nb = T.ceildiv(M, block_M)

    @T.prim_func
    def main(
        X: T.Tensor((P, M), dtype),
        Y: T.Tensor((P, M), dtype),
        Z: T.Tensor((P, M), dtype),
        W: T.Tensor((P, M), dtype),
        sig: T.Tensor((P, 1), "int32"),
        done: T.Tensor((P, nb), "float32"),
    ):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(M):
                Y[r, i] = X[r ^ 1, i]
                Z[r, i] = X[r ^ 1, i]
                W[r, i] = X[r ^ 1, i]
            for b in T.serial(nb):
                done[r, b] = 1.0

    return main
