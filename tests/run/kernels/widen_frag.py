# Fragments indexed by a T.Parallel nest's own loop variables past their
# declared extent (pass widen_fragments): TileLang gives such a fragment the
# loop's layout, so its elements up to the loop's extent each have a
# register; ours is widened to the loop's extent, with a warning.
#   sink_rows: TileLang's attention-sink forward in small (its backward
#     examples' `sinks = T.alloc_fragment([heads])` written for every row of
#     T.Parallel(block_M), then read per row beside a row reduction of a
#     real tile); each row's value differs (Sinks[by] + i / 2), so a read
#     that meets another row's element shows.
#   grid2: a [2, 8] fragment written and read by T.Parallel(M, N).
# The *_naive entries compute the same with serial loops over global
# memory only (no fragment).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2, 3])
def sink_rows(heads=4, block_M=64, N=32, threads=128):
    @T.prim_func
    def main(
        X: T.Tensor((heads, block_M, N), "float32"),
        Sinks: T.Tensor((heads,), "float32"),
        Out: T.Tensor((heads, block_M, N), "float32"),
        L: T.Tensor((heads, block_M), "float32"),
    ):
        with T.Kernel(heads, threads=threads) as by:
            sinks = T.alloc_fragment([heads], "float32")
            acc = T.alloc_fragment([block_M, N], "float32")
            rows = T.alloc_fragment([block_M], "float32")
            T.copy(X[by, :, :], acc)
            for i in T.Parallel(block_M):
                sinks[i] = Sinks[by] + i * 0.5
            T.reduce_sum(acc, rows, dim=1)
            for i in T.Parallel(block_M):
                rows[i] += T.exp2(sinks[i] * 0.125)
            for i, j in T.Parallel(block_M, N):
                acc[i, j] = acc[i, j] * sinks[i] + rows[i]
            T.copy(acc, Out[by, :, :])
            T.copy(rows, L[by, :])

    return main


@tilelang.jit(out_idx=[2, 3])
def sink_rows_naive(heads=4, block_M=64, N=32, threads=128):
    @T.prim_func
    def main(
        X: T.Tensor((heads, block_M, N), "float32"),
        Sinks: T.Tensor((heads,), "float32"),
        Out: T.Tensor((heads, block_M, N), "float32"),
        L: T.Tensor((heads, block_M), "float32"),
    ):
        with T.Kernel(heads, threads=1) as by:
            for i in T.serial(block_M):
                L[by, i] = 0.0
                for j in T.serial(N):
                    L[by, i] = L[by, i] + X[by, i, j]
                L[by, i] = L[by, i] + T.exp2((Sinks[by] + i * 0.5) * 0.125)
                for j in T.serial(N):
                    Out[by, i, j] = X[by, i, j] * (Sinks[by] + i * 0.5) + L[by, i]

    return main


@tilelang.jit(out_idx=[1])
def grid2(M=16, N=32, threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            f = T.alloc_fragment([2, 8], "float32")
            for i, j in T.Parallel(M, N):
                f[i, j] = A[i, j] * 2.0 + i
            for i, j in T.Parallel(M, N):
                B[i, j] = f[i, j] - j

    return main


@tilelang.jit(out_idx=[1])
def grid2_naive(M=16, N=32, threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=1) as bx:
            for i in T.serial(M):
                for j in T.serial(N):
                    B[i, j] = A[i, j] * 2.0 + i - j

    return main


# Refused as before (check_bounds): accesses past the extent that are not a
# T.Parallel nest's bare loop variables, or not of a fragment.
#   how=serial:  a T.serial loop writes sinks[i]
#   how=shared:  a shared buffer written at a T.Parallel variable
#   how=partial: f[i] inside T.Parallel(M, N) (not the whole nest's variables)
#   how=view:    the fragment has a view (T.reshape), whose size is its own
def refused(how="serial", heads=4, block_M=64):
    @T.prim_func
    def main(Sinks: T.Tensor((heads,), "float32"), Out: T.Tensor((heads, block_M), "float32")):
        with T.Kernel(heads, threads=128) as by:
            f = T.alloc_fragment([heads], "float32")
            s = T.alloc_shared([heads], "float32")
            if how == "serial":
                for i in T.serial(block_M):
                    f[i] = Sinks[by]
            elif how == "shared":
                for i in T.Parallel(block_M):
                    s[i] = Sinks[by]
            elif how == "partial":
                for i, j in T.Parallel(block_M, 2):
                    f[i] = Sinks[by] + j
            else:
                v = T.reshape(f, [2, heads // 2])
                for i in T.Parallel(block_M):
                    f[i] = Sinks[by]
                Out[by, 0] = v[0, 0]
            for i in T.Parallel(block_M):
                Out[by, i] = f[0] * i + s[0]

    return main
