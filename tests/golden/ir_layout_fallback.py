# ARGS: compile FILE --entry softmax -D M=64 -D N=40 --target cuda --dump-after layout_inference
# layout_inference gives up when a reduction crosses warps (40-element rows do
# not fit the lanes of one warp, so they are spread
# cyclically over 128 threads): the kernel keeps its fragments in shared
# memory, the reductions are lowered generically, and the IR says why.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def softmax(M, N, block_M=16):
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
