# Warp-specialized FlashAttention forward in the thread-index style of TileScale's
# sp_ag_attention (enable_specialized) and DeepSeek's MLA decoders: threads 0..255 are the
# consumers (QK^T gemm, online softmax, PV gemm), threads 256..383 the producer (Q, K and V
# tiles into shared memory), handing the tiles over through mbarriers.  The `if tid < 256:` /
# `elif tid < 384:` branches become T.ws roles (pass thread_roles), so their tile ops are the
# work of their own threads.  Each role runs its own K loop, so the roles must run at the same
# time: on the C target, which runs roles one after another, the first wait that only the other
# role can complete is an error (doc/LANGUAGE.md); check it on the GPU:
#
#   tilescale run examples/ws_flash_attention.py --entry flashattn_ws -D batch=1 -D heads=2 \
#       -D seq_len=256 -D dim=64 -D is_causal=True --target cuda --check-against attention_naive
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3])
def flashattn_ws(batch, heads, seq_len, dim, is_causal, block_M=64, block_N=64):
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
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=384) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            acc_s = T.alloc_fragment([block_M, block_N], accum_dtype)
            acc_s_cast = T.alloc_fragment([block_M, block_N], dtype)
            acc_o = T.alloc_fragment([block_M, dim], accum_dtype)
            scores_max = T.alloc_fragment([block_M], accum_dtype)
            scores_max_prev = T.alloc_fragment([block_M], accum_dtype)
            scores_scale = T.alloc_fragment([block_M], accum_dtype)
            scores_sum = T.alloc_fragment([block_M], accum_dtype)
            logsum = T.alloc_fragment([block_M], accum_dtype)

            # tile ready: the producer's 128 threads arrive; tile free: the consumers' 256
            q_ready = T.alloc_barrier(arrive_count=128)
            k_ready = T.alloc_barrier(arrive_count=128)
            v_ready = T.alloc_barrier(arrive_count=128)
            k_free = T.alloc_barrier(arrive_count=256)
            v_free = T.alloc_barrier(arrive_count=256)

            loop_range = (
                T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N)) if is_causal else T.ceildiv(seq_len, block_N)
            )
            tid = T.get_thread_binding(0)
            if tid < 256:
                T.fill(acc_o, 0)
                T.fill(logsum, 0)
                T.fill(scores_max, -T.infinity(accum_dtype))
                T.barrier_wait(q_ready, 0)
                for k in T.serial(loop_range):
                    if is_causal:
                        for i, j in T.Parallel(block_M, block_N):
                            acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0, -T.infinity(accum_dtype))
                    else:
                        for i, j in T.Parallel(block_M, block_N):
                            acc_s[i, j] = T.if_then_else(k * block_N + j >= seq_len, -T.infinity(accum_dtype), 0)
                    T.barrier_wait(k_ready, k % 2)
                    T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                    T.barrier_arrive(k_free)

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

                    T.barrier_wait(v_ready, k % 2)
                    T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
                    T.barrier_arrive(v_free)
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] /= logsum[i]
                T.copy(acc_o, Output[bz, bx * block_M : (bx + 1) * block_M, by, :])
            elif tid < 384:
                T.copy(Q[bz, bx * block_M : (bx + 1) * block_M, by, :], Q_shared)
                T.barrier_arrive(q_ready)
                for k in T.serial(loop_range):
                    T.barrier_wait(k_free, (k + 1) % 2)
                    T.copy(K[bz, k * block_N : (k + 1) * block_N, by, :], K_shared)
                    T.barrier_arrive(k_ready)
                    T.barrier_wait(v_free, (k + 1) % 2)
                    T.copy(V[bz, k * block_N : (k + 1) * block_N, by, :], V_shared)
                    T.barrier_arrive(v_ready)

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
