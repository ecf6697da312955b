"""tilelang.profiler: do_bench and TensorSupplyType (tilescale.profiler)."""
from ..profiler import Profiler, TensorSupplyType, do_bench  # noqa: F401
