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
