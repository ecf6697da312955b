# ARGS: compile FILE --entry kern -D n=16 --target c --emit ir
# T.atomic_addx4(dst[i, j], src[k, l]) adds 4 consecutive elements along the
# last dimension (x2: 2): here four element atomic adds each (TileLang issues
# one vector atomic; a sum does not depend on the grouping).
import tilelang.language as T


def kern(n):
    @T.prim_func
    def main(A: T.Tensor((n, 8), "float32"), G: T.Tensor((4, 8), "float32")):
        with T.Kernel(n, threads=32) as bx:
            S = T.alloc_shared((8,), "float32")
            for j in T.Parallel(8):
                S[j] = A[bx, j]
            for j in T.Parallel(2):
                T.atomic_addx4(G[bx % 4, j * 4], S[j * 4])
            T.atomic_addx2(G[0, 6], S[0])

    return main
