# Naive sparse MLA forward (DeepSeek V3.2's attention over top-k selected
# KV rows): the reference that bench/cpasync_cpu_check.sh and
# bench/cpasync_gpu_check.sh hold TileLang's deepseek_v32/
# sparse_mla_fwd_pipelined.py and sparse_mla_fwd_seesaw.py against, on the
# same inputs (tests/run/sparse_mla_inputs.py), for kv_group 1 and CP0
# False.  One thread per (query, head): row t of the selection counts when
# Indices[b, s, 0, t] <= (q_start + s + 1 - kv_stride) // kv_stride (the
# causal limit; the kernels' is_kv_valid), scores over the dim + tail_dim
# channels scaled by (dim + tail_dim) ** -0.5, softmax over the counted
# rows, the output the weighted sum of their first `dim` channels.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[4])
def sparse_mla_naive(batch, seq_len, seq_len_kv, heads, dim, tail_dim, topk, kv_stride=1):
    scale = (1.0 / (dim + tail_dim)) ** 0.5
    DQ = dim + tail_dim

    @T.prim_func
    def main(
        Q: T.Tensor([batch, seq_len, heads, DQ], "bfloat16"),
        KV: T.Tensor([batch, seq_len_kv, 1, DQ], "bfloat16"),
        Indices: T.Tensor([batch, seq_len, 1, topk], "int32"),
        q_start_index_s: T.Tensor([1], "int32"),
        Output: T.Tensor([batch, seq_len, heads, dim], "bfloat16"),
    ):
        with T.Kernel(heads, seq_len, batch, threads=1) as (h, s, b):
            p = T.alloc_local([topk], "float32")
            acc = T.alloc_local([dim], "float32")
            limit = (q_start_index_s[0] + s + 1 - kv_stride) // kv_stride
            mx = T.alloc_var("float32")
            mx = -T.infinity("float32")
            for t in T.serial(topk):
                p[t] = -T.infinity("float32")
                if Indices[b, s, 0, t] <= limit:
                    x = T.alloc_var("float32")
                    x = 0.0
                    for d in T.serial(DQ):
                        x += T.cast(Q[b, s, h, d], "float32") * T.cast(KV[b, Indices[b, s, 0, t], 0, d], "float32")
                    p[t] = x * scale
                    mx = T.max(mx, p[t])
            tot = T.alloc_var("float32")
            tot = 0.0
            for d in T.serial(dim):
                acc[d] = 0.0
            for t in T.serial(topk):
                if Indices[b, s, 0, t] <= limit:
                    w = T.exp(p[t] - mx)
                    tot += w
                    for d in T.serial(dim):
                        acc[d] += w * T.cast(KV[b, Indices[b, s, 0, t], 0, d], "float32")
            for d in T.serial(dim):
                Output[b, s, h, d] = acc[d] / tot

    return main
