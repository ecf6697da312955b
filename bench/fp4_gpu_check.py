#!/usr/bin/env python3
"""fp4_gpu_check.py — T.float4_e2m1fn and T.mma_gemm_blockscaled on the GPU against
torch (part 2 of bench/fp4_gpu_check.sh; run through `python -m tilescale` so
that `import tilelang` is the shim).

  1. the cast table on the device: every code to float32/bfloat16/float16
     (from_fp4), float32 to fp4 at every midpoint (ties to the even code), just
     either side, beyond +-6, +-inf, -0, NaN (to_fp4, to_fp4_frag), against a
     table written out from the OCP MX FP4 E2M1 definition;
  2. quant (tests/run/kernels/fp4.py) against a torch quantizer;
  3. gemm_bs (T.mma_gemm_blockscaled, both scale layouts) against torch's
     scaled product, exact;
  4. TileLang's deepseek_v4 act_quant: test_fp4_act_quant (its own bit check
     against its torch reference, M=64 N=256 as its test, and 256 x 1024) and
     test_round_trip_error;
  5. TileLang's gemm_sm120 NVFP4 example (its kernel, its data, its own
     _verify, exact) at 256 x 256 x 512 and 512 x 384 x 1024: its main()
     wants an SM120 GPU for the tensor-core instruction; the generic loops
     built here run anywhere.
Prints PASS/FAIL lines; exit 1 on a FAIL.

    cd REPO && TILESCALE_LIB=build-gpu/libtilescale.so PYTHONPATH=python python3 -m tilescale bench/fp4_gpu_check.py
"""
import math
import os
import struct
import sys
import traceback

import torch

import tilescale

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
K4 = os.path.join(ROOT, "tests", "run", "kernels", "fp4.py")
fails = passes = 0


def report(ok, what, detail=""):
    global fails, passes
    print(("PASS " if ok else "FAIL ") + what + ("" if ok or not detail else ": " + detail), flush=True)
    fails += 0 if ok else 1
    passes += 1 if ok else 0


def guarded(what, f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 — a crash is a FAIL of that check, the others still run
        traceback.print_exc()
        report(False, what, repr(e)[:300])


TABLE = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]
# value -> code, by hand (the midpoints 0.25 0.75 1.25 1.75 2.5 3.5 5 go to the even code)
CASES = [(0.0, 0), (-0.0, 8), (0.1, 0), (0.5, 1), (1.0, 2), (1.5, 3), (2.0, 4), (3.0, 5), (4.0, 6), (6.0, 7),
         (6.5, 7), (7.0, 7), (1e30, 7), (math.inf, 7), (-0.5, 9), (-6.0, 15), (-100.0, 15), (-math.inf, 15),
         (1e-30, 0), (-1e-30, 8), (math.nan, 7), (0.3, 1), (-2.9, 13), (4.5, 6), (-5.5, 15)]
# each midpoint with the codes of the float32 just below it, of itself (the tie) and just above it
MIDS = [(0.25, 0, 0, 1), (0.75, 1, 2, 2), (1.25, 2, 2, 3), (1.75, 3, 4, 4), (2.5, 4, 4, 5), (3.5, 5, 6, 6),
        (5.0, 6, 6, 7)]


def f32_step(x, up):
    """The float32 next to x (a positive float32) upward or downward."""
    b = struct.unpack("<I", struct.pack("<f", x))[0]
    return struct.unpack("<f", struct.pack("<I", b + (1 if up else -1)))[0]


for m, lo, at, hi in MIDS:
    for sg in (1.0, -1.0):
        s8 = 8 if sg < 0 else 0
        CASES += [(sg * f32_step(m, False), lo | s8), (sg * m, at | s8), (sg * f32_step(m, True), hi | s8)]


def codes_of(packed_i8):
    u = packed_i8.view(torch.uint8).flatten().long()
    return torch.stack([u & 15, u >> 4], dim=-1).flatten()


def k(entry, **params):
    return tilescale.compile(K4, entry, target="cuda", **params)


def cast_table():
    n = 128
    xs = [CASES[i % len(CASES)] for i in range(n)]
    x = torch.tensor([v for v, _ in xs], dtype=torch.float32, device="cuda")
    want = torch.tensor([c for _, c in xs], device="cuda")
    q = torch.full((n // 2,), 0x5a, dtype=torch.int8, device="cuda")
    k("to_fp4", N=n, src="float32")(x, q)
    got = codes_of(q)
    report(bool((got == want).all()), "to_fp4 float32 -> fp4, %d cases (midpoints, +-6, inf, NaN)" % len(CASES),
           "codes %s want %s" % (got.tolist(), want.tolist()))
    xf = torch.tensor([CASES[i % len(CASES)][0] for i in range(32 * 16)], dtype=torch.float32, device="cuda").view(32, 16)
    wf = torch.tensor([CASES[i % len(CASES)][1] for i in range(32 * 16)], device="cuda")
    qf = torch.full((32, 8), 0x5a, dtype=torch.int8, device="cuda")
    k("to_fp4_frag", M=32, N=16, src="float32")(xf, qf)
    report(bool((codes_of(qf) == wf).all()), "to_fp4_frag float32 -> fp4 through a fragment")
    codes = torch.arange(64, device="cuda") % 16
    q = (codes[0::2] | (codes[1::2] << 4)).to(torch.uint8).view(torch.int8)
    for name, dt in (("float32", torch.float32), ("bfloat16", torch.bfloat16), ("float16", torch.float16)):
        y = torch.full((64,), float("nan"), dtype=dt, device="cuda")
        k("from_fp4", N=64, dst=name)(q, y)
        want = torch.tensor([TABLE[int(c)] for c in codes.tolist()], dtype=dt, device="cuda")
        ok = bool((y == want).all()) and bool((torch.signbit(y) == torch.signbit(want)).all())
        report(ok, "from_fp4 fp4 -> %s, all 16 codes (-0 kept)" % name)


def nearest_codes(y):
    """Codes of y (already within +-6): the nearest magnitude, ties to the even code."""
    mags = torch.tensor(TABLE[:8], device=y.device, dtype=torch.float64)
    d = (y.abs().double().unsqueeze(-1) - mags).abs()
    cand = d == d.min(dim=-1, keepdim=True).values
    score = cand.long() * (2 - (torch.arange(8, device=y.device) % 2))
    idx = score.argmax(dim=-1)
    return torch.where(torch.signbit(y), idx + 8, idx)


def quant():
    for M, N in ((64, 256), (256, 1024)):
        torch.manual_seed(M + N)
        x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16) * 3
        x[0, :5] = torch.tensor([0.75, -1.25, 2.5, 0.0, 5.0])
        q = torch.full((M, N // 2), 0x5a, dtype=torch.int8, device="cuda")
        s = torch.full((M, N // 32), float("nan"), device="cuda")
        k("quant", M=M, N=N)(x, q, s)
        xf = x.float().view(M, N // 32, 32)
        amax = xf.abs().amax(-1).clamp(min=6 * 2.0 ** -126)
        sw = torch.pow(2.0, torch.ceil(torch.log2(amax * (1.0 / 6.0))))
        y = (xf / sw.unsqueeze(-1)).clamp(-6, 6).view(M, N)
        ok = bool((s == sw).all()) and bool((codes_of(q) == nearest_codes(y).flatten()).all())
        report(ok, "quant %dx%d against torch (scales and codes, exact)" % (M, N))


def gemm():
    for layout, (M, N, K, bm, bn, bk) in (("blockscaled_chunk_kmajor", (256, 256, 512, 128, 128, 256)),
                                         ("rowmajor", (192, 128, 256, 64, 64, 128))):
        g = torch.Generator(device="cuda")
        g.manual_seed(K)
        a = torch.randint(-128, 128, (M, K // 2), device="cuda", dtype=torch.int8, generator=g)
        b = torch.randint(-128, 128, (N, K // 2), device="cuda", dtype=torch.int8, generator=g)
        lut = torch.tensor([0x30, 0x38, 0x3C, 0x40], device="cuda")  # UE4M3 0.5, 1, 1.5, 2
        val = {0x30: 0.5, 0x38: 1.0, 0x3C: 1.5, 0x40: 2.0}
        sab = lut[torch.randint(0, 4, (M, K // 16), device="cuda", generator=g)]
        sbb = lut[torch.randint(0, 4, (N, K // 16), device="cuda", generator=g)]

        def words(bytes_):
            w = bytes_.view(bytes_.shape[0], -1, 4)
            return (w[..., 0] | (w[..., 1] << 8) | (w[..., 2] << 16) | (w[..., 3] << 24))

        def place(wd, rows):
            if layout != "blockscaled_chunk_kmajor":
                return wd.reshape(-1, bk // 64)
            pad = (rows + 127) // 128 * 128
            p = torch.zeros(pad, wd.shape[1], dtype=wd.dtype, device="cuda")
            p[:rows] = wd
            return p.reshape(pad // 128, 4, 32, -1).permute(0, 3, 2, 1).contiguous().reshape(-1, bk // 64)

        sfa = place(words(sab), M).to(torch.uint32)
        sfb = place(words(sbb), N).to(torch.uint32)
        c = torch.full((M, N), float("nan"), device="cuda")
        k("gemm_bs", M=M, N=N, K=K, block_M=bm, block_N=bn, block_K=bk, layout=layout)(a, b, sfa, sfb, c)
        tab = torch.tensor(TABLE, device="cuda", dtype=torch.float64)
        ua, ub = a.view(torch.uint8).long(), b.view(torch.uint8).long()
        av = torch.stack([tab[ua & 15], tab[ua >> 4]], -1).view(M, K)
        bv = torch.stack([tab[ub & 15], tab[ub >> 4]], -1).view(N, K)
        sa = torch.tensor([val[int(v)] for v in sab.flatten().tolist()], device="cuda", dtype=torch.float64).view(M, -1)
        sb = torch.tensor([val[int(v)] for v in sbb.flatten().tolist()], device="cuda", dtype=torch.float64).view(N, -1)
        ref = (av * sa.repeat_interleave(16, 1)) @ (bv * sb.repeat_interleave(16, 1)).T
        report(bool((c.double() == ref).all()), "gemm_bs %s %dx%dx%d against torch (exact)" % (layout, M, N, K),
               "max diff %g" % (c.double() - ref).abs().max().item())


def act_quant():
    d = os.path.join(ROOT, ".tl-examples", "deepseek_v4")
    if not os.path.isdir(d):
        print("(no .tl-examples: act_quant skipped; carry .tl-examples)")
        return
    sys.path.insert(0, d)
    import act_quant as aq
    for M, N in ((64, 256), (256, 1024)):
        guarded("act_quant test_fp4_act_quant M=%d N=%d" % (M, N),
                lambda: (aq.test_fp4_act_quant(M=M, N=N, block_size=32),
                         report(True, "act_quant test_fp4_act_quant M=%d N=%d (its own check)" % (M, N))))
    guarded("act_quant test_round_trip_error",
            lambda: (aq.test_round_trip_error(), report(True, "act_quant test_round_trip_error (fp8 and fp4)")))


def sm120():
    d = os.path.join(ROOT, ".tl-examples", "gemm_sm120")
    if not os.path.isdir(d):
        print("(no .tl-examples: the sm120 example skipped)")
        return
    sys.path.insert(0, d)
    import sm120_nvfp4_blockscaled_gemm as ex
    for M, N, K in ((256, 256, 512), (512, 384, 1024)):
        def one():
            kern = ex.sm120_nvfp4_blockscaled_gemm(M, N, K, 128, 128, 256, 2, ex.T.bfloat16)
            A = ex._make_packed_fp4(M, K, seed=0)
            B = ex._make_packed_fp4(N, K, seed=1)
            sfa_sem = ex._make_binary_scale_words(M, K, seed=100)
            sfb_sem = ex._make_binary_scale_words(N, K, seed=200)
            SFA = ex.swizzle_blockscaled_chunk_kmajor_scale_words(sfa_sem).reshape(-1, 4)
            SFB = ex.swizzle_blockscaled_chunk_kmajor_scale_words(sfb_sem).reshape(-1, 4)
            C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            kern(A, B, SFA, SFB, C)
            torch.cuda.synchronize()
            ex._verify(A, B, sfa_sem, sfb_sem, C, torch.bfloat16)
            report(True, "gemm_sm120 sm120_nvfp4_blockscaled_gemm %dx%dx%d (its _verify, exact)" % (M, N, K))
        guarded("gemm_sm120 %dx%dx%d" % (M, N, K), one)


for name, f in (("cast table", cast_table), ("quant", quant), ("gemm_bs", gemm), ("act_quant", act_quant),
                ("sm120", sm120)):
    guarded(name, f)
print("fp4_gpu_check.py: %d passed, %d failed" % (passes, fails))
sys.exit(1 if fails else 0)
