# Thread-level code whose race freedom rests on a condition over the
# thread and uniform loop variables (issue 8: TileLang's
# dsa_sparse_finetune/indexer_topk_reducesum.py sorts this way): a bitonic
# sort whose step exchanges v[i] and v[i ^ m] in the thread with i < i ^ m
# only, m = 1 << (i1 - i2) from the uniform loops around it.  insert_sync
# proves that no element is touched by two threads (sync_exclusive: every
# value of the threads and of i1, i2 tried) and places one barrier per
# step.  The near misses below must still be refused as races: they differ
# from a correct exchange by one condition or one index.
# tests/run/sync_exchange.sh runs them; test_interp_examples runs `bitonic`
# thread by thread (races reported) against the C target.
import tilelang
import tilelang.language as T


def _sort(N, threads, variant):
    num_iters = N.bit_length() - 1

    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            v = T.alloc_shared((N,), "float32")
            T.copy(X, v)
            for i1 in T.serial(num_iters):
                for i2 in T.serial(i1 + 1):
                    for i in T.Parallel(N):
                        ascending = (i & (1 << (i1 + 1))) != 0
                        j = i ^ (1 << (i1 - i2))
                        if variant == 0:  # the correct exchange
                            if i < j and ((ascending and v[i] > v[j]) or (not ascending and v[i] < v[j])):
                                val = v[i]
                                v[i] = v[j]
                                v[j] = val
                        elif variant == 1:  # both threads of a pair exchange
                            if (ascending and v[i] > v[j]) or (not ascending and v[i] < v[j]):
                                val = v[i]
                                v[i] = v[j]
                                v[j] = val
                        elif variant == 2:  # the partner's neighbour written
                            if i < j and v[i] > v[j]:
                                val = v[i]
                                v[i] = v[j]
                                v[(j + 1) % N] = val
                        elif variant == 3:  # a condition that does not pick one thread per pair
                            if i % 4 == 0 and v[i] > v[j]:
                                val = v[i]
                                v[i] = v[j]
                                v[j] = val
                        else:  # the right pairs in the first stages only: i1 > 1 races
                            if (i1 < 2 and i < j) or i1 >= 2:
                                val = v[i]
                                v[i] = v[j]
                                v[j] = val
                    T.sync_threads()
            T.copy(v, Y)

    return main


@tilelang.jit(out_idx=[-1])
def bitonic(N=256, threads=128):
    return _sort(N, threads, 0)


@tilelang.jit(out_idx=[-1])
def bitonic_both(N=256, threads=128):
    return _sort(N, threads, 1)


@tilelang.jit(out_idx=[-1])
def bitonic_neighbour(N=256, threads=128):
    return _sort(N, threads, 2)


@tilelang.jit(out_idx=[-1])
def bitonic_mod4(N=256, threads=128):
    return _sort(N, threads, 3)


@tilelang.jit(out_idx=[-1])
def bitonic_late(N=256, threads=128):
    return _sort(N, threads, 4)


@tilelang.jit(out_idx=[-1])
def sort_naive(N=256, threads=128):
    # rank sort, descending (the bitonic network above sorts descending: its
    # last merge has ascending False everywhere): element i goes to the
    # number of elements larger than it, ties in index order
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            for i in T.serial(N):
                r = T.alloc_var("int32")
                r = 0
                for j in T.serial(N):
                    if X[j] > X[i] or (X[j] == X[i] and j < i):
                        r = r + 1
                Y[r] = X[i]

    return main
