# ENV: TILESCALE_CUDA_ARCH=sm_90
# ARGS: compile FILE --entry main --target cuda --dump-after verify_lowered
# A tensor-core T.gemm under thread-dependent control flow (per-thread code
# after partition_threads): refused by pass verify_lowered with the gemm's
# file:line:col (session 9; the check was the CUDA printer's, same message),
# so --dump-after verify_lowered already reports it.
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "float16")
        B_s = T.alloc_shared((32, 64), "float16")
        C_l = T.alloc_fragment((64, 64), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.clear(C_l)
        tx = T.get_thread_binding()
        if tx % 2 == 0:
            T.gemm(A_s, B_s, C_l)
        T.copy(C_l, C)
