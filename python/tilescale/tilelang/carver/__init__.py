"""tilelang.carver: TileLang's hardware-aware config generator.  Only the
device queries scripts use in host code (carver.arch.driver) are real;
the templates and roller are stubs (their configs come from TileLang's own
cost model, which this project does not have)."""
from .._stub import Any


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Any("tilelang.carver." + name)
