# ARGS: compile FILE --entry ext_shared --target cuda --emit cuda
# ENV: TILESCALE_CUDA_ARCH=sm_90
# A pointer into shared memory for an external function is refused, naming
# the buffer: what the function does there would be invisible to the
# barriers insert_sync places (per-thread buffers only, T.alloc_local /
# T.alloc_var, as TileLang's dequantization examples pass them).
import tilelang.language as T

SRC = """
__device__ void fill1(int *p) { *p = 1; }
"""


def ext_shared(M=32):
    @T.prim_func
    def main(A: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=M) as bx:
            S = T.alloc_shared((M,), "int32")
            T.import_source(SRC)
            T.call_extern("handle", "fill1", T.access_ptr(S, "w"))
            T.copy(S, A)

    return main
