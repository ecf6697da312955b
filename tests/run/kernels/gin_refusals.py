# Several nodes on CUDA: what NCCL's GIN (the transport to a rank of
# another node) lacks, one primitive per value of `what`.  Pass lower_comm
# refuses each where it sets the op's xport (op/comm.c: ts_comm_gin_lacks),
# so `--dump-after lower_comm` fails too; the printer only asserts (issue
# 5 part 0).  Goldens err_gin_*.py pin the messages (ir_gin_barrier_all.py: accepted;
# the adding signals that are accepted: gin_signals.py).
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
            elif what == "atom_add":  # the value before the add is used: GIN's adds return nothing
                v = T.atom_add(cnt[0], 1, peer=peer)
                T.st(cnt[0], v + 1)
            elif what == "atom_add_float":
                T.atom_add(X[0], 1.0, peer=peer)
            elif what == "signal_set":  # no ordered set in GIN: refused, naming what to use
                T.signal_op(T.address_of(sig[me]), 1, T.Amo.SIGNAL_SET, peer)
            elif what == "put_signal_set":  # signal op 9: NVSHMEM_SIGNAL_SET
                T.putmem_signal_nbi_block(T.address_of(Y[me, 0]), T.address_of(X[0]), 64 * 4,
                                          T.address_of(sig[me]), 1, 9, peer)
            elif what == "st_release":  # a flag by a release store
                T.st(sig[me], 1, sem="release", scope="sys", dst_pe=peer)
            elif what == "sig_set_peer":  # sig is a signal buffer: only a rank resets its own word
                T.signal_op(T.address_of(sig[me]), 1, T.Amo.SIGNAL_ADD, peer)
                T.signal_op(T.address_of(sig[0]), 0, T.Amo.SIGNAL_SET, (me + 2) % P)
            elif what == "sig_store":  # a plain store would not reset the GIN signal
                T.signal_op(T.address_of(sig[me]), 1, T.Amo.SIGNAL_ADD, peer)
                sig[me] = 0
            elif what == "sig_load":  # a plain load sees only the heap half
                T.signal_op(T.address_of(sig[me]), 1, T.Amo.SIGNAL_ADD, peer)
                X[1] = T.cast(sig[me], "float32")
            elif what == "put_warp":
                T.put_warp(src=T.address_of(X[0]), dst=T.address_of(Y[me, 0]), size=64, dst_pe=peer)
            elif what == "barrier_blocks":
                T.barrier_blocks(bar)
            elif what == "barrier_all":
                T.barrier_all()

    return main
