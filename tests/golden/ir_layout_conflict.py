# ARGS: compile FILE --entry twoacc -D M=64 -D N=64 -D K=32 --target cuda --dump-after layout_inference
# Two instructions fix different layouts for one fragment (issue 5 A): Cl is
# the accumulator of a gemm on a 4 x 1 warp grid and of one on 1 x 4.  No
# loop can re-lay it out between them, so layout inference stops: the note
# names the fragment, both layouts and both gemms by position, and the
# fragments stay in shared memory (the kernel is correct, not fast).
import tilelang
import tilelang.language as T


@tilelang.jit
def twoacc(M, N, K):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            As = T.alloc_shared((M, K), "float16")
            Bs = T.alloc_shared((K, N), "float16")
            Cl = T.alloc_fragment((M, N), "float32")
            T.copy(A[0, 0], As)
            T.copy(B[0, 0], Bs)
            T.gemm(As, Bs, Cl, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
            T.gemm(As, Bs, Cl, policy=T.GemmWarpPolicy.FullCol)
            T.copy(Cl, C[0, 0])

    return main
