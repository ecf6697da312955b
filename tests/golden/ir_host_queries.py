# ARGS: compile FILE --entry kern -D n=256 --target cuda --emit ir
# ENV: TILESCALE_CUDA_ARCH=sm_90
# Host queries a factory makes to pick its configuration (issue 8 D) are
# answered at compile time from the architecture compiled for:
# torch.cuda.get_device_capability() -> (9, 0) on sm_90, is_available(),
# tilelang.carver's get_num_sms() -> 132 (H100/H200), and torch's host-side
# effects (synchronize, seeds) do nothing to the kernel.  The grid shows
# the persistent-kernel size picked from the SM count.
import torch
import tilelang.language as T
from tilelang.carver.arch import driver


def kern(n):
    major, minor = torch.cuda.get_device_capability()
    torch.cuda.manual_seed_all(0)
    torch.cuda.synchronize()
    sms = driver.get_num_sms()
    block = 128 if major * 10 + minor >= 90 and torch.cuda.is_available() else 64

    @T.prim_func
    def main(A: T.Tensor((n,), torch.float32)):
        with T.Kernel(sms, threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    A[bx * block + i] = A[bx * block + i] + major

    return main
