# Tile-level collectives between the BLOCKS of one kernel (issue 6, part C):
# inside `with T.Scale("block") as (b, nb)`, T.allreduce / T.allgather /
# T.reduce_scatter / T.all_to_all take each block's own tile (shared,
# fragment or local) and run between the grid's blocks through a staging
# area in global memory and grid barriers (doc/DISTRIBUTED.md).  Such a
# kernel is cooperative: every block must be resident at once (CUDA:
# cuLaunchCooperativeKernel, checked before the launch; the C target runs
# the blocks as coroutines).  Block b loads X[b] and stores its result in
# Y[b]; the *_ref entries compute every block's result naively on one
# thread.  `stencil` runs T.sync_grid() in a loop (a persistent kernel).
#   tilescale run examples/block_coll.py --entry allreduce -D nb=4 -D op=max --check-against allreduce_ref
import tilelang.language as T


def fold(op, acc, x):
    if op == "sum":
        return acc + x
    if op == "max":
        return T.max(acc, x)
    return T.min(acc, x)


def allreduce(nb=4, op="sum", threads=128, R=8, C=16, dtype="float32", scope="shared"):
    @T.prim_func
    def main(X: T.Tensor((nb, R, C), dtype), Y: T.Tensor((nb, R, C), dtype)):
        with T.Kernel(nb, threads=threads) as bx:
            with T.Scale("block") as (b, n):
                if scope == "shared":
                    a = T.alloc_shared((R, C), dtype)
                else:
                    a = T.alloc_fragment((R, C), dtype)
                T.copy(X[b, 0, 0], a)
                T.allreduce(a, op=op)
                T.copy(a, Y[b, 0, 0])

    return main


def allreduce_ref(nb=4, op="sum", threads=128, R=8, C=16, dtype="float32", scope="shared"):
    @T.prim_func
    def main(X: T.Tensor((nb, R, C), dtype), Y: T.Tensor((nb, R, C), dtype)):
        with T.Kernel(1, threads=1) as bx:
            for i in T.serial(R):
                for j in T.serial(C):
                    acc = T.alloc_var("float32")
                    acc = X[0, i, j]
                    for p in T.serial(nb - 1):
                        acc = fold(op, acc, X[p + 1, i, j])
                    for p in T.serial(nb):
                        Y[p, i, j] = acc

    return main


def reduce_scatter(nb=4, op="sum", threads=128, R=2, C=16, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((nb, nb * R, C), dtype), Y: T.Tensor((nb, R, C), dtype)):
        with T.Kernel(nb, threads=threads) as bx:
            with T.Scale("block") as (b, n):
                a = T.alloc_shared((nb * R, C), dtype)
                o = T.alloc_shared((R, C), dtype)
                T.copy(X[b, 0, 0], a)
                T.reduce_scatter(a, o, op=op)
                T.copy(o, Y[b, 0, 0])

    return main


def reduce_scatter_ref(nb=4, op="sum", threads=128, R=2, C=16, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((nb, nb * R, C), dtype), Y: T.Tensor((nb, R, C), dtype)):
        with T.Kernel(1, threads=1) as bx:
            for g in T.serial(nb):
                for i in T.serial(R):
                    for j in T.serial(C):
                        acc = T.alloc_var("float32")
                        acc = X[0, g * R + i, j]
                        for p in T.serial(nb - 1):
                            acc = fold(op, acc, X[p + 1, g * R + i, j])
                        Y[g, i, j] = acc

    return main


def allgather(nb=4, threads=128, R=3, C=16, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((nb, R, C), dtype), Y: T.Tensor((nb, nb * R, C), dtype)):
        with T.Kernel(nb, threads=threads) as bx:
            with T.Scale("block") as (b, n):
                a = T.alloc_shared((R, C), dtype)
                o = T.alloc_shared((nb * R, C), dtype)
                T.copy(X[b, 0, 0], a)
                T.allgather(a, o)
                T.copy(o, Y[b, 0, 0])

    return main


def allgather_ref(nb=4, threads=128, R=3, C=16, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((nb, R, C), dtype), Y: T.Tensor((nb, nb * R, C), dtype)):
        with T.Kernel(1, threads=1) as bx:
            for g in T.serial(nb):
                for p in T.serial(nb):
                    for i in T.serial(R):
                        for j in T.serial(C):
                            Y[g, p * R + i, j] = X[p, i, j]

    return main


def all_to_all(nb=4, threads=128, chunk=2, C=16, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((nb, nb * chunk, C), dtype), Y: T.Tensor((nb, nb * chunk, C), dtype)):
        with T.Kernel(nb, threads=threads) as bx:
            with T.Scale("block") as (b, n):
                a = T.alloc_shared((nb * chunk, C), dtype)
                o = T.alloc_shared((nb * chunk, C), dtype)
                T.copy(X[b, 0, 0], a)
                T.all_to_all(a, o)
                T.copy(o, Y[b, 0, 0])

    return main


def all_to_all_ref(nb=4, threads=128, chunk=2, C=16, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((nb, nb * chunk, C), dtype), Y: T.Tensor((nb, nb * chunk, C), dtype)):
        with T.Kernel(1, threads=1) as bx:
            for g in T.serial(nb):
                for p in T.serial(nb):
                    for i in T.serial(chunk):
                        for j in T.serial(C):
                            Y[g, p * chunk + i, j] = X[p, g * chunk + i, j]

    return main


# A persistent Jacobi-style stencil: `steps` sweeps over N points, block b
# owning points [b * per, (b + 1) * per); every sweep reads the neighbours'
# values of the previous sweep from global memory (ping-pong buffers A/B),
# so a T.sync_grid() ends each sweep: a grid barrier inside a loop.
def stencil(nb=4, per=64, steps=5, threads=64):
    N = nb * per

    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32"), Z: T.Tensor((N,), "float32")):
        with T.Kernel(nb, threads=threads) as b:
            for i in T.Parallel(per):
                Y[b * per + i] = X[b * per + i]
            T.sync_grid()
            for s in T.serial(steps):
                if s % 2 == 0:
                    for i in T.Parallel(per):
                        g = b * per + i
                        Z[g] = 0.5 * Y[g] + 0.25 * (Y[(g + N - 1) % N] + Y[(g + 1) % N])
                else:
                    for i in T.Parallel(per):
                        g = b * per + i
                        Y[g] = 0.5 * Z[g] + 0.25 * (Z[(g + N - 1) % N] + Z[(g + 1) % N])
                T.sync_grid()

    return main


def stencil_ref(nb=4, per=64, steps=5, threads=64):
    N = nb * per

    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32"), Z: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=1) as b:
            for i in T.serial(N):
                Y[i] = X[i]
            for s in T.serial(steps):
                if s % 2 == 0:
                    for g in T.serial(N):
                        Z[g] = 0.5 * Y[g] + 0.25 * (Y[(g + N - 1) % N] + Y[(g + 1) % N])
                else:
                    for g in T.serial(N):
                        Y[g] = 0.5 * Z[g] + 0.25 * (Z[(g + N - 1) % N] + Z[(g + 1) % N])

    return main
