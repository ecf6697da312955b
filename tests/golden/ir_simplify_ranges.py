# ARGS: compile FILE --entry kern -D M=200 --dump-after simplify
# simplify with the integer analysis: guards proven by loop, thread and
# block ranges disappear, divisions by the tile size fold, what cannot be
# proven (the partial tile in M) stays.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def kern(M, N=128, block=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
            acc = T.alloc_fragment((block, N), "float32")
            for i, j in T.Parallel(block, N // 4):
                for v in T.serial(4):
                    if j * 4 + v < N and bx * block + i < M:
                        acc[i, (j * 4 + v) // 4 * 4 + (j * 4 + v) % 4] = A[bx * block + i, j * 4 + v]
                    else:
                        acc[i, j * 4 + v] = 0.0
            for i, j in T.Parallel(block, N):
                if (bx * block + i) // block == bx:
                    acc[i, j] = acc[i, j] + T.min(j, N) + (i * N + j) % N
            T.copy(acc, B[bx * block, 0])

    return main
