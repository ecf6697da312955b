"""`tilelang.cuda` under the shim: the submodules built here (intrinsics.sparse_layout), Any for
every other name (as the shim's stub modules give)."""
from .._stub import Any as _Any


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Any("tilelang.cuda." + name)
