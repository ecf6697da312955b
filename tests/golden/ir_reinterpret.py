# ARGS: compile FILE --entry kern --emit ir
import tilelang.language as T
from tvm import tirx


def kern():
    @T.prim_func
    def main(X: T.Tensor((16,), "float32"), Y: T.Tensor((16,), "uint32"), H: T.Tensor((16,), "float16")):
        with T.Kernel(1, threads=16) as bx:
            for i in T.Parallel(16):
                Y[i] = T.reinterpret(X[i], T.uint32) >> tirx.const(23, T.uint32)
                H[i] = tirx.reinterpret(T.float16, (T.uint16(0x3c00) + i).astype(T.uint16))

    return main
