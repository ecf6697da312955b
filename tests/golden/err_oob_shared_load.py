# ARGS: run FILE --entry shift -D n=8 --seed 1 --threads 1
# Issue 9 D: a read one element past a shared buffer (S[i + 1] for i = n-1)
# is reported with the buffer's scope, name and extent, not read from
# whatever lies beyond it in the block's scratch memory.  (The read sits
# under a condition that holds at run time, so that it reaches the run-time
# check: unconditional, the pass check_bounds refuses it at compile time,
# as err_fragment_oob shows.)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def shift(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            S = T.alloc_shared((n,), "float32")
            T.copy(A, S)
            for i in T.Parallel(n):
                if A[i] == A[i]:
                    B[i] = S[i + 1]

    return main
