# ARGS: compile FILE --entry k --target cuda
# ENV: TILESCALE_CUDA_ARCH=sm_80
# T.mbarrier_expect_tx (transaction counts) needs sm_90: below it the pass
# verify_lowered refuses it at the statement (a capability check of the
# lowered IR; the CUDA printer only prints).
import tilelang.language as T


def k():
    @T.prim_func
    def main(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            bars = T.alloc_barrier([128])
            T.mbarrier_expect_tx(bars[0], 512)
            T.mbarrier_arrive(bars[0])
            T.mbarrier_wait_parity(bars[0], 0)
            for i in T.Parallel(128):
                A[i] = A[i] + 1.0

    return main
