# ARGS: compile FILE --entry kern --target cuda --emit ir
# ENV: TILESCALE_CUDA_ARCH=sm_90
import torch
import tilelang.language as T


def kern():
    mem = torch.cuda.get_device_properties(0).total_memory

    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            A[0] = mem

    return main
