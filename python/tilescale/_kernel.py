"""The compiled kernel object: compilation through the C API, argument
conversion, launch, outputs, queries.

A Kernel stands for one entry of one source with one set of compile-time
values.  It may hold two compiled forms, one per target, because the
target follows the arguments: torch CPU tensors and NumPy arrays run the C
target, torch CUDA tensors the CUDA target (target="auto"); an explicit
target="c" or "cuda" fixes it (the CUDA target then also takes host
tensors, which the library copies in and out).  The default target's form
is compiled at once, so compile errors surface at compile(); the other
one the first time arguments need it.

Arguments are described to the library as DLPack-style TsTensor records
(data pointer, dtype, shape, strides in elements); nothing is copied.
Tensors may be strided (non-contiguous views, NumPy's negative strides):
the generated code indexes with run-time strides.  All checking of dtypes,
ranks, extents and shape variables happens in the C launcher, whose
message becomes the exception; Python checks only what C cannot see: the
device of each tensor and that an object is a tensor at all.

The launch path for CUDA tensors is kept short because it is paid on every
call (the issue's goal is <= 7 us of host time per call): the TsTensor
array and the shape/stride arrays are allocated once per kernel and only
refilled, the per-type conversion is found by a dict lookup on the
argument's type, and the call goes through the GIL-holding handle
(_lib.fast).  A lock serializes calls of one kernel object from several
threads, since they share those arrays.  After the first call of a
signature, a launcher generated for it takes over (see "the generated
launcher" below).

Outputs named by out_idx (from the source's @tilelang.jit(out_idx=...), or
given to compile()) are allocated when the caller leaves them out, on the
inputs' device, with extents that are constants or shape variables bound
by the inputs.
"""
import ctypes
import struct
import sys
import threading
import warnings

from . import _lib
from ._errors import ArgumentError, CompileWarning, DeviceError, TileScaleError, compile_error, launch_error

TARGETS = {"c": _lib.TARGET_C, "cpu": _lib.TARGET_C, "llvm": _lib.TARGET_C, "cuda": _lib.TARGET_CUDA}
_TARGET_NAMES = {_lib.TARGET_C: "c", _lib.TARGET_CUDA: "cuda"}


def cuda_available():
    """True if kernels can run on the CUDA target here (driver, device, NVRTC)."""
    return bool(_lib.target_available(_lib.TARGET_CUDA))


def resolve_target(target):
    """A target name ("auto", "c", "cuda", "cuda -arch=sm_90"...) -> TARGET_*."""
    if target is None or target == "auto":
        return _lib.TARGET_CUDA if cuda_available() else _lib.TARGET_C
    t = str(getattr(target, "kind", target)).split()[0].lower()
    if t.startswith("cuda") or t == "nvidia":
        return _lib.TARGET_CUDA
    if t in TARGETS:
        return TARGETS[t]
    raise ValueError("tilescale: unknown target %r (auto, c or cuda)" % (target,))


class Param:
    """One kernel parameter: name, is_tensor, is_output, dtype (name),
    shape (ints, or the shape variable's name where it is a run-time one)."""

    __slots__ = ("name", "is_tensor", "is_output", "dtype", "shape")

    def __init__(self, name, is_tensor, is_output, dtype, shape):
        self.name = name
        self.is_tensor = is_tensor
        self.is_output = is_output
        self.dtype = dtype
        self.shape = shape

    def __repr__(self):
        if not self.is_tensor:
            return "Param(%s: %s)" % (self.name, self.dtype)
        return "Param(%s: %s%s%s)" % (self.name, self.dtype, list(self.shape), ", output" if self.is_output else "")


# ---- compilation --------------------------------------------------------------------------------


def define_text(value):
    """A compile-time value as the C API's text: 256, 0.5, True, float16."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if value is None:
        return "None"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (tuple, list)):  # -D sizes=[64, 128] (nested too; strings quoted)
        items = [repr(x) if isinstance(x, str) else define_text(x) for x in value]
        if isinstance(value, tuple):
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    if type(value).__name__ == "Any" and type(value).__module__.endswith("_stub"):
        n = object.__getattribute__(value, "_name")  # the shim's T.GemmWarpPolicy.Square: its text
        if n in ("T.GemmWarpPolicy.Square", "T.GemmWarpPolicy.FullRow", "T.GemmWarpPolicy.FullCol"):
            return n
    name = getattr(value, "__tilescale_dtype__", None)  # the shim's T.float16
    if name:
        return name
    mod = type(value).__module__
    if mod == "torch" and type(value).__name__ == "dtype":  # torch.float16 -> float16
        return str(value).split(".")[-1]
    if mod.startswith("numpy"):
        if hasattr(value, "item") and not hasattr(value, "names"):
            return define_text(value.item())
        return str(value)  # np.dtype('float16') -> float16
    raise TypeError("tilescale: compile-time value %r of type %s cannot be passed to the compiler "
                    "(ints, floats, bools, strings, dtypes and tuples or lists of them can)"
                    % (value, type(value).__name__))


class _Compiled:
    """One target's compiled form: the context and the TsKernel (chain head)."""

    __slots__ = ("ctx", "k", "target")

    def __init__(self, ctx, k, target):
        self.ctx = ctx
        self.k = k
        self.target = target

    def __del__(self):
        # At interpreter exit the library handle may already be gone.
        try:
            if self.k:
                _lib.kernel_destroy(self.k)
            if self.ctx:
                _lib.context_destroy(self.ctx)
        except Exception:
            pass
        self.k = self.ctx = None

    def error(self):
        return (_lib.last_error(self.ctx) or b"").decode("utf-8", "replace")


def _compile(path, text, entry, defines, target, lenient, options):
    ctx = ctypes.c_void_p()
    if _lib.context_create(ctypes.byref(ctx)):
        raise MemoryError("tilescale: cannot create a context")
    keep = []
    defs = (_lib.TsDefine * max(1, len(defines)))()
    for i, (n, v) in enumerate(defines.items()):
        nb, vb = str(n).encode(), define_text(v).encode()
        keep += [nb, vb]
        defs[i].name, defs[i].value = nb, vb
    opt = _lib.TsCompileOptions()
    opt.target = target
    opt.lenient_defines = 1 if lenient else 0
    for key, val in (options or {}).items():
        if key in ("cache_dir", "cc", "dump_after", "cflags", "nvcc", "nccl_include"):
            b = str(val).encode()
            keep.append(b)
            setattr(opt, key, b)
        elif key in ("num_threads", "timing", "skip_build", "check_bounds", "tiered", "multinode"):
            setattr(opt, key, int(val))
        else:
            _lib.context_destroy(ctx)
            raise TypeError("tilescale: unknown compile option %r" % key)
    k = ctypes.c_void_p()
    eb = entry.encode()
    if text is None:
        st = _lib.compile_file(ctx, path.encode(), eb, defs, len(defines), ctypes.byref(opt), ctypes.byref(k))
    else:
        st = _lib.compile_source(ctx, (path or "<source>").encode(), text.encode(), eb, defs, len(defines),
                                 ctypes.byref(opt), ctypes.byref(k))
    warned = (_lib.last_warnings(ctx) or b"").decode("utf-8", "replace")
    if warned:  # the compiler's warnings, as Python warnings (shown once per place by default)
        warnings.warn(warned, CompileWarning, stacklevel=3)
    if st:
        msg = (_lib.last_error(ctx) or b"").decode("utf-8", "replace")
        _lib.context_destroy(ctx)
        raise compile_error(st, msg)
    return _Compiled(ctx, k, target)


# ---- argument conversion ------------------------------------------------------------------------

# Per argument: (device, device_index, dtype code, data pointer, shape, strides in elements).
# device: 0 host, 1 CUDA.

_torch_dtypes = None      # torch.dtype -> TsDType code
_torch_from_code = None   # TsDType code -> torch.dtype


def _torch_maps():
    global _torch_dtypes, _torch_from_code
    torch = sys.modules["torch"]
    m = {}
    for name in _lib.DTYPE_NAMES:
        if name in ("int4", "float4_e2m1fn"):  # they travel as their packed int8 bytes (TileLang's pack_int4)
            continue
        tn = {"float8_e4m3": "float8_e4m3fn"}.get(name, name)
        dt = getattr(torch, tn, None)
        if isinstance(dt, torch.dtype):
            m[dt] = _lib.DTYPE[name]
    _torch_from_code = {v: k for k, v in m.items()}
    # torch's float4_e2m1fn_x2 (two float4_e2m1fn codes to a byte, the low nibble first) is accepted
    # where a kernel's float4_e2m1fn tensor, an int8 parameter of the packed bytes, is passed
    fx2 = getattr(torch, "float4_e2m1fn_x2", None)
    if isinstance(fx2, torch.dtype):
        m[fx2] = _lib.DTYPE["int8"]
    _torch_dtypes = m
    return m


_NP_NAMES = {"float8_e4m3fn": "float8_e4m3", "float8_e4m3": "float8_e4m3", "float8_e5m2": "float8_e5m2"}


def _describe_torch(t):
    dt = (_torch_dtypes or _torch_maps()).get(t.dtype)
    if dt is None:
        raise ArgumentError("tilescale: torch dtype %s is not supported" % t.dtype)
    if t.is_cuda:
        return 1, t.get_device(), dt, t.data_ptr(), t.shape, t.stride()
    if t.device.type != "cpu":
        raise DeviceError("tilescale: tensors on %s are not supported (cpu or cuda)" % t.device)
    return 0, -1, dt, t.data_ptr(), t.shape, t.stride()


_NP_CODES = {}  # numpy dtype -> TsDType code


def _describe_numpy(a):
    dt = _NP_CODES.get(a.dtype)
    if dt is None:
        name = a.dtype.name
        dt = _lib.DTYPE.get(_NP_NAMES.get(name, name))
        if dt is None or a.dtype.fields is not None:
            raise ArgumentError("tilescale: NumPy dtype %s is not supported" % (a.dtype,))
        _NP_CODES[a.dtype] = dt
    item = a.itemsize
    st = a.strides
    for s in st:
        if s % item:
            raise ArgumentError("tilescale: an array whose strides (%s bytes) are not multiples of its element "
                                "size (%d) cannot be passed" % (st, item))
    return 0, -1, dt, a.__array_interface__["data"][0], a.shape, tuple([s // item for s in st])


_DESCRIBE = {}  # type -> describer


def _describer(x):
    t = type(x)
    f = _DESCRIBE.get(t)
    if f is not None:
        return f
    torch = sys.modules.get("torch")
    np = sys.modules.get("numpy")
    if torch is not None and isinstance(x, torch.Tensor):
        f = _describe_torch
    elif np is not None and isinstance(x, np.ndarray):
        f = _describe_numpy
    elif hasattr(x, "__cuda_array_interface__"):  # per object, not cached: the protocols are attributes
        return _describe_cai
    elif hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        return _describe_dlpack
    elif hasattr(x, "__array_interface__"):
        return _describe_ai
    else:
        return None
    _DESCRIBE[t] = f
    return f


# ---- other array libraries: CUDA array interface (CuPy, Numba), DLPack, array interface ----------

_TYPESTR = {"b1": "bool", "i1": "int8", "u1": "uint8", "i2": "int16", "u2": "uint16", "i4": "int32", "u4": "uint32",
            "i8": "int64", "u8": "uint64", "f2": "float16", "f4": "float32", "f8": "float64"}


def _interface(x, d, di, ai):
    """(device, index, code, pointer, shape, strides) from an array interface dict."""
    ts = ai["typestr"]
    name = _TYPESTR.get(ts[1:])
    if name is None or ts[0] not in "<|":
        raise ArgumentError("tilescale: array element type %r is not supported" % ts)
    item = _lib.DTYPE_BYTES[_lib.DTYPE[name]]
    shape = tuple(int(e) for e in ai["shape"])
    st = ai.get("strides")
    if st is None:
        strides = _contiguous(shape)
    else:
        if any(v % item for v in st):
            raise ArgumentError("tilescale: strides %s (bytes) are not multiples of the element size %d" % (st, item))
        strides = tuple(v // item for v in st)
    return d, di, _lib.DTYPE[name], int(ai["data"][0] or 0), shape, strides


def _guarded(f):
    """A protocol describer whose malformed input is an ArgumentError, not a crash of ours."""
    def g(x):
        try:
            return f(x)
        except (ArgumentError, DeviceError):
            raise
        except Exception as e:
            raise ArgumentError("tilescale: cannot read the array %s: %s: %s" % (type(x).__name__, type(e).__name__, e))
    g.__name__ = f.__name__
    return g


@_guarded
def _describe_cai(x):
    ai = x.__cuda_array_interface__
    di = 0
    dev = getattr(x, "device", None)
    if dev is not None:
        di = int(getattr(dev, "id", getattr(dev, "index", 0)) or 0)
    return _interface(x, 1, di, ai)


@_guarded
def _describe_ai(x):
    return _interface(x, 0, -1, x.__array_interface__)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = None


@_guarded
def _describe_dlpack(x):
    """DLPack (the standard exchange protocol): the capsule's DLTensor is read
    in place and the capsule dropped unconsumed (its destructor hands it back
    to the producer); the memory stays the argument object's, which the
    caller holds during the call (and, as with torch, until the GPU is done)."""
    global _capsule_pointer
    dev_type, dev_id = x.__dlpack_device__()
    if dev_type not in (1, 2, 3, 13):  # CPU, CUDA, CUDA host, CUDA managed
        raise DeviceError("tilescale: DLPack device type %d is not supported (CPU or CUDA)" % dev_type)
    cap = x.__dlpack__()
    if _capsule_pointer is None:
        f = ctypes.pythonapi.PyCapsule_GetPointer
        f.restype = ctypes.c_void_p
        f.argtypes = [ctypes.py_object, ctypes.c_char_p]
        _capsule_pointer = f
    t = _DLTensor.from_address(_capsule_pointer(cap, b"dltensor"))  # DLManagedTensor starts with its DLTensor
    code = _lib.dtype_from_dlpack(t.dtype.code, t.dtype.bits, t.dtype.lanes)
    if code < 0:
        raise ArgumentError("tilescale: DLPack dtype (code %d, %d bits, %d lanes) is not supported"
                            % (t.dtype.code, t.dtype.bits, t.dtype.lanes))
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else _contiguous(shape)
    ptr = (t.data or 0) + t.byte_offset
    on_cuda = dev_type in (2, 13)
    return (1 if on_cuda else 0), (dev_id if on_cuda else -1), code, ptr, shape, strides


def _scalar_value(x):
    """A Python number from an int/float/bool, a NumPy scalar or a 0-dim tensor/array."""
    if isinstance(x, (bool, int, float)):
        return x
    if hasattr(x, "item") and getattr(x, "ndim", 0) == 0 or type(x).__module__ == "numpy":
        try:
            return x.item()
        except Exception:
            pass
    if hasattr(x, "numel") and x.numel() == 1:
        return x.item()
    raise ArgumentError("tilescale: %r is not a scalar" % (x,))


def _f16_bits(v):
    import struct
    return struct.unpack("<H", struct.pack("<e", v))[0]


def _bf16_bits(v):
    import struct
    u = struct.unpack("<I", struct.pack("<f", v))[0]
    if (u & 0x7F800000) == 0x7F800000 and (u & 0x7FFFFF):
        return 0x7FC0  # NaN
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF  # round to nearest even


# ---- the kernel ---------------------------------------------------------------------------------


class Kernel:
    """A compiled kernel.  Call it with tensors (torch or NumPy) in the
    order of its parameters, leaving out the outputs named by out_idx to
    have them allocated and returned; or pass every parameter and get
    None (or the outputs, when out_idx names some)."""

    def __init__(self, source, entry, params=None, target="auto", out_idx=None, path=None, text=None,
                 options=None, lenient=False):
        self.entry = entry
        self.source_name = path or "<source>"
        self._path, self._text = path, text
        self.compile_params = dict(params or {})
        self._options = options
        self._lenient = lenient
        self._auto = target is None or target == "auto"
        self.target = _TARGET_NAMES[resolve_target(target)]
        self._forms = {}
        self._lock = threading.Lock()
        self._restore = False  # a launch record points at temporary arrays (_set_dims)
        self._cuda = None      # the CUDA form, once a launch needed it
        # a class of its own, whose __call__ becomes the launcher generated for
        # the last call signature (_install_launcher): k(a, b) then runs that
        # function directly, with no general __call__ frame in between
        if type(self).__dict__.get("_own_class") is not True:
            self.__class__ = type(type(self).__name__, (type(self),), {
                "__slots__": (), "_own_class": True, "__module__": type(self).__module__,
                "__qualname__": type(self).__qualname__, "__doc__": type(self).__doc__})
        head = self._form(resolve_target(target))
        self._setup(head, out_idx)

    # -- compiled forms --
    def _form(self, tgt):
        f = self._forms.get(tgt)
        if f is None:
            f = _compile(self._path, self._text, self.entry, self.compile_params, tgt, self._lenient, self._options)
            self._forms[tgt] = f
        return f

    def _setup(self, head, out_idx):
        k = head.k
        n = _lib.kernel_num_params(k)
        info = _lib.TsParamInfo()
        params = []
        for i in range(n):
            if _lib.kernel_param(k, i, ctypes.byref(info)):
                raise compile_error(_lib.ERR_INTERNAL, "tilescale: cannot read parameter %d" % i)
            # run-time extents: the shape variable's name, or the expression's text ("(N + 7) // 8")
            shape = tuple(int(info.shape[d]) if info.shape[d] >= 0 else
                          (info.shape_names[d] if info.shape_names[d] and info.shape_names[d] != b"?" else
                           _lib.kernel_param_extent(k, i, d) or b"?").decode()
                          for d in range(min(info.ndim, 8))) if info.is_tensor else ()
            params.append(Param((info.name or b"").decode(), bool(info.is_tensor), bool(info.is_output),
                                _lib.DTYPE_NAMES[info.dtype] if 0 <= info.dtype < len(_lib.DTYPE_NAMES) else "?",
                                shape))
        if out_idx is not None:
            idx = [out_idx] if isinstance(out_idx, int) else list(out_idx)
            outs = set()
            for i in idx:
                if not -n <= i < n:
                    raise compile_error(_lib.ERR_PARAM, "tilescale: out_idx %d is out of range for %d parameters"
                                        % (i, n))
                outs.add(i % n)
            for i, p in enumerate(params):
                p.is_output = i in outs and p.is_tensor
        self.params = params
        self._nparams = n
        self._out = [i for i, p in enumerate(params) if p.is_output]
        self._in = [i for i, p in enumerate(params) if not p.is_output]
        # launch records, allocated once (see _Slot)
        self._tt = (_lib.TsTensor * max(1, n))()
        self._slots = [_Slot(i, p, self._tt[i]) for i, p in enumerate(params)]
        self._plan_all = self._slots
        self._plan_in = [self._slots[i] for i in self._in]
        self._out_slots = [self._slots[i] for i in self._out]
        self._param_dtype = [_lib.DTYPE.get(p.dtype, -1) for p in params]
        self._devices = {}  # cuda index -> torch.device
        self._fast = None   # the launcher generated for the last call signature (_make_launcher), or None
        self._nfast = 0     # how many were made (capped: a kernel called with ever-changing shapes stops)
        self._launchers = {}  # call signature -> its launcher, reinstalled when the signature comes back

    # -- queries --
    @property
    def name(self):
        return self.entry

    def _default(self):
        return self._form(resolve_target(self.target))

    def get_kernel_source(self, target=None):
        """The generated code (CUDA C++ or C); every kernel of a chain."""
        f = self._form(resolve_target(target or self.target))
        parts, k = [], f.k
        while k:
            parts.append(_lib.kernel_source(k).decode("utf-8", "replace"))
            k = _lib.kernel_next(k)
        return "\n".join(parts)

    def get_ir(self):
        return _lib.kernel_ir(self._default().k).decode("utf-8", "replace")

    @property
    def grid(self):
        """(x, y, z) grid extents; -1 where an extent depends on run-time shapes."""
        g = (ctypes.c_int64 * 3)()
        th = ctypes.c_int()
        _lib.kernel_grid(self._default().k, g, ctypes.byref(th))
        return tuple(int(v) for v in g)

    @property
    def threads(self):
        g = (ctypes.c_int64 * 3)()
        th = ctypes.c_int()
        _lib.kernel_grid(self._default().k, g, ctypes.byref(th))
        return int(th.value)

    @property
    def shared_memory(self):
        """Dynamic shared memory per block in bytes (CUDA target), else None."""
        v = _lib.kernel_shared_bytes(self._default().k)
        return None if v < 0 else int(v)

    # -- the tiered CUDA build (ours; TileLang has no such API) --
    def _tier_forms(self):
        """The compiled CUDA forms (a tiered build exists only there)."""
        return [f for t, f in self._forms.items() if t == _lib.TARGET_CUDA and f.k]

    @property
    def tier(self):
        """Which build of the CUDA code runs now: "full"; "quick" (a large
        kernel's first build: the quick tier runs while the full one is
        compiled in the background, and later calls move to the full tier
        once it is done); "quick_only" (the full tier's build failed, or
        TILESCALE_TIERED=quick).  "full" on the C target."""
        for f in self._tier_forms():
            t = _lib.TIER_NAMES.get(_lib.kernel_tier(f.k), "full")
            if t != "full":
                return t
        return "full"

    def get_tier(self):
        return self.tier

    def wait_full(self):
        """Wait for the background build of the full tier and run it from now
        on (the next call uses it).  True when the full tier runs (or the
        kernel is not tiered), False when only the quick tier can run (a
        CompileWarning says why).  Timing (do_bench, profile, the profiler)
        calls this first: a time of the quick tier would mislead."""
        ok = True
        for f in self._tier_forms():
            if _lib.kernel_tier(f.k) == 0:
                continue
            st = _lib.kernel_wait_full(f.k)
            if st:
                ok = False
                why = f.error().strip() or ("tilescale: %s was built in the quick tier alone (TILESCALE_TIERED=quick "
                                            "or the option tiered=3)" % self.entry if st == _lib.ERR_UNSUPPORTED
                                            else "tilescale: the full tier of %s did not build" % self.entry)
                warnings.warn(why, CompileWarning, stacklevel=2)
        return ok

    def plot_layouts(self, directory, target=None):
        """Write an SVG per fragment buffer (thread and register of each element)
        and per shared buffer (swizzle: chunk and bank of each element) into
        `directory`; returns the paths written.  Fragment layouts exist on the
        CUDA target (target="cuda" draws them even where NVRTC is missing)."""
        import os
        tgt = resolve_target(target or self.target)
        try:
            f = self._form(tgt)
        except TileScaleError as e:
            if tgt != _lib.TARGET_CUDA or e.status != _lib.ERR_BUILD:
                raise
            opts = dict(self._options or {}, skip_build=1)
            f = _compile(self._path, self._text, self.entry, self.compile_params, tgt, self._lenient, opts)
        directory = os.fspath(directory)
        n = ctypes.c_int()
        st = _lib.kernel_plot_layouts(f.k, directory.encode(), ctypes.byref(n))
        if st:
            raise TileScaleError(f.error().strip() or _lib.STATUS_NAMES[st], st)
        svgs = [os.path.join(directory, p) for p in os.listdir(directory) if p.endswith(".svg")]
        return sorted(sorted(svgs, key=os.path.getmtime)[len(svgs) - n.value:])

    @property
    def out_idx(self):
        return list(self._out)

    def __repr__(self):
        return "<tilescale.Kernel %s(%s) target=%s>" % (
            self.entry, ", ".join(p.name for p in self.params), self.target)

    # -- launch --
    def __call__(self, *args, stream=None):
        """The general entry; replaced on the kernel's own class by the
        launcher generated for the last call signature (_install_launcher)."""
        return self._call(args, stream)

    def _install_launcher(self, f):
        """Make f (a generated launcher, or None) what k(...) calls."""
        self._fast = f
        cls = type(self)
        if cls.__dict__.get("_own_class") is not True:
            return
        if f is None:
            if "__call__" in cls.__dict__:
                del cls.__call__
        else:
            cls.__call__ = f

    def _call(self, args, stream):
        """The general launch path: any argument kind, any device, checked
        step by step.  A call through it replaces the generated launcher (the
        records it rewrites may no longer match the launcher's signature); a
        successful CUDA call of torch tensors makes a new one for its own."""
        if self._fast is not None:
            self._install_launcher(None)
        nargs = len(args)
        if nargs == self._nparams:
            plan, alloc = self._plan_all, False
        elif self._out and nargs == len(self._in):
            plan, alloc = self._plan_in, True
        else:
            want = "%d" % self._nparams if not self._out else "%d (or %d with the outputs)" % (
                len(self._in), self._nparams)
            raise ArgumentError("%s expects %s arguments, got %d" % (self.entry, want, nargs))
        with self._lock:
            if self._restore:
                self._reset_records()
            dev = None          # 0 host, 1 cuda; None: no tensor seen yet
            devidx = -1
            kind = None         # the first tensor's describer: outputs are made alike
            for x, s in zip(args, plan):
                if s.scalar:
                    self._set_scalar(s.i, x)
                    continue
                f = _DESCRIBE.get(type(x))
                if f is None:
                    f = _describer(x)
                    if f is None:
                        raise ArgumentError("%s: %s must be a torch tensor or NumPy array, got %s"
                                            % (self.entry, s.p.name, type(x).__name__))
                d, di, dt, ptr, shape, strides = f(x)
                if d != dev or di != devidx:
                    if dev is not None:
                        raise DeviceError("%s: %s is on %s but earlier tensors are on %s" % (
                            self.entry, s.p.name, _devname(d, di), _devname(dev, devidx)))
                    dev, devidx, kind = d, di, f
                t = s.t
                t.data = ptr
                if dt != s.dt:
                    t.dtype = s.dt = dt
                if shape != s.shape or strides != s.strides:
                    self._set_dims(s, shape, strides)
            if dev is None:
                dev = 1 if self.target == "cuda" else 0
                devidx = 0 if dev else -1
            if dev == 1 and self._cuda is None:
                self._check_cuda(devidx)
            outs = self._alloc_outputs(args, dev, devidx, kind) if alloc else None
            self._launch(dev, devidx, stream)
            if dev == 1 and stream is None and kind is _describe_torch and not self._restore:
                self._install_launcher(_launcher_for(self, args, outs))
        if outs is None:
            if not self._out:
                return None
            outs = [args[i] for i in self._out]
        return outs[0] if len(outs) == 1 else outs

    def _set_dims(self, s, shape, strides):
        nd = len(shape)
        t = s.t
        if nd == s.nd:
            if nd:
                s.sh[:] = shape
                s.st[:] = strides
            s.shape, s.strides = shape, strides
            t.ndim = nd
        else:  # the wrong rank: the launcher will say so; give it arrays of the right size
            a = (ctypes.c_int64 * max(1, nd))(*shape)
            b = (ctypes.c_int64 * max(1, nd))(*strides)
            s.tmp = (a, b)
            t.shape = ctypes.cast(a, ctypes.POINTER(ctypes.c_int64))
            t.strides = ctypes.cast(b, ctypes.POINTER(ctypes.c_int64))
            t.ndim = nd
            s.shape = s.strides = None
            self._restore = True

    def _reset_records(self):
        self._restore = False
        for s in self._slots:
            s.reset()

    def _set_scalar(self, i, x):
        v = _scalar_value(x)
        want = self._param_dtype[i]
        s = self._slots[i]
        slot, t = s.slot, s.t
        if want == _lib.DTYPE["float16"] and isinstance(v, (int, float)) and not isinstance(v, bool):
            slot.value = _f16_bits(float(v))
            t.dtype = want
        elif want == _lib.DTYPE["bfloat16"] and isinstance(v, (int, float)) and not isinstance(v, bool):
            slot.value = _bf16_bits(float(v))
            t.dtype = want
        elif isinstance(v, bool):
            slot.value = int(v)
            t.dtype = _lib.DTYPE["bool"]
        elif isinstance(v, int):
            if not -(1 << 63) <= v < (1 << 64):
                raise ArgumentError("%s: %s = %d does not fit in 64 bits" % (self.entry, s.p.name, v))
            slot.value = v & ((1 << 64) - 1)
            t.dtype = _lib.DTYPE["int64"]
        elif isinstance(v, float):
            ctypes.cast(ctypes.byref(slot), ctypes.POINTER(ctypes.c_double))[0] = v
            t.dtype = _lib.DTYPE["float64"]
        else:
            raise ArgumentError("%s: %s must be a number, got %s" % (self.entry, s.p.name, type(x).__name__))

    def _out_shape(self, s, args):
        """An output's extents: constants, or shape variables bound by the inputs."""
        if s.out_shape is not None:
            return s.out_shape
        bound = {}
        for x, si in zip(args, self._plan_in):
            if si.scalar:
                if isinstance(x, int):
                    bound.setdefault(si.p.name, x)
                continue
            shp = getattr(x, "shape", ())
            for d, e in enumerate(si.p.shape):
                if isinstance(e, str) and d < len(shp):
                    bound.setdefault(e, int(shp[d]))
        shape = []
        for e in s.p.shape:
            if isinstance(e, str):
                v = bound.get(e)
                if v is None:
                    v = _eval_extent(e, bound)
                if v is None:
                    raise ArgumentError("%s: cannot allocate output %s: its extent %s is not an input's "
                                        "extent; pass the output tensor" % (self.entry, s.p.name, e))
                e = v
            shape.append(e)
        return tuple(shape)

    def _alloc_outputs(self, args, dev, devidx, kind):
        outs = []
        torch_out = dev == 1 or kind is _describe_torch
        if torch_out and "torch" not in sys.modules:
            raise DeviceError("%s: outputs in CUDA memory are allocated with torch, which is not imported; "
                              "pass the outputs" % self.entry)
        for s in self._out_slots:
            shape = self._out_shape(s, args)
            if torch_out:
                tdt = s.tdtype
                if tdt is None:
                    tdt = s.tdtype = (_torch_from_code if _torch_from_code is not None else
                                      (_torch_maps() and _torch_from_code)).get(_lib.DTYPE[s.p.dtype])
                    if tdt is None:
                        raise ArgumentError("tilescale: this torch has no dtype %s for an output" % s.p.dtype)
                o = sys.modules["torch"].empty(shape, dtype=tdt, device=self._device(dev, devidx))
                ptr = o.data_ptr()
            else:
                if dev == 1:
                    raise DeviceError("tilescale: outputs on the GPU need torch")
                o = _empty(list(shape), s.p.dtype, 0, -1, ())
                ptr = o.__array_interface__["data"][0]
            outs.append(o)
            t = s.t
            t.data = ptr
            code = self._param_dtype[s.i]
            if s.dt != code:
                t.dtype = s.dt = code
            cst = s.out_strides if s.out_shape is not None else _contiguous(shape)
            if shape != s.shape or cst != s.strides:  # (the last call may have passed a strided output)
                self._set_dims(s, shape, cst)
        return outs

    def _device(self, dev, devidx):
        d = self._devices.get(devidx)
        if d is None:
            d = self._devices[devidx] = sys.modules["torch"].device("cuda:%d" % devidx if dev == 1 else "cpu")
        return d

    def _check_cuda(self, devidx):
        """CUDA memory is usable by this kernel (before outputs are made for it)."""
        if devidx != 0:
            raise DeviceError("%s: tensors are on cuda:%d; tilescale runs kernels on cuda:0 only"
                              % (self.entry, devidx))
        if not self._auto and self.target != "cuda":
            raise DeviceError("%s: compiled for the C target, but the tensors are on cuda:0" % self.entry)

    def _launch(self, dev, devidx, stream):
        if dev == 1:
            f = self._cuda
            if f is None:
                self._check_cuda(devidx)
                f = self._cuda = self._form(_lib.TARGET_CUDA)
            elif devidx != 0:
                raise DeviceError("%s: tensors are on cuda:%d; tilescale runs kernels on cuda:0 only"
                                  % (self.entry, devidx))
            if stream is None:
                stream = (_RAW_STREAM or _raw_stream())(devidx)
            elif not isinstance(stream, int):
                stream = getattr(stream, "cuda_stream", stream)
            st = _launch_device(f.k, self._tt, self._nparams, stream)
        else:
            tgt = _lib.TARGET_C if self._auto or self.target == "c" else _lib.TARGET_CUDA
            f = self._forms.get(tgt) or self._form(tgt)
            st = _lib.kernel_launch(f.k, self._tt, self._nparams)
        if self._restore:
            self._reset_records()
        if st:
            raise launch_error(st, f.error())

    # -- timing --
    def make_inputs(self, supply="randn", device=None, seed=None):
        """Fresh inputs for every non-output parameter (see profiler.make_tensor)."""
        from .profiler import make_inputs
        return make_inputs(self, supply, device, seed)

    def profile(self, *args, warmup=25, rep=100):
        """Median kernel time in milliseconds (CUDA events on CUDA tensors,
        the wall clock on the CPU); random inputs if none are given."""
        from .profiler import do_bench
        if not args:
            args = self.make_inputs()
        self(*args)  # compiles the form these arguments need (the CUDA one on CUDA tensors) ...
        self.wait_full()  # ... whose full tier is timed, not the quick one
        return do_bench(lambda: self(*args), warmup=warmup, rep=rep, _args=args)

    do_bench = profile

    def get_profiler(self, tensor_supply_type=None):
        from .profiler import Profiler
        return Profiler(self, tensor_supply_type)


class _Slot:
    """One parameter's launch record: its TsTensor (a view into the kernel's
    array), the shape/stride arrays it points at, and what was last written
    there, so that a call with the same shapes as the last one writes only
    the data pointer."""

    __slots__ = ("i", "p", "t", "nd", "sh", "st", "shape", "strides", "dt", "scalar", "slot", "tmp",
                 "out_shape", "out_strides", "tdtype")

    def __init__(self, i, p, t):
        self.i = i                      # parameter index
        self.p = p                      # its Param
        self.t = t                      # its TsTensor in the kernel's array
        self.nd = len(p.shape)          # declared rank
        self.sh = (ctypes.c_int64 * max(1, self.nd))()  # extents the record points at
        self.st = (ctypes.c_int64 * max(1, self.nd))()  # strides (elements) the record points at
        self.scalar = not p.is_tensor   # a scalar parameter (0-dim record)
        self.slot = ctypes.c_uint64() if self.scalar else None  # the scalar's value
        self.tmp = None                 # arrays of the wrong rank, for one launch
        self.tdtype = None              # torch dtype for an allocated output
        self.out_shape = tuple(p.shape) if p.is_output and all(isinstance(e, int) for e in p.shape) else None
        self.out_strides = _contiguous(self.out_shape) if self.out_shape is not None else None
        self.reset()
        if self.scalar:
            t.data = ctypes.addressof(self.slot)

    def reset(self):
        t = self.t
        t.shape = ctypes.cast(self.sh, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(self.st, ctypes.POINTER(ctypes.c_int64))
        t.ndim = 0 if self.scalar else self.nd
        self.shape = self.strides = None  # nothing written yet
        self.dt = -1
        self.tmp = None


def _contiguous(shape):
    st, acc = [], 1
    for e in reversed(shape):
        st.append(acc)
        acc *= e
    return tuple(reversed(st))


_RAW_STREAM = None  # torch's current-stream query, once found


def _raw_stream():
    """A function devidx -> the current CUDA stream's handle (int)."""
    global _RAW_STREAM
    torch = sys.modules.get("torch")
    if torch is None:
        return lambda devidx: None
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is None:
        def raw(devidx):
            return torch.cuda.current_stream(devidx).cuda_stream
    _RAW_STREAM = raw
    return raw


_launch_device = _lib.kernel_launch_device

# ---- the generated launcher ----------------------------------------------------------------------
#
# The general path (Kernel._call) spends its time on generality: a loop over
# arguments, a describer per type, device bookkeeping, output shapes worked
# out per call, ctypes converting every argument.  After a successful CUDA
# call whose arguments are all torch tensors, _make_launcher writes a Python
# function for exactly that call signature (each argument's dtype, shape,
# strides, cuda:0; each allocated output's shape and dtype), unrolled, with
# every constant a closure cell of the factory that makes it; it becomes
# the __call__ of the kernel's own class (each Kernel has one), so k(a, b)
# runs it with no other Python frame, its arguments as positional
# parameters (no argument tuple, no keyword parsing):
#
#   - all the tensors checked in one call of torch's own C check (Dynamo's
#     TensorGuards, made from this call's tensors: exact type, dispatch
#     keys, dtype, device index, requires_grad, extents, strides; _GUARD);
#     where it says no, or where torch has none, per tensor one Python test
#     of dtype, shape, strides and device (get_device() is 0 only for
#     cuda:0; a non-tensor raises inside the tests); a mismatch there,
#     another argument count or a stream= goes the general path
#     (_general -> Kernel._call), which is what keeps it correct: the
#     records the launcher relies on are the ones that call wrote, and any
#     call of the general path discards it.  A yes of torch's check is a
#     yes of the Python tests (it compares everything they compare, and
#     more), so asking it first changes nothing but the time;
#   - outputs from a batch (_ALLOC_FORM below), else torch.empty_like(input)
#     where an input of the output's shape and dtype is contiguous, else
#     torch.empty with the extents spelled out;
#   - a launch prepared in C for this signature (ts_kernel_prepare_device:
#     every check of extents, strides and dtypes against the kernel made
#     once, the kernel parameters and grid kept): per call the stream and
#     the data addresses are packed into one bytes object (a precompiled
#     struct.Struct) and ts_plan_launch_packed queues the kernel with them,
#     writing nothing shared, so no lock is taken (_LAUNCH_FORM "packed";
#     "slots" stores the addresses into the plan's slots through a
#     memoryview under the kernel's lock, then calls ts_plan_launch);
#   - the launch through a function without argtypes, given ready ctypes
#     objects or bytes, so ctypes converts nothing.
#
# The tests above are what makes skipping the C checks safe: a call that
# differs in any dtype, extent, stride or device goes the general path,
# which checks everything in C (ts_kernel_launch_device).  Where no plan
# can be made (a chain of kernels), the launcher stores the pointers into
# the TsTensor records and calls ts_kernel_launch_device instead (under the
# lock: the records are shared).

_MISS = object()
_MAX_LAUNCHERS = 16
# How a launcher allocates an out_idx output (bench/py_alloc_pieces.py measures each):
#   "split" (the default): one torch.empty of up to _SPLIT_MAX outputs (at most
#     _SPLIT_BYTES in all) cut by torch.unsafe_split into tensors of their own (not
#     views: each has its own version counter, so autograd's in-place checks never
#     tie two outputs together), handed out one per call, on the legacy default
#     stream only (no CUDA graph is captured there, and a batch never crosses
#     streams); for outputs whose size is a multiple of 256 bytes (each keeps the
#     alignment of a fresh allocation) and that fit at least 4 to a batch; else, and
#     on other streams, one allocation per call as "empty_like".  The price: an
#     output keeps its batch's memory (up to _SPLIT_BYTES) until every output of the
#     batch is freed, and the kernel holds the batch's unused outputs.  H200 host,
#     one run (18:01): 1.5 us per output against 3.9 for torch.empty_like, the whole
#     out_idx call 10.0-11.8 us against 11.3-13.5 (torch.add 10.5-11.2 in the same run);
#   "empty_like" (an input of the output's shape and dtype, contiguous), "new_empty" /
#   "new" (torch.Tensor.new_empty / .new on an input of the output's dtype, the shape
#   a cached constant), anything else torch.empty with the extents spelled out (all
#   slower than empty_like there: 2.1-6.5 us against 2.0 at 17:35).
#   Batches of 64 (16 MiB at most) with the data pointers read once per batch
#   (_SPLIT_PTRS) since session 8: bench/py_launch_variants.py on the H200, medians
#   of 5 interleaved rounds, 256 KiB outputs: 16 per batch 7.61 us per call, 64 per
#   batch 7.41, 64 with the pointers 7.40, empty_like 9.68, torch.empty 9.96; the
#   output passed in 6.98, torch.add 7.45 in the same run.
_ALLOC_FORM = "split"
_SPLIT_MAX = 64
_SPLIT_BYTES = 16 << 20
# "split" only: read every output's data pointer once per batch (kept beside
# the tensor in the batch's iterator) instead of once per call
_SPLIT_PTRS = True
# How a launcher with a plan hands the launch its addresses (session 9,
# bench/py_launch_cpu.py and py_launch_variants.py measure both):
#   "packed" (the default): one C call, ts_plan_launch_packed(plan, words),
#     the stream and every data address packed into one bytes object by a
#     precompiled struct.Struct: nothing shared is written, so no lock;
#   "slots": each address stored into the plan's slots through a memoryview,
#     under the kernel's lock, then ts_plan_launch(plan, stream) (session 8).
_LAUNCH_FORM = "packed"
# The per-tensor test of a launcher's signature: True: torch's own C check of
# a list of tensors (Dynamo's TensorGuards: type, dispatch keys, dtype, device
# index, requires_grad, extents, strides; one call for all the tensors),
# backed by the Python tests where it says no (a tensor that differs only in
# requires_grad, or a call under torch.inference_mode, still takes the
# launcher); False, or where torch has no TensorGuards: the Python tests alone.
_GUARD = True
_bare_launch = None       # ts_kernel_launch_device without argtypes
_bare_plan_launch = None  # ts_plan_launch without argtypes
_bare_packed = None       # ts_plan_launch_packed without argtypes (None: not in this library)
_stream_objs = {}


def _tensor_guard(args):
    """torch's C check that tensors match `args` in type, dtype, device,
    extents and strides (torch._C._dynamo.guards.TensorGuards, a private
    API: any failure to make or use it gives None, the Python tests then
    do the work alone).  It must accept the tensors it was made from."""
    if not _GUARD or not args:
        return None
    try:
        from torch._C._dynamo.guards import TensorGuards
    except Exception:
        return None
    try:
        # (None: every extent and stride static, compared exactly)
        g = TensorGuards(*args, dynamic_dims_sizes=None, dynamic_dims_strides=None)
        if g.check(*args) is True:
            return g.check
    except Exception:
        pass
    return None


def _data_ptrs(ts):
    return [t.data_ptr() for t in ts]


def _stream_obj(h):
    o = _stream_objs.get(h)
    if o is None:
        if len(_stream_objs) > 64:
            _stream_objs.clear()
        o = _stream_objs[h] = ctypes.c_void_p(h) if h else None
    return o


def _launch_failed(st, kern):
    raise launch_error(st, kern._cuda.error())


def _general(kern, args, stream):
    """The generated launcher's way out: the general path, with the
    arguments the caller gave (the launcher's unfilled defaults dropped)."""
    return kern._call(tuple(x for x in args if x is not _MISS), stream)


def _launcher_for(kern, args, outs):
    """The launcher of this call's signature: the one made when it was last
    seen (a kernel called alternately with two signatures keeps both), else
    a new one.  Reinstalling is sound: the general call that leads here has
    just written the records for this same signature, and a launch plan
    holds only what the signature determines."""
    try:
        key = (outs is not None,) + tuple((x.dtype, tuple(x.shape), tuple(x.stride()), x.get_device()) for x in args)
    except (AttributeError, TypeError):
        return None
    f = kern._launchers.get(key)
    if f is None:
        f = _make_launcher(kern, args, outs)
        if f is not None:
            kern._launchers[key] = f
    return f


def _make_launcher(kern, args, outs):
    global _bare_launch, _bare_plan_launch, _bare_packed
    torch = sys.modules.get("torch")
    if torch is None or kern._nfast >= _MAX_LAUNCHERS or not kern._cuda or kern._cuda.k is None:
        return None
    if any(s.scalar for s in kern._slots):
        return None
    if _bare_launch is None or _bare_plan_launch is None:
        b = getattr(_lib, "bare", None)
        if b is None:
            return None
        if _bare_launch is None:
            _bare_launch = b.ts_kernel_launch_device
            _bare_launch.restype = ctypes.c_int
        if _bare_plan_launch is None:
            _bare_plan_launch = b.ts_plan_launch
            _bare_plan_launch.restype = ctypes.c_int
        if _bare_packed is None:
            _bare_packed = getattr(b, "ts_plan_launch_packed", None)  # (an older library has none)
            if _bare_packed is not None:
                _bare_packed.restype = ctypes.c_int
    kern._nfast += 1
    kptr = kern._cuda.k if isinstance(kern._cuda.k, int) else kern._cuda.k.value
    lp = ctypes.c_void_p()
    # the records hold this call's arguments (outputs included): prepare a launch for them
    if _lib.kernel_prepare_device(kptr, kern._tt, kern._nparams, ctypes.byref(lp)) or not lp.value:
        lp = None
    n_in = len(args)
    alloc = outs is not None
    # one C call with every address packed, no lock (_LAUNCH_FORM)
    packed = lp is not None and _LAUNCH_FORM == "packed" and _bare_packed is not None
    plan = kern._plan_in if alloc else kern._plan_all
    env = {"MISS": _MISS, "general": _general, "empty": torch.empty, "empty_like": torch.empty_like,
           "new_empty": getattr(torch.Tensor, "new_empty", None), "new": getattr(torch.Tensor, "new", None),
           "launch": _bare_launch if lp is None else _bare_packed if packed else _bare_plan_launch,
           "K": ctypes.c_void_p(kptr) if lp is None else lp,
           "TT": kern._tt, "N": kern._nparams,
           "raw": _RAW_STREAM or _raw_stream(), "sobj": _stream_objs, "mk_sobj": _stream_obj,
           "acquire": kern._lock.acquire, "release": kern._lock.release, "err": _launch_failed}
    # (nothing here refers to the Kernel or its compiled form: the launcher is
    # handed the kernel as `self`, so dropping the kernel frees its C handle at once)
    if lp is None:
        # the data pointer of record i is its first 8-byte word
        words = ctypes.sizeof(_lib.TsTensor) // 8
        env["mv"] = memoryview(kern._tt).cast("B").cast("Q")
    else:
        # the plan's slots, one 64-bit address per parameter
        words = 1
        slots = (ctypes.c_uint64 * max(1, kern._nparams)).from_address(_lib.plan_pointers(lp))
        env["mv"] = memoryview(slots).cast("B").cast("Q")
    names = ["a%d" % i for i in range(n_in)]
    given = "(%s)" % "".join(n + ", " for n in names)
    lines = ["    def launcher(self, %s*rest, stream=None):" % "".join(n + "=MISS, " for n in names)]
    if n_in:
        lines.append("        if rest or stream is not None or %s is MISS:" % names[-1])
    else:
        lines.append("        if rest or stream is not None:")
    lines.append("            return general(self, %s + rest, stream)" % given)
    tests = []
    stores = []
    for i, (x, s) in enumerate(zip(args, plan)):
        shape, strides = tuple(x.shape), tuple(x.stride())
        env["D%d" % i], env["S%d" % i] = x.dtype, shape
        if strides == _contiguous(shape):
            # is_contiguous() is cheaper than reading and comparing the strides; it
            # ignores the strides of extent-1 dimensions, which address nothing
            strides_test = "not a{0}.is_contiguous()".format(i)
        else:
            env["T%d" % i] = strides
            strides_test = "a{0}.stride() != T{0}".format(i)
        tests.append("a{0}.dtype is not D{0} or a{0}.shape != S{0} or {1} or a{0}.get_device()".format(i, strides_test))
        stores.append((s.i, "a%d.data_ptr()" % i))
    guard = _tensor_guard(args) if tests else None
    ind = "        "
    if guard is not None:
        # torch's check of all the tensors in one C call; where it says no
        # (requires_grad, inference mode, a subclass...), the Python tests
        env["check"] = guard
        lines.append("        if not check(%s):" % ", ".join(names))
        ind = "            "
    if tests:
        lines.append(ind + "try:")
        lines.append(ind + "    miss = (%s)" % ("\n" + ind + "            or ").join(tests))
        lines.append(ind + "except (AttributeError, TypeError):")
        lines.append(ind + "    miss = True")
        lines.append(ind + "if miss:")
        lines.append(ind + "    return general(self, %s, None)" % given)
    if not packed:
        lines.append("        if not acquire(False):")
        lines.append("            return general(self, %s, None)" % given)
        lines.append("        try:")
    # (packed: no shared state is written, so no lock and no try block)
    ret = []
    blines = []  # the launch's body (indented for the slots form's try block)
    h_early = False  # the stream handle read before the allocations (a batch is per stream)
    if alloc:
        for j, (o, s) in enumerate(zip(outs, kern._out_slots)):
            shape, dt = tuple(o.shape), o.dtype
            like = [i for i, x in enumerate(args) if tuple(x.shape) == shape and x.dtype == dt and
                    tuple(x.stride()) == _contiguous(shape)]
            same_dt = [i for i, x in enumerate(args) if x.dtype == dt]
            form = _ALLOC_FORM
            kb, usplit = 0, getattr(torch, "unsafe_split", None)
            if form == "split" and shape and shape[0] > 0 and usplit:
                nbytes = o.numel() * o.element_size()
                kb = min(_SPLIT_MAX, _SPLIT_BYTES // nbytes) if nbytes % 256 == 0 else 0
            if kb >= 4:
                # a batch of kb outputs from one allocation, handed out one per call
                # (_ALLOC_FORM's comment), on the legacy default stream only (h == 0:
                # no CUDA graph is ever captured there, and a batch made on one
                # stream is never handed out on another); elsewhere one per call
                if not h_early:
                    blines.append("            h = raw(0)")
                    h_early = True
                env["usplit"], env["next_"], env["iter_"] = usplit, next, iter
                env["B%d" % j] = [iter(())]
                env["OD%d" % j], env["DEV"] = dt, o.device
                alloc1 = "empty(%sdtype=OD%d, device=DEV)" % ("".join("%d, " % e for e in shape), j)
                blines.append("            if h:")
                blines.append("                o%d = %s" % (j, ("empty_like(a%d)" % like[0]) if like else alloc1))
                batch = "usplit(empty(%d, %sdtype=OD%d, device=DEV), %d, 0)" % (
                    kb * shape[0], "".join("%d, " % e for e in shape[1:]), j, shape[0])
                if _SPLIT_PTRS:
                    # (tensor, data pointer) pairs, the pointers read once per batch
                    env["NONE2"], env["zip_"], env["ptrs_"] = (None, 0), zip, _data_ptrs
                    blines.append("                p%d = o%d.data_ptr()" % (j, j))
                    blines.append("            else:")
                    blines.append("                o%d, p%d = next_(B%d[0], NONE2)" % (j, j, j))
                    blines.append("                if o%d is None:" % j)
                    blines.append("                    t = %s" % batch)
                    blines.append("                    B%d[0] = it = iter_(zip_(t, ptrs_(t)))" % j)
                    blines.append("                    o%d, p%d = next_(it)" % (j, j))
                    stores.append((s.i, "p%d" % j))
                    ret.append("o%d" % j)
                    continue
                blines.append("            else:")
                blines.append("                o%d = next_(B%d[0], None)" % (j, j))
                blines.append("                if o%d is None:" % j)
                blines.append("                    B%d[0] = it = iter_(%s)" % (j, batch))
                blines.append("                    o%d = next_(it)" % j)
            elif form in ("empty_like", "split") and like:
                blines.append("            o%d = empty_like(a%d)" % (j, like[0]))
            elif form == "new_empty" and same_dt and env["new_empty"]:
                env["OS%d" % j] = shape
                blines.append("            o%d = new_empty(a%d, OS%d)" % (j, same_dt[0], j))
            elif form == "new" and same_dt and shape and env["new"]:
                env["OS%d" % j] = torch.Size(shape)
                blines.append("            o%d = new(a%d, OS%d)" % (j, same_dt[0], j))
            else:
                env["OD%d" % j], env["DEV"] = dt, o.device
                blines.append("            o%d = empty(%sdtype=OD%d, device=DEV)"
                              % (j, "".join("%d, " % e for e in shape) or "(), ", j))
            stores.append((s.i, "o%d.data_ptr()" % j))
            ret.append("o%d" % j)
    else:
        ret = ["a%d" % kern._plan_all.index(kern._slots[i]) for i in kern._out]
    if not h_early:
        blines.append("            h = raw(0)")
    if packed:
        # the stream and every address in parameter order, one bytes object
        exprs = dict(stores)
        assert sorted(exprs) == list(range(kern._nparams)), "a parameter without an address"
        env["pack"] = struct.Struct("<%dQ" % (1 + kern._nparams)).pack
        blines.append("            st = launch(K, pack(h, %s))" % ", ".join(exprs[i] for i in range(kern._nparams)))
        lines += [ln[4:] for ln in blines]  # (no try block)
    else:
        for i, e in stores:
            blines.append("            mv[%d] = %s" % (i * words, e))
        blines.append("            so = sobj.get(h)")
        if lp is None:
            blines.append("            st = launch(K, TT, N, so if so is not None or not h else mk_sobj(h))")
        else:
            blines.append("            st = launch(K, so if so is not None or not h else mk_sobj(h))")
        lines += blines
        lines.append("        finally:")
        lines.append("            release()")
    lines.append("        if st: err(st, self)")
    if not ret:
        lines.append("        return None")
    elif len(ret) == 1:
        lines.append("        return " + ret[0])
    else:
        lines.append("        return [%s]" % ", ".join(ret))
    lines.append("    return launcher")
    # the constants are the factory's parameters: the launcher reads them as
    # closure cells (no per-call cost, unlike keyword-only defaults)
    code = "def factory(%s):\n" % ", ".join(env) + "\n".join(lines) + "\n"
    kern._launcher_source = code  # for tests, benchmarks and curiosity
    kern._launcher_env = env
    ns = {}
    exec(compile(code, "<tilescale launcher %s>" % kern.entry, "exec"), {}, ns)
    f = ns["factory"](**env)
    f.__qualname__ = f.__name__ = "__call__"
    return f


def _eval_extent(text, bound):
    """An output extent given as an expression of shape variables ("(N + 7) // 8",
    ts_kernel_param_extent), evaluated with the inputs' extents; None if it uses
    anything else.  Integers only; `//` and `%` floor, as in the IR."""
    import ast
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}

    def ev(n):
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.Name):
            if n.id not in bound:
                raise KeyError(n.id)
            return bound[n.id]
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.BinOp) and type(n.op) in ops:
            return ops[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and not n.keywords:
            args = [ev(a) for a in n.args]
            if n.func.id in ("min", "max") and len(args) >= 2:
                return min(args) if n.func.id == "min" else max(args)
            if n.func.id in ("int32", "int64") and len(args) == 1:
                return args[0]
        raise ValueError(ast.dump(n))
    try:
        v = ev(tree.body)
    except (KeyError, ValueError, ZeroDivisionError):
        return None
    return v if v >= 0 else None


def _devname(d, di):
    return "cuda:%d" % di if d == 1 else "cpu"


def _empty(shape, dtype, dev, devidx, args):
    """An uninitialized output like the inputs (torch if any input is torch)."""
    torch = sys.modules.get("torch")
    use_torch = torch is not None and (dev == 1 or any(isinstance(a, torch.Tensor) for a in args))
    code = _lib.DTYPE[dtype]
    if use_torch:
        tdt = (_torch_from_code if _torch_from_code is not None else (_torch_maps() and _torch_from_code)).get(code)
        if tdt is None:
            raise ArgumentError("tilescale: this torch has no dtype %s for an output" % dtype)
        return torch.empty(shape, dtype=tdt, device="cuda:%d" % devidx if dev == 1 else "cpu")
    if dev == 1:
        raise DeviceError("tilescale: outputs on the GPU need torch")
    import numpy as np
    name = {"float8_e4m3": "float8_e4m3fn"}.get(dtype, dtype)
    try:
        ndt = np.dtype(name)
    except TypeError:
        try:
            import ml_dtypes  # bfloat16 / float8 for NumPy, when installed
            ndt = np.dtype(getattr(ml_dtypes, name))
        except (ImportError, AttributeError):
            raise ArgumentError("tilescale: NumPy has no dtype %s for an output; pass the output array" % dtype)
    return np.empty(shape, dtype=ndt)
