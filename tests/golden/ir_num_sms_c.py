# ARGS: compile FILE --entry kern -D n=1000 --target c --emit ir
# tilelang.carver's driver.get_num_sms() on the C target (no GPU to ask):
# sm_90's count, 132, a fixed value (not the host's CPU count), so that a
# factory sizing a persistent grid by it (TileScale's
# example_allgather_gemm_overlapped) makes the same kernel on both targets.
# The grid below is that count.
import tilelang.language as T
from tilelang.carver.arch import driver


def kern(n):
    sms = driver.get_num_sms()

    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(sms, threads=32) as bx:
            for i in T.Parallel(32):
                if bx * 32 + i < n:
                    A[bx * 32 + i] = A[bx * 32 + i] + 1.0

    return main
