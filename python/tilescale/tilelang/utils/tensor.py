"""tilelang.utils.tensor: assert helpers and input supply (tilescale.profiler)."""
from ...profiler import TensorSupplyType, make_tensor
from ..testing import torch_assert_close  # noqa: F401

__path__ = []


def get_tensor_supply(supply_type=TensorSupplyType.Integer):
    """A function (shape, dtype) -> tensor on the current device, like TileLang's."""
    def supply(shape, dtype="float16", device=None):
        dt = str(getattr(dtype, "__tilescale_dtype__", None) or dtype).replace("torch.", "")
        try:
            import torch
            dev = device or ("cuda" if torch.cuda.is_available() else "cpu")
        except ImportError:
            dev = "cpu"
        return make_tensor(tuple(shape), dt, supply_type, dev)
    return supply
