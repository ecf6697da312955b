# ARGS: compile FILE --entry varlen_rows -D B=3 -D L=16 -D N=32 --target cuda --dump-after insert_sync
# insert_sync on stores at an offset read from memory (the variable-length
# attention examples: q_start = cu_seqlens[bz], then Output[q_start + i, ...]):
# offs is never written by the kernel and is read at a block-uniform index, so
# the two sides of a store compared across threads read the same value there
# and cancel; as an unknown per access, it made every such store "a race
# inside one thread range".  Also a store that every thread row makes to the
# same element (split-K: all rows of a 2-D thread block store the row sum they
# all hold), the program's own write-write race that no barrier orders: kept,
# as CUDA and TileLang keep it.  And a store at an offset held in a T.alloc_var
# that uniform code sets (every thread holds the same value at a time: the
# offset cancels between two threads of one store).  tests/unit/
# test_interp_examples.c runs the three thread by thread against the C target.
import tilelang
import tilelang.language as T


@tilelang.jit
def varlen_rows(B, L, N, block_L=8):
    @T.prim_func
    def main(
        A: T.Tensor((B * L, N), "float32"),
        offs: T.Tensor((B,), "int32"),
        O: T.Tensor((B * L + 4, N), "float32"),
    ):
        with T.Kernel(T.ceildiv(L, block_L), B, threads=64) as (bx, bz):
            start = T.floormod(offs[bz], 4) + bz * L
            S = T.alloc_shared((block_L, N), "float32")
            T.copy(A[bz * L + bx * block_L, 0], S)
            for i, j in T.Parallel(block_L, N):
                O[start + bx * block_L + i, j] = S[block_L - 1 - i, j] * 2.0

    return main


@tilelang.jit
def splitk_rows(N, K, block_N=16, block_K=8):
    @T.prim_func
    def main(A: T.Tensor((K,), "float32"), W: T.Tensor((N, K), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bn:
            part = T.alloc_fragment((block_N, block_K), "float32")
            acc = T.alloc_fragment((block_N, block_K), "float32")
            row = T.alloc_fragment((block_N,), "float32")
            T.clear(acc)
            for bk in T.serial(T.ceildiv(K, block_K)):
                for i, k in T.Parallel(block_N, block_K):
                    part[i, k] = A[bk * block_K + k] * W[bn * block_N + i, bk * block_K + k]
                for i, k in T.Parallel(block_N, block_K):
                    acc[i, k] += part[i, k]
            T.reduce_sum(acc, row, dim=1)
            for i, k in T.Parallel(block_N, block_K):
                C[bn * block_N + i] = row[i]

    return main


@tilelang.jit
def var_offset_rows(N, block=32):
    # a T.alloc_var set in uniform code (one value for every thread at a time)
    # in the indices of a store inside a thread range
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), offs: T.Tensor((4,), "int32"), O: T.Tensor((2, N), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
            S = T.alloc_shared((block + 8,), "float32")
            off = T.alloc_var("int32")
            for k in T.serial(2):
                off = k * 4 + T.floormod(offs[bx % 4], 4)
                for i in T.Parallel(block):
                    S[off + i] = A[bx * block + i] * (k + 1)
                for i in T.Parallel(block):
                    O[k, bx * block + i] = S[off + block - 1 - i]

    return main
