# ARGS: compile FILE --entry kern --emit ir
# `from pkg import f` where pkg/ is a package beside the file: its __init__.py
# runs at compile time, and its `from .bits import f` runs pkg/bits.py
# (TileLang's dequantize_gemm examples import their `quantize` package so).
import tilelang.language as T
from golden_pkg import unpack_u4, SCALE


def kern():
    @T.prim_func
    def main(Q: T.Tensor((4, 8), "uint8"), F: T.Tensor((4, 16), "float16")):
        with T.Kernel(4, threads=16) as bx:
            for j in T.Parallel(16):
                F[bx, j] = unpack_u4(Q[bx, j // 2], j % 2) * SCALE

    return main
