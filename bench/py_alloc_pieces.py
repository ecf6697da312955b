#!/usr/bin/env python3
"""py_alloc_pieces.py — the pieces of issue 8's out_idx launch (goal <= 7 us
per call), measured to choose between ways of doing each:

  1. the output allocation: every torch spelling that gives a fresh tensor
     of its own storage and version counter (empty_like, new_empty, the
     legacy .new(torch.Size), torch.empty with positional extents, ...),
     each timed alone, N calls back to back, no synchronize (host time),
     and a batch of outputs cut from one allocation by torch.unsafe_split
     (tensors of their own: not views, their own version counters);
  2. the checks the generated launcher makes per tensor, alone;
  3. the CUDA driver's cuLaunchKernel through ctypes on empty kernels of
     1 and of 17 parameters (ours: 3 tensors x (pointer, 2 extents, 2
     strides) + rank + nranks), by kernelParams and by one packed buffer
     (CU_LAUNCH_PARAM_BUFFER_POINTER), issue time in chunks of 500 calls
     between synchronizes (so the GPU never holds the host back);
  4. our whole call k(a, b) with the launcher generated for each
     allocation form (tilescale._kernel._ALLOC_FORM), interleaved rounds,
     beside k(a, b, c) and torch.add.

    TILESCALE_LIB=build-gpu/libtilescale.so PYTHONPATH=python python3 bench/py_alloc_pieces.py
"""
import ctypes
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402

import tilescale  # noqa: E402
from tilescale import _kernel  # noqa: E402

M = N = 256
CALLS = int(os.environ.get("CALLS", "20000"))
dev = torch.device("cuda:0")
a = torch.randn(M, N, device=dev)
b = torch.randn(M, N, device=dev)
c = torch.empty_like(a)


def host(fn, calls=CALLS, chunk=None):
    """us per call; chunk: synchronize (untimed) every `chunk` calls."""
    for _ in range(calls // 10):
        fn()
    torch.cuda.synchronize()
    if chunk is None:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t0) / calls * 1e6
    tot = 0.0
    for _ in range(calls // chunk):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(chunk):
            fn()
        tot += time.perf_counter() - t0
    torch.cuda.synchronize()
    return tot / (calls // chunk * chunk) * 1e6


def row(name, fn, **kw):
    print("%-64s %7.3f us" % (name, host(fn, **kw)), flush=True)


print("GPU %s, torch %s, Python %s" % (torch.cuda.get_device_name(), torch.__version__, sys.version.split()[0]))
row("loop: lambda: None", lambda: None)

print("-- 1. allocation of one 256x256 float32 output (alone, no sync)")
S = (M, N)
TS = torch.Size(S)
f32 = torch.float32
empty, empty_like, new_empty, new = torch.empty, torch.empty_like, torch.Tensor.new_empty, torch.Tensor.new
row("torch.empty_like(a)", lambda: empty_like(a))
row("torch.Tensor.new_empty(a, S)  (S a tuple)", lambda: new_empty(a, S))
row("torch.Tensor.new_empty(a, TS) (TS a torch.Size)", lambda: new_empty(a, TS))
row("a.new_empty(S)", lambda: a.new_empty(S))
row("torch.Tensor.new(a, TS)  (legacy, torch.Size)", lambda: new(a, TS))
row("torch.Tensor.new(a, M, N)", lambda: new(a, M, N))
row("torch.empty(M, N, dtype=f32, device=dev)", lambda: empty(M, N, dtype=f32, device=dev))
row("torch.empty(S, dtype=f32, device=dev)", lambda: empty(S, dtype=f32, device=dev))
row("torch.empty(M, N, device=dev)  (default dtype)", lambda: empty(M, N, device=dev))
row("torch.empty_strided(S, (N, 1), dtype=f32, device=dev)",
    lambda es=torch.empty_strided: es(S, (N, 1), dtype=f32, device=dev))
row("torch.ops.aten.empty_like.default(a)", lambda op=torch.ops.aten.empty_like.default: op(a))
us = torch.unsafe_split
for kb in (8, 16):
    it = [iter(())]

    def batched(kb=kb, it=it):
        o = next(it[0], None)
        if o is None:
            it[0] = iter(us(empty(kb * M, N, dtype=f32, device=dev), M, 0))
            o = next(it[0])
        return o
    row("unsafe_split of one torch.empty(%d*M, N) (amortized per output)" % kb, batched)
ps = us(empty(4 * M, N, dtype=f32, device=dev), M, 0)
assert ps[1]._base is None and not ps[1]._is_view() and ps[1].shape == TS
ps[0].add_(1)
assert ps[0]._version == 1 and ps[1]._version == 0
o = new(a, TS)
assert o.shape == TS and o.dtype == a.dtype and o.device == a.device and o.data_ptr() != a.data_ptr()
assert o._version == 0 and o._base is None
o = new_empty(a, S)
assert o.shape == TS and o.dtype == a.dtype and o.device == a.device

print("-- 2. per-tensor checks and reads (alone)")
D = a.dtype
row("a.dtype is not D", lambda: a.dtype is not D)
row("a.shape != S", lambda: a.shape != S)
row("a.shape != TS", lambda: a.shape != TS)
row("a.size() != S", lambda: a.size() != S)
row("not a.is_contiguous()", lambda: not a.is_contiguous())
row("a.get_device()", lambda: a.get_device())
row("not a.is_cuda", lambda: not a.is_cuda)
row("a.data_ptr()", lambda: a.data_ptr())
raw = torch._C._cuda_getCurrentRawStream
row("torch._C._cuda_getCurrentRawStream(0)", lambda: raw(0))

print("-- 3. cuLaunchKernel through ctypes, empty kernels, issue time (sync every 500, untimed)")
try:
    cu = ctypes.CDLL("libcuda.so.1")
    CUr = ctypes.c_int
    vp = ctypes.c_void_p
    ctx = vp()
    cu.cuCtxGetCurrent(ctypes.byref(ctx))
    ptx = [".version 7.8", ".target sm_90", ".address_size 64",
           ".visible .entry k1(.param .u64 p0) { ret; }",
           ".visible .entry k17(" + ", ".join([".param .u64 p%d" % i for i in range(15)] +
                                              [".param .u32 p15", ".param .u32 p16"]) + ") { ret; }"]
    mod = vp()
    r = cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(("\n".join(ptx) + "\n").encode()))
    assert r == 0, "cuModuleLoadData %d" % r
    f1, f17 = vp(), vp()
    assert cu.cuModuleGetFunction(ctypes.byref(f1), mod, b"k1") == 0
    assert cu.cuModuleGetFunction(ctypes.byref(f17), mod, b"k17") == 0
    launch = cu.cuLaunchKernel
    launch.restype = CUr
    launch.argtypes = [vp, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                       ctypes.c_uint, vp, vp, vp]
    vals = (ctypes.c_uint64 * 17)(*([a.data_ptr(), 256, 256, 256, 1] * 3 + [0, 1]))
    kp1 = (vp * 1)(ctypes.addressof(vals))
    kp17 = (vp * 17)(*[ctypes.addressof(vals) + 8 * i for i in range(15)] +
                     [ctypes.addressof(vals) + 8 * 15, ctypes.addressof(vals) + 8 * 16])
    packed = (ctypes.c_uint8 * 128)()
    ctypes.memmove(packed, vals, 120)
    ctypes.memmove(ctypes.addressof(packed) + 120, (ctypes.c_uint32 * 2)(0, 1), 8)
    size = ctypes.c_size_t(128)
    extra = (vp * 5)(1, ctypes.addressof(packed), 2, ctypes.addressof(size), 0)
    st = raw(0)
    for name, fn in (("k1 (1 parameter), kernelParams", lambda: launch(f1, 4, 8, 1, 128, 1, 1, 0, st, kp1, None)),
                     ("k17 (17 parameters), kernelParams", lambda: launch(f17, 4, 8, 1, 128, 1, 1, 0, st, kp17, None)),
                     ("k17, one packed buffer (extra)", lambda: launch(f17, 4, 8, 1, 128, 1, 1, 0, st, None, extra))):
        assert fn() == 0
        row("cuLaunchKernel " + name, fn, chunk=500)
    sl = getattr(torch.cuda, "_sleep", None)
    if sl is not None:
        row("torch.cuda._sleep(0) (a runtime-API launch through torch)", lambda: sl(0), chunk=500)
except Exception as e:  # no libcuda here
    print("driver experiment not run: %s: %s" % (type(e).__name__, e))

print("-- 4. whole calls, 3 interleaved rounds (drained, and issue in chunks of 500)")
ex = os.path.join(ROOT, "examples/elementwise_add.py")
kernels = {}
for form in ("empty_like", "split", "new_empty", "new", "empty"):
    _kernel._ALLOC_FORM = form
    k = tilescale.compile(ex, "elementwise_add", M=M, N=N)
    torch.testing.assert_close(k(a, b), a + b)
    torch.testing.assert_close(k(a, b), a + b)
    src = getattr(k, "_launcher_source", "") or ""
    line = [ln.strip() for ln in src.splitlines() if "usplit(" in ln] or \
        [ln.strip() for ln in src.splitlines() if ln.strip().startswith("o0 =")]
    kernels[form] = (k, line[0] if line else "?")
_kernel._ALLOC_FORM = "split"
kp = kernels["empty_like"][0]
kp(a, b, c)
torch.testing.assert_close(c, a + b)
cont = [("k(a, b) %s  [%s]" % (f, ln), (lambda k=k: k(a, b))) for f, (k, ln) in kernels.items()]
cont += [("k(a, b, c) [output passed]", lambda: kp(a, b, c)), ("torch.add(a, b)", lambda: torch.add(a, b))]
res = {n: [] for n, _ in cont}
for _ in range(3):
    for n, fn in cont:
        res[n].append((host(fn), host(fn, chunk=500)))
for n, _ in cont:
    r = res[n]
    print("%-70s drained %s | issue %s" % (n, " ".join("%.2f" % d for d, _ in r), " ".join("%.2f" % i for _, i in r)))
