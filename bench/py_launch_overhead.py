#!/usr/bin/env python3
"""py_launch_overhead.py — host time per call of a small kernel called from
Python on torch CUDA tensors (issue 8's speed goal: <= 7 us), beside
torch.add, TileLang (when importable) and a CuPy RawKernel (when
importable), in one run on one GPU; and compile time through Python
against the library's own phase times.

Method (the issue's): examples/elementwise_add.py's elementwise_add, three
tensor arguments, the output allocated by out_idx on every call; W warm-up
calls, then N = 20,000 back-to-back calls; "host us/call" is the wall time
of the N calls divided by N, taken after a final torch.cuda.synchronize()
(so a GPU that cannot keep up shows), "issue us/call" the same without
waiting for the queue to drain.  The kernel is small (M x N = 256 x 256
float32 by default) so that the host, not the GPU, is the bottleneck.
Each contender's result is checked against a + b first.  Ours and
torch.add run in --repeat interleaved rounds (default 3); the table gives
the median round and lists them all (the host is shared: one round can be
slowed by something else).

TileLang runs in a subprocess (its own `import tilelang`, from
$TL_SITE, default /tmp/site, where shared/tools/tilelang-wheels.sh's
wheels are installed) on the same example file; CuPy in this process if
it imports.  Results: a Markdown table on stdout and py_launch_overhead.json
in $OUT (or /tmp).

    TILESCALE_LIB=build-gpu/libtilescale.so PYTHONPATH=python \
        python3 bench/py_launch_overhead.py [--m 256 --n 256 --calls 20000]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

ap = argparse.ArgumentParser()
ap.add_argument("--m", type=int, default=256)
ap.add_argument("--n", type=int, default=256)
ap.add_argument("--calls", type=int, default=20000)
ap.add_argument("--warmup", type=int, default=2000)
ap.add_argument("--repeat", type=int, default=3, help="interleaved rounds of ours and torch.add (median reported)")
ap.add_argument("--tilelang-child", action="store_true", help=argparse.SUPPRESS)
args = ap.parse_args()

import torch  # noqa: E402


def timed(fn, calls, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    return (t2 - t0) / calls * 1e6, (t1 - t0) / calls * 1e6


def inputs():
    torch.manual_seed(0)
    a = torch.randn(args.m, args.n, device="cuda")
    b = torch.randn(args.m, args.n, device="cuda")
    return a, b


if args.tilelang_child:  # runs with the real TileLang on sys.path
    sys.path.remove(os.path.join(ROOT, "python"))
    import importlib.util
    import tilelang  # noqa: F401
    spec = importlib.util.spec_from_file_location("ea", os.path.join(ROOT, "examples/elementwise_add.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    k = mod.elementwise_add(args.m, args.n)
    a, b = inputs()
    torch.testing.assert_close(k(a, b), a + b)
    host, issue = timed(lambda: k(a, b), args.calls, args.warmup)
    print(json.dumps({"name": "TileLang %s" % getattr(tilelang, "__version__", "?"), "host_us": host,
                      "issue_us": issue}))
    sys.exit(0)

import tilescale  # noqa: E402

rows = []
a, b = inputs()
out_dir = os.environ.get("OUT") or "/tmp"
print("GPU: %s; torch %s; tilescale library %s" % (torch.cuda.get_device_name(), torch.__version__,
                                                    tilescale.library_path()), flush=True)

# ---- compile time through Python against the library's own phases --------------------------------
compile_rows = []
for label, fresh in (("cold cache", True), ("warm cache", False)):
    cache = tempfile.mkdtemp(prefix="tscache") if fresh else os.environ.get("TILESCALE_CACHE_DIR", "")
    opts = {"timing": 1}
    if cache:
        opts["cache_dir"] = cache
    t0 = time.perf_counter()
    k = tilescale.compile(os.path.join(ROOT, "examples/gemm.py"), "matmul", M=4096, N=4096, K=4096, options=opts)
    wall = (time.perf_counter() - t0) * 1e3
    phases = tilescale._lib.kernel_timing(k._default().k).decode()
    lib_ms = 0.0
    for line in phases.splitlines():
        parts = line.rsplit(" ", 1)
        try:
            if not line.startswith("cuda bench"):
                lib_ms += float(parts[1])
        except (IndexError, ValueError):
            pass
    compile_rows.append((label, wall, lib_ms, phases.replace("\n", "; ")))

# ---- ours and torch.add, interleaved, --repeat rounds (the median round is reported) -------------
k = tilescale.compile(os.path.join(ROOT, "examples/elementwise_add.py"), "elementwise_add", M=args.m, N=args.n)
assert k.target == "cuda", k.target
torch.testing.assert_close(k(a, b), a + b)
c = torch.empty_like(a)
k(a, b, c)
torch.testing.assert_close(c, a + b)
contenders = [("tilescale (out_idx output allocated)", lambda: k(a, b)),
              ("tilescale (output passed in)", lambda: k(a, b, c)),
              ("torch.add", lambda: torch.add(a, b))]
rounds = {name: [] for name, _ in contenders}
for _ in range(args.repeat):
    for name, fn in contenders:
        rounds[name].append(timed(fn, args.calls, args.warmup))
for name, _ in contenders:
    r = sorted(rounds[name])
    host, issue = r[len(r) // 2]
    rows.append({"name": name, "host_us": host, "issue_us": issue, "rounds_us": [round(h, 2) for h, _ in rounds[name]]})
kern_ms = k.profile(a, b, warmup=25, rep=100)

# ---- CuPy RawKernel ------------------------------------------------------------------------------
try:
    import cupy as cp
    src = r'''extern "C" __global__ void add(const float *a, const float *b, float *c, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }'''
    raw = cp.RawKernel(src, "add")
    ca, cb = cp.asarray(a.cpu().numpy()), cp.asarray(b.cpu().numpy())
    n = args.m * args.n
    grid = ((n + 255) // 256,)

    def cupy_call():
        cc = cp.empty_like(ca)
        raw(grid, (256,), (ca, cb, cc, cp.int32(n)))
        return cc
    assert float(cp.abs(cupy_call() - (ca + cb)).max()) == 0
    host, issue = timed(cupy_call, args.calls, args.warmup)
    rows.append({"name": "CuPy RawKernel %s" % cp.__version__, "host_us": host, "issue_us": issue})
except Exception as e:  # not installed, or no matching CUDA
    rows.append({"name": "CuPy RawKernel", "error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:100])})

# ---- TileLang (subprocess, its own import) -------------------------------------------------------
site = os.environ.get("TL_SITE", "/tmp/site")
env = dict(os.environ, PYTHONPATH=site + os.pathsep + os.environ.get("PYTHONPATH", ""))
try:
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--tilelang-child", "--m", str(args.m), "--n",
                        str(args.n), "--calls", str(args.calls), "--warmup", str(args.warmup)],
                       capture_output=True, text=True, env=env, timeout=400)
    last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    if r.returncode == 0 and last.startswith("{"):
        rows.append(json.loads(last))
    else:
        rows.append({"name": "TileLang", "error": (r.stderr.strip().splitlines() or ["?"])[-1][:120]})
except Exception as e:
    rows.append({"name": "TileLang", "error": str(e)[:120]})

print("\nHost time per call, %d x %d float32 add, %d calls after %d warm-up (kernel alone: %.2f us by events)\n"
      % (args.m, args.n, args.calls, args.warmup, kern_ms * 1e3))
print("| contender | host us/call (drained) | issue us/call | rounds |")
print("|---|---|---|---|")
for r in rows:
    if "error" in r:
        print("| %s | not run: %s | | |" % (r["name"], r["error"]))
    else:
        print("| %s | %.2f | %.2f | %s |" % (r["name"], r["host_us"], r["issue_us"],
                                            " ".join("%.2f" % v for v in r.get("rounds_us", []))))
print("\nCompile of examples/gemm.py matmul 4096^3 through Python (CUDA target)\n")
print("| cache | Python wall ms | library phases ms | phases |")
print("|---|---|---|---|")
for label, wall, lib_ms, phases in compile_rows:
    print("| %s | %.1f | %.1f | %s |" % (label, wall, lib_ms, phases))
with open(os.path.join(out_dir, "py_launch_overhead.json"), "w") as f:
    json.dump({"shape": [args.m, args.n], "calls": args.calls, "rows": rows, "kernel_us": kern_ms * 1e3,
               "compile": compile_rows}, f, indent=1)
ours = rows[0]["host_us"]
print("\ngoal <= 7 us/call: %s (%.2f us)" % ("MET" if ours <= 7 else "NOT MET", ours))
