# Naive multi-head latent attention decode (DeepSeek MLA): the reference
# that bench/cpasync_cpu_check.sh and bench/cpasync_gpu_check.sh hold
# TileLang's deepseek_mla/example_mla_decode_ws.py and
# warp_specialize/example_warp_specialize_flashmla.py against (same
# parameters and tensors).  One thread per (batch, head): scores over
# the whole context in float32, softmax by its maximum, the output as
# the probability-weighted sum of the KV rows.  softmax_scale: the scale of
# the scores (the examples' (dim + pe_dim) ** -0.5 when None).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[6])
def mla_decode_naive(batch, heads, kv_head_num, seqlen_kv, dim, pe_dim, block_N=64, block_H=64, num_split=1,
                     softmax_scale=None):
    scale = (1.0 / (dim + pe_dim)) ** 0.5 if softmax_scale is None else softmax_scale
    group = heads // kv_head_num

    @T.prim_func
    def main(
        Q: T.Tensor([batch, heads, dim], "float16"),
        Q_pe: T.Tensor([batch, heads, pe_dim], "float16"),
        KV: T.Tensor([batch, seqlen_kv, kv_head_num, dim], "float16"),
        K_pe: T.Tensor([batch, seqlen_kv, kv_head_num, pe_dim], "float16"),
        glse: T.Tensor([batch, heads, num_split], "float16"),
        Output_partial: T.Tensor([batch, heads, num_split, dim], "float16"),
        Output: T.Tensor([batch, heads, dim], "float16"),
    ):
        with T.Kernel(heads, batch, threads=1) as (h, b):
            p = T.alloc_local([seqlen_kv], "float32")
            acc = T.alloc_local([dim], "float32")
            g = h // group
            mx = T.alloc_var("float32")
            mx = -T.infinity("float32")
            for s in T.serial(seqlen_kv):
                x = T.alloc_var("float32")
                x = 0.0
                for d in T.serial(dim):
                    x += T.cast(Q[b, h, d], "float32") * T.cast(KV[b, s, g, d], "float32")
                for d in T.serial(pe_dim):
                    x += T.cast(Q_pe[b, h, d], "float32") * T.cast(K_pe[b, s, g, d], "float32")
                p[s] = x * scale
                mx = T.max(mx, p[s])
            tot = T.alloc_var("float32")
            tot = 0.0
            for s in T.serial(seqlen_kv):
                p[s] = T.exp(p[s] - mx)
                tot += p[s]
            for d in T.serial(dim):
                acc[d] = 0.0
            for s in T.serial(seqlen_kv):
                for d in T.serial(dim):
                    acc[d] += p[s] * T.cast(KV[b, s, g, d], "float32")
            for d in T.serial(dim):
                Output[b, h, d] = acc[d] / tot

    return main
