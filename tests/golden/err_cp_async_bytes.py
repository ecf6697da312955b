# ARGS: compile FILE --entry k --target c --emit c
# T.ptx_cp_async moves 4, 8 or 16 bytes (PTX cp.async): 3 float16 elements
# (6 bytes) are refused at the call with file:line:col.
import tilelang.language as T


def k():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((64, 64), "float16")
            tx = T.get_thread_binding()
            T.ptx_cp_async(T.access_ptr(S[tx, 0], "w", 3), T.access_ptr(A[tx, 0], "r", 3), 3)
            T.ptx_wait_group(0)
            T.copy(S, B)

    return main
