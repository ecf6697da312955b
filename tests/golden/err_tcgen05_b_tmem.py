# ARGS: compile FILE --entry main --target c --emit c
# T.tcgen05_gemm reads B from shared memory only (tcgen05.mma: A and C may
# be tensor memory): a tensor-memory B is refused where the call is.
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((64, 64), "bfloat16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 64), "bfloat16")
        b_tm = T.alloc_tmem([64, 64], "bfloat16")
        c_tm = T.alloc_tmem([64, 64], "float32")
        done = T.alloc_barrier(1)
        T.copy(A, A_s)
        T.tcgen05_gemm(A_s, b_tm, c_tm, mbar=done)
