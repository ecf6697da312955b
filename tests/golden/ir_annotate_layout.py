# ARGS: compile FILE --entry tr -D M=256 -D N=256 -D bm=64 -D bn=64 --target cuda --dump-after layout_inference
# ENV: TILESCALE_CUDA_ARCH=sm_90
# T.annotate_layout on a shared tile (issue 5 B): a def mapping the indices to
# physical indices is recognized as the XOR swizzle of 16-byte chunks it is
# (swizzle(3, 3, 3): chunk j // 8 XORed with i % 8) and recorded on the buffer
# as annotated, which layout inference keeps; T.use_swizzle(..., order="col")
# numbers the blocks in panels of columns (rasterize, after this pass).
import tilelang
import tilelang.language as T


def swz(i, j):
    return i, j ^ ((i % 8) * 8)


@tilelang.jit
def tr(M, N, bm, bn):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float16"), Y: T.Tensor((N, M), "float16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            S = T.alloc_shared((bm, bn), "float16")
            T.annotate_layout({S: swz})
            T.use_swizzle(2, order="col")
            T.copy(X[by * bm, bx * bn], S)
            for j, i in T.Parallel(bn, bm):
                Y[bx * bn + j, by * bm + i] = S[i, j]
    return main
