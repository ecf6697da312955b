# What a target lacks, refused by pass verify_lowered (src/pass/verify_target.c)
# before any code is printed, rather than by a printer while printing
# (session 11); tests/unit/test_verify_target.c compiles each through the
# passes alone, the goldens err_target_*.py pin the messages.
#   - CUDA: a per-thread buffer of over 2^20 elements;
#   - C: a grid extent that reads a buffer (the host computes the grid);
#   - C: an atomic add on a bool tensor;
#   - C: T.sync_grid in a kernel whose threads run as coroutines
#     (T.thread_return makes them so).
import tilelang.language as T


def local_big(n=1048577):
    @T.prim_func
    def main(A: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            L = T.alloc_local((n,), "float32")
            for i in T.serial(n):
                L[i] = 1.0
            A[0] = L[5]

    return main


def grid_load():
    @T.prim_func
    def main(A: T.Tensor((16,), "int32")):
        with T.Kernel(A[0] + 1, threads=32) as bx:
            A[1] = bx

    return main


def atomic_bool():
    @T.prim_func
    def main(B: T.Tensor((64,), "bool")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                T.atomic_add(B[i], True)

    return main


def sync_coro():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(2, threads=32) as bx:
            tx = T.get_thread_binding()
            for i in T.serial(2):
                if tx >= 16:
                    T.thread_return()
                A[bx * 32 + tx] = 1.0
                T.sync_grid()

    return main
