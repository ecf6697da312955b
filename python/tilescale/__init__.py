"""tilescale — TileLang-style tile kernels compiled by a C compiler, from Python.

    import tilescale
    k = tilescale.compile("examples/gemm.py", "matmul", M=1024, N=1024, K=1024)
    c = k(a, b)                    # torch tensors (CPU or CUDA) or NumPy arrays
    print(k.get_kernel_source())   # the generated CUDA C++ or C

    @tilescale.jit(out_idx=[-1])
    def add(M, N, dtype="float32"):
        @T.prim_func
        def main(A: T.Tensor((M, N), dtype), ...): ...
        return main
    k = add(128, 256)              # compiled by libtilescale from this file's text

The package is a thin layer over libtilescale's C API (ctypes, _lib.py):
the parser, elaborator, passes, code generators and runtime are all C.
What Python adds is argument conversion (_kernel.py), finding the source
text of a decorated function (_source.py), timing helpers (profiler.py)
and the TileLang compatibility shim (tilescale.tilelang, used by
`python -m tilescale SCRIPT`).
"""
import os

from . import _lib
from ._errors import (ArgumentError, CompileError, CompileWarning, DeviceError, DTypeError,  # noqa: F401
                      LaunchError, RuntimeLaunchError, ShapeError, TileScaleError)
from ._kernel import Kernel, Param, cuda_available, resolve_target  # noqa: F401
from ._source import function_source
from .profiler import Profiler, TensorSupplyType, assert_close, do_bench  # noqa: F401

__version__ = "0.1.0"
__all__ = ["compile", "jit", "Kernel", "TileScaleError", "CompileError", "CompileWarning", "LaunchError",
           "do_bench", "cuda_available"]


def _looks_like_source(s):
    return "\n" in s or ("def " in s and not os.path.exists(s))


def compile(file_or_source, entry=None, target="auto", out_idx=None, options=None, **params):
    """Compile `entry` of a file or of source text with compile-time
    values `params` (the factory's parameters, as -D on the command line).

    file_or_source  a path, source text, or a function (a @T.prim_func,
                    a kernel factory, a @tilescale.jit function)
    target          "auto" (CUDA when a device is usable, else C), "c", "cuda"
    out_idx         overrides the source's @tilelang.jit(out_idx=...)
    options         dict of TsCompileOptions: cache_dir, cc, cflags, nvcc, nccl_include, num_threads, timing,
                    check_bounds (1: every buffer access checked, -1: none, 0: the target's default)
    Raises CompileError (with the compiler's diagnostic) on failure."""
    lenient = False
    if callable(file_or_source) or hasattr(file_or_source, "__tilescale_source__"):
        src = function_source(file_or_source)
        path, text = src.path, src.text
        entry = entry or src.entry
        merged = dict(src.params)
        merged.update(params)
        params = merged
        if out_idx is None:
            out_idx = src.out_idx
        lenient = src.lenient
    else:
        s = os.fspath(file_or_source)
        if _looks_like_source(s):
            path, text = "<source>", s
        else:
            path, text = s, None
    if not entry:
        raise TypeError("tilescale.compile: the entry (function name) is missing")
    return Kernel(path, entry, params, target=target, out_idx=out_idx, path=path, text=text, options=options,
                  lenient=lenient)


class JitFunction:
    """What @tilescale.jit returns.  Calling it with compile-time values
    compiles (once per distinct set of values) and returns the Kernel;
    calling it with tensors (TileLang's eager style, where the decorated
    function is the kernel itself) compiles for the non-tensor values and
    runs the kernel on the tensors at once."""

    def __init__(self, func, out_idx=None, target="auto", options=None):
        self.func = func
        self.out_idx = out_idx
        self.target = target
        self.options = options
        self._cache = {}
        self._names = None  # positional parameter names, from the signature on first use
        self.__name__ = getattr(func, "__name__", "kernel")
        self.__doc__ = getattr(func, "__doc__", None)
        self.__wrapped__ = func

    def _bind(self, args, kwargs):
        """Positional arguments to parameter names; keywords as given (a keyword
        the Python signature lacks, such as a T.const shape name, goes to the
        compiler as is)."""
        names = self._names
        if names is None:
            import inspect
            names = self._names = [p.name for p in inspect.signature(self.func).parameters.values()
                                   if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(args) > len(names):
            raise TypeError("%s takes %d positional arguments but %d were given"
                            % (self.__name__, len(names), len(args)))
        values = dict(zip(names, args))
        for n, v in kwargs.items():
            if n in values:
                raise TypeError("%s got multiple values for argument '%s'" % (self.__name__, n))
            values[n] = v
        return values

    def compile(self, *args, **kwargs):
        """The Kernel for these compile-time values; tensors among the arguments (an
        eager-style function compiled as TileLang's jit_func.compile(q, kv, ..., heads, ...)
        is: deepseek_v32's sparse MLA forward) are dropped, their shapes bound at launch."""
        return self._consts_kernel(args, kwargs)

    def _kernel(self, values):
        from ._kernel import define_text
        key = tuple(sorted((k, define_text(v)) for k, v in values.items()))
        k = self._cache.get(key)
        if k is None:
            k = compile(self.func, target=self.target, out_idx=self.out_idx, options=self.options, **values)
            self._cache[key] = k
        return k

    def __call__(self, *args, **kwargs):
        from ._kernel import _describer
        values = self._bind(args, kwargs)
        tensors = {n: v for n, v in values.items() if _describer(v) is not None}
        if not tensors:
            return self._kernel(values)
        consts = {n: v for n, v in values.items() if n not in tensors}
        k = self._kernel(consts)
        call = []
        for i in k._in:
            p = k.params[i]
            if p.name not in tensors:
                raise TypeError("%s: tensor parameter %s was not given" % (self.__name__, p.name))
            call.append(tensors[p.name])
        return k(*call)

    def _consts_kernel(self, args, kwargs):
        """The Kernel for a call's compile-time values; tensors among the arguments
        (the eager style) are dropped, their shapes bound at launch."""
        from ._kernel import _describer
        values = self._bind(args, kwargs)
        return self._kernel({n: v for n, v in values.items() if _describer(v) is None})

    def get_kernel_source(self, *args, **kwargs):
        """The generated source of the kernel these arguments compile to (TileLang's
        jit_func.get_kernel_source(...), with compile-time values and/or tensors)."""
        return self._consts_kernel(args, kwargs).get_kernel_source()

    def get_tir(self, *args, **kwargs):
        """The kernel's IR after our passes, as text (TileLang returns its TIR PrimFunc).
        TileLang builds the TIR without checking that the kernel could be launched, and
        scripts analyze kernels they never run (examples/analyze: a convolution whose
        grid has 262144 blocks in y, past CUDA's 65535); where the default target refuses
        the kernel, the C target's IR (not built) is returned instead."""
        try:
            return self._consts_kernel(args, kwargs).get_ir()
        except CompileError as e:
            from ._kernel import _describer
            values = {n: v for n, v in self._bind(args, kwargs).items() if _describer(v) is None}
            opts = dict(self.options or {}, skip_build=1)
            try:
                k = compile(self.func, target="c", out_idx=self.out_idx, options=opts, **values)
            except CompileError:
                raise e
            return k.get_ir()

    def __repr__(self):
        return "<tilescale.jit %s>" % self.__name__


def jit(func=None, *, out_idx=None, target="auto", options=None, **_tilelang_options):
    """Decorator: @tilescale.jit or @tilescale.jit(out_idx=[-1], target="cuda").
    TileLang's other options (pass_configs, execution_backend, ...) are accepted and ignored."""
    if func is None:
        return lambda f: JitFunction(f, out_idx, target, options)
    return JitFunction(func, out_idx, target, options)


def library_path():
    """The libtilescale.so this package uses."""
    return _lib.path
