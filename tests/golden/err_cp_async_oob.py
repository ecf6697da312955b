# ARGS: compile FILE --entry k --target c --emit c
# A T.access_ptr whose elements run past the end of its buffer: the last 8
# elements of a 64 x 64 tile start at element 4092, the copy would reach
# 4099; refused at the T.access_ptr with file:line:col.
import tilelang.language as T


def k():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((64, 64), "float16")
            tx = T.get_thread_binding()
            T.ptx_cp_async(T.access_ptr(S[63, 60], "w", 8), T.access_ptr(A[tx, 0], "r", 8), 8)
            T.ptx_wait_group(0)
            T.copy(S, B)

    return main
