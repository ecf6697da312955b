# ARGS: compile FILE --entry red2 --target cuda --dump-after plan_smem -D M=64 -D N=64 -D K=32 -D iters=3
# ENV: TILESCALE_CUDA_ARCH=sm_90 TILESCALE_CUDA_SMEM_REUSE=1
# plan_smem inside a loop body (issue 8 part D): the two cross-warp row
# reductions of each iteration (8 warps side by side on the 64-wide tile)
# each get a transient red_smem scratch allocated in the loop body; their
# live ranges there are apart, so both take the same 2 KB (smem[8192,
# 10240)), with a barrier added before the second reduction's first write
# (after the first one's reads) and one at the end of the body (the second
# one's reads, then the first one's writes in the next iteration).  As and
# Bs, used through the whole loop, share with nothing.
import tilelang
import tilelang.language as T


@tilelang.jit
def red2(M, N, K, iters):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"),
             O: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=256) as bx:
            As = T.alloc_shared((M, K), "float16")
            Bs = T.alloc_shared((N, K), "float16")
            S = T.alloc_fragment((M, N), "float32")
            C = T.alloc_fragment((M, N), "float32")
            mx = T.alloc_fragment((M,), "float32")
            sm = T.alloc_fragment((M,), "float32")
            T.clear(C)
            T.copy(B, Bs)
            T.copy(A, As)
            for it in T.serial(iters):
                T.gemm(As, Bs, S, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)
                T.reduce_max(S, mx, dim=1)
                T.reduce_sum(S, sm, dim=1)
                for i, j in T.Parallel(M, N):
                    C[i, j] += S[i, j] - mx[i] + sm[i] * (it + 1)
            T.copy(C, O)
    return main
