# ARGS: compile FILE --entry kern -D n=64 --target cuda --emit ir
# ENV: TILESCALE_CUDA_ARCH=sm_90
# T.thread_binding's range must be the block's whole extent along its axis
# (threads= of T.Kernel); another range is an error saying both.
import tilelang.language as T


def kern(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=(32, 2)) as bx:
            ty = T.thread_binding(0, 4, thread="threadIdx.y")
            A[ty] = 1.0

    return main
