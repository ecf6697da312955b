# A cooperative kernel run by several ranks at once (session 9): each rank's
# blocks fold their tiles with T.allreduce inside T.Scale("block") (a
# collective between the grid's blocks: staging in the launch's grid
# workspace, grid barriers), `steps` times in a loop, adding their own X
# tile after each.  Every rank launches the module concurrently, so two
# launches that shared one workspace would mix the ranks' tiles (or break
# each other's barrier counts); each launch has its own (the C target's
# scheduler allocates it per launch; CUDA: cuda_drv.c per launch on the
# launch's stream, so the local world lets ranks share a GPU).
# Per rank: M = max over blocks of X[b]; Y[b] = steps * M + X[b].
#   tilescale run tests/run/kernels/coop_ranks.py --entry fold --ranks 2 --check-against fold_ref
import tilelang.language as T


def fold(nb=4, R=4, C=16, steps=6, threads=64):
    @T.prim_func
    def main(X: T.Tensor((nb, R, C), "float32"), Y: T.Tensor((nb, R, C), "float32")):
        with T.Kernel(nb, threads=threads) as bx:
            with T.Scale("block") as (b, n):
                a = T.alloc_shared((R, C), "float32")
                T.copy(X[b, 0, 0], a)
                for s in T.serial(steps):
                    T.allreduce(a, op="max")
                    for i, j in T.Parallel(R, C):
                        a[i, j] = a[i, j] + X[b, i, j]
                T.copy(a, Y[b, 0, 0])

    return main


# Reference: all P ranks at once (leading axis = rank; the CLI passes P).
def fold_ref(P, nb=4, R=4, C=16, steps=6, threads=64):
    @T.prim_func
    def main(X: T.Tensor((P, nb, R, C), "float32"), Y: T.Tensor((P, nb, R, C), "float32")):
        with T.Kernel(P, threads=1) as r:
            for i in T.serial(R):
                for j in T.serial(C):
                    m = T.alloc_var("float32")
                    m = X[r, 0, i, j]
                    for b in T.serial(nb - 1):
                        m = T.max(m, X[r, b + 1, i, j])
                    for b in T.serial(nb):
                        Y[r, b, i, j] = m * steps + X[r, b, i, j]

    return main
