# ARGS: compile FILE --entry to_fp8 -D N=64 --target c --emit ir
# tilelang.language.fp8.determine_fp8_type() inside a factory: TileLang's float8
# type for the GPU, float8_e4m3 (torch's float8_e4m3fn) on NVIDIA, or e5m2 when
# asked (tilelang/language/fp8.py picks the FNUZ types on AMD only).
import tilelang
import tilelang.language as T
from tilelang.language.fp8 import determine_fp8_type


@tilelang.jit(out_idx=[1, 2])
def to_fp8(N):
    f8 = determine_fp8_type()
    f8b = determine_fp8_type("e5m2")

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), f8), C: T.Tensor((N,), f8b)):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = A[i]
                C[i] = A[i]

    return main
