"""A torch reference standing in for the flash-attn package in TileLang's
example tests, where the device does not have flash-attn installed.

Some of TileLang's examples (the varlen FlashAttention forward tests and
the block-sparse GQA decode tests) compute their kernel's output and then
compare it with flash-attn's; without the package those tests cannot say
anything.  bench/tilelang_examples.sh puts this directory on PYTHONPATH
only when `import flash_attn` fails, so that the comparison is made
against this reference instead: plain softmax(Q K^T * scale) V in float32,
per sequence, with the two functions' documented conventions (GQA: query
head h reads key/value head h // (H / Hk); causal: the mask is aligned to
the bottom-right corner when the query and key lengths differ, so query i
of a sequence sees keys j <= i + Sk - Sq, and a query that sees no key
gives 0; softmax_scale defaults to 1/sqrt(head dim)).  It is a reference,
not a fast kernel: what the examples print as "FA2 time" is this code's
time.  Written for these tests, from the functions' documented interface.
"""
import math

import torch

__version__ = "reference (tilescale bench/tl_refs)"


def _attend(q, k, v, scale, causal):
    """q (Sq, H, D), k and v (Sk, Hk, D) -> (Sq, H, D) in q's dtype."""
    sq, h, _ = q.shape
    sk, hk = k.shape[0], k.shape[1]
    if h % hk:
        raise ValueError("flash_attn reference: %d query heads are not a multiple of %d key heads" % (h, hk))
    k = k.float().repeat_interleave(h // hk, dim=1)
    v = v.float().repeat_interleave(h // hk, dim=1)
    s = torch.einsum("qhd,khd->hqk", q.float(), k) * scale
    if causal:
        qi = torch.arange(sq, device=q.device)[:, None]
        kj = torch.arange(sk, device=q.device)[None, :]
        s = s.masked_fill(kj > qi + (sk - sq), float("-inf"))
    p = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)  # a row without keys: 0
    return torch.einsum("hqk,khd->qhd", p, v).to(q.dtype)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q=None, max_seqlen_k=None,
                           dropout_p=0.0, softmax_scale=None, causal=False, **kw):
    """q (total_q, H, D), k and v (total_k, Hk, D); sequence b is rows
    cu_seqlens[b]:cu_seqlens[b + 1] of each."""
    if dropout_p:
        raise NotImplementedError("flash_attn reference: dropout")
    for key in ("window_size", "alibi_slopes", "softcap", "return_attn_probs"):
        val = kw.get(key)
        if val not in (None, (-1, -1), 0.0, False):
            raise NotImplementedError("flash_attn reference: %s=%r" % (key, val))
    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(q.shape[-1])
    out = torch.zeros_like(q)
    cq, ck = cu_seqlens_q.tolist(), cu_seqlens_k.tolist()
    for b in range(len(cq) - 1):
        if cq[b + 1] > cq[b]:
            out[cq[b]:cq[b + 1]] = _attend(q[cq[b]:cq[b + 1]], k[ck[b]:ck[b + 1]], v[ck[b]:ck[b + 1]], scale, causal)
    return out


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, cache_seqlens=None, softmax_scale=None,
                            causal=False, **kw):
    """q (B, Sq, H, D), k_cache and v_cache (B, Sk, Hk, D); batch b attends to
    the first cache_seqlens[b] keys (all of them without cache_seqlens)."""
    if k is not None or v is not None:
        raise NotImplementedError("flash_attn reference: appending k/v to the cache")
    for key in ("rotary_cos", "rotary_sin", "cache_batch_idx", "block_table", "alibi_slopes"):
        if kw.get(key) is not None:
            raise NotImplementedError("flash_attn reference: %s" % key)
    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(q.shape[-1])
    bsz, sk = q.shape[0], k_cache.shape[1]
    if cache_seqlens is None:
        lens = [sk] * bsz
    elif isinstance(cache_seqlens, int):
        lens = [cache_seqlens] * bsz
    else:
        lens = [int(x) for x in cache_seqlens.tolist()]
    return torch.stack([_attend(q[b], k_cache[b, :lens[b]], v_cache[b, :lens[b]], scale, causal)
                        for b in range(bsz)])
