# Several nodes on CUDA: what NCCL's GIN (the transport to a rank of
# another node) lacks, one primitive per value of `what`.  Pass lower_comm
# refuses each where it sets the op's xport (op/comm.c: ts_comm_gin_lacks),
# so `--dump-after lower_comm` fails too; the printer only asserts (issue
# 5 part 0).  Goldens err_gin_*.py pin the messages (ir_gin_barrier_all.py: accepted).
import tilelang.language as T


def kern(P, what):
    @T.prim_func
    def main(X: T.Tensor((64,), "float32"), Y: T.Tensor((P, 64), "float32"), sig: T.Tensor((P,), "int32"),
             cnt: T.Tensor((1,), "int32"), bar: T.Tensor((P,), "int32")):
        with T.Kernel(1, threads=32) as (bx):
            me = T.get_rank()
            peer = (me + 1) % P
            v = T.alloc_var("int32")
            if what == "get":
                T.get_block(src=T.address_of(Y[me, 0]), dst=T.address_of(X[0]), size=64, src_pe=peer)
            elif what == "ld":
                T.ld(cnt[0], v, sem="acquire", src_pe=peer)
            elif what == "wait":
                T.wait_ge(sig[me], 1, peer)
            elif what == "atom_add":
                T.atom_add(cnt[0], 1, peer=peer)
            elif what == "signal_add":
                T.signal_op(T.address_of(sig[me]), 1, T.Amo.SIGNAL_ADD, peer)
            elif what == "put_signal_add":  # signal op 10: NVSHMEM_SIGNAL_ADD
                T.putmem_signal_nbi_block(T.address_of(Y[me, 0]), T.address_of(X[0]), 64 * 4,
                                          T.address_of(sig[me]), 1, 10, peer)
            elif what == "put_warp":
                T.put_warp(src=T.address_of(X[0]), dst=T.address_of(Y[me, 0]), size=64, dst_pe=peer)
            elif what == "barrier_blocks":
                T.barrier_blocks(bar)
            elif what == "barrier_all":
                T.barrier_all()

    return main
