"""The launcher generated per call signature (_kernel._make_launcher), on
the CPU: torch and the CUDA launch are stand-ins here (CI has neither a GPU
nor torch), so what is tested is the generated code's own logic: the first
call takes the general path and leaves a launcher; later calls of the same
signature go through it, store the new data pointers (into the slots of
the launch prepared in C, or into the records where none could be made),
allocate outputs and return what the general path returns; a call of any
other signature (shape, strides, dtype, device, a non-tensor, a stream)
falls back to the general path, which discards the launcher; an error
status from the launch is raised.  The real thing runs on the GPU in
tests/python/test_torch.py and bench/py_launch_profile.py."""
import sys
import types

import pytest

import tilescale
from tilescale import _kernel, _lib

SRC = """
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def add(M, N, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=32) as bx:
            for i, j in T.Parallel(M, N):
                C[i, j] = A[i, j] + B[i, j]
    return main

@tilelang.jit(out_idx=[-1])
def rowsum(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), S: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.serial(M):
                S[i] = 0
                for j in T.serial(N):
                    S[i] += A[i, j]
    return main
"""


def fake_torch():
    t = types.ModuleType("torch")

    class dtype:
        def __init__(self, name):
            self.name = name

        def __repr__(self):
            return "torch." + self.name

    class device:
        def __init__(self, s):
            self.type, _, i = str(s).partition(":")
            self.index = int(i) if i else None

    class Tensor:
        next_ptr = [0x10000]

        def __init__(self, shape, dt, dev="cuda:0", strides=None):
            self.shape = tuple(shape)
            self.dtype = dt
            self.device = device(dev)
            self.is_cuda = self.device.type == "cuda"
            self._strides = tuple(strides) if strides else _kernel._contiguous(self.shape)
            self._ptr = Tensor.next_ptr[0]
            Tensor.next_ptr[0] += 0x10000

        def stride(self):
            return self._strides

        def is_contiguous(self):  # as torch: extent-1 dimensions' strides do not count
            want = _kernel._contiguous(self.shape)
            return all(e == 1 or s == w for e, s, w in zip(self.shape, self._strides, want))

        def get_device(self):
            return self.device.index if self.is_cuda else -1

        def data_ptr(self):
            return self._ptr

    for name in ("float32", "float16", "bfloat16", "float64", "int32", "int64", "int8", "uint8", "bool", "int16"):
        setattr(t, name, dtype(name))
    t.dtype, t.device, t.Tensor = dtype, device, Tensor
    t.empty = lambda *shape, dtype=None, device=None: Tensor(shape[0] if shape and isinstance(shape[0], tuple)
                                                           else shape, dtype, "cuda:%d" % (device.index or 0))
    t.empty_like = lambda x: Tensor(x.shape, x.dtype, "cuda:%d" % x.get_device())
    return t


class Launches:
    """Stand-ins for the two CUDA launch functions; each records the
    records' data pointers and extents as the C launcher would read them."""

    def __init__(self):
        self.general = []
        self.fast = []
        self.status = 0

    def _read(self, tt, n):
        return [(tt[i].data, tuple(tt[i].shape[d] for d in range(tt[i].ndim))) for i in range(n)]

    def general_launch(self, k, tt, n, stream):
        self.general.append(self._read(tt, n))
        return 0

    def fast_launch(self, k, tt, n, stream):
        self.fast.append(self._read(tt, n))
        return self.status

    # the prepared launch (ts_kernel_prepare_device / ts_plan_pointers / ts_plan_launch):
    # the plan keeps the extents of the records it was made from and one
    # address slot per parameter, which the launcher writes before each launch
    def prepare(self, k, tt, n, out):
        import ctypes
        slots = (ctypes.c_uint64 * max(1, n))(*[tt[i].data or 0 for i in range(n)])
        shapes = [tuple(tt[i].shape[d] for d in range(tt[i].ndim)) for i in range(n)]
        self.plans.append((slots, shapes))
        out._obj.value = len(self.plans)  # (a byref of the c_void_p): the plan "pointer"
        return 0

    def plan_pointers(self, plan):
        import ctypes
        return ctypes.addressof(self.plans[plan.value - 1][0])

    def plan_launch(self, plan, stream):
        slots, shapes = self.plans[plan.value - 1]
        self.fast.append([(slots[i], sh) for i, sh in enumerate(shapes)])
        return self.status

    # ts_plan_launch_packed: the stream and the addresses in one buffer of
    # 8-byte words, the plan's slots left alone
    def plan_launch_packed(self, plan, words):
        import struct
        slots, shapes = self.plans[plan.value - 1]
        assert isinstance(words, bytes) and len(words) == 8 * (1 + len(shapes))
        w = struct.unpack("<%dQ" % (1 + len(shapes)), words)
        self.streams.append(w[0])
        self.fast.append([(w[1 + i], sh) for i, sh in enumerate(shapes)])
        return self.status


@pytest.fixture(params=["records", "plan", "packed"])
def setup(monkeypatch, request):
    torch = fake_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(_kernel, "_torch_dtypes", None)
    monkeypatch.setattr(_kernel, "_torch_from_code", None)
    monkeypatch.setattr(_kernel, "_DESCRIBE", {})
    monkeypatch.setattr(_kernel, "_RAW_STREAM", lambda devidx: 0)
    rec = Launches()
    monkeypatch.setattr(_kernel, "_launch_device", rec.general_launch)
    monkeypatch.setattr(_kernel, "_bare_launch", rec.fast_launch)
    rec.plans = []
    rec.streams = []
    rec.mode = request.param
    if request.param in ("plan", "packed"):
        monkeypatch.setattr(_lib, "kernel_prepare_device", rec.prepare)
        monkeypatch.setattr(_lib, "plan_pointers", rec.plan_pointers)
        monkeypatch.setattr(_kernel, "_bare_plan_launch", rec.plan_launch)
        # packed: the addresses in the call (the default); plan: stored into the slots
        monkeypatch.setattr(_kernel, "_bare_packed", rec.plan_launch_packed)
        monkeypatch.setattr(_kernel, "_LAUNCH_FORM", "packed" if request.param == "packed" else "slots")
    else:  # no plan can be made (a chain of kernels): the records and ts_kernel_launch_device
        monkeypatch.setattr(_lib, "kernel_prepare_device", lambda *a: _lib.ERR_UNSUPPORTED)
        monkeypatch.setattr(_kernel, "_bare_plan_launch", lambda *a: pytest.fail("no plan was made"))

    def compile(entry, **params):
        k = tilescale.compile(SRC, entry, target="c", **params)
        k._cuda = k._forms[_lib.TARGET_C]  # the stand-in launches never run it
        k._auto = True
        return k
    return torch, rec, compile


def test_fast_path_after_first_call(setup):
    torch, rec, compile = setup
    k = compile("add", M=4, N=8)
    a, b = torch.Tensor((4, 8), torch.float32), torch.Tensor((4, 8), torch.float32)
    c = k(a, b)
    assert len(rec.general) == 1 and not rec.fast and k._fast is not None
    # the launcher is the __call__ of the kernel's own class: k(...) runs it directly
    assert type(k).__call__ is k._fast and isinstance(k, tilescale.Kernel) and type(k) is not tilescale.Kernel
    k2 = compile("add", M=4, N=8)
    assert type(k2) is not type(k) and type(k2).__call__ is tilescale.Kernel.__call__
    assert rec.general[0] == [(a._ptr, (4, 8)), (b._ptr, (4, 8)), (c._ptr, (4, 8))]
    for _ in range(3):
        a2, b2 = torch.Tensor((4, 8), torch.float32), torch.Tensor((4, 8), torch.float32)
        c2 = k(a2, b2)
        assert isinstance(c2, torch.Tensor) and c2.shape == (4, 8) and c2.dtype is torch.float32
        assert rec.fast[-1] == [(a2._ptr, (4, 8)), (b2._ptr, (4, 8)), (c2._ptr, (4, 8))]
    assert len(rec.general) == 1 and len(rec.fast) == 3
    # outputs passed in: the general path once (new signature), then the launcher; returns the output
    c3 = torch.Tensor((4, 8), torch.float32)
    assert k(a, b, c3) is c3 and len(rec.general) == 2
    c4 = torch.Tensor((4, 8), torch.float32)
    assert k(a2, b2, c4) is c4 and rec.fast[-1][2] == (c4._ptr, (4, 8)) and len(rec.general) == 2


@pytest.mark.parametrize("change", ["shape", "strides", "dtype", "device", "not a tensor", "stream", "count"])
def test_other_signatures_take_the_general_path(setup, change):
    torch, rec, compile = setup
    k = compile("add", M=4, N=8)
    a, b = torch.Tensor((4, 8), torch.float32), torch.Tensor((4, 8), torch.float32)
    k(a, b)
    assert k._fast is not None
    # (extents and dtypes are checked by the C launcher, which the stand-in is not:
    # here it is enough that such calls reach the general path, with their records)
    if change == "shape":
        x = torch.Tensor((3, 8), torch.float32)
        k(x, b)
        assert rec.general[-1][0] == (x._ptr, (3, 8))
    elif change == "strides":
        x = torch.Tensor((4, 8), torch.float32, strides=(1, 4))
        k(x, b)  # strided views are fine, through the general path
        assert rec.general[-1][0] == (x._ptr, (4, 8))
        y = torch.Tensor((4, 8), torch.float32, strides=(1, 4))
        k(y, b)  # ... and then through the launcher made for them
        assert rec.fast[-1][0] == (y._ptr, (4, 8)) and len(rec.general) == 2
        rec.fast.clear()
    elif change == "dtype":
        x = torch.Tensor((4, 8), torch.float16)
        k(x, b)
        assert rec.general[-1][0] == (x._ptr, (4, 8))
    elif change == "device":
        with pytest.raises(tilescale.DeviceError):
            k(torch.Tensor((4, 8), torch.float32, "cuda:1"), b)
    elif change == "not a tensor":
        with pytest.raises(tilescale.ArgumentError):
            k([1, 2], b)
    elif change == "stream":
        k(a, b, stream=7)
    else:
        with pytest.raises(tilescale.ArgumentError):
            k(a)
    assert not rec.fast
    if change in ("device", "not a tensor", "count"):  # failed in the general path: no launcher left
        assert k._fast is None and type(k).__call__ is tilescale.Kernel.__call__
    assert len(rec.general) == (2 if change in ("shape", "strides", "dtype", "stream") else 1)


def test_output_shapes_and_errors(setup):
    torch, rec, compile = setup
    k = compile("rowsum", M=6, N=5)
    a = torch.Tensor((6, 5), torch.float32)
    s1 = k(a)
    s2 = k(torch.Tensor((6, 5), torch.float32))
    assert s1.shape == s2.shape == (6,) and s2.dtype is torch.float32 and s1._ptr != s2._ptr
    assert rec.fast[-1][1] == (s2._ptr, (6,))
    rec.status = _lib.ERR_RUNTIME if hasattr(_lib, "ERR_RUNTIME") else 8
    with pytest.raises(tilescale.TileScaleError):
        k(torch.Tensor((6, 5), torch.float32))


def test_no_reference_cycle(setup):
    """The launcher refers to the kernel's records and lock, never back to the
    Kernel: dropping the last reference frees the kernel (and its C handle) at once."""
    import gc
    import weakref
    torch, rec, compile = setup
    k = compile("add", M=4, N=8)
    k(torch.Tensor((4, 8), torch.float32), torch.Tensor((4, 8), torch.float32))
    assert k._fast is not None
    r = weakref.ref(k)
    gc.disable()
    try:
        del k
        assert r() is None
    finally:
        gc.enable()


def test_alternating_signatures_keep_their_launchers(setup):
    """A kernel called alternately with two signatures (out_idx output allocated,
    output passed in) reuses each signature's launcher: the cap on launchers
    made per kernel counts signatures, not switches."""
    torch, rec, compile = setup
    k = compile("add", M=4, N=8)
    a, b, c = (torch.Tensor((4, 8), torch.float32) for _ in range(3))
    for _ in range(_kernel._MAX_LAUNCHERS + 4):
        o = k(a, b)
        assert k(a, b) is not o and k(a, b, c) is c and k(a, b, c) is c
    assert k._nfast == 2 and len(k._launchers) == 2
    n = len(rec.fast)
    c2 = torch.Tensor((4, 8), torch.float32)
    assert k(a, b, c2) is c2 and len(rec.fast) == n + 1 and rec.fast[-1][2] == (c2._ptr, (4, 8))


@pytest.mark.parametrize("ptrs", [False, True])
def test_split_outputs(setup, monkeypatch, ptrs):
    """_ALLOC_FORM "split": outputs come from one allocation of a batch, cut
    by torch.unsafe_split into tensors of their own, one per call; a batch is
    used up before the next is made; only on the legacy default stream (where
    no CUDA graph is captured, and a batch never crosses streams)."""
    torch, rec, compile = setup
    sizes = {"float32": 4, "float16": 2}
    torch.Tensor.numel = lambda self: __import__("math").prod(self.shape)
    torch.Tensor.element_size = lambda self: sizes[self.dtype.name]
    made = []

    def unsafe_split(base, size, dim=0):
        assert dim == 0 and base.shape[0] % size == 0
        made.append(base)
        n = base.shape[0] // size
        out = []
        for i in range(n):
            t = torch.Tensor((size,) + base.shape[1:], base.dtype)
            t._ptr = base._ptr + i * t.numel() * t.element_size()
            out.append(t)
        return tuple(out)
    torch.unsafe_split = unsafe_split
    monkeypatch.setattr(_kernel, "_ALLOC_FORM", "split")
    assert (_kernel._SPLIT_MAX, _kernel._SPLIT_BYTES, _kernel._SPLIT_PTRS) == (64, 16 << 20, True)  # the defaults
    monkeypatch.setattr(_kernel, "_SPLIT_PTRS", ptrs)  # pointers read per batch, or per call
    monkeypatch.setattr(_kernel, "_SPLIT_MAX", 16)  # (the numbers below)
    monkeypatch.setattr(_kernel, "_SPLIT_BYTES", 4 << 20)
    stream = [0]
    monkeypatch.setattr(_kernel, "_RAW_STREAM", lambda devidx: stream[0])
    k = compile("add", M=64, N=8)  # 2 KiB outputs: batches of 16
    a, b = torch.Tensor((64, 8), torch.float32), torch.Tensor((64, 8), torch.float32)
    k(a, b)
    assert "usplit" in k._launcher_source and ("ptrs_(t)" in k._launcher_source) == ptrs
    outs = [k(a, b) for _ in range(20)]
    assert len(made) == 2 and made[0].shape == (16 * 64, 8)
    assert [o._ptr for o in outs[:16]] == [made[0]._ptr + 2048 * i for i in range(16)]
    assert outs[16]._ptr == made[1]._ptr and all(o.shape == (64, 8) for o in outs)
    assert [r[2][0] for r in rec.fast] == [o._ptr for o in outs]  # the launch got each output's address
    # on another stream (where a CUDA graph may be captured): one allocation per call
    stream[0] = 5
    o = k(a, b)
    assert len(made) == 2 and o._ptr not in [m._ptr + 2048 * i for m in made for i in range(16)]
    stream[0] = 0
    assert k(a, b)._ptr == made[1]._ptr + 2048 * 4 and len(made) == 2  # the batch goes on
    # a size that is not a multiple of 256 bytes keeps one allocation per call
    k2 = compile("add", M=3, N=5)
    k2(torch.Tensor((3, 5), torch.float32), torch.Tensor((3, 5), torch.float32))
    assert "usplit" not in k2._launcher_source and "o0 = empty_like(a0)" in k2._launcher_source


class GuardStandIn:
    """A stand-in for torch's TensorGuards check: says what `answer` says and
    counts its calls (the fake torch has none)."""

    def __init__(self):
        self.answer = True
        self.calls = 0

    def __call__(self, *tensors):
        self.calls += 1
        return self.answer


def test_guard_then_python_tests(setup, monkeypatch):
    """With torch's check available the launcher asks it first; where it says
    no, the Python tests decide (a tensor differing only in what they do not
    look at, e.g. requires_grad, still takes the launcher); where both say no,
    the general path."""
    torch, rec, compile = setup
    g = GuardStandIn()
    monkeypatch.setattr(_kernel, "_tensor_guard", lambda args: g)
    k = compile("add", M=4, N=8)
    a, b = torch.Tensor((4, 8), torch.float32), torch.Tensor((4, 8), torch.float32)
    k(a, b)
    assert "if not check(a0, a1):" in k._launcher_source
    n = len(rec.fast)
    k(a, b)
    assert g.calls == 1 and len(rec.fast) == n + 1 and len(rec.general) == 1
    g.answer = False  # torch says no, the Python tests say yes: still the launcher
    k(a, b)
    assert g.calls == 2 and len(rec.fast) == n + 2 and len(rec.general) == 1
    x = torch.Tensor((3, 8), torch.float32)  # both say no: the general path
    k(x, b)
    assert len(rec.fast) == n + 2 and len(rec.general) == 2 and rec.general[-1][0] == (x._ptr, (3, 8))


def test_packed_launch_words(setup, monkeypatch):
    """The packed launch: one call, the stream first, then every parameter's
    address in parameter order (outputs included); no lock."""
    torch, rec, compile = setup
    if rec.mode == "records":
        pytest.skip("no plan in this set-up")
    stream = [0]
    monkeypatch.setattr(_kernel, "_RAW_STREAM", lambda devidx: stream[0])
    k = compile("add", M=4, N=8)
    a, b = torch.Tensor((4, 8), torch.float32), torch.Tensor((4, 8), torch.float32)
    k(a, b)
    packed = _kernel._LAUNCH_FORM == "packed"
    assert ("pack(h, " in k._launcher_source) == packed and ("acquire(" in k._launcher_source) != packed
    stream[0] = 0x7f0000001230
    c = k(a, b)
    assert rec.fast[-1] == [(a._ptr, (4, 8)), (b._ptr, (4, 8)), (c._ptr, (4, 8))]
    if packed:
        assert rec.streams == [0x7f0000001230]
    c2 = torch.Tensor((4, 8), torch.float32)
    assert k(b, a, c2) is c2 and k(b, a, c2) is c2
    assert rec.fast[-1] == [(b._ptr, (4, 8)), (a._ptr, (4, 8)), (c2._ptr, (4, 8))]


def test_real_torch_guard():
    """torch's own check (TensorGuards) on real tensors: it accepts tensors of
    the signature it was made from and refuses every difference the Python
    tests would refuse (dtype, extents, strides, not a tensor), so a yes from
    it is a yes of the Python tests."""
    torch = pytest.importorskip("torch")
    a, b = torch.randn(4, 8), torch.randn(4, 8)
    check = _kernel._tensor_guard([a, b])
    if check is None:
        pytest.skip("this torch has no usable TensorGuards")
    assert check(a, b) and check(torch.randn(4, 8), torch.empty(4, 8))
    assert not check(a, b.double())
    assert not check(a, torch.randn(4, 9))
    assert not check(a, torch.randn(8, 4).t())              # strides
    assert not check(a, torch.randn(4, 16)[:, ::2])         # strides
    assert not check(a, torch.randn(4, 8, 1))               # rank
    assert not check(a, [1.0] * 8) and not check(a, None)   # not a tensor
    assert _kernel._tensor_guard([]) is None
    old = _kernel._GUARD
    try:
        _kernel._GUARD = False
        assert _kernel._tensor_guard([a, b]) is None
    finally:
        _kernel._GUARD = old


def test_real_torch_launcher(monkeypatch):
    """The generated launcher on real torch tensors (CPU ones standing in for
    CUDA ones; the launch a stand-in that records its words): the addresses
    handed over are the tensors' own, the output is a fresh tensor each call,
    and another signature goes the general path (here the C target, whose
    result is checked)."""
    torch = pytest.importorskip("torch")
    import ctypes
    import struct
    plans, words = [], []

    def prepare(k, tt, n, out):
        plans.append((ctypes.c_uint64 * max(1, n))())
        out._obj.value = len(plans)
        return 0
    monkeypatch.setattr(_lib, "kernel_prepare_device", prepare)
    monkeypatch.setattr(_lib, "plan_pointers", lambda plan: ctypes.addressof(plans[plan.value - 1]))
    monkeypatch.setattr(_kernel, "_RAW_STREAM", lambda devidx: 0)
    monkeypatch.setattr(_kernel, "_bare_packed", lambda K, w: words.append(struct.unpack("<4Q", w)) or 0)
    monkeypatch.setattr(_kernel, "_LAUNCH_FORM", "packed")
    k = tilescale.compile(SRC, "add", target="c", M=64, N=8)
    k._cuda = k._forms[_lib.TARGET_C]
    a, b = torch.randn(64, 8), torch.randn(64, 8)
    out = k._call((a, b), None)  # the general path (C target): the records
    torch.testing.assert_close(out, a + b, rtol=0, atol=0)
    f = _kernel._make_launcher(k, (a, b), [out])
    assert f is not None and "pack(h, a0.data_ptr(), a1.data_ptr(), p0)" in k._launcher_source
    if _kernel._tensor_guard([a, b]) is not None:
        assert "if not check(a0, a1):" in k._launcher_source
    k._install_launcher(f)
    outs = []
    for _ in range(70):  # past a batch of 64 outputs
        a2, b2 = torch.randn(64, 8), torch.randn(64, 8)
        o = k(a2, b2)
        assert words[-1] == (0, a2.data_ptr(), b2.data_ptr(), o.data_ptr())
        assert o.shape == (64, 8) and o.dtype == torch.float32 and o._base is None
        outs.append(o)
    assert len(words) == 70 and len({o.data_ptr() for o in outs}) == 70
    x = torch.randn(64, 8, dtype=torch.float64)  # another signature: the general path, checked in C
    with pytest.raises(tilescale.DTypeError):
        k(x, b)
    assert len(words) == 70
