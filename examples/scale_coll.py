# Tile-level collectives between the units of one block (issue 6, part C;
# TileScale's README: `T.allreduce(C_local_wg)` "through software-defined
# channel on L1" between warpgroups).  Inside `with T.Scale("warp")` or
# ("warpgroup"), T.allreduce / T.allgather / T.reduce_scatter / T.all_to_all
# take each unit's own tile (allocated in the body) and run between the
# block's units through shared memory (doc/DISTRIBUTED.md).  Unit u of n
# loads X[u] (different data per unit) and stores its result in Y[u]; the
# *_ref entries compute every unit's result naively on one thread.
#   tilescale run examples/scale_coll.py --entry allreduce -D level=warp -D op=max --check-against allreduce_ref
import tilelang.language as T


def units(level, threads):
    return threads // (32 if level == "warp" else 128)


def allreduce(level="warpgroup", op="sum", threads=256, R=8, C=16, dtype="float32", scope="shared"):
    n = units(level, threads)

    @T.prim_func
    def main(X: T.Tensor((n, R, C), dtype), Y: T.Tensor((n, R, C), dtype)):
        with T.Kernel(1, threads=threads) as bx:
            with T.Scale(level) as (u, nu):
                if scope == "shared":
                    a = T.alloc_shared((R, C), dtype)
                else:
                    a = T.alloc_fragment((R, C), dtype)
                T.copy(X[u, 0, 0], a)
                T.allreduce(a, op=op)
                T.copy(a, Y[u, 0, 0])

    return main


def allreduce_ref(level="warpgroup", op="sum", threads=256, R=8, C=16, dtype="float32", scope="shared"):
    n = units(level, threads)

    @T.prim_func
    def main(X: T.Tensor((n, R, C), dtype), Y: T.Tensor((n, R, C), dtype)):
        with T.Kernel(1, threads=1) as bx:
            for i in T.serial(R):
                for j in T.serial(C):
                    acc = T.alloc_var("float32")
                    acc = X[0, i, j]
                    for p in T.serial(n - 1):
                        if op == "sum":
                            acc = acc + X[p + 1, i, j]
                        elif op == "max":
                            acc = T.max(acc, X[p + 1, i, j])
                        else:
                            acc = T.min(acc, X[p + 1, i, j])
                    for p in T.serial(n):
                        Y[p, i, j] = acc

    return main


def reduce_scatter(level="warpgroup", op="sum", threads=256, R=4, C=16, dtype="float32"):
    n = units(level, threads)

    @T.prim_func
    def main(X: T.Tensor((n, n * R, C), dtype), Y: T.Tensor((n, R, C), dtype)):
        with T.Kernel(1, threads=threads) as bx:
            with T.Scale(level) as (u, nu):
                a = T.alloc_shared((n * R, C), dtype)
                b = T.alloc_shared((R, C), dtype)
                T.copy(X[u, 0, 0], a)
                T.reduce_scatter(a, b, op=op)
                T.copy(b, Y[u, 0, 0])

    return main


def reduce_scatter_ref(level="warpgroup", op="sum", threads=256, R=4, C=16, dtype="float32"):
    n = units(level, threads)

    @T.prim_func
    def main(X: T.Tensor((n, n * R, C), dtype), Y: T.Tensor((n, R, C), dtype)):
        with T.Kernel(1, threads=1) as bx:
            for g in T.serial(n):
                for i in T.serial(R):
                    for j in T.serial(C):
                        acc = T.alloc_var("float32")
                        acc = X[0, g * R + i, j]
                        for p in T.serial(n - 1):
                            if op == "sum":
                                acc = acc + X[p + 1, g * R + i, j]
                            elif op == "max":
                                acc = T.max(acc, X[p + 1, g * R + i, j])
                            else:
                                acc = T.min(acc, X[p + 1, g * R + i, j])
                        Y[g, i, j] = acc

    return main


def allgather(level="warpgroup", threads=256, R=4, C=16, dtype="float32"):
    n = units(level, threads)

    @T.prim_func
    def main(X: T.Tensor((n, R, C), dtype), Y: T.Tensor((n, n * R, C), dtype)):
        with T.Kernel(1, threads=threads) as bx:
            with T.Scale(level) as (u, nu):
                a = T.alloc_shared((R, C), dtype)
                b = T.alloc_shared((n * R, C), dtype)
                T.copy(X[u, 0, 0], a)
                T.allgather(a, b)
                T.copy(b, Y[u, 0, 0])

    return main


def allgather_ref(level="warpgroup", threads=256, R=4, C=16, dtype="float32"):
    n = units(level, threads)

    @T.prim_func
    def main(X: T.Tensor((n, R, C), dtype), Y: T.Tensor((n, n * R, C), dtype)):
        with T.Kernel(1, threads=1) as bx:
            for g in T.serial(n):
                for s in T.serial(n):
                    for i in T.serial(R):
                        for j in T.serial(C):
                            Y[g, s * R + i, j] = X[s, i, j]

    return main


def all_to_all(level="warpgroup", threads=256, chunk=2, C=16, dtype="float32"):
    n = units(level, threads)

    @T.prim_func
    def main(X: T.Tensor((n, n * chunk, C), dtype), Y: T.Tensor((n, n * chunk, C), dtype)):
        with T.Kernel(1, threads=threads) as bx:
            with T.Scale(level) as (u, nu):
                a = T.alloc_shared((n * chunk, C), dtype)
                b = T.alloc_shared((n * chunk, C), dtype)
                T.copy(X[u, 0, 0], a)
                T.all_to_all(a, b)
                T.copy(b, Y[u, 0, 0])

    return main


def all_to_all_ref(level="warpgroup", threads=256, chunk=2, C=16, dtype="float32"):
    n = units(level, threads)

    @T.prim_func
    def main(X: T.Tensor((n, n * chunk, C), dtype), Y: T.Tensor((n, n * chunk, C), dtype)):
        with T.Kernel(1, threads=1) as bx:
            for g in T.serial(n):
                for p in T.serial(n):
                    for i in T.serial(chunk):
                        for j in T.serial(C):
                            Y[g, p * chunk + i, j] = X[p, g * chunk + i, j]

    return main


def wg_gemm_allreduce(M=64, N=64, K=64):
    # TileScale's README: each warpgroup multiplies its half of K into its own
    # accumulator, T.allreduce sums them, each writes its rows of C
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=256) as bx:
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((K, N), "float16")
            C_s = T.alloc_shared((M, N), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            with T.Scale("warpgroup") as (wg, nwg):
                acc = T.alloc_fragment((M, N), "float32")
                T.clear(acc)
                T.gemm(T.view(A_s, layout=T.FullCol), T.view(B_s, layout=T.FullRow), acc)
                T.allreduce(acc)
                T.copy(T.view(acc, layout=T.FullRow), T.view(C_s, layout=T.FullRow))
            T.copy(C_s, C)

    return main


def wg_gemm_allreduce_ref(M=64, N=64, K=64):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=1) as bx:
            for i in T.serial(M):
                for j in T.serial(N):
                    C[i, j] = 0.0
                    for k in T.serial(K):
                        C[i, j] = C[i, j] + T.cast(A[i, k], "float32") * T.cast(B[k, j], "float32")

    return main
