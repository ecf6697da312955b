# ARGS: compile FILE --entry ovf --target cuda --emit cuda
# ENV: TILESCALE_CUDA_ARCH=sm_90
# A constant index far outside a local buffer (2^62: its affine form gives up
# on a number that large) is refused by check_bounds like a small one
# (session 11: on CUDA it compiled without a word; on the C target without
# run-time checks the printer refused its offset's 64-bit overflow).
import tilelang.language as T


def ovf():
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            L = T.alloc_local((4, 4), "float32")
            L[4611686018427387904, 0] = 1.0
            A[0] = L[0, 0]

    return main
