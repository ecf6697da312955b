#!/usr/bin/env python3
"""tier_py_gpu.py — the tiered CUDA build through Python, on the GPU (issue 5's
cold-build goal and issue 8's "compile through Python as fast as through the
CLI"; part 4 of bench/tier_gpu_check.sh).

A Python user's first call of a large kernel (GEMM 4096 fp16 at 128x256x128,
FlashAttention D128: tiered by default) used to wait for the full NVRTC build
(~0.5 s on the H200 host), because the prepared launch behind the fast path
bound one module.  Now the plan starts on the quick tier and moves to the full
one by itself.  Checked here, each kernel on an empty cache with the driver's
JIT cache off (CUDA_CACHE_DISABLE=1, set by the caller):
  1. the first call's wall time (compile + first launch + synchronize) and the
     tier reported after it ("quick"), the output against torch;
  2. calls from 4 Python threads until the kernel reports "full" (each output
     checked), how long that took and how many calls ran before;
  3. that the prepared launch really moved: kernel time (CUDA events, a lambda,
     so nothing waits) of this kernel now, of a full-only build (tiered=OFF)
     and of a quick-only build (tiered=QUICK), printed (INFO: the quick tier
     may not be measurably slower for every kernel);
  4. host time per call of a small kernel built with tiered=ON (after its
     switch) against the same kernel not tiered, interleaved rounds: the
     steady-state launch path must not have become slower (FAIL above
     +15% and +0.5 us).
Prints PASS/FAIL/INFO lines; exit 1 on a FAIL.

    CUDA_CACHE_DISABLE=1 TILESCALE_LIB=build-gpu/libtilescale.so PYTHONPATH=python python3 bench/tier_py_gpu.py
"""
import os
import statistics
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402

import tilescale  # noqa: E402
from tilescale import profiler  # noqa: E402

fails = 0


def report(ok, what):
    global fails
    print(("PASS  " if ok else "FAIL  ") + what, flush=True)
    fails += 0 if ok else 1


GEMM = dict(M=4096, N=4096, K=4096, block_M=128, block_N=256, block_K=128, num_stages=2, threads=256)
FA = dict(batch=4, heads=32, seq_len=4096, dim=128, is_causal=False, block_M=128, block_N=128, num_stages=2,
          threads=256)


def gemm_case():
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    ref = (a.float() @ b.float())

    def check(c):
        return torch.allclose(c.float(), ref, rtol=2e-2, atol=0.5)
    return "examples/gemm.py", "matmul", GEMM, (a, b), check


def fa_case():
    shape = (FA["batch"], FA["seq_len"], FA["heads"], FA["dim"])
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
    ref = torch.nn.functional.scaled_dot_product_attention(
        q.transpose(1, 2).float(), k.transpose(1, 2).float(), v.transpose(1, 2).float()).transpose(1, 2)

    def check(o):
        return torch.allclose(o.float(), ref, rtol=2e-2, atol=2e-2)
    return "examples/flash_attention.py", "flashattn", FA, (q, k, v), check


def compile_(path, entry, params, cache, tiered=0):
    opts = {"cache_dir": cache}
    if tiered:
        opts["tiered"] = tiered
    return tilescale.compile(os.path.join(ROOT, path), entry, target="cuda", options=opts, **params)


def kernel_ms(f):
    return profiler.do_bench(f, warmup=25, rep=200)  # a lambda: do_bench does not wait for a tier


def one(name, case):
    path, entry, params, args, check = case()
    torch.cuda.synchronize()
    cache = tempfile.mkdtemp(prefix="ts-tierpy-")
    t0 = time.perf_counter()
    k = compile_(path, entry, params, cache)
    t1 = time.perf_counter()
    out = k(*args)
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    tier = k.tier
    print("INFO  %s: first call %.0f ms (compile %.0f, first launch + sync %.0f), tier after it: %s"
          % (name, (t2 - t0) * 1e3, (t1 - t0) * 1e3, (t2 - t1) * 1e3, tier), flush=True)
    report(tier in ("quick", "full"), "%s: tier %s after the first call (quick expected on an empty cache)"
           % (name, tier))
    report(check(out), "%s: first call's output (tier %s) against torch" % (name, tier))

    # 2. several threads call on until the full tier runs
    bad, calls, lock = [], [0], threading.Lock()
    stop = time.perf_counter() + 60

    def worker():
        while k.tier != "full" and time.perf_counter() < stop:
            o = k(*args)
            torch.cuda.synchronize()
            ok = check(o)
            with lock:
                calls[0] += 1
                if not ok:
                    bad.append(k.tier)
    ths = [threading.Thread(target=worker) for _ in range(4)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    t3 = time.perf_counter()
    report(k.tier == "full", "%s: full tier after %.0f ms more (%d calls from 4 threads before)"
           % (name, (t3 - t2) * 1e3, calls[0]))
    report(not bad, "%s: every call's output during the switch (%d wrong)" % (name, len(bad)))
    outs = [k(*args) for _ in range(3)]
    torch.cuda.synchronize()
    report(all(check(o) for o in outs), "%s: outputs on the full tier against torch" % name)

    # 3. the prepared launch runs the full module now
    t_now = kernel_ms(lambda: k(*args))
    k_off = compile_(path, entry, params, tempfile.mkdtemp(prefix="ts-tierpy-"), tiered=2)
    k_quick = compile_(path, entry, params, tempfile.mkdtemp(prefix="ts-tierpy-"), tiered=3)
    report(check(k_quick(*args)), "%s: quick-only build's output against torch" % name)
    t_off = kernel_ms(lambda: k_off(*args))
    t_quick = kernel_ms(lambda: k_quick(*args))
    print("INFO  %s: kernel ms: this kernel now %.3f, full-only build %.3f, quick-only build %.3f "
          "(now should match full-only)" % (name, t_now, t_off, t_quick), flush=True)


def overhead():
    M = N = 256
    a = torch.randn(M, N, device="cuda")
    b = torch.randn(M, N, device="cuda")
    params = dict(M=M, N=N)
    cache = tempfile.mkdtemp(prefix="ts-tierpy-")
    k_on = compile_("examples/elementwise_add.py", "elementwise_add", params, cache, tiered=1)
    k_off = compile_("examples/elementwise_add.py", "elementwise_add", params, tempfile.mkdtemp(), tiered=2)
    report(k_on.tier == "quick", "overhead: tiered=ON kernel starts on the quick tier (%s)" % k_on.tier)
    k_on(a, b)  # the plan is prepared on the quick tier
    k_on.wait_full()
    for k in (k_on, k_off):
        for _ in range(2000):
            c = k(a, b)
        torch.cuda.synchronize()
        report(torch.allclose(c, a + b), "overhead: %s output" % ("tiered" if k is k_on else "not tiered"))
    rounds = {"on": [], "off": []}
    for _ in range(5):
        for name, k in (("on", k_on), ("off", k_off)):
            t = time.perf_counter()
            for _ in range(20000):
                k(a, b)
            torch.cuda.synchronize()
            rounds[name].append((time.perf_counter() - t) / 20000 * 1e6)
    on, off = statistics.median(rounds["on"]), statistics.median(rounds["off"])
    print("INFO  overhead: host us/call, tiered (moved to full) %s, not tiered %s"
          % (" ".join("%.2f" % x for x in rounds["on"]), " ".join("%.2f" % x for x in rounds["off"])))
    report(on <= off * 1.15 + 0.5, "overhead: median %.2f us tiered vs %.2f not tiered" % (on, off))


if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("skipped: no CUDA device")
        sys.exit(0)
    os.environ.pop("TILESCALE_TIERED", None)
    one("gemm 4096 fp16 128x256x128", gemm_case)
    one("flashattn D128 b4 h32 s4096", fa_case)
    overhead()
    print("== tier_py_gpu: %d failed" % fails)
    sys.exit(1 if fails else 0)
