# ARGS: compile FILE --entry two --target cuda --dump-after plan_smem -D n=256 -D bn=128
# ENV: TILESCALE_CUDA_ARCH=sm_90 TILESCALE_CUDA_SMEM_REUSE=1
# plan_smem (issue 5; reuse on with TILESCALE_CUDA_SMEM_REUSE=1 until checked on a GPU): every shared buffer gets its bytes in the block's
# dynamic shared memory, printed as smem[start, end) on its alloc, and the
# total as shared_memory.  S1 is dead once P is written and S2 is first
# written after that, so both take bytes [0, 512), and the pass adds the
# barrier before S2's copy (between the last reads of S1 by some threads
# and the first writes of S2 by others), which insert_sync had no reason
# to place.
import tilelang
import tilelang.language as T


@tilelang.jit
def two(n, bn):
    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32"),
             P: T.Tensor((n,), "float32"), Q: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, bn), threads=64) as bx:
            S1 = T.alloc_shared((bn,), "float32")
            S2 = T.alloc_shared((bn,), "float32")
            T.copy(X[bx * bn], S1)
            for i in T.Parallel(bn):
                P[bx * bn + i] = S1[bn - 1 - i] * 2
            T.copy(Y[bx * bn], S2)
            for i in T.Parallel(bn):
                Q[bx * bn + i] = S2[bn - 1 - i] + 1
    return main
