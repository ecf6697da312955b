# A planted bug for run.example_softmax's control case: examples/softmax.py
# with a row maximum that starts at 0 instead of -inf (T.fill(row_max, 0)
# and reduce_max with clear=False).  On inputs in [-1, 1] it gives the right
# answer (the subtracted value does not matter), so --check-against
# softmax_naive passes; on rows at -1000 every exp underflows and 0/0 is
# NaN, which the NumPy reference must catch.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def softmax(M, N, block_M=16, dtype="float32"):
    log2e = 1.44269504

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, N), "float32")
            row_max = T.alloc_fragment((block_M,), "float32")
            row_sum = T.alloc_fragment((block_M,), "float32")

            T.copy(X[bx * block_M, 0], x)
            T.fill(row_max, 0.0)
            T.reduce_max(x, row_max, dim=1, clear=False)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.exp2((x[i, j] - row_max[i]) * log2e)
            T.reduce_sum(x, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] / row_sum[i]
            T.copy(x, Y[bx * block_M, 0])

    return main


@tilelang.jit(out_idx=[1])
def softmax_naive(M, N, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(M, threads=1) as i:
            mx = T.alloc_var("float32")
            total = T.alloc_var("float32")
            mx = -T.infinity("float32")
            for j in T.serial(N):
                mx = T.max(mx, X[i, j])
            total = 0.0
            for j in T.serial(N):
                total += T.exp(X[i, j] - mx)
            for j in T.serial(N):
                Y[i, j] = T.exp(X[i, j] - mx) / total

    return main
