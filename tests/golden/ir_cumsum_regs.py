# ARGS: compile FILE --entry cumsum_rows -D M=40 -D N=256 --target cuda --dump-after layout_inference
# T.cumsum in registers (issue 5 E): along the rows of a warp-rows fragment,
# each thread scans its own 4 columns, the 32 (or L) lanes of a row scan
# their totals by butterfly shuffles (shfl_xor; the partner's total goes
# into the prefix of the upper half), and a carry runs over the row's
# chunks; reverse=True the same from the end.  No shared memory, no
# barrier.  tests/unit/test_interp_examples.c runs these thread by thread
# against the C target (forward and reverse, in place and into another
# fragment, rows of 32 and 16 lanes, partial tiles).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def cumsum_rows(M, N, bm=16, reverse=False):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            F = T.alloc_fragment((bm, N), "float32")
            T.copy(A[bx * bm, 0], F)
            T.cumsum(F, dim=1, reverse=reverse)
            T.copy(F, B[bx * bm, 0])

    return main


@tilelang.jit(out_idx=[1])
def cumsum_into(M, N, bm=16, reverse=False):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            F = T.alloc_fragment((bm, N), "float32")
            G = T.alloc_fragment((bm, N), "float32")
            T.copy(A[bx * bm, 0], F)
            T.cumsum(F, G, dim=1, reverse=reverse)
            for i, j in T.Parallel(bm, N):
                G[i, j] = G[i, j] - F[i, j]
            T.copy(G, B[bx * bm, 0])

    return main
