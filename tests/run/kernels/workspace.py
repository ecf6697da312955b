# T.alloc_global workspaces (hidden parameters the launch allocates), against
# naive kernels: tests/run/workspace.sh on the C target (run and the C API),
# tests/unit/test_interp_examples.c through the CUDA passes, and
# bench/gpu_covlang.sh on a GPU.
import tilelang
import tilelang.language as T


# A split sum as TileLang's flash_decoding examples write their split-KV
# attention: kernel 1 writes per-split partial row sums (and how many
# columns each split saw) into two workspaces, kernel 2 of the chain
# combines them; rows of a partial last split.
@tilelang.jit(out_idx=[1, 2])
def split_sum(M=24, N=100, S=4, block_M=8):
    chunk = (N + S - 1) // S

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M,), "float32"), C: T.Tensor((M,), "int32")):
        part = T.alloc_global([S, M], "float32")
        cnt = T.alloc_global((S, M), "int32")
        with T.Kernel(T.ceildiv(M, block_M), S, threads=32) as (bx, s):
            for i in T.Parallel(block_M):
                m = bx * block_M + i
                if m < M:
                    acc = T.alloc_var("float32")
                    n = T.alloc_var("int32")
                    acc = 0.0
                    n = 0
                    for j in T.serial(chunk):
                        if s * chunk + j < N:
                            acc += X[m, s * chunk + j]
                            n += 1
                    part[s, m] = acc
                    cnt[s, m] = n
        with T.Kernel(T.ceildiv(M, block_M), threads=32) as bx:
            for i in T.Parallel(block_M):
                m = bx * block_M + i
                if m < M:
                    tot = T.alloc_var("float32")
                    c = T.alloc_var("int32")
                    tot = 0.0
                    c = 0
                    for k in T.serial(S):
                        tot += part[k, m]
                        c += cnt[k, m]
                    Y[m] = tot
                    C[m] = c

    return main


@tilelang.jit(out_idx=[1, 2])
def split_sum_naive(M=24, N=100, S=4, block_M=8):
    chunk = (N + S - 1) // S

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M,), "float32"), C: T.Tensor((M,), "int32")):
        with T.Kernel(M, threads=1) as m:
            tot = T.alloc_var("float32")
            tot = 0.0
            for k in T.serial(S):
                acc = T.alloc_var("float32")
                acc = 0.0
                for j in T.serial(chunk):
                    if k * chunk + j < N:
                        acc += X[m, k * chunk + j]
                tot += acc
            Y[m] = tot
            C[m] = N

    return main
