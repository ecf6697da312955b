# ARGS: compile FILE --entry kern -D n=4
# A helper defined by host code the compiler cannot run is reported where
# the kernel uses it, with the reason.
import torch
import tilelang.language as T

SCALE = torch.finfo(torch.float16).max


def kern(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            for i in T.Parallel(n):
                A[i] = A[i] * SCALE

    return main
