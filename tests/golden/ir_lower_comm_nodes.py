# ARGS: compile FILE --entry kern -D P=4 --multinode --dump-after lower_comm
# Pass lower_comm for a world of several nodes (--multinode; issue 6 part
# A): every primitive with a peer becomes a branch on the peer's node,
#   if peer < 0 or peer // ranks_per_node == rank // ranks_per_node: op
#   else: op(..., xport)         (through the transport: GIN / the proxy)
# (ranks_per_node: a launch argument); a fence and the block barriers get
# xport too (they also complete the transport's puts, reach other nodes'
# words through it); a primitive on this rank's own memory (no peer) is
# left alone.  On the C target the pass does only this (the one-thread
# forms are CUDA's: golden ir_lower_comm).
import tilelang.language as T


def kern(P):
    @T.prim_func
    def main(X: T.Tensor((64,), "float32"), Y: T.Tensor((P, 64), "float32"), sig: T.Tensor((P,), "int32"),
             cnt: T.Tensor((1,), "int32"), bar: T.Tensor((P,), "int32")):
        with T.Kernel(1, threads=32) as (bx):
            me = T.get_rank()
            peer = (me + 1) % P
            v = T.alloc_var("int32")
            T.putmem_signal_nbi_block(T.address_of(Y[me, 0]), T.address_of(X[0]), 64 * 4,
                                      T.address_of(sig[me]), 1, 9, peer)
            T.st(sig[me], 2, dst_pe=peer)
            T.ld(cnt[0], v, sem="acquire", src_pe=peer)
            T.atom_add(cnt[0], 1, peer=peer)
            T.wait_ge(sig[peer], 1)
            T.fence()
            T.barrier_blocks(bar)
    return main
