"""`tilelang.language.fp8` for scripts under `python -m tilescale`: the float8 type
TileLang picks for the GPU.  The compiler targets NVIDIA GPUs, whose e4m3 type is
float8_e4m3 (torch.float8_e4m3fn), not AMD's float8_e4m3fnuz; the C front end
answers determine_fp8_type() inside a factory the same way (elab/builtins.c)."""
from .language import float8_e4m3


def determine_fp8_type(fp8_format="e4m3"):
    """T.float8_e4m3 (or T.float8_e5m2 for fp8_format="e5m2")."""
    from .language import float8_e5m2
    return float8_e5m2 if fp8_format == "e5m2" else float8_e4m3


def determine_torch_fp8_type(fp8_format="e4m3"):
    import torch
    return torch.float8_e5m2 if fp8_format == "e5m2" else torch.float8_e4m3fn
