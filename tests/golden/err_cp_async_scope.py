# ARGS: compile FILE --entry k --target c --emit c
# T.ptx_cp_async copies from global to shared memory only (PTX cp.async
# .shared.global): a shared source is refused at the call.
import tilelang.language as T


def k():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((64, 64), "float16")
            R = T.alloc_shared((64, 64), "float16")
            tx = T.get_thread_binding()
            T.ptx_cp_async(T.access_ptr(S[tx, 0], "w", 8), T.access_ptr(R[tx, 0], "r", 8), 8)
            T.copy(S, B)

    return main
