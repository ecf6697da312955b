#!/usr/bin/env python3
"""py_launch_profile.py — where the host time of one Python kernel call goes
(issue 8's launch-overhead goal: <= 7 us per call with out_idx outputs).

bench/py_launch_overhead.py gives the totals beside torch.add; this script
splits ours into its parts, each timed alone in a loop of N calls on the
same small kernel (examples/elementwise_add.py, 256 x 256 float32, three
tensors): the torch accessors the argument conversion reads, the output
allocation (several spellings of it), the current-stream query, a bare
ctypes call, the C launch alone (the packed records already filled), our
whole call with and without out_idx allocation, and torch.add.  Then a
cProfile of the whole call (its proportions, not its absolute times).
Nothing here needs TileLang or CuPy.

    TILESCALE_LIB=build-gpu/libtilescale.so PYTHONPATH=python python3 bench/py_launch_profile.py
"""
import cProfile
import io
import os
import pstats
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402

import tilescale  # noqa: E402
from tilescale import _kernel, _lib  # noqa: E402

M = N = 256
CALLS = int(os.environ.get("CALLS", "20000"))


def per_call(fn, calls=CALLS, sync=True):
    for _ in range(calls // 10):
        fn()
    if sync:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    if sync:
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


a = torch.randn(M, N, device="cuda")
b = torch.randn(M, N, device="cuda")
c = torch.empty_like(a)
k = tilescale.compile(os.path.join(ROOT, "examples/elementwise_add.py"), "elementwise_add", M=M, N=N)
torch.testing.assert_close(k(a, b), a + b)
k(a, b, c)
torch.testing.assert_close(c, a + b)
dev = a.device
rows = []


def row(name, fn, sync=True):
    us = per_call(fn, sync=sync)
    rows.append((name, us))
    print("%-58s %7.3f us" % (name, us), flush=True)


print("GPU %s, torch %s, Python %s" % (torch.cuda.get_device_name(), torch.__version__, sys.version.split()[0]))
row("loop overhead (lambda: None)", lambda: None, sync=False)
row("torch.add(a, b)", lambda: torch.add(a, b))
row("k(a, b, c)  [output passed]", lambda: k(a, b, c))
row("k(a, b)     [out_idx output allocated]", lambda: k(a, b))
# the same on a one-block shape, where the GPU cannot be what limits the rate
a16, b16 = torch.randn(16, 64, device="cuda"), torch.randn(16, 64, device="cuda")
c16 = torch.empty_like(a16)
k16 = tilescale.compile(os.path.join(ROOT, "examples/elementwise_add.py"), "elementwise_add", M=16, N=64)
torch.testing.assert_close(k16(a16, b16), a16 + b16)
row("16x64: torch.add(a, b)", lambda: torch.add(a16, b16))
row("16x64: k(a, b, c)  [output passed]", lambda: k16(a16, b16, c16))
row("16x64: k(a, b)     [out_idx output allocated]", lambda: k16(a16, b16))
row("16x64: issue only, k(a, b) (no final synchronize)", lambda: k16(a16, b16), sync=False)
row("torch.empty((M,N), dtype=f32, device=dev)", lambda: torch.empty((M, N), dtype=torch.float32, device=dev),
    sync=False)
row("torch.empty(M, N, dtype=f32, device=dev)", lambda: torch.empty(M, N, dtype=torch.float32, device=dev),
    sync=False)
row("torch.empty_like(a)", lambda: torch.empty_like(a), sync=False)
row("torch.empty(M, N, dtype=f32, device=dev) [bound names]", lambda e=torch.empty, d=torch.float32: e(M, N, dtype=d, device=dev), sync=False)
row("a.new_empty((M, N))", lambda: a.new_empty((M, N)), sync=False)
row("torch.empty_strided((M, N), (N, 1), dtype=f32, device=dev)",
    lambda e=torch.empty_strided, d=torch.float32: e((M, N), (N, 1), dtype=d, device=dev), sync=False)


def chunked(B=16, it=[iter(())], e=torch.empty, d=torch.float32):
    o = next(it[0], None)
    if o is None:  # B outputs in one allocation, handed out as views
        it[0] = iter(e(B, M, N, dtype=d, device=dev).unbind(0))
        o = next(it[0])
    return o


row("one allocation per 16 outputs, unbind(0) views (amortized)", chunked, sync=False)
row("a.dtype", lambda: a.dtype, sync=False)
row("a.is_cuda", lambda: a.is_cuda, sync=False)
row("a.get_device()", lambda: a.get_device(), sync=False)
row("a.device", lambda: a.device, sync=False)
row("a.data_ptr()", lambda: a.data_ptr(), sync=False)
row("a.shape", lambda: a.shape, sync=False)
row("a.stride()", lambda: a.stride(), sync=False)
row("a.is_contiguous()", lambda: a.is_contiguous(), sync=False)
row("a.shape == (M, N)", lambda: a.shape == (M, N), sync=False)
row("type(a) is torch.Tensor", lambda: type(a) is torch.Tensor, sync=False)
row("_describe_torch(a)", lambda: _kernel._describe_torch(a), sync=False)
raw = torch._C._cuda_getCurrentRawStream
row("torch._C._cuda_getCurrentRawStream(0)", lambda: raw(0), sync=False)
# a bare kernel launch through torch (CUDA runtime API, one argument): a floor for any launch here
sleep = getattr(torch.cuda, "_sleep", None)
if sleep is not None:
    row("torch.cuda._sleep(0) (a bare launch through torch)", lambda: sleep(0))
f = k._cuda
bare = _lib._proto(_lib.fast, "ts_kernel_shared_bytes", __import__("ctypes").c_int64, _lib._VP)
row("ctypes, GIL kept: ts_kernel_shared_bytes(k)", lambda: bare(f.k), sync=False)
row("ctypes, GIL released: ts_kernel_shared_bytes(k)", lambda: _lib.kernel_shared_bytes(f.k), sync=False)
tt, n = k._tt, k._nparams
st = raw(0)
row("C launch alone: kernel_launch_device(k, records, 3, stream)", lambda: _lib.kernel_launch_device(f.k, tt, n, st))
kk = f.k.value if hasattr(f.k, "value") else f.k
row("  same, k as a plain int", lambda: _lib.kernel_launch_device(kk, tt, n, st))
bare = getattr(_kernel, "_bare_launch", None)
if bare is not None:
    kobj, sobj = __import__("ctypes").c_void_p(kk), _kernel._stream_obj(st)
    row("  same, no argtypes, ready ctypes objects", lambda: bare(kobj, tt, n, sobj))
    # the prepared launch (ts_kernel_prepare_device): what the generated launcher calls
    import ctypes
    plan = ctypes.c_void_p()
    if _lib.kernel_prepare_device(kk, tt, n, ctypes.byref(plan)) == 0 and plan.value:
        pl = _lib.bare.ts_plan_launch
        pl.restype = ctypes.c_int
        row("C launch prepared: ts_plan_launch(plan, stream) (the launcher's call)", lambda: pl(plan, sobj))
        row("ctypes, GIL kept: ts_plan_pointers(plan) (a bare call of 1 argument)",
            lambda p=_lib.bare.ts_plan_pointers: p(plan), sync=False)
k(a, b)
k(a, b)
print("generated launcher in use: %s" % (getattr(k, "_fast", None) is not None))
if getattr(k, "_launcher_source", None):
    print(k._launcher_source)

pr = cProfile.Profile()
pr.enable()
for _ in range(5000):
    k(a, b)
pr.disable()
torch.cuda.synchronize()
s = io.StringIO()
pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(18)
print("\ncProfile of 5000 calls k(a, b) (tottime order; profiler overhead inflates small functions)")
print("\n".join(s.getvalue().splitlines()[4:32]))
