"""tilelang.env: settings objects some scripts read; Any for every name."""
from ._stub import Any


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Any("tilelang.env." + name)
