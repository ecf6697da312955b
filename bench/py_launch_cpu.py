#!/usr/bin/env python3
"""py_launch_cpu.py — the Python side of issue 8's launch goal (<= 7 us per
call with out_idx on the H200), measured on a machine without a GPU.

Why: the GPU is lent for minutes a session, while the Python work of a call
(checking the arguments, allocating the output, handing the addresses to C)
is the same on any CPU.  So this script times the launcher generated per
call signature (tilescale._kernel._make_launcher) with everything but the
driver real: real torch tensors (on the CPU), the real generated code, a
real ctypes call of the same shape as the launch.  Stand-ins, each costing
about what it replaces:

  - the CUDA launch: ts_plan_pointers(NULL, ...) of libtilescale through the
    same bare ctypes handle (returns 0 at once; the launch itself is the
    driver's cost, not Python's);
  - the prepared plan: a ctypes array for its address slots;
  - torch's current-stream query: the builtin abs (one C call, returns 0);
  - the device test: get_device() of a CPU tensor is -1, so the generated
    source is re-made with `get_device() + 1` (where the launcher still
    reads it: behind torch's TensorGuards only when that says no).

The launchers compared, all in one process, interleaved rounds:

  slots         session 8's: the per-tensor Python tests, the addresses
                stored into the plan's slots under the kernel's lock, then
                ts_plan_launch(plan, stream);
  slots+guard   the same behind torch's TensorGuards check;
  packed        one C call ts_plan_launch_packed(plan, words) with the
                stream and addresses packed into one bytes object, no lock;
  packed+guard  both (the default since session 9).

Each for k(a, b) (out_idx output allocated, batches of 64) and k(a, b, c)
(output passed in).  Rounds of N calls (CPU time of the thread, so that
other processes on a shared machine count less), best and median per call
reported.

    TILESCALE_LIB=build-rel/libtilescale.so PYTHONPATH=python /tmp/venv-torch/bin/python3 bench/py_launch_cpu.py
"""
import argparse
import ctypes
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

ap = argparse.ArgumentParser()
ap.add_argument("--m", type=int, default=256)
ap.add_argument("--n", type=int, default=256)
ap.add_argument("--calls", type=int, default=50000)
ap.add_argument("--repeat", type=int, default=7)
ap.add_argument("--profile", action="store_true", help="cProfile the default launcher's out_idx call")
args = ap.parse_args()

try:
    import torch
except ImportError:
    print("SKIP: no torch")
    sys.exit(77)

import tilescale  # noqa: E402
from tilescale import _kernel, _lib  # noqa: E402

noop = ctypes.PyDLL(_lib.path).ts_plan_pointers  # NULL -> NULL: returns 0 at once
noop.restype = ctypes.c_int
plans = []


def prepare(k, tt, n, out):
    slots = (ctypes.c_uint64 * max(1, n))(*[tt[i].data or 0 for i in range(n)])
    plans.append(slots)
    out._obj.value = len(plans)  # (a byref of the c_void_p): any non-NULL value
    return 0


_lib.kernel_prepare_device = prepare
_lib.plan_pointers = lambda plan: ctypes.addressof(plans[plan.value - 1])
_kernel._RAW_STREAM = abs
ex = os.path.join(ROOT, "examples/elementwise_add.py")
torch.manual_seed(0)
a = torch.randn(args.m, args.n)
b = torch.randn(args.m, args.n)
c = torch.empty_like(a)


def make(form, guard, passed):
    """A kernel whose __call__ is the launcher of this form for (a, b) or (a, b, c)."""
    old = _kernel._LAUNCH_FORM, _kernel._GUARD
    _kernel._LAUNCH_FORM, _kernel._GUARD = form, guard
    try:
        k = tilescale.compile(ex, "elementwise_add", target="c", M=args.m, N=args.n)
        k._cuda = k._forms[_lib.TARGET_C]  # (the stand-in launch never runs it)
        call = (a, b, c) if passed else (a, b)
        outs = k._call(call, None)  # the general path on the C target: the records, a real result
        torch.testing.assert_close(outs, a + b)
        f = _kernel._make_launcher(k, call, None if passed else [outs])
        assert f is not None
    finally:
        _kernel._LAUNCH_FORM, _kernel._GUARD = old
    env = dict(k._launcher_env, K=ctypes.c_void_p(None), launch=noop)
    src = k._launcher_source
    for i in range(3):
        src = src.replace("a%d.get_device()" % i, "(a%d.get_device() + 1)" % i)
    ns = {}
    exec(compile(src, "<launcher %s>" % form, "exec"), {}, ns)
    g = ns["factory"](**env)
    k._install_launcher(g)
    assert ("check(" in src) == (guard and _kernel._tensor_guard(list(call)) is not None)
    assert ("pack(" in src) == (form == "packed")
    for _ in range(3):
        r = k(*call)
        assert r is (c if passed else r) and tuple(r.shape) == (args.m, args.n)
    return k


def per_call(fn, n):
    # CPU time of this thread: what Python spends, not the time other
    # processes of a shared machine take from it
    t0 = time.thread_time()
    for _ in range(n):
        fn()
    return (time.thread_time() - t0) / n * 1e6


contenders = [("loop: lambda: None", lambda: None)]
for form, guard in (("slots", False), ("slots", True), ("packed", False), ("packed", True)):
    name = form + ("+guard" if guard else "")
    ko = make(form, guard, False)
    kp = make(form, guard, True)
    contenders.append(("k(a, b)    %s" % name, lambda k=ko: k(a, b)))
    contenders.append(("k(a, b, c) %s" % name, lambda k=kp: k(a, b, c)))
print("torch %s, Python %s, %d x %d float32 (CPU tensors, stand-in launch); %d calls x %d rounds"
      % (torch.__version__, sys.version.split()[0], args.m, args.n, args.calls, args.repeat))
res = {n: [] for n, _ in contenders}
for _ in range(args.repeat):
    for n, fn in contenders:
        per_call(fn, args.calls // 10)
        res[n].append(per_call(fn, args.calls))
print("| launcher | best us/call | median |")
print("|---|---|---|")
for n, _ in contenders:
    r = sorted(res[n])
    print("| %s | %.3f | %.3f |" % (n, r[0], r[len(r) // 2]))
if args.profile:
    import cProfile
    import io
    import pstats
    k = make("packed", True, False)
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(args.calls):
        k(a, b)
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(12)
    print(s.getvalue())
    print(k._launcher_source)
