#!/usr/bin/env python3
"""tmemrace_gpu_check.py — tensor-memory tiles shared by two thread roles
(TILESCALE_TMEM_SHARED=1: kept in shared memory, pass lower_tmem; the mma
warp's one arrives made by each of its lanes, pass partition_threads) on the
H200 against torch, fresh random CUDA tensors (the outputs the kernels
allocate are poisoned by the launch):

  - tests/run/kernels/tmem.py tc_roles (one role stages A into a shared tile,
    a one-warp role multiplies, the first reads the product back) and tc_ws
    (a producer warp, an mma warp over 3 slots, T.tcgen05_mma_arrive, the
    block reading the accumulator);
  - TileLang's gemm_tcgen05/gemm_tcgen5mma_ws.py gemm at 128 x 128 x 64 tiles,
    2 stages (its 128 x 256 x 64, 4 stages need more shared memory than an
    H200 block has once the accumulator is in shared memory);
  - flash_attention_sm100/{mha,gqa}_fwd_bshd.py flashattn_wasp (S, P and O in
    tensor memory, shared by the softmax warps and the mma warp) at 64 x 64
    tiles (its 128 x 128 need 547,488 bytes), causal and not, GQA with 2
    query heads per KV head.

Prints one PASS/FAIL line per check and "N passed, M failed"; exit 1 if any
failed, 77 without torch or a GPU.

    TILESCALE_TMEM_SHARED=1 TILESCALE_LIB=build-gpu/libtilescale.so PYTHONPATH=python \\
        python3 bench/tmemrace_gpu_check.py
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
os.environ["TILESCALE_TMEM_SHARED"] = "1"
import tilescale  # noqa: E402

KERNELS = os.path.join(ROOT, "tests/run/kernels/tmem.py")
EX = os.path.join(ROOT, ".tl-examples")
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
    sys.stdout.flush()


def close(got, ref, tol, what):
    """max |got - ref| <= tol * max |ref| (a relative error over the tensor); no NaN (poisoned outputs)."""
    torch.cuda.synchronize()
    got, ref = got.float(), ref.float()
    if not torch.isfinite(got).all():
        raise AssertionError("%s: non-finite values" % what)
    err = (got - ref).abs().max().item()
    scale = ref.abs().max().item()
    if err > tol * scale:
        raise AssertionError("%s: max abs err %.4g > %.3g x max |ref| %.4g" % (what, err, tol, scale))
    return "%s err %.2g of %.3g" % (what, err, scale)


def roles_case(M, N, K, **kw):
    def f():
        k = tilescale.compile(KERNELS, "tc_roles", M=M, N=N, K=K, **kw)
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        return close(k(a, b), a.float() @ b.float().T, 1e-4, "C")
    return f


def ws_case(M, N, K, stages):
    def f():
        k = tilescale.compile(KERNELS, "tc_ws", M=M, N=N, K=K, stages=stages)
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        return close(k(a, b), a.float() @ b.float(), 1e-4, "C")
    return f


def tcgen5mma_ws_case(M, N, K):
    def f():
        path = os.path.join(EX, "gemm_tcgen05/gemm_tcgen5mma_ws.py")
        k = tilescale.compile(path, "gemm", M=M, N=N, K=K, block_M=128, block_N=128, block_K=64,
                              in_dtype="bfloat16", out_dtype="bfloat16", accum_dtype="float32", num_stages=2,
                              use_tma_store=True)
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        # (bfloat16 output: 2^-8 relative rounding of each element)
        return close(k(a, b), a.float() @ b.float(), 1e-2, "C")
    return f


def attn_ref(q, k, v, causal):
    """softmax(q k^T / sqrt(d)) v in float32, [b, s, h, d]; GQA: heads of k, v repeated."""
    g = q.shape[2] // k.shape[2]
    qf, kf, vf = q.float(), k.float().repeat_interleave(g, 2), v.float().repeat_interleave(g, 2)
    s = torch.einsum("bqhd,bkhd->bhqk", qf, kf) / q.shape[-1] ** 0.5
    if causal:
        n = q.shape[1]
        s = s.masked_fill(torch.ones(n, n, device=q.device, dtype=torch.bool).triu(1), float("-inf"))
    return torch.einsum("bhqk,bkhd->bqhd", torch.softmax(s, -1), vf)


def wasp_case(gqa, batch, heads, seq_len, dim, causal, groups=1):
    def f():
        path = os.path.join(EX, "flash_attention_sm100", "gqa_fwd_bshd.py" if gqa else "mha_fwd_bshd.py")
        g = {"groups": groups} if gqa else {}
        k = tilescale.compile(path, "flashattn_wasp", batch=batch, heads=heads, seq_len=seq_len, dim=dim,
                              is_causal=causal, block_M=64, block_N=64, threads=256, num_stages=2, **g)
        q = torch.randn(batch, seq_len, heads, dim, device="cuda", dtype=torch.bfloat16)
        kk = torch.randn(batch, seq_len, heads // groups, dim, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(batch, seq_len, heads // groups, dim, device="cuda", dtype=torch.bfloat16)
        return close(k(q, kk, v), attn_ref(q, kk, v, causal), 2e-2, "O")
    return f


run("tc_roles 512x256x64 vs torch", roles_case(512, 256, 64))
run("tc_roles 200x72x32 block_N=32 (ragged) vs torch", roles_case(200, 72, 32, block_N=32))
run("tc_ws 512x384x1000 3 stages vs torch", ws_case(512, 384, 1000, 3))
run("tc_ws 96x80x72 2 stages vs torch", ws_case(96, 80, 72, 2))
if os.path.isdir(EX):
    run("gemm_tcgen5mma_ws gemm 1024x1024x2048 (128x128x64 tiles, 2 stages) vs torch",
        tcgen5mma_ws_case(1024, 1024, 2048))
    for gqa in (False, True):
        for causal in (False, True):
            run("%s_fwd_bshd flashattn_wasp 64x64 tiles 2x4x512 d64%s vs torch" %
                ("gqa" if gqa else "mha", " causal" if causal else ""),
                wasp_case(gqa, 2, 4, 512, 64, causal, groups=2 if gqa else 1))
    run("mha_fwd_bshd flashattn_wasp 64x64 tiles 1x2x300 d128 causal (ragged) vs torch",
        wasp_case(False, 1, 2, 300, 128, True))
else:
    print("(.tl-examples missing: the examples' checks skipped; carry .tl-examples)")
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
