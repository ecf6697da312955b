# ARGS: compile FILE --entry colsum -D N=128 -D bm=32 -D bn=64 --target cuda --dump-after inject_pipeline
# inject_pipeline with a run-time trip count (M is dynamic) and 3 stages:
# a barrier, a prologue issuing iterations 0 and 1 (each guarded by the trip
# count, each committing a group), a steady loop that waits until at most
# one group is pending, synchronizes, issues iteration k + 2 (guarded) into
# slot (k + 2) % 3, computes iteration k from slot k % 3 and commits; a
# final wait for every group.  The vector copies zero-fill the rows past M.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def colsum(N, bm, bn):
    M = T.dynamic("M")

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, bn), threads=64) as bx:
            Xs = T.alloc_shared((bm, bn), "float32")
            acc = T.alloc_shared((bn,), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(M, bm), num_stages=3):
                T.copy(X[k * bm, bx * bn], Xs)
                for j in T.Parallel(bn):
                    for i in T.serial(bm):
                        acc[j] += Xs[i, j]
            T.copy(acc, Y[bx * bn])

    return main
