# ARGS: list FILE
# `tilescale list FILE`: every kind of entry with its parameters as written
# (defaults spanning lines, with comments, strings holding commas and
# brackets), factories returning factories, eager kernels (tensors and
# T.const names), top-level prim_funcs (tensors and scalars), a def that
# does not parse; @T.macro definitions and plain helpers are not entries.
import tilelang
import tilelang.language as T


def helper(x):
    return x * 2


@T.macro
def add_one(buf, i):
    buf[i] = buf[i] + 1


@tilelang.jit(out_idx=[-1, 1], pass_configs={"a": (1, 2)})
def factory(M, N: int, block=(16, 32)[0], name="a, b) [c", dtype=T.float16,
            scale=1.5,  # a comment, then the next line
            flag=True, *args, **kwargs):
    """Scale a matrix.

    More text the listing does not show.
    """
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(1) as bx:
            B[0, 0] = A[0, 0]

    return main


def tuned(M, K):
    def kernel(block_M=64, threads=128):
        @T.prim_func
        def main(A: T.Tensor((M, K), "float32")):
            with T.Kernel(1, threads=threads) as bx:
                A[0, 0] = 1.0

        return main

    return kernel


@tilelang.jit
def eager(X, factor, blocks=4):
    N, L = T.const("N, L")
    X: T.Tensor((N, L), "float32")
    Y = T.empty((N, L), "float32")
    with T.Kernel(blocks) as bx:
        Y[0, 0] = X[0, 0] * factor
    return Y


@T.prim_func
def direct(A: T.Tensor((64,), "float32"), n: T.int32):
    with T.Kernel(1) as bx:
        A[0] = n


def broken(M:
    return M
