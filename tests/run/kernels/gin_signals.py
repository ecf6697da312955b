# Several nodes: adding signals (issue 6 part A).  On CUDA a put's adding
# signal, T.signal_op add and an integer T.atom_add to a rank of another
# node are NCCL GIN signal adds (the signal buffer's element i is GIN
# signal base + i, pass lower_comm), a wait on this rank's word reads the
# heap word plus the signal's growth past its shadow, and a set of this
# rank's own word resets both (doc/DISTRIBUTED.md, "Signals across
# nodes").  ring: every block pushes its slice of X (a heap tensor: GIN
# put) to Y and of a shared copy of it (a tile: GIN putValues) to Z on
# rank + 1, adding 1 to sig[0] and 2 to sig[1] there; each block then
# waits until all blocks of rank - 1 have signalled and sums what arrived
# into W; rank - 1 also adds 3 to sig[2] with T.signal_op and T.atom_add.
# Run (one node, or sim nodes):
#   tilescale run tests/run/kernels/gin_signals.py --entry ring --ranks 4 --multinode \
#       -D N=1024 -D BM=256 --check-against ring_ref
# reset: this rank's own word set (a reset of its GIN signal too), then a
# wait on it; a T.quiet (across nodes GIN's flush, see the IR's comment).
import tilelang
import tilelang.language as T


def ring(N, BM):
    nb = N // BM

    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32"), Z: T.Tensor((N,), "float32"),
             W: T.Tensor((N,), "float32"), sig: T.Tensor((3,), "uint64")):
        with T.Kernel(nb, threads=128) as bx:
            me = T.get_rank()
            n = T.get_num_ranks()
            t = T.alloc_shared((BM,), "float32")
            T.copy(X[bx * BM:(bx + 1) * BM], t)
            T.putmem_signal_nbi_block(T.address_of(Y[bx * BM]), T.address_of(X[bx * BM]), BM * 4,
                                      T.address_of(sig[0]), 1, T.Amo.SIGNAL_ADD, (me + 1) % n)
            T.putmem_signal_nbi_block(T.address_of(Z[bx * BM]), T.address_of(t[0]), BM * 4,
                                      T.address_of(sig[1]), 2, T.Amo.SIGNAL_ADD, (me + 1) % n)
            T.signal_op(T.address_of(sig[2]), 1, T.Amo.SIGNAL_ADD, (me + 1) % n)
            T.atom_add(sig[2], 2, peer=(me + 1) % n)
            T.signal_wait_until(T.address_of(sig[0]), T.CmpType.GE, nb)
            T.signal_wait_until(T.address_of(sig[1]), T.CmpType.GE, 2 * nb)
            T.signal_wait_until(T.address_of(sig[2]), T.CmpType.GE, 3 * nb)
            for i in T.Parallel(BM):
                W[bx * BM + i] = Y[bx * BM + i] + Z[bx * BM + i]

    return main


# Reference: all P ranks at once (leading axis = rank; the CLI passes P).
def ring_ref(N, BM, P):
    nb = N // BM

    @T.prim_func
    def main(X: T.Tensor((P, N), "float32"), Y: T.Tensor((P, N), "float32"), Z: T.Tensor((P, N), "float32"),
             W: T.Tensor((P, N), "float32"), sig: T.Tensor((P, 3), "uint64")):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(N):
                Y[r, i] = X[(r + P - 1) % P, i]
                Z[r, i] = X[(r + P - 1) % P, i]
                W[r, i] = X[(r + P - 1) % P, i] + X[(r + P - 1) % P, i]
            # (integer tensors are not compared by --check-against; where the world
            # spans nodes on CUDA the heap words hold only the same-node adds)
            sig[r, 0] = nb
            sig[r, 1] = 2 * nb
            sig[r, 2] = 3 * nb

    return main


def reset(P):
    @T.prim_func
    def main(sig: T.Tensor((2,), "int64")):
        with T.Kernel(1, threads=32) as bx:
            me = T.get_rank()
            T.signal_op(T.address_of(sig[0]), 1, T.Amo.SIGNAL_ADD, (me + 1) % P)
            T.quiet()  # GIN's flush: this rank's puts have read their sources, nothing more
            T.signal_wait_until(T.address_of(sig[0]), T.CmpType.GE, 1)
            T.signal_op(T.address_of(sig[0]), 0, T.Amo.SIGNAL_SET, me)
            T.st(sig[1], 5, sem="release", scope="sys")
            T.signal_wait_until(T.address_of(sig[1]), T.CmpType.EQ, 5)

    return main
