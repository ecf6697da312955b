"""tilelang.utils: the tensor helpers scripts import (utils.tensor); the rest are stubs."""
from .._stub import Any


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Any("tilelang.utils." + name)
