# ARGS: compile FILE --entry kern -D n=256 --target c
# On the C target there is no GPU to ask: torch.cuda.get_device_capability()
# in a factory is an error naming the query, where it is made.
import torch
import tilelang.language as T


def kern(n):
    major, minor = torch.cuda.get_device_capability()

    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                A[i] = A[i] + major

    return main
