# All-reduce (sum) with signals: every rank pushes its X into slot `rank` of
# every rank's `recv` with T.putmem_signal_nbi_block, which then sets that
# rank's flag `sig[rank]` on the peer to the round number; each rank waits
# for all P flags (T.signal_wait_until) and sums the P slots.  `round`
# lets the same buffers serve several launches (flags only ever grow).
#   tilescale run examples/distributed/allreduce.py --entry allreduce --ranks 4 \
#       -D P=4 -D N=256 --in round=1 --check-against allreduce_ref
import tilelang
import tilelang.language as T


def allreduce(P, N, block=64, dtype="float32"):
    @T.prim_func
    def main(
        X: T.Tensor((N,), dtype),
        recv: T.Tensor((P, N), dtype),
        sig: T.Tensor((P,), "uint64"),
        Y: T.Tensor((N,), dtype),
        round: T.int32,
    ):
        with T.Kernel(1, threads=128) as (bx):
            me = T.get_pe()
            for k in T.serial(P):
                peer = (me + k) % P
                T.putmem_signal_nbi_block(T.address_of(recv[me, 0]), T.address_of(X[0]), N * 4,
                                          T.address_of(sig[me]), round, 9, peer)
            for k in T.serial(P):
                T.signal_wait_until(T.address_of(sig[k]), 5, round)  # NVSHMEM_CMP_GE
            acc = T.alloc_fragment((block,), "float32")
            for b in T.serial(T.ceildiv(N, block)):
                T.clear(acc)
                for k in T.serial(P):
                    for i in T.Parallel(block):
                        if b * block + i < N:
                            acc[i] += recv[k, b * block + i]
                T.copy(acc, Y[b * block : (b + 1) * block])

    return main


def allreduce_ref(P, N, dtype="float32"):
    @T.prim_func
    def main(
        X: T.Tensor((P, N), dtype),
        recv: T.Tensor((P, P, N), dtype),
        sig: T.Tensor((P, P), "uint64"),
        Y: T.Tensor((P, N), dtype),
        round: T.int32,
    ):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(N):
                s = T.alloc_var("float32")
                s = 0.0
                for k in T.serial(P):
                    recv[r, k, i] = X[k, i]
                    s += X[k, i]
                Y[r, i] = s

    return main
