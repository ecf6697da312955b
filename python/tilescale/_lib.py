"""Finding and describing libtilescale for ctypes.

The whole compiler and runtime live in the C library; this module only
opens it and declares the prototypes of include/tilescale.h that the
Python layer calls.  Why ctypes and not a CPython extension: nothing here
has to be compiled against Python, so one build of the library serves
every Python version, and the C API stays the only interface.

Where the library is looked for, first hit wins:
  1. $TILESCALE_LIB (a path to libtilescale.so);
  2. next to this file (where `pip install .` puts it);
  3. build*/libtilescale.so of the source tree this package sits in
     (python/tilescale -> ../../build), for running from a checkout.

Two handles on the same library: `lib` (ctypes.CDLL) releases the GIL
around each call, for compilation and host launches that may run long;
`fast` (ctypes.PyDLL) keeps the GIL, for the short device launch, where
releasing and retaking it would cost as much as the call itself.

The C structs that the library writes into (TsParamInfo) or reads from
(TsCompileOptions) are declared here with their fields in order, plus
trailing reserved bytes, so that fields appended to them in a later
version of the header are read as zeros or written into the spare room,
never past the end of our buffer.
"""
import ctypes
import glob
import os

# TsStatus values (include/tilescale.h), in order.
STATUS_NAMES = [
    "TS_OK", "TS_ERR_SYNTAX", "TS_ERR_UNSUPPORTED", "TS_ERR_NAME", "TS_ERR_TYPE", "TS_ERR_PARAM",
    "TS_ERR_SHAPE", "TS_ERR_DTYPE", "TS_ERR_ARGCOUNT", "TS_ERR_IO", "TS_ERR_BUILD", "TS_ERR_RUNTIME",
    "TS_ERR_NOMEM", "TS_ERR_INVALID", "TS_ERR_INTERNAL",
]
for _i, _n in enumerate(STATUS_NAMES):
    globals()[_n[3:]] = _i  # OK, ERR_SYNTAX, ...

# TsDType values, in order; the names are TileLang's dtype strings.
DTYPE_NAMES = [
    "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float16", "bfloat16", "float32", "float64", "float8_e4m3", "float8_e5m2",
    "int4",  # two to a byte (TileLang's pack_int4): its tensors are int8 with the last extent halved
    "float4_e2m1fn",  # two to a byte as int4 (torch's float4_e2m1fn_x2 bytes): int8 tensors, last extent halved
]
DTYPE = {n: i for i, n in enumerate(DTYPE_NAMES)}
DTYPE_BYTES = [1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8, 1, 1, 1, 1]  # int4, float4_e2m1fn: their packed byte

TARGET_C, TARGET_CUDA = 0, 1


class TsDefine(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_char_p)]


class TsTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int),
        ("ndim", ctypes.c_int),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
    ]


class TsCompileOptions(ctypes.Structure):
    _fields_ = [
        ("target", ctypes.c_int),
        ("dump_after", ctypes.c_char_p),
        ("cache_dir", ctypes.c_char_p),
        ("cc", ctypes.c_char_p),
        ("num_threads", ctypes.c_int),
        ("timing", ctypes.c_int),
        ("skip_build", ctypes.c_int),
        ("lenient_defines", ctypes.c_int),
        ("cflags", ctypes.c_char_p),
        ("check_bounds", ctypes.c_int),
        ("tiered", ctypes.c_int),
        ("multinode", ctypes.c_int),
        ("nvcc", ctypes.c_char_p),
        ("nccl_include", ctypes.c_char_p),
        ("_reserved", ctypes.c_char * 512),  # room for fields a later header appends
    ]


class TsParamInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("is_tensor", ctypes.c_int),
        ("is_output", ctypes.c_int),
        ("dtype", ctypes.c_int),
        ("ndim", ctypes.c_int),
        ("shape", ctypes.c_int64 * 8),
        ("shape_names", ctypes.c_char_p * 8),
        ("_reserved", ctypes.c_char * 1024),  # room for fields a later header appends
    ]


def _candidates():
    env = os.environ.get("TILESCALE_LIB")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libtilescale.so")
    root = os.path.dirname(os.path.dirname(here))
    for name in ("build", "build-release", "build-py"):
        yield os.path.join(root, name, "libtilescale.so")
    for p in sorted(glob.glob(os.path.join(root, "build*", "libtilescale.so"))):
        yield p


def _find():
    tried = []
    for p in _candidates():
        tried.append(p)
        if os.path.exists(p):
            return p
    raise ImportError(
        "tilescale: libtilescale.so not found (looked at %s); install the package with `pip install .` "
        "or set TILESCALE_LIB" % ", ".join(tried))


path = _find()
lib = ctypes.CDLL(path)
fast = ctypes.PyDLL(path)
# The same library once more, for functions called without argtypes: the
# launcher generated per call signature (_kernel.py) passes ready-made ctypes
# objects, so ctypes converts nothing per call.
bare = ctypes.PyDLL(path)

_P = ctypes.POINTER
_VP = ctypes.c_void_p


def _proto(dll, name, restype, *argtypes):
    f = getattr(dll, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


context_create = _proto(lib, "ts_context_create", ctypes.c_int, _P(_VP))
context_destroy = _proto(lib, "ts_context_destroy", None, _VP)
last_error = _proto(lib, "ts_last_error", ctypes.c_char_p, _VP)
last_warnings = _proto(lib, "ts_last_warnings", ctypes.c_char_p, _VP)
status_name = _proto(lib, "ts_status_name", ctypes.c_char_p, ctypes.c_int)
compile_file = _proto(lib, "ts_compile_file", ctypes.c_int, _VP, ctypes.c_char_p, ctypes.c_char_p,
                      _P(TsDefine), ctypes.c_int, _P(TsCompileOptions), _P(_VP))
compile_source = _proto(lib, "ts_compile_source", ctypes.c_int, _VP, ctypes.c_char_p, ctypes.c_char_p,
                        ctypes.c_char_p, _P(TsDefine), ctypes.c_int, _P(TsCompileOptions), _P(_VP))
kernel_name = _proto(lib, "ts_kernel_name", ctypes.c_char_p, _VP)
kernel_num_params = _proto(lib, "ts_kernel_num_params", ctypes.c_int, _VP)
kernel_param = _proto(lib, "ts_kernel_param", ctypes.c_int, _VP, ctypes.c_int, _P(TsParamInfo))
kernel_param_extent = _proto(lib, "ts_kernel_param_extent", ctypes.c_char_p, _VP, ctypes.c_int, ctypes.c_int)
kernel_grid = _proto(lib, "ts_kernel_grid", None, _VP, _P(ctypes.c_int64), _P(ctypes.c_int))
kernel_source = _proto(lib, "ts_kernel_source", ctypes.c_char_p, _VP)
kernel_next = _proto(lib, "ts_kernel_next", _VP, _VP)
kernel_ir = _proto(lib, "ts_kernel_ir", ctypes.c_char_p, _VP)
kernel_timing = _proto(lib, "ts_kernel_timing", ctypes.c_char_p, _VP)
kernel_launch = _proto(lib, "ts_kernel_launch", ctypes.c_int, _VP, _P(TsTensor), ctypes.c_int)
kernel_launch_device = _proto(fast, "ts_kernel_launch_device", ctypes.c_int, _VP, _P(TsTensor), ctypes.c_int,
                              _VP)
kernel_prepare_device = _proto(lib, "ts_kernel_prepare_device", ctypes.c_int, _VP, _P(TsTensor), ctypes.c_int,
                               _P(_VP))
plan_pointers = _proto(lib, "ts_plan_pointers", _VP, _VP)
kernel_tier = _proto(lib, "ts_kernel_tier", ctypes.c_int, _VP)
kernel_wait_full = _proto(lib, "ts_kernel_wait_full", ctypes.c_int, _VP)
TIER_NAMES = {0: "full", 1: "quick", 2: "quick_only"}  # TS_TIER_FULL, _QUICK, _QUICK_ONLY
kernel_shared_bytes = _proto(lib, "ts_kernel_shared_bytes", ctypes.c_int64, _VP)
kernel_destroy = _proto(lib, "ts_kernel_destroy", None, _VP)
kernel_plot_layouts = _proto(lib, "ts_kernel_plot_layouts", ctypes.c_int, _VP, ctypes.c_char_p, _P(ctypes.c_int))
target_available = _proto(lib, "ts_target_available", ctypes.c_int, ctypes.c_int)
abi_sizeof = _proto(lib, "ts_abi_sizeof", ctypes.c_size_t, ctypes.c_char_p)
dtype_from_dlpack = _proto(lib, "ts_dtype_from_dlpack", ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int)


def mirror_size(struct):
    """Bytes of a ctypes mirror without its reserved tail (what C's sizeof must equal)."""
    reserved = getattr(struct, "_reserved", None)
    if reserved is None:
        return ctypes.sizeof(struct)
    align = ctypes.alignment(struct)
    return (struct._reserved.offset + align - 1) // align * align  # C pads to the struct's alignment


def abi_mismatches():
    """[(name, C size, mirror size)] for every mirror that disagrees with the library."""
    out = []
    for st in (TsTensor, TsDefine, TsCompileOptions, TsParamInfo):
        c = abi_sizeof(st.__name__.encode())
        m = mirror_size(st)
        if c and c != m:
            out.append((st.__name__, c, m))
    return out


def _warn_abi():
    bad = abi_mismatches()
    if bad:
        import warnings
        warnings.warn("tilescale: %s does not match this package's ctypes declarations (%s); update "
                      "python/tilescale/_lib.py" % (path, ", ".join("%s: C %d bytes, Python %d" % b for b in bad)))


_warn_abi()
