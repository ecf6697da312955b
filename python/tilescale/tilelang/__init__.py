"""The TileLang compatibility shim: `import tilelang` inside a script run by
`python -m tilescale SCRIPT` gets this package (see _stub.install).

It keeps TileLang's Python-side interface and hands every kernel to the
C compiler: tilelang.jit is tilescale.jit (a factory is compiled from the
script's own text, with the factory's arguments as compile-time values),
tilelang.compile(prim_func, out_idx=...) compiles a @T.prim_func that the
script built by calling a factory, and the kernels returned are
tilescale.Kernel objects (get_kernel_source, get_profiler, torch tensors
in, outputs out).  The target follows TileLang's default: CUDA where a
device is usable.  Options that only mean something to TileLang's own
pipeline (pass_configs, execution_backend, compile_flags...) are accepted
and ignored.

It can also be imported directly as tilescale.tilelang, which is what the
package's tests do.
"""
import tilescale as _ts

from . import language  # noqa: F401
from ._stub import Any, install  # noqa: F401
from .math import cdiv, next_power_of_2  # noqa: F401
from ..profiler import TensorSupplyType  # noqa: F401
from .._kernel import Kernel as JITKernel  # noqa: F401

__version__ = "0.1.15+tilescale"


def jit(func=None, *, out_idx=None, target="auto", **_ignored):
    """@tilelang.jit / @tilelang.jit(out_idx=[-1], target="cuda", pass_configs={...})."""
    if func is None:
        return lambda f: _ts.JitFunction(f, out_idx, _target(target))
    return _ts.JitFunction(func, out_idx, _target(target))


lazy_jit = jit


def autotune(*args, **kwargs):
    """tilelang.autotune: the decorator of tilelang.autotuner."""
    from .autotuner import autotune as _autotune
    return _autotune(*args, **kwargs)


def _target(target):
    if target is None or target == "auto":
        return "auto"
    t = str(getattr(target, "kind", target)).split()[0].lower()
    return "cuda" if t.startswith("cuda") else "c" if t in ("c", "cpu", "llvm", "c_host") else "auto"


def compile(func, out_idx=None, target="auto", target_host=None, execution_backend=None, pass_configs=None,
            verbose=False, compile_flags=None, **_ignored):
    """tilelang.compile(prim_func or jit function, out_idx=[...], target=...)."""
    return _ts.compile(func, target=_target(target), out_idx=out_idx)


def disable_cache():
    pass


def enable_cache():
    pass


def clear_cache():
    pass


def set_log_level(level):
    pass


class _PassConfigKeys:
    """TileLang's pass configuration keys (dict keys of pass_configs); any name is accepted."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return "tl." + name.lower()


PassConfigKey = _PassConfigKeys()


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    import sys
    sub = sys.modules.get("tilelang." + name)
    if sub is not None:
        return sub
    return Any("tilelang." + name)
