# ARGS: compile FILE --entry kern -D n=64 --target c
# The C target runs a block as one thread: an explicit thread index is an
# error there, naming it where the kernel uses it (the CUDA target runs it).
import tilelang.language as T


def kern(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=n) as bx:
            tx = T.get_thread_binding()
            A[tx] = A[tx] * 2.0

    return main
