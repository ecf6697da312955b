"""Exceptions of the tilescale package.

Every failure of the C library comes back as a TsStatus plus the
context's diagnostic text (`file:line:col: error: message`, the source
line and a caret, or `kernel: A has dtype float32, expected float16` at
launch).  It becomes one exception whose message is that text, unchanged,
and whose class says what went wrong.  The classes also derive from the
built-in exception a Python user would try first (a dtype mismatch is a
TypeError, a shape mismatch a ValueError), so `except TypeError` works
without knowing this package.
"""
from . import _lib


class TileScaleError(Exception):
    """A failure reported by libtilescale (or by this package's checks).

    status       the TsStatus value (int), 0 for checks made in Python
    status_name  its name, "TS_ERR_DTYPE"...
    diagnostic   the library's diagnostic text
    """

    def __init__(self, message, status=0):
        super().__init__(message)
        self.status = status
        self.status_name = _lib.STATUS_NAMES[status] if 0 <= status < len(_lib.STATUS_NAMES) else str(status)
        self.diagnostic = message


class CompileWarning(UserWarning):
    """A warning of the compiler: the kernel compiled, but not as written or
    hoped (the library's `file:line:col: warning: ...` text, unchanged)."""


class CompileError(TileScaleError):
    """The kernel could not be compiled: syntax, unsupported construct,
    unknown entry or name, wrong compile-time values, build failure."""


class LaunchError(TileScaleError):
    """The kernel could not be run on the given arguments."""


class DTypeError(LaunchError, TypeError):
    """A tensor or scalar has the wrong element type."""


class ShapeError(LaunchError, ValueError):
    """A tensor has the wrong rank or extents, or shape variables disagree."""


class ArgumentError(LaunchError, TypeError):
    """Wrong number or kind of arguments (not a tensor, not addressable)."""


class DeviceError(LaunchError, ValueError):
    """Tensors on a device the kernel cannot use, or on different devices."""


class RuntimeLaunchError(LaunchError, RuntimeError):
    """The kernel failed while running (CUDA error, out of memory)."""


_LAUNCH_CLASSES = {
    _lib.ERR_DTYPE: DTypeError,
    _lib.ERR_SHAPE: ShapeError,
    _lib.ERR_ARGCOUNT: ArgumentError,
    _lib.ERR_INVALID: ArgumentError,
    _lib.ERR_RUNTIME: RuntimeLaunchError,
    _lib.ERR_NOMEM: RuntimeLaunchError,
}


def compile_error(status, text):
    return CompileError(text.rstrip("\n") or _lib.STATUS_NAMES[status], status)


def launch_error(status, text):
    cls = _LAUNCH_CLASSES.get(status, LaunchError)
    return cls(text.rstrip("\n") or _lib.STATUS_NAMES[status], status)
