# ARGS: compile FILE --entry cast_frag -D M=40 -D N=136 --target cuda --dump-after layout_inference
# Converting vector copies (issue 5): a T.copy between a float32 register
# tile and a float16 / bfloat16 tensor moves a thread's 4 consecutive
# elements as one vector copy that converts (vcopy<4>(..., float16->float32)):
# one 8-byte load unpacked lane by lane, and on the way out two paired
# conversions packed into one 8-byte store, instead of 4 scalar accesses.
# Partial tiles (136 = 2 x 64 + 8 columns, 40 = 2 x 16 + 8 rows) keep their
# per-vector predicate.  cast_mem does the same between shared and global
# memory (partition_threads' vector copies), with a misaligned shared view
# (off) that must stay element by element.
# tests/unit/test_interp_examples.c runs both kernels thread by thread
# against the C target.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def cast_frag(M, N, bm=16, bn=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            F = T.alloc_fragment((bm, bn), "float32")
            T.copy(A[by * bm, bx * bn], F)
            for i, j in T.Parallel(bm, bn):
                F[i, j] = F[i, j] * 1.1 - 0.3
            T.copy(F, B[by * bm, bx * bn])

    return main


@tilelang.jit(out_idx=[-1])
def cast_mem(M, N, bm=16, bn=64, off=0, sdt="float32", ddt="float16"):
    @T.prim_func
    def main(X: T.Tensor((M, N), sdt), Y: T.Tensor((M, N), ddt)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=64) as (bx, by):
            s = T.alloc_shared((bm, bn + off), ddt)
            t = T.alloc_shared((bm, bn), sdt)
            T.copy(X[by * bm, bx * bn], s[0:bm, off:off + bn])
            T.copy(s[0:bm, off:off + bn], t)
            T.copy(t, Y[by * bm, bx * bn])

    return main
