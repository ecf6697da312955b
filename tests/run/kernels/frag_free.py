# Fragments that no instruction fixes a layout for, and the patterns that
# used to leave every fragment of a kernel in shared memory (issue 8 part D,
# issue 5 part A).  tests/unit/test_interp_examples.c runs each through the
# CUDA passes in the thread-level interpreter against the C target, and
# checks that layout inference kept the fragments in registers:
#
#   row_sums       a row reduction's result (replicated over the lanes of a
#                  row) copied to global memory: one replica stores
#   transpose_gemm a fragment written transposed (Qt[k, s] = Q[s, k]) and
#                  read whole rows at a time by a float32 gemm lowered to
#                  loops: no use fixes its layout; it takes its loops' free
#                  layout and both loops reach it through shared copies
#   col_mask       a bool mask smaller than the block (cyclic, replicated)
#                  read by columns of an mma accumulator: a shared copy;
#                  full_col: T.GemmWarpPolicy.FullCol with more warps than
#                  the 32 columns take (8 x 8 > 32): as many warps on columns
#                  as fit (4), the rest on rows
#   over_budget    a fragment needing more than 255 registers per thread
#                  stays in shared memory; the others keep registers
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def row_sums(M=96, N=64, K=3, block_M=32, threads=128):
    @T.prim_func
    def main(X: T.Tensor((M, K * N), "float32"), Y: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            t = T.alloc_fragment((block_M, N), "float32")
            s = T.alloc_fragment((block_M,), "float32")
            T.clear(s)
            for k in T.serial(K):
                T.copy(X[bx * block_M, k * N], t)
                for i, j in T.Parallel(block_M, N):
                    t[i, j] = t[i, j] * (k + 1)
                T.reduce_sum(t, s, dim=1, clear=False)
            T.copy(s, Y[bx * block_M])

    return main


@tilelang.jit(out_idx=[2])
def transpose_gemm(S=64, DK=32, DV=32, threads=128):
    @T.prim_func
    def main(Q: T.Tensor((S, DK), "float32"), B: T.Tensor((DV, S), "float32"), C: T.Tensor((DK, DV), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            q = T.alloc_fragment((S, DK), "float32")
            qt = T.alloc_fragment((DK, S), "float32")
            b_s = T.alloc_shared((DV, S), "float32")
            c = T.alloc_fragment((DK, DV), "float32")
            T.copy(Q[0, 0], q)
            for i, j in T.Parallel(S, DK):
                q[i, j] = q[i, j] * 0.5
            for i, j in T.Parallel(S, DK):
                qt[j, i] = q[i, j]
            T.copy(B[0, 0], b_s)
            T.clear(c)
            T.gemm(qt, b_s, c, transpose_B=True)
            for i, j in T.Parallel(DK, DV):
                c[i, j] = c[i, j] + qt[i, j]
            T.copy(c, C[0, 0])

    return main


@tilelang.jit(out_idx=[3])
def col_mask(H=64, BS=32, D=64, limit=3, threads=128, full_col=False):
    @T.prim_func
    def main(
        Q: T.Tensor((H, D), "float16"),
        K: T.Tensor((BS, D), "float16"),
        Idx: T.Tensor((BS,), "int32"),
        O: T.Tensor((H, BS), "float32"),
    ):
        with T.Kernel(1, threads=threads) as bx:
            q_s = T.alloc_shared((H, D), "float16")
            k_s = T.alloc_shared((BS, D), "float16")
            mask = T.alloc_fragment((BS,), "bool")
            acc = T.alloc_fragment((H, BS), "float32")
            for j in T.Parallel(BS):
                mask[j] = Idx[j] <= limit
            T.copy(Q[0, 0], q_s)
            T.copy(K[0, 0], k_s)
            T.clear(acc)
            if full_col:
                T.gemm(q_s, k_s, acc, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
            else:
                T.gemm(q_s, k_s, acc, transpose_B=True)
            for i, j in T.Parallel(H, BS):
                acc[i, j] = T.if_then_else(mask[j], acc[i, j], -1.0)
            T.copy(acc, O[0, 0])

    return main


@tilelang.jit(out_idx=[1])
def over_budget(M=32, N=288, threads=32):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            big = T.alloc_fragment((M, N), "float32")
            small = T.alloc_fragment((M, 32), "float32")
            T.copy(X[0, 0], big)
            T.copy(X[0, 0], small)
            for i, j in T.Parallel(M, 32):
                small[i, j] = small[i, j] * 2.0
            for i, j in T.Parallel(M, N):
                big[i, j] = big[i, j] + small[i, j % 32]
            T.copy(big, Y[0, 0])

    return main


# plan_smem's dead-before-overwrite rule: a_s and b_s are used only inside the
# loop, each written whole (T.copy) before anything reads it in an iteration:
# their homes are the loop body, where their live ranges are apart, so they
# share bytes (with reuse forced; before, both were live over the whole loop).
# The transposed reads keep them in shared memory.
@tilelang.jit(out_idx=[2])
def loop_tiles(M=32, N=32, K=3, threads=128):
    @T.prim_func
    def main(X: T.Tensor((K, M, N), "float32"), Y: T.Tensor((K, M, N), "float32"), O: T.Tensor((K, M, N), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            a_s = T.alloc_shared((M, N), "float32")
            b_s = T.alloc_shared((M, N), "float32")
            o = T.alloc_fragment((M, N), "float32")
            for k in T.serial(K):
                T.copy(X[k, 0, 0], a_s)
                for i, j in T.Parallel(M, N):
                    o[i, j] = a_s[j, i] * 2.0
                T.copy(Y[k, 0, 0], b_s)
                for i, j in T.Parallel(M, N):
                    o[i, j] = o[i, j] + b_s[j, i]
                T.copy(o, O[k, 0, 0])

    return main
