# ENV: TILESCALE_CUDA_ARCH=sm_90
# ARGS: compile FILE --entry k --target cuda --emit cuda
# An atomic add on a bool tensor has no CUDA instruction: refused with the
# statement's file:line:col by pass verify_lowered (session 9; the check
# was the CUDA printer's, same message; tests/unit/test_atomic_bool.c
# checks that the passes alone refuse it).
import tilelang.language as T


def k():
    @T.prim_func
    def main(B: T.Tensor((64,), "bool")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                T.atomic_add(B[i], True)

    return main
