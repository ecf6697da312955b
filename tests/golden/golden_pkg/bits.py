# The 4-bit unpacking of TileLang's dequantize_gemm/quantize package, in our words.
from tilelang import tvm as tvm
from tvm import tirx


def unpack_u4(val, pos):
    mask = tvm.tirx.const(15, "uint8")
    return ((val >> (pos * 4).astype("uint8")) & mask).astype("float16")
