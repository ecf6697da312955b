"""bench/tl_refs/flash_attn (the torch reference bench/tilelang_examples.sh
puts in place of flash-attn for TileLang's example tests) against an
independent computation: torch's scaled_dot_product_attention per sequence
(causal masks spelled out, aligned bottom-right), GQA, empty sequences,
the KV-cache form with per-batch lengths; fresh random data."""
import importlib.util
import math
import os

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "tl_ref_flash_attn", os.path.join(HERE, "..", "..", "bench", "tl_refs", "flash_attn", "__init__.py"))
fa = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fa)


def sdpa(q, k, v, causal):  # q (Sq, H, D), k/v (Sk, H, D), float64, mask aligned bottom-right
    sq, sk = q.shape[0], k.shape[0]
    mask = None
    if causal:
        mask = torch.arange(sk)[None, :] <= torch.arange(sq)[:, None] + (sk - sq)
    o = F.scaled_dot_product_attention(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), attn_mask=mask)
    o = o.transpose(0, 1)
    if causal:  # rows without a key: 0
        o = torch.where(mask.any(-1)[:, None, None], o, torch.zeros_like(o))
    return o


@pytest.mark.parametrize("causal", [False, True])
def test_varlen_against_sdpa(causal):
    g = torch.Generator().manual_seed(7)
    lq, lk, h, hk, d = [5, 0, 9, 3], [7, 2, 9, 1], 4, 2, 16
    cq = torch.tensor([0] + list(torch.tensor(lq).cumsum(0)), dtype=torch.int32)
    ck = torch.tensor([0] + list(torch.tensor(lk).cumsum(0)), dtype=torch.int32)
    q = torch.randn(sum(lq), h, d, generator=g)
    k = torch.randn(sum(lk), hk, d, generator=g)
    v = torch.randn(sum(lk), hk, d, generator=g)
    out = fa.flash_attn_varlen_func(q, k, v, cq, ck, max(lq), max(lk), 0.0, causal=causal)
    for b in range(len(lq)):
        qs, ks = slice(int(cq[b]), int(cq[b + 1])), slice(int(ck[b]), int(ck[b + 1]))
        if lq[b] == 0:
            continue
        ref = sdpa(q[qs].double(), k[ks].double().repeat_interleave(h // hk, 1),
                   v[ks].double().repeat_interleave(h // hk, 1), causal)
        torch.testing.assert_close(out[qs].double(), ref, rtol=1e-4, atol=1e-5)


def test_kvcache_lengths():
    g = torch.Generator().manual_seed(9)
    b, sq, sk, h, hk, d = 3, 1, 12, 8, 2, 32
    q = torch.randn(b, sq, h, d, generator=g)
    kc = torch.randn(b, sk, hk, d, generator=g)
    vc = torch.randn(b, sk, hk, d, generator=g)
    lens = torch.tensor([12, 5, 1], dtype=torch.int32)
    out = fa.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens)
    for i in range(b):
        n = int(lens[i])
        kk = kc[i, :n].repeat_interleave(h // hk, 1)
        vv = vc[i, :n].repeat_interleave(h // hk, 1)
        s = torch.einsum("qhd,khd->hqk", q[i].double(), kk.double()) / math.sqrt(d)
        ref = torch.einsum("hqk,khd->qhd", torch.softmax(s, -1), vv.double())
        torch.testing.assert_close(out[i].double(), ref, rtol=1e-4, atol=1e-5)
