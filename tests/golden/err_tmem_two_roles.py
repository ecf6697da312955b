# ARGS: compile FILE --entry main --target cuda --emit cuda
# ENV: TILESCALE_CUDA_ARCH=sm_90a
# A tensor-memory tile written by one thread role and multiplied by another
# (TileLang's warp-specialized sm100 flash attention): on targets without
# tensor memory pass lower_tmem keeps tiles in registers, which cannot
# carry one from the threads [0, 128) to [128, 160): refused at the second
# role's use, naming both.
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((128, 64), "bfloat16"), B: T.Tensor((64, 64), "bfloat16"), C: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=256) as bx:
        B_s = T.alloc_shared((64, 64), "bfloat16")
        a_l = T.alloc_fragment((128, 64), "bfloat16")
        a_tm = T.alloc_tmem([128, 64], "bfloat16")
        c_tm = T.alloc_tmem([128, 64], "float32")
        c_l = T.alloc_fragment((128, 64), "float32")
        ready = T.alloc_barrier([128, 1])
        tid = T.get_thread_binding()
        if tid < 128:
            T.copy(A, a_l)
            T.copy(a_l, a_tm)
            T.mbarrier_arrive(ready[0])
        elif tid < 160:
            T.copy(B, B_s)
            T.mbarrier_wait_parity(ready[0], 0)
            T.tcgen05_gemm(a_tm, B_s, c_tm, mbar=ready[1], clear_accum=True)
        if tid < 128:
            T.mbarrier_wait_parity(ready[1], 0)
            T.copy(c_tm, c_l)
            T.copy(c_l, C)
