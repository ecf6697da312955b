# ARGS: compile FILE --entry kern -D P=2 --target cuda --dump-after insert_sync
# ENV: TILESCALE_CUDA_ARCH=sm_90
# Pass lower_comm (issue 6): the communication primitives of uniform code
# are given to one thread in the IR, so that insert_sync places the barriers
# around them and plan_smem sees the scratch word, and the CUDA printer
# decides nothing of its own:
#  - T.st / T.signal_op / T.wait_* / an atomic without its value / a T.ld
#    into shared memory: `for t in thread_range(1)` (a barrier before and
#    after, from insert_sync);
#  - T.atom_add's value before the add: thread 0 adds into a shared word
#    (atom_old_N, alloc_shared int32[1]), the barrier, then every thread
#    reads it into its register;
#  - a put with a signal: the data moved by the block, a barrier, the signal
#    by one thread;
#  - T.barrier_blocks: every thread's system fence, a barrier, thread 0's
#    arrival (flags .../1: done for the block);
#  - a put without a signal, a fence and a T.ld into a register stay uniform.
import tilelang.language as T


def kern(P):
    @T.prim_func
    def main(X: T.Tensor((256,), "float32"), Y: T.Tensor((P, 256), "float32"), sig: T.Tensor((P,), "int32"),
             cnt: T.Tensor((1,), "int32"), bar: T.Tensor((P,), "int32"), out: T.Tensor((128,), "int32")):
        with T.Kernel(1, threads=128) as (bx):
            me = T.get_rank()
            peer = (me + 1) % P
            s = T.alloc_shared((1,), "int32")
            v = T.alloc_var("int32")
            T.putmem_signal_nbi_block(T.address_of(Y[me, 0]), T.address_of(X[0]), 256 * 4,
                                      T.address_of(sig[me]), 1, 9, peer)
            T.put_block(src=T.address_of(X[0]), dst=T.address_of(Y[me, 0]), size=256, dst_pe=peer)
            T.st(sig[me], 2, scope="sys", sem="release", dst_pe=peer)
            T.wait_ge(sig[(me + P - 1) % P], 2)
            T.ld(sig[me], s[0], sem="acquire", scope="gpu")
            T.ld(sig[me], v, sem="acquire", scope="gpu")
            T.fence_sys()
            old = T.atom_add(cnt[0], 1)
            T.atom_add(cnt[0], 1)
            T.barrier_blocks(bar)
            for i in T.Parallel(128):
                out[i] = old + s[0] + v

    return main
