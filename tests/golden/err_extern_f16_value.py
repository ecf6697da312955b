# ARGS: compile FILE --entry ext_half --target cuda --emit cuda
# ENV: TILESCALE_CUDA_ARCH=sm_90
# An external function's float16 result used as a value is refused by pass
# verify_lowered (the CUDA printer keeps 16- and 8-bit floats as their
# stored bits, so such a value could not be read as a number), at the call,
# before any CUDA is printed; the call as a statement writing through a
# pointer is the way around it.
import tilelang.language as T

SRC = """
__device__ half_t twice(half_t x) { return x + x; }
"""


def ext_half(M=32):
    @T.prim_func
    def main(A: T.Tensor((M,), "float16"), B: T.Tensor((M,), "float16")):
        with T.Kernel(1, threads=M) as bx:
            T.import_source(SRC)
            for i in T.Parallel(M):
                B[i] = T.call_extern("float16", "twice", A[i]) + A[i]

    return main
