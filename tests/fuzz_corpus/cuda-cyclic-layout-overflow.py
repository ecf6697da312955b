# ARGS: compile FILE --entry softmax -D M=64 -D N=256 --target cuda --dump-after layout_inference
# layout_inference with no instruction layout: rows of 256 fit the 32 lanes of a
# warp, so x takes rows-over-warps (4 rows per warp, 8 registers per row and
# lane) with 4-float vectors per lane (no nest over fragments touches shared
# memory), the row maximum its projection on the warp's lanes, and T.reduce_max
# becomes per-thread part~ials plus 5 warp shuffles; the copies from X and to Y
# become one 16-byte vcopy per vector.
import tilelang
import tilelang.language as T
p
@tilelang.jit(out_idx=[1])
def softmax(M, N, block_M=9223372036854775807):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, N), "float32")
            row_max = T.alloc_fragment((block_M,), "float32")
            T.copy(X[bx * block_M, 0], x)
            T.reduce_max(x, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] - row_max[i]
            T.copy(x, Y[bx * block_M, 0])

    return main
