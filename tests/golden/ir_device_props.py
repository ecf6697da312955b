# ARGS: compile FILE --entry kern --target cuda --emit ir
# ENV: TILESCALE_CUDA_ARCH=sm_90
# torch.cuda.get_device_properties(0) answered from the target compiled for
# (sm_90: major 9, minor 0, 132 SMs, as example_convolution_autotune's
# check_hopper reads it), and TileLang's make_mma_swizzle_layout as the
# target's own swizzle of a shared tile whose rows are 64 bytes or more.
import torch
import tilelang.language as T
from tilelang.cuda.intrinsics import make_mma_swizzle_layout


def kern():
    props = torch.cuda.get_device_properties(0)
    hopper = (props.major, props.minor) == (9, 0)
    blocks = props.multi_processor_count if hopper else 1

    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((blocks, 64), "float16")):
        with T.Kernel(blocks, threads=64) as bx:
            s = T.alloc_shared((64, 64), "float16")
            T.annotate_layout({s: make_mma_swizzle_layout(s)})
            T.copy(A, s)
            for j in T.Parallel(64):
                B[bx, j] = s[bx % 64, j] * props.warp_size

    return main
