# ARGS: compile FILE --entry twogrids -D M=64 -D N=64 -D K=32 --target cuda --dump-after layout_inference
# Two uses that need different layouts (issue 5 A): C1 is the accumulator of
# a gemm on a 4 x 1 warp grid, C2 of one on 1 x 4, and the T.Parallel loop
# run by C1's layout reads C2 at elements other threads hold.  C2 keeps its
# mma layout; the loop reads a shared copy of it, C2_relayout, which every
# thread fills from its registers by C2's layout first (barrier between;
# insert_sync places the barriers again).  Everything stays in registers.
import tilelang
import tilelang.language as T


@tilelang.jit
def twogrids(M, N, K):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            As = T.alloc_shared((M, K), "float16")
            Bs = T.alloc_shared((K, N), "float16")
            C1 = T.alloc_fragment((M, N), "float32")
            C2 = T.alloc_fragment((M, N), "float32")
            T.copy(A[0, 0], As)
            T.copy(B[0, 0], Bs)
            T.gemm(As, Bs, C1, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
            T.gemm(As, Bs, C2, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)
            for i, j in T.Parallel(M, N):
                C1[i, j] = C1[i, j] - C2[i, j] * 0.5
            T.copy(C1, C[0, 0])

    return main
