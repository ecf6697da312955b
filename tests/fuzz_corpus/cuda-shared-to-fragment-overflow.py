# FlashAttention forward (BSHD layout), TileLang's online-softmax form:
# scores in a fragment, running max with T.reduce_max, rescaling with
# T.exp2 in T.Parallel loops, T.reduce_sum for the running denominator.
# The naive version computes each output row with plain loops.
#
#   tilescale run examples/flash_attention.py --entry flashattn -D batch=1 -D heads=2 \
#       -D seq_len=128 -D dim=64 -D is_causal=False --check-against attention_naive
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
def flashattn(batch, heads, seq_len, dim, is_causal, block_M=9223372036854775807, block_N=64, num_stages=1, threads=128):
    scale = (1.0 / dim) ** 0.5 * 1.44269504  # log2(e)
    shape = [batch, seq_len, heads, dim]
    dtype = T.float16
    accum_dtype = T.float32

    @T.prim_func
    def main(
        Q: T.Tensor(shape, dtype),
        K: T.Tensor(shape, dtype),
        V: T.Tensor(shape, dtype),
        Output: T.Tensor(shape, dtype),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            O_shared = T.alloc_shared([block_M, dim], dtype)
            acc_s = T.alloc_fragment([block_M, block_N], accum_dtype)
            acc_s_cast = T.alloc_fragment([block_M, block_N], dtype)
            acc_o = T.alloc_fragment([block_M, dim], accum_dtype)
            scores_max = T.alloc_fragment([block_M], accum_dtype)
            scores_max_prev = T.alloc_fragment([block_M], accum_dtype)
            scores_scale = T.alloc_fragment([block_M], accum_dtype)
            scores_sum = T.alloc_fragment([block_M], accum_dtype)
            logsum = T.alloc_fragment([block_M], accum_dtype)

            T.copy(Q[bz, bx * block_M : (bx + 1) * block_M, by, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))

            loop_range = (
                T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N)) if is_causal else T.ceildiv(seq_len, block_N)
            )

            for k in T.Pipelined(loop_range, num_stages=num_stages):
                T.copy(K[bz, k * block_N : (k + 1) * block_N, by, :], K_shared)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0, -T.infinity(acc_s.dtype))
                else:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(k * block_N + j >= seq_len, -T.infinity(acc_s.dtype), 0)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

                T.copy(scores_max, scores_max_prev)
                T.fill(scores_max, -T.infinity(accum_dtype))
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    scores_max[i] = T.max(scores_max[i], scores_max_prev[i])
                for i in T.Parallel(block_M):
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(block_M):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                T.copy(acc_s, acc_s_cast)

                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= scores_scale[i]

                T.copy(V[bz, k * block_N : (k + 1) * block_N, by, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, bx * block_M : (bx + 1) * block_M, by, :])

    return main


@tilelang.jit(out_idx=[3])
def attention_naive(batch, heads, seq_len, dim, is_causal):
    scale = (1.0 / dim) ** 0.5
    shape = [batch, seq_len, heads, dim]

    @T.prim_func
    def main(
        Q: T.Tensor(shape, "float16"),
        K: T.Tensor(shape, "float16"),
        V: T.Tensor(shape, "float16"),
        Output: T.Tensor(shape, "float16"),
    ):
        with T.Kernel(seq_len, heads, batch, threads=1) as (i, h, b):
            p = T.alloc_local([seq_len], "float32")
            mx = T.alloc_var("float32")
            total = T.alloc_var("float32")
            acc = T.alloc_var("float32")
            mx = -T.infinity("float32")
            for j in T.serial(seq_len):
                acc = 0.0
                for d in T.serial(dim):
                    acc += T.cast(Q[b, i, h, d], "float32") * T.cast(K[b, j, h, d], "float32")
                p[j] = acc * scale
                if is_causal:
                    if j > i:
                        p[j] = -T.infinity("float32")
                mx = T.max(mx, p[j])
            total = 0.0
            for j in T.serial(seq_len):
                p[j] = T.exp(p[j] - mx)
                total += p[j]
            for d in T.serial(dim):
                acc = 0.0
                for j in T.serial(seq_len):
                    acc += p[j] * T.cast(V[b, j, h, d], "float32")
                Output[b, i, h, d] = acc / total

    return main
