"""tilelang.carver.arch: `driver` answers device queries from torch (SM
count, shared memory); CUDA/CDNA and everything else are stubs."""
from .._stub import Any

__path__ = []


class _Driver:
    """Device 0's properties, through torch when it is there."""

    def _props(self, device=0):
        import torch
        return torch.cuda.get_device_properties(device)

    def get_num_sms(self, device_id=0):
        try:
            return int(self._props(device_id).multi_processor_count)
        except Exception:
            return 132  # an H100/H200's count, for scripts that only size grids with it

    def get_max_dynamic_shared_size_bytes(self, device_id=0, format="bytes"):
        try:
            v = int(getattr(self._props(device_id), "shared_memory_per_block_optin", 232448))
        except Exception:
            v = 232448
        return v // 1024 if format == "kb" else v

    def get_registers_per_block(self, device_id=0):
        try:
            return int(getattr(self._props(device_id), "regs_per_multiprocessor", 65536))
        except Exception:
            return 65536

    def get_device_name(self, device_id=0):
        try:
            return self._props(device_id).name
        except Exception:
            return "unknown"

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Any("tilelang.carver.arch.driver." + name)


driver = _Driver()


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Any("tilelang.carver.arch." + name)
