#!/usr/bin/env python3
# gpu_bench.py — our CUDA kernels against the vendor libraries on one GPU,
# kernel time only (run by bench/gpu_bench.sh, which builds the CLI first).
#
# Each of our kernels runs through `tilescale run --target cuda --time` with
# TILESCALE_CUDA_BENCH=N,W: after the normal launch the CUDA runtime
# launches the kernel W more times (warm-up) and N timed times on the
# buffers already on the device, each launch between two CUDA events, and
# prints the median (src/target/cuda/cuda_drv.c).  Host<->device copies and
# compilation are outside the figure.  The references (torch.matmul ->
# cuBLAS, scaled_dot_product_attention, torch.add, a device-to-device copy)
# are timed the same way: warm-up, then one event pair per call, median.
# Inputs are fresh random data (never zeros), written as .npy and passed
# with --in; our output comes back with --out and is checked against a
# float32 reference computed by torch on the GPU (||out - ref|| / ||ref||).
# Both sides repeat on the same buffers (L2 stays warm for the small sizes
# alike).  Variants: "mma" is the default build; "simt" sets
# TILESCALE_CUDA_MMA=0 (T.gemm lowered to loops, the code before tensor
# cores), so one run gives before and after; "mma, rows unpadded" sets
# TILESCALE_CUDA_PAD=0 (tensor cores on unpadded shared tiles: ldmatrix
# with bank conflicts).
#
#   python3 bench/gpu_bench.py [--quick]     (TS=path/to/tilescale, OUT=dir)
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import torch

TS = os.environ.get("TS", "build-gpu/tilescale")
OUT = os.environ.get("OUT") or "/tmp"
WORK = os.environ.get("TS_BENCH_WORK", "/tmp/tsbench")
QUICK = "--quick" in sys.argv
os.makedirs(WORK, exist_ok=True)
dev = torch.device("cuda")
rows = []
log = open(os.path.join(OUT, "gpu_bench.log"), "w")


def say(*a):
    print(*a, flush=True)
    print(*a, file=log, flush=True)


def time_torch(fn, iters, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
    ev[0].record()
    for i in range(iters):
        fn()
        ev[i + 1].record()
    torch.cuda.synchronize()
    ms = sorted(ev[i].elapsed_time(ev[i + 1]) for i in range(iters))
    return ms[len(ms) // 2] if iters % 2 else 0.5 * (ms[iters // 2 - 1] + ms[iters // 2])


def save(name, arr):
    path = os.path.join(WORK, name + ".npy")
    np.save(path, arr)
    return path


def ours(label, file, entry, defs, ins, out_name, iters, warmup, env_extra=None):
    """Run our kernel; return (median ms, output array) or (None, None)."""
    outp = os.path.join(WORK, "out_" + out_name + ".npy")
    if os.path.exists(outp):
        os.remove(outp)
    cmd = [TS, "run", file, "--entry", entry, "--target", "cuda", "--time", "--seed", "1"]
    for k, v in defs.items():
        cmd += ["-D", "%s=%s" % (k, v)]
    for k, p in ins.items():
        cmd += ["--in", "%s=%s" % (k, p)]
    cmd += ["--out", "%s=%s" % (out_name, outp)]
    env = dict(os.environ)
    env["TILESCALE_CUDA_BENCH"] = "%d,%d" % (iters, warmup)
    env.update(env_extra or {})
    t0 = time.time()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    print("== %s: %s (%.1f s, rc %d)\n%s%s" % (label, " ".join(cmd), time.time() - t0, r.returncode, r.stdout, r.stderr),
          file=log, flush=True)
    m = re.search(r"cuda bench ([0-9.]+)", r.stdout + r.stderr)
    if r.returncode != 0 or not m:
        say("  %s FAILED (rc %d): %s" % (label, r.returncode, (r.stdout + r.stderr).strip().splitlines()[-3:]))
        return None, None
    return float(m.group(1)), np.load(outp)


def relerr(out, ref):
    o = torch.from_numpy(np.asarray(out, dtype=np.float32)).to(dev)
    return (torch.linalg.vector_norm(o - ref) / torch.linalg.vector_norm(ref)).item()


def row(**kw):
    rows.append(kw)
    say("  " + "  ".join("%s=%s" % (k, ("%.4g" % v) if isinstance(v, float) else v) for k, v in kw.items()))


say("device: %s, torch %s, CUDA %s" % (torch.cuda.get_device_name(0), torch.__version__, torch.version.cuda))
rng = np.random.default_rng(12345)

# ---- (a) GEMM: examples/gemm.py matmul, fp16 in, fp32 accumulate, fp16 out ---------------
sizes = [1024] if QUICK else [1024, 4096]
for n in sizes:
    a = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    pa, pb = save("gemm_a%d" % n, a), save("gemm_b%d" % n, b)
    ta, tb = torch.from_numpy(a).to(dev), torch.from_numpy(b).to(dev)
    ref = ta.float() @ tb.float()
    tc = torch.empty(n, n, dtype=torch.float16, device=dev)
    flop = 2.0 * n * n * n
    it = 20 if n >= 4096 else 100
    ms_ref = time_torch(lambda: torch.matmul(ta, tb, out=tc), it, 10)
    say("gemm %d^3 fp16: cuBLAS (torch.matmul) %.4f ms = %.1f TFLOP/s, rel err %.2e" %
        (n, ms_ref, flop / ms_ref / 1e9, relerr(tc.cpu().numpy(), ref)))
    variants = [("simt", {"TILESCALE_CUDA_MMA": "0"}, 32), ("mma, rows unpadded", {"TILESCALE_CUDA_PAD": "0"}, 32),
                ("mma", {}, 32), ("mma", {}, 64)]
    for var, env, bk in variants:
        defs = dict(M=n, N=n, K=n, block_M=128, block_N=128, block_K=bk)
        its = it if var != "simt" else max(it // 5, 3)
        ms, out = ours("gemm %d %s bk%d" % (n, var, bk), "examples/gemm.py", "matmul", defs, {"A": pa, "B": pb}, "C",
                       its, 2, env)
        if ms:
            row(case="gemm %d^3 fp16 (128,128,%d)" % (n, bk), variant=var, ms=ms, tflops=flop / ms / 1e9, ref="cuBLAS",
                ref_ms=ms_ref, ref_tflops=flop / ms_ref / 1e9, ratio=ms_ref / ms, relerr=relerr(out, ref))

# ---- (b) FlashAttention: examples/flash_attention.py flashattn vs SDPA ------------------------
fa_cfgs = [(1, 8, 2048, 64)] if QUICK else [(1, 8, 2048, 64), (1, 8, 2048, 128)]
for (B, H, S, D) in fa_cfgs:
    q, k, v = (rng.uniform(-1, 1, (B, S, H, D)).astype(np.float16) for _ in range(3))
    pq, pk, pv = save("fa_q", q), save("fa_k", k), save("fa_v", v)
    # SDPA wants (B, H, S, D); time it on contiguous tensors of that layout
    tq, tk, tv = (torch.from_numpy(x).to(dev).transpose(1, 2).contiguous() for x in (q, k, v))
    ref = torch.nn.functional.scaled_dot_product_attention(tq.float(), tk.float(), tv.float()).transpose(1, 2)
    flop = 4.0 * B * H * S * S * D
    ms_ref = time_torch(lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv), 50, 10)
    o = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv).transpose(1, 2)
    say("flashattn b%d h%d s%d d%d: SDPA %.4f ms = %.1f TFLOP/s, rel err %.2e" %
        (B, H, S, D, ms_ref, flop / ms_ref / 1e9, relerr(o.float().cpu().numpy(), ref)))
    defs = dict(batch=B, heads=H, seq_len=S, dim=D, is_causal="False")
    for var, env in (("simt", {"TILESCALE_CUDA_MMA": "0"}), ("mma, rows unpadded", {"TILESCALE_CUDA_PAD": "0"}),
                     ("mma", {})):
        ms, out = ours("flashattn d%d %s" % (D, var), "examples/flash_attention.py", "flashattn", defs,
                       {"Q": pq, "K": pk, "V": pv}, "Output", 5 if var == "simt" else 30, 2, env)
        if ms:
            row(case="flashattn b%d h%d s%d d%d" % (B, H, S, D), variant=var, ms=ms, tflops=flop / ms / 1e9, ref="SDPA",
                ref_ms=ms_ref, ref_tflops=flop / ms_ref / 1e9, ratio=ms_ref / ms, relerr=relerr(out, ref))

# ---- (c) elementwise add, float32 8192 x 8192 --------------------------------------------------
n = 4096 if QUICK else 8192
a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
pa, pb = save("add_a", a), save("add_b", b)
ta, tb = torch.from_numpy(a).to(dev), torch.from_numpy(b).to(dev)
tc = torch.empty_like(ta)
ref = ta + tb
nbytes = 3.0 * n * n * 4
ms_add = time_torch(lambda: torch.add(ta, tb, out=tc), 50, 10)
ms_copy = time_torch(lambda: tc.copy_(ta), 50, 10)
say("add %dx%d f32: torch.add %.4f ms = %.0f GB/s; copy (d2d, read+write) %.4f ms = %.0f GB/s" %
    (n, n, ms_add, nbytes / ms_add / 1e6, ms_copy, 2.0 * n * n * 4 / ms_copy / 1e6))
ms, out = ours("add", "examples/elementwise_add.py", "elementwise_add", dict(M=n, N=n), {"A": pa, "B": pb}, "C", 50, 5)
if ms:
    row(case="elementwise_add %dx%d f32" % (n, n), variant="simt", ms=ms, gbps=nbytes / ms / 1e6, ref="torch.add",
        ref_ms=ms_add, ref_gbps=nbytes / ms_add / 1e6, ratio=ms_add / ms, copy_gbps=2.0 * n * n * 4 / ms_copy / 1e6,
        relerr=relerr(out, ref))

# ---- the table ---------------------------------------------------------------------------------
say("\n| case | variant | ours ms | ours | reference | ref ms | ref | ours/ref | rel err |")
say("|---|---|---:|---:|---|---:|---:|---:|---:|")
for r in rows:
    if "tflops" in r:
        say("| %s | %s | %.3f | %.2f TFLOP/s | %s | %.3f | %.1f TFLOP/s | %.3f | %.1e |" %
            (r["case"], r["variant"], r["ms"], r["tflops"], r["ref"], r["ref_ms"], r["ref_tflops"], r["ratio"], r["relerr"]))
    else:
        say("| %s | %s | %.3f | %.0f GB/s | %s (copy %.0f GB/s) | %.3f | %.0f GB/s | %.3f | %.1e |" %
            (r["case"], r["variant"], r["ms"], r["gbps"], r["ref"], r["copy_gbps"], r["ref_ms"], r["ref_gbps"], r["ratio"],
             r["relerr"]))
json.dump(rows, open(os.path.join(OUT, "gpu_bench.json"), "w"), indent=1)
bad = [r for r in rows if not r["relerr"] < 2e-2]
if bad:
    say("WRONG RESULTS: %s" % [(r["case"], r["variant"], r["relerr"]) for r in bad])
sys.exit(1 if bad else 0)
