"""`tilelang.language` (T) as a Python script sees it under `python -m tilescale`.

Kernel bodies are compiled by the C compiler from the script's text, so
this module only has to make the Python-evaluated parts of a script work
(see _stub.py): dtypes (T.float16 is a str subclass, so it compares equal
to "float16" and can be passed to a factory as a compile-time value),
T.prim_func (which records where the function came from, for
tilelang.compile), T.macro and the other decorators (the function back),
and Any for every other name.
"""
import sys

from .._source import from_code
from ._stub import Any

__path__ = []  # a package to the import system: tilelang.language.<sub> resolves (dtypes here, others stubs)


class dtype(str):
    """A TileLang dtype name; calling it (T.float32(1.0)) gives Any, as in a kernel body."""

    # C-style names stand for their dtype, as TileLang's dtype() reads them (T.dtype("uint") == T.uint32)
    _CANONICAL = {"double": "float64", "float": "float32", "int": "int32", "long": "int64", "short": "int16",
                  "uint": "uint32", "ulong": "uint64"}

    def __new__(cls, name):
        return str.__new__(cls, cls._CANONICAL.get(name, name) if isinstance(name, str) else name)

    @property
    def __tilescale_dtype__(self):
        return str(self)

    def __call__(self, *args, **kwargs):
        return Any("%s()" % self)

    def as_torch(self):
        import torch
        # int4: the packed bytes' dtype (two elements to an int8, as TileLang's pack_int4)
        return getattr(torch, {"float8_e4m3": "float8_e4m3fn", "int4": "int8",
                               "float4_e2m1fn": "float4_e2m1fn_x2"}.get(str(self), str(self)))

    @property
    def bits(self):
        import re
        m = re.search(r"(\d+)", self)
        return 8 if str(self) == "bool" else int(m.group(1)) if m else 32


_DTYPES = {
    "bool": "bool", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float16": "float16", "half": "float16", "bfloat16": "bfloat16", "float32": "float32",
    "float": "float32", "float64": "float64", "double": "float64",
    "float8_e4m3": "float8_e4m3", "float8_e4m3fn": "float8_e4m3", "float8_e5m2": "float8_e5m2",
    "tfloat32": "float32",  # float32 storage (as the compiler reads it)
    "int4": "int4",  # packed two to a byte; kernels take int8 tensors with the last extent halved
    "float4_e2m1fn": "float4_e2m1fn", "float4_e2m1": "float4_e2m1fn",  # packed as int4 (OCP MX FP4 E2M1)
    "uint": "uint32", "short": "int16", "long": "int64", "ulong": "uint64",  # TileLang's C-style names
}
for _n, _v in _DTYPES.items():
    globals()[_n] = dtype(_v)


class PrimFunc:
    """What @T.prim_func gives back in Python: the function plus where the
    compiler should find it (a SourceRef, built on demand)."""

    def __init__(self, func, factory_code, factory_globals, factory_locals, factory_params):
        self.func = func
        self.__name__ = func.__name__
        self._factory = (factory_code, factory_globals, factory_locals, factory_params)

    def __tilescale_source__(self):
        code, globs, locs, params = self._factory
        if code is None:  # defined at the top level of a file: its own entry
            return from_code(self.func.__code__, self.func.__globals__, {})
        from .._kernel import define_text
        ok = {}
        for n, v in params.items():
            try:
                define_text(v)
                ok[n] = v
            except TypeError:
                pass  # not expressible as text: the source's default (if any) applies
        return from_code(code, globs, locs, params=ok, lenient=True)

    def __call__(self, *args, **kwargs):
        raise TypeError("tilelang shim: a @T.prim_func is compiled with tilelang.compile(func, ...), not called")

    def __repr__(self):
        return "<T.prim_func %s>" % self.__name__


def prim_func(func=None, **_kw):
    """Decorator: remember the function and, when it is defined inside a
    factory that Python is running, that factory and its arguments."""
    if func is None:
        return lambda f: prim_func(f)
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_name == "<lambda>":
        frame = frame.f_back
    code = frame.f_code if frame is not None and frame.f_code.co_name != "<module>" else None
    if code is None:
        return PrimFunc(func, None, None, None, None)
    locs = dict(frame.f_locals)
    nargs = code.co_argcount + code.co_kwonlyargcount
    params = {n: locs[n] for n in code.co_varnames[:nargs] if n in locs}
    return PrimFunc(func, code, frame.f_globals, locs, params)


def macro(func=None, **_kw):
    if func is None:
        return lambda f: f
    return func


def symbolic(name, dtype="int32"):
    return Any("T.symbolic(%r)" % name)


dynamic = symbolic


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "int":  # T.int is int32 (not a global here: it would hide the builtin in this module)
        return dtype("int32")
    if name == "_TORCH_DTYPE_TO_STR":  # language.dtypes' table, for scripts that import it
        import torch  # noqa: F401  (_torch_maps reads it from sys.modules)
        from .._kernel import _torch_maps
        from .. import _lib
        # (torch's float4_e2m1fn_x2 is accepted as int8 bytes; its name is TileLang's float4_e2m1fn)
        return {k: "float4_e2m1fn" if str(k) == "torch.float4_e2m1fn_x2" else _lib.DTYPE_NAMES[v]
                for k, v in _torch_maps().items()}
    return Any("T." + name)
