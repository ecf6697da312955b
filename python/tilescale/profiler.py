"""Timing and checking kernels from Python: do_bench, random inputs, and
the Profiler object TileLang scripts get from kernel.get_profiler().

do_bench(fn) times a callable the way GPU kernels are usually timed: a
few calls to estimate its cost, warm-up calls for `warmup` milliseconds,
then `rep` milliseconds' worth of calls, each between two CUDA events on
the current stream, with the L2 cache flushed (a 256 MB buffer zeroed)
before each so that every call starts cold; the result is the median (or
mean, return_mode="mean") in milliseconds.  Without CUDA (NumPy arrays,
torch CPU tensors) the same loop runs on the wall clock, no flush.

A large CUDA kernel's first build is tiered: a quick tier runs its first
calls while the full tier is compiled in the background (Kernel.tier,
Kernel.wait_full).  Timing waits for the full tier first: do_bench(fn)
when fn is a Kernel (or a method of one), Kernel.profile and
Profiler.do_bench always, since a time of the quick tier would mislead.
A lambda around a kernel cannot be seen through: call k.wait_full() first.

Inputs are made with torch when it is importable (on CUDA when the
kernel's target is CUDA), otherwise with NumPy, so the CPU path needs no
torch.  The supply types are TileLang's names: Integer (small integers, the
default, exact in every dtype), Uniform, Normal/Randn, One, Zero, Auto.
"""
import enum
import statistics
import sys
import time

from . import _lib


class TensorSupplyType(enum.Enum):
    Integer = 1
    Uniform = 2
    Normal = 3
    Randn = 4
    Zero = 5
    One = 6
    Auto = 7


def _supply(s):
    if s is None:
        return TensorSupplyType.Integer
    if isinstance(s, TensorSupplyType):
        return s
    name = str(getattr(s, "name", s)).split(".")[-1].lower()
    for t in TensorSupplyType:
        if t.name.lower() == name:
            return t
    raise ValueError("tilescale: unknown tensor supply type %r" % (s,))


def _have_torch():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


def make_tensor(shape, dtype, supply=None, device=None, rng=None):
    """A tensor of `shape` and `dtype` (a TileLang dtype name) filled per
    `supply`; torch on `device` ("cpu"/"cuda") when torch is there, else NumPy."""
    supply = _supply(supply)
    if _have_torch():
        import torch
        from . import _kernel
        # (the code -> torch map: torch.int8 for int8; inverting _torch_maps() would give
        # float4_e2m1fn_x2, which it also accepts as int8 bytes)
        tdt = (_kernel._torch_from_code or (_kernel._torch_maps() and _kernel._torch_from_code))[_lib.DTYPE[dtype]]
        dev = device or "cpu"
        if supply == TensorSupplyType.Zero:
            return torch.zeros(shape, dtype=tdt, device=dev)
        if supply == TensorSupplyType.One:
            return torch.ones(shape, dtype=tdt, device=dev)
        if dtype == "bool":
            return torch.randint(0, 2, shape, device=dev).bool()
        if supply == TensorSupplyType.Integer or not (tdt.is_floating_point):
            lo, hi = (-2, 3) if dtype[0] != "u" else (0, 5)
            return torch.randint(lo, hi, shape, device=dev).to(tdt)
        if supply == TensorSupplyType.Uniform:
            return torch.empty(shape, device=dev).uniform_(-1.0, 1.0).to(tdt)
        return torch.randn(shape, device=dev).to(tdt)
    import numpy as np
    if device not in (None, "cpu"):
        raise RuntimeError("tilescale: tensors on %s need torch" % device)
    rng = rng or np.random.default_rng()
    from ._kernel import _empty
    out = _empty(list(shape), dtype, 0, -1, ())
    if supply == TensorSupplyType.Zero:
        out[...] = 0
    elif supply == TensorSupplyType.One:
        out[...] = 1
    elif dtype == "bool":
        out[...] = rng.integers(0, 2, size=shape).astype(bool)
    elif supply == TensorSupplyType.Integer or out.dtype.kind in "iu":
        lo, hi = (-2, 3) if out.dtype.kind != "u" else (0, 5)
        out[...] = rng.integers(lo, hi, size=shape)
    elif supply == TensorSupplyType.Uniform:
        out[...] = rng.uniform(-1.0, 1.0, size=shape)
    else:
        out[...] = rng.standard_normal(size=shape)
    return out


def make_inputs(kernel, supply=None, device=None, seed=None):
    """Inputs for every non-output parameter of `kernel`: tensors of the
    declared shape (run-time extents must be given in the kernel's compile
    parameters under the shape variable's name) and scalars 1."""
    if device is None:
        device = "cuda" if kernel.target == "cuda" else "cpu"
    rng = None
    if seed is not None:
        if _have_torch():
            import torch
            torch.manual_seed(seed)
        else:
            import numpy as np
            rng = np.random.default_rng(seed)
    out = []
    for i in kernel._in:
        p = kernel.params[i]
        if not p.is_tensor:
            out.append(1.0 if p.dtype.startswith(("float", "bfloat")) else 1)
            continue
        shape = []
        for e in p.shape:
            if isinstance(e, str):
                if e not in kernel.compile_params:
                    raise ValueError("tilescale: %s has the run-time extent %s; pass the inputs" % (p.name, e))
                e = int(kernel.compile_params[e])
            shape.append(e)
        out.append(make_tensor(shape, p.dtype, supply, device, rng))
    return out


def _is_cuda(args):
    torch = sys.modules.get("torch")
    return torch is not None and any(isinstance(a, torch.Tensor) and a.is_cuda for a in args or ())


def _wait_full(*fns):
    """A tiered kernel among fns (a Kernel or a callable bound to one) runs
    its full tier before it is timed: a time of the quick tier would
    mislead.  Other callables are left as they are."""
    for f in fns:
        w = getattr(f, "wait_full", None) or getattr(getattr(f, "__self__", None), "wait_full", None)
        if callable(w):
            w()


def do_bench(fn, warmup=25, rep=100, _n_warmup=0, _n_repeat=0, quantiles=None, return_mode="median",
             _args=None, n_warmup=0, n_repeat=0, input_tensors=None, backend="event", **_ignored):
    """Milliseconds per call of fn() (see the essay above)."""
    n_warmup = n_warmup or _n_warmup
    n_repeat = n_repeat or _n_repeat
    _wait_full(fn)
    if input_tensors is not None:
        args = list(input_tensors)
        call = (lambda: fn(*args))
        _args = args
    else:
        call = fn
    cuda = _is_cuda(_args) or (_args is None and "torch" in sys.modules and sys.modules["torch"].cuda.is_available()
                               and sys.modules["torch"].cuda.is_initialized())
    if cuda:
        import torch
        sync = torch.cuda.synchronize
        cache = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
        sync()
        call()
        sync()
        t0 = time.perf_counter()
        for _ in range(5):
            cache.zero_()
            call()
        sync()
        est = max((time.perf_counter() - t0) * 1000 / 5, 1e-4)
        nw = n_warmup or max(1, int(warmup / est))
        nr = n_repeat or max(1, int(rep / est))
        for _ in range(nw):
            call()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(nr)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(nr)]
        for i in range(nr):
            cache.zero_()
            starts[i].record()
            call()
            ends[i].record()
        sync()
        times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    else:
        call()
        t0 = time.perf_counter()
        call()
        est = max((time.perf_counter() - t0) * 1000, 1e-4)
        nw = n_warmup or max(1, min(int(warmup / est), 1000))
        nr = n_repeat or max(1, min(int(rep / est), 10000))
        for _ in range(nw):
            call()
        times = []
        for _ in range(nr):
            t = time.perf_counter()
            call()
            times.append((time.perf_counter() - t) * 1000)
    if quantiles:
        s = sorted(times)
        return [s[min(len(s) - 1, int(q * len(s)))] for q in quantiles]
    if return_mode == "mean":
        return statistics.fmean(times)
    if return_mode == "min":
        return min(times)
    if return_mode == "max":
        return max(times)
    return statistics.median(times)


def _to_numpy(x):
    if hasattr(x, "detach"):
        x = x.detach().cpu()
        if str(x.dtype) in ("torch.bfloat16",) or "float8" in str(x.dtype):
            x = x.float()
        return x.numpy()
    import numpy as np
    return np.asarray(x)


def assert_close(actual, expected, rtol=1e-2, atol=1e-2, max_mismatched_ratio=0.0, name="output"):
    """Like torch.testing.assert_close, tolerating a fraction of mismatches;
    works on NumPy arrays and torch tensors alike."""
    import numpy as np
    a = _to_numpy(actual).astype(np.float64)
    e = _to_numpy(expected).astype(np.float64)
    if a.shape != e.shape:
        a_, e_ = np.squeeze(a), np.squeeze(e)
        if a_.shape != e_.shape:
            raise AssertionError("%s: shape %s, expected %s" % (name, a.shape, e.shape))
        a, e = a_, e_
    bad = ~(np.abs(a - e) <= atol + rtol * np.abs(e))
    bad &= ~(np.isnan(a) & np.isnan(e))
    n = int(bad.sum())
    if n > max_mismatched_ratio * a.size:
        where = np.argwhere(bad)[:5]
        detail = ", ".join("%s: %r vs %r" % (tuple(int(v) for v in w), a[tuple(w)], e[tuple(w)]) for w in where)
        raise AssertionError("%s: %d of %d elements differ beyond atol=%g rtol=%g (max abs diff %g); first: %s"
                             % (name, n, a.size, atol, rtol, float(np.nanmax(np.abs(a - e))) if a.size else 0,
                                detail))


class Profiler:
    """What TileLang's kernel.get_profiler() returns: inputs of the
    kernel's shape, assert_allclose against a reference, do_bench."""

    def __init__(self, kernel, tensor_supply_type=None):
        self.kernel = kernel
        self.supply = _supply(tensor_supply_type)
        self._inputs = None

    def _get_inputs(self, with_output=False):
        if self._inputs is None:
            self._inputs = make_inputs(self.kernel, self.supply)
        return list(self._inputs)

    def run_once(self, func=None):
        ins = self._get_inputs()
        return (func or self.kernel)(*ins)

    def assert_allclose(self, reference_program, input_tensors=None, atol=1e-2, rtol=1e-2,
                        max_mismatched_ratio=0.01):
        ins = list(input_tensors) if input_tensors is not None else self._get_inputs()
        out = self.kernel(*ins)
        ref = reference_program(*ins)
        outs = out if isinstance(out, (list, tuple)) else [out]
        refs = ref if isinstance(ref, (list, tuple)) else [ref]
        if out is None:  # no out_idx: the kernel wrote into its arguments
            outs = []
        for i, (o, r) in enumerate(zip(outs, refs)):
            assert_close(o, r, rtol=rtol, atol=atol, max_mismatched_ratio=max_mismatched_ratio,
                         name="%s output %d" % (self.kernel.entry, i))

    def manual_assert_close(self, reference_program, input_tensors=None, manual_check_prog=None, **kw):
        ins = list(input_tensors) if input_tensors is not None else self._get_inputs()
        out = self.kernel(*ins)
        ref = reference_program(*ins)
        if manual_check_prog is not None:
            manual_check_prog(out, ref)

    def do_bench(self, func=None, warmup=25, rep=100, n_warmup=1, n_repeat=1, input_tensors=None,
                 profiler="auto", quantiles=None, return_mode="mean", **kw):
        ins = list(input_tensors) if input_tensors is not None else self._get_inputs()
        f = func or self.kernel
        if f is self.kernel:  # the form these inputs need, then its full tier (see _wait_full)
            f(*ins)
        _wait_full(f)
        return do_bench(lambda: f(*ins), warmup=warmup, rep=rep, n_warmup=n_warmup if n_warmup > 1 else 0,
                        n_repeat=n_repeat if n_repeat > 1 else 0, quantiles=quantiles, return_mode=return_mode,
                        _args=ins)
