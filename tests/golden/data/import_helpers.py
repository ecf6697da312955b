# A helper module for tests/golden/ir_import_sibling.py: imported from beside the
# compiled file, its top level runs at compile time as the main file's does.
import torch  # host code the compiler cannot run leaves only these names opaque

SUPPORTED = (32, 64)
NOT_RUNNABLE = torch.finfo(torch.float16).max


def check_block(block):
    assert block in SUPPORTED, f"block must be one of {SUPPORTED}, got {block}"


def scaled(x, factor=SUPPORTED[0]):
    return x * factor
