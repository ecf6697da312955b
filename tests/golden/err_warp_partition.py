# ARGS: compile FILE --entry wp
# T.GemmWarpPolicy.FullRow.compute_warp_partition with fewer than 16 rows:
# no warp fits along M, where TileLang's Python divides by zero; here an
# error at the call naming the values.
import tilelang.language as T


def wp(M=8):
    m_warp, n_warp = T.GemmWarpPolicy.FullRow.compute_warp_partition(M, 64, 4)

    @T.prim_func
    def main(A: T.Tensor((2,), "int32")):
        with T.Kernel(1, threads=1) as bx:
            A[0] = m_warp
            A[1] = n_warp

    return main
