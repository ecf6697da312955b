# ARGS: compile FILE --entry main --target c --emit ir --dump-after lower_tmem
# Pass lower_tmem (doc/LANGUAGE.md "Tensor memory"), portable branch: the
# tensor-memory tiles acc and p become fragments; each T.tcgen05_gemm is a
# gemm followed by mbarrier_arrive_one on its mbar (none for mbar=None);
# the run-time clear_accum (k == 0) is a fill of the accumulator under it;
# the program's waits stay as written.
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((64, 64), "bfloat16"), B: T.Tensor((64, 64), "bfloat16"), V: T.Tensor((64, 32), "bfloat16"),
         C: T.Tensor((64, 32), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "bfloat16")
        B_s = T.alloc_shared((64, 32), "bfloat16")
        V_s = T.alloc_shared((64, 32), "bfloat16")
        acc = T.alloc_tmem([64, 64], "float32")
        p = T.alloc_tmem([64, 64], "bfloat16")
        o = T.alloc_tmem([64, 32], "float32")
        bars = T.alloc_barrier([1, 1])
        s_l = T.alloc_fragment((64, 64), "float32")
        o_l = T.alloc_fragment((64, 32), "float32")
        for k in T.serial(2):
            T.copy(A[0, k * 32], A_s)
            T.copy(B[0, k * 32], B_s)
            T.tcgen05_gemm(A_s, B_s, acc, transpose_B=True, mbar=bars[0], clear_accum=k == 0)
            T.mbarrier_wait_parity(bars[0], k % 2)
        T.copy(acc, s_l)
        T.copy(s_l, p)
        T.copy(V, V_s)
        T.tcgen05_gemm(p, V_s, o, mbar=None, clear_accum=True)
        T.tcgen05_gemm(p, V_s, o, mbar=bars[1])
        T.mbarrier_wait_parity(bars[1], 0)
        T.copy(o, o_l)
        T.copy(o_l, C)
