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


def _own_column(R, threads, variant):
    # TileScale's DeepEP notify_dispatch (dispatch.py:73-77): thread tx < R
    # sums column tx of M down its rows, then the thread whose index equals
    # the run-time scalar r reads the last row of column r: its own column,
    # so no other thread wrote it (variant 0).  Near misses: column r + 1
    # (another thread's, 1); the guard tx == r + 1 reading column r (2).
    @T.prim_func
    def main(r: T.int32, X: T.Tensor((R, R), "int32"), M: T.Tensor((R, R), "int32"),
             Y: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=threads) as bx:
            tx = T.get_thread_binding()
            if tx < R:
                M[0, tx] = X[0, tx]
                for i in T.serial(1, R):
                    M[i, tx] = M[i - 1, tx] + X[i, tx]
                if variant == 0:
                    if tx == r:
                        Y[0] = M[R - 1, r]
                elif variant == 1:
                    if tx == r:
                        Y[0] = M[R - 1, (r + 1) % R]
                else:
                    if tx == (r + 1) % R:
                        Y[0] = M[R - 1, r]

    return main


@tilelang.jit
def own_column(R=4, threads=32):
    return _own_column(R, threads, 0)


@tilelang.jit
def own_column_other(R=4, threads=32):
    return _own_column(R, threads, 1)


@tilelang.jit
def own_column_shifted(R=4, threads=32):
    return _own_column(R, threads, 2)


@tilelang.jit
def own_column_naive(R=4, threads=32):
    @T.prim_func
    def main(r: T.int32, X: T.Tensor((R, R), "int32"), M: T.Tensor((R, R), "int32"),
             Y: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=threads) as bx:
            for j in T.serial(R):
                M[0, j] = X[0, j]
                for i in T.serial(1, R):
                    M[i, j] = M[i - 1, j] + X[i, j]
            if r >= 0 and r < R:
                Y[0] = M[R - 1, r]

    return main
