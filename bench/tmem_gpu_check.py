#!/usr/bin/env python3
"""tmem_gpu_check.py — Blackwell tensor memory on the H200 (sm_90a: no tensor
memory; pass lower_tmem's portable branch), checked against torch on fresh
random CUDA tensors (outputs the kernels allocate are poisoned by the launch):

  - our kernels of tests/run/kernels/tmem.py: tc_gemm (ragged, both B layouts,
    TileLang's 128 x 128 x 64 tiles on 256 threads), tc_gemm_two (two
    mbarriers, mbar=None), tc_attn ("ss" and "ts", causal and not, the
    examples' 128 x 128 tiles), tc_chain (gemms into fragments, a register A);
  - TileLang's flash_attention_sm100 backward examples, whose main() checks
    nothing ("backward gradients not verified against ref"): their four
    kernels (forward with LSE, preprocess, backward in its "ss" and "ts"
    configurations, postprocess), compiled from the example files, against
    torch autograd of attention (dQ, dK, dV; GQA with 2 query heads per KV
    head too).

Prints one PASS/FAIL line per check and "N passed, M failed"; exit 1 if any
failed, 77 without torch or a GPU.

    TILESCALE_LIB=build-gpu/libtilescale.so PYTHONPATH=python python3 bench/tmem_gpu_check.py
"""
import os
import sys
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
try:
    import torch
except ImportError:
    print("SKIP: no torch")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIP: torch has no CUDA device")
    sys.exit(77)
import tilescale  # noqa: E402

KERNELS = os.path.join(ROOT, "tests/run/kernels/tmem.py")
EX = os.path.join(ROOT, ".tl-examples/flash_attention_sm100")
passed = failed = 0


def run(label, fn):
    global passed, failed
    try:
        msg = fn()
        print("PASS %s%s" % (label, "  (%s)" % msg if msg else ""))
        passed += 1
    except Exception:  # noqa: BLE001 (a check's failure of any kind is a FAIL line)
        print("FAIL %s" % label)
        traceback.print_exc(limit=4, file=sys.stdout)
        failed += 1


def close(got, ref, tol, what):
    """max |got - ref| <= tol * max |ref| (a relative error over the tensor)."""
    got, ref = got.float(), ref.float()
    if not torch.isfinite(got).all():
        raise AssertionError("%s: non-finite values" % what)
    err = (got - ref).abs().max().item()
    scale = ref.abs().max().item()
    if err > tol * scale:
        raise AssertionError("%s: max abs err %.4g > %.3g x max |ref| %.4g" % (what, err, tol, scale))
    return "%s err %.2g of %.3g" % (what, err, scale)


def gemm_case(M, N, K, trans_B=True, **kw):
    def f():
        k = tilescale.compile(KERNELS, "tc_gemm", M=M, N=N, K=K, trans_B=trans_B, **kw)
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(N, K, device="cuda", dtype=torch.bfloat16) if trans_B else \
            torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        c = k(a, b)
        ref = a.float() @ (b.float().T if trans_B else b.float())
        torch.cuda.synchronize()
        return close(c, ref, 1e-4, "C")
    return f


def gemm_two(M, N, K):
    k = tilescale.compile(KERNELS, "tc_gemm_two", M=M, N=N, K=K)
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    c = k(a, b)
    return close(c, a.float() @ b.float().T, 1e-4, "C")


def attn_ref(q, k, v, causal):
    """softmax(q k^T / sqrt(d)) v in float32, [b, s, h, d]; GQA: heads of k, v repeated."""
    g = q.shape[2] // k.shape[2]
    qf, kf, vf = q.float(), k.float().repeat_interleave(g, 2), v.float().repeat_interleave(g, 2)
    s = torch.einsum("bqhd,bkhd->bhqk", qf, kf) / q.shape[-1] ** 0.5
    if causal:
        n = q.shape[1]
        s = s.masked_fill(torch.ones(n, n, device=q.device, dtype=torch.bool).triu(1), float("-inf"))
    return torch.einsum("bhqk,bkhd->bqhd", torch.softmax(s, -1), vf)


def attn_case(batch, heads, seq_len, dim, causal, **kw):
    def f():
        k = tilescale.compile(KERNELS, "tc_attn", batch=batch, heads=heads, seq_len=seq_len, dim=dim,
                              is_causal=causal, **kw)
        q, kk, v = (torch.randn(batch, seq_len, heads, dim, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        o = k(q, kk, v)
        return close(o, attn_ref(q, kk, v, causal), 2e-2, "O")
    return f


def chain_case(M, N, D):
    k = tilescale.compile(KERNELS, "tc_chain", M=M, N=N, D=D)
    q = torch.randn(M, D, device="cuda", dtype=torch.bfloat16)
    kk = torch.randn(N, D, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(N, D, device="cuda", dtype=torch.bfloat16)
    o = k(q, kk, v)
    p = (q.float() @ kk.float().T).to(torch.bfloat16).float()
    return close(o, p @ v.float(), 1e-3, "O")


def bwd_case(gqa, batch, heads, seq_len, dim, causal, variant, groups=1):
    """The example's pipeline as its main() runs it, then checked against autograd."""
    def f():
        path = os.path.join(EX, "gqa_bwd_bshd.py" if gqa else "mha_bwd_bshd.py")
        block_M, block_N = 64, 64 if dim <= 64 else 32
        threads = 256 if variant == "ts" else 128
        g = {"groups": groups} if gqa else {}
        common = dict(batch=batch, heads=heads, seq_len=seq_len, dim=dim)
        kf = tilescale.compile(path, "flashattn_fwd", is_causal=causal, block_M=block_M, block_N=block_N, **common, **g)
        kp = tilescale.compile(path, "flashattn_bwd_preprocess", **common)
        kq = tilescale.compile(path, "flashattn_bwd_postprocess", **common)
        kb = tilescale.compile(path, "flashattn_bwd", is_causal=causal, block_M=block_M, block_N=block_N,
                               threads=threads, num_stages=2, **common, **g)
        hkv = heads // groups
        q = torch.randn(batch, seq_len, heads, dim, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(batch, seq_len, hkv, dim, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(batch, seq_len, hkv, dim, device="cuda", dtype=torch.bfloat16)
        do = torch.randn(batch, seq_len, heads, dim, device="cuda", dtype=torch.bfloat16)
        o, lse = kf(q, k, v)
        delta = kp(o, do)
        dq = torch.zeros(batch, seq_len, heads, dim, device="cuda", dtype=torch.float32)
        kv_dt = torch.float32 if gqa else torch.bfloat16
        dk = torch.zeros(batch, seq_len, hkv, dim, device="cuda", dtype=kv_dt)
        dv = torch.zeros(batch, seq_len, hkv, dim, device="cuda", dtype=kv_dt)
        kb(q, k, v, do, lse, delta, dq, dk, dv)
        dq_out = kq(dq)
        qr, kr, vr = (t.detach().float().requires_grad_() for t in (q, k, v))
        ref = attn_ref(qr, kr, vr, causal)
        ref.backward(do.float())
        msgs = [close(o, ref.detach(), 2e-2, "O")]
        msgs.append(close(dq_out, qr.grad, 3e-2, "dQ"))
        msgs.append(close(dk, kr.grad, 3e-2, "dK"))
        msgs.append(close(dv, vr.grad, 3e-2, "dV"))
        return ", ".join(msgs)
    return f


torch.manual_seed(0)
run("tc_gemm 200x136x264 (64x64x32 tiles)", gemm_case(200, 136, 264))
run("tc_gemm 1024x1024x1024 (128x128x64 tiles, 256 threads)",
    gemm_case(1024, 1024, 1024, block_M=128, block_N=128, block_K=64, threads=256))
run("tc_gemm 256x192x160 B stored K x N, one stage", gemm_case(256, 192, 160, trans_B=False, num_stages=1))
run("tc_gemm_two 256x256x512 (two mbarriers, mbar=None)", lambda: gemm_two(256, 256, 512))
run("tc_attn ss 2x4x1000 d64 causal (64x64 tiles)", attn_case(2, 4, 1000, 64, True))
run("tc_attn ss 1x8x1024 d128 (128x128 tiles)", attn_case(1, 8, 1024, 128, False, block_M=128, block_N=128))
run("tc_attn ts 1x8x1024 d128 causal (128x128 tiles, 256 threads)",
    attn_case(1, 8, 1024, 128, True, block_M=128, block_N=128, variant="ts", threads=256))
run("tc_attn ts 2x2x300 d64 (64x64 tiles)", attn_case(2, 2, 300, 64, False, variant="ts"))
run("tc_chain 512x384x64", lambda: chain_case(512, 384, 64))
if os.path.isdir(EX):
    for gqa in (False, True):
        for variant in ("ss", "ts"):
            for causal in (False, True):
                name = "%s_bwd_bshd %s%s" % ("gqa" if gqa else "mha", variant, " causal" if causal else "")
                run("%s 2x4x256 d128 vs autograd%s" % (name, " (2 groups)" if gqa else ""),
                    bwd_case(gqa, 2, 4, 256, 128, causal, variant, groups=2 if gqa else 1))
        run("%s_bwd_bshd ss 1x2x512 d64 vs autograd" % ("gqa" if gqa else "mha"),
            bwd_case(gqa, 1, 2, 512, 64, False, "ss"))
else:
    print("(.tl-examples missing: the examples' backward checks skipped; carry .tl-examples)")
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
