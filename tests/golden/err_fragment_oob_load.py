# ARGS: compile FILE --entry shifted -D M=16 -D N=32 --target cuda
# ENV: TILESCALE_CUDA_ARCH=sm_90
# A load provably outside a fragment, in its second dimension and below
# zero (j - 1 for j = 0), inside a two-level T.Parallel nest: check_bounds
# names the dimension; the guarded read beside it (j > 0 first) is fine.
import tilelang.language as T


def shifted(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_fragment((M, N), "float32")
            b = T.alloc_fragment((M, N), "float32")
            T.copy(A, a)
            for i, j in T.Parallel(M, N):
                b[i, j] = T.if_then_else(j > 0, a[i, j - 1], 0.0)
            for i, j in T.Parallel(M, N):
                b[i, j] = b[i, j] + a[i, j - 1]
            T.copy(b, B)

    return main
