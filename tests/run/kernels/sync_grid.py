# T.sync_grid() at the top level of a kernel body: every block's writes
# before it are seen by every block after it.  Pass split_grid makes it the
# boundary of two launches of the chain (a cooperative launch is not built).
# Block b sums its chunk of X into the workspace W[b]; after the grid
# barrier every block reads all the partial sums and centres its chunk:
# Y[i] = X[i] - mean(X).  A shared tile declared before the barrier and used
# only after it goes with the second launch.  tests/run/sync_grid.sh runs it.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def centre(N=1000, nblocks=8):
    per = (N + nblocks - 1) // nblocks

    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        W = T.alloc_global([nblocks], "float32")
        with T.Kernel(nblocks, threads=32) as b:
            parts = T.alloc_shared([nblocks], "float32")
            acc = T.alloc_var("float32")
            acc = 0.0
            for j in T.serial(per):
                if b * per + j < N:
                    acc += X[b * per + j]
            W[b] = acc
            T.sync_grid()
            tot = T.alloc_var("float32")
            T.copy(W, parts)
            tot = 0.0
            for k in T.serial(nblocks):
                tot += parts[k]
            for j in T.Parallel(per):
                if b * per + j < N:
                    Y[b * per + j] = X[b * per + j] - tot / N

    return main


@tilelang.jit(out_idx=[1])
def centre_naive(N=1000, nblocks=8):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=1) as b:
            tot = T.alloc_var("float32")
            tot = 0.0
            for i in T.serial(N):
                tot += X[i]
            for i in T.serial(N):
                Y[i] = X[i] - tot / N

    return main


# A T.sync_grid() that block-local state crosses (the shared tile s): the
# kernel is cooperative (one launch, a grid barrier): every block reads its
# chunk of X into s, and after the barrier writes it over the mirrored chunk.
@tilelang.jit
def mirror(nblocks=4, per=16):
    N = nblocks * per

    @T.prim_func
    def main(X: T.Tensor((N,), "float32")):
        with T.Kernel(nblocks, threads=32) as b:
            s = T.alloc_shared([per], "float32")
            T.copy(X[b * per : b * per + per], s)
            T.sync_grid()
            T.copy(s, X[(nblocks - 1 - b) * per : (nblocks - b) * per])

    return main


@tilelang.jit
def mirror_naive(nblocks=4, per=16):
    N = nblocks * per

    @T.prim_func
    def main(X: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=1) as b:
            t = T.alloc_local([N], "float32")
            for i in T.serial(N):
                t[i] = X[i]
            for i in T.serial(N):
                X[i] = t[(nblocks - 1 - i // per) * per + i % per]

    return main


# A value read before the barrier and used after it (a let reading memory),
# and the barrier in a loop: `rounds` times, every block reads X[b], waits
# for the grid, writes it to X[b + 1] and waits again: X shifts right by
# one each round (X[0] stays).
@tilelang.jit
def shift(nblocks=5, rounds=3):
    @T.prim_func
    def main(X: T.Tensor((nblocks + 1,), "float32")):
        with T.Kernel(nblocks, threads=32) as b:
            for r in T.serial(rounds):
                v = X[b]
                T.sync_grid()
                X[b + 1] = v
                T.sync_grid()

    return main


@tilelang.jit
def shift_naive(nblocks=5, rounds=3):
    @T.prim_func
    def main(X: T.Tensor((nblocks + 1,), "float32")):
        with T.Kernel(1, threads=1) as b:
            for r in T.serial(rounds):
                for j in T.serial(nblocks):
                    X[nblocks - j] = X[nblocks - 1 - j]

    return main
