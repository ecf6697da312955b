# ARGS: compile FILE --entry kern --target cuda --emit ir
# ENV: TILESCALE_CUDA_ARCH=sm_90
# More threads per block than CUDA runs (gemv's autotuned kernel with
# threads=(BLOCK_N, reduce_threads) = (128, 32) is so): an error at the T.Kernel.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=(128, 32)) as bx:
            A[T.get_thread_binding(0)] = 1.0

    return main
