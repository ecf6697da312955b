# ARGS: compile FILE --entry rowmax --target cuda --dump-after layout_inference
# layout_inference on FlashAttention's pattern: the scores S get the mma.sync
# accumulator layout (FullRow: 4 x 1 warps), the row maximum the row
# projection (replicated over the 4 lanes of a row group), T.reduce_max
# becomes per-thread partials plus two warp shuffles, the row-indexed loop
# reads the replicated registers, and P (float16, same layout) feeds the
# second gemm from registers.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3])
def rowmax(M=64, N=32, D=32):
    @T.prim_func
    def main(Q: T.Tensor((M, D), "float16"), K: T.Tensor((N, D), "float16"), V: T.Tensor((N, D), "float16"),
             O: T.Tensor((M, D), "float16")):
        with T.Kernel(1, threads=128) as bx:
            Q_s = T.alloc_shared((M, D), "float16")
            K_s = T.alloc_shared((N, D), "float16")
            V_s = T.alloc_shared((N, D), "float16")
            S = T.alloc_fragment((M, N), "float32")
            P = T.alloc_fragment((M, N), "float16")
            O_f = T.alloc_fragment((M, D), "float32")
            mx = T.alloc_fragment((M,), "float32")
            T.copy(Q, Q_s)
            T.copy(K, K_s)
            T.copy(V, V_s)
            T.clear(S)
            T.clear(O_f)
            T.gemm(Q_s, K_s, S, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
            T.reduce_max(S, mx, dim=1)
            for i, j in T.Parallel(M, N):
                S[i, j] = T.exp2(S[i, j] - mx[i])
            T.copy(S, P)
            T.gemm(P, V_s, O_f, policy=T.GemmWarpPolicy.FullRow)
            T.copy(O_f, O)

    return main
