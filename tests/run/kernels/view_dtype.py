# Views of another dtype (T.view(buf, shape=, dtype=)): the same bytes read
# and written as elements of that dtype, moved as stored bits (resolve_views:
# integer loads and stores of the base's element width, reinterpreted where
# a value is used).  Each kernel against a naive one that glues the bits by
# hand with integer shifts (tests/run/view_dtype.sh; the CUDA passes and the
# thread-level interpreter in tests/unit/test_interp_examples.c).  Inputs
# are random 16-bit patterns with every eighth one forced to an exponent of
# all ones, so that bfloat16 and float32 NaNs of every payload (signalling
# ones included) pass through the views and must come out bit for bit.
import tilelang
import tilelang.language as T


# uint16 bits -> a bfloat16 shared tile (through a uint16 view) -> its float32
# view copied into the float32 view of a float16 tile (view to view: integers
# only) -> out through a uint16 view; and the float32 words used as values.
@tilelang.jit(out_idx=[1, 2])
def bits_copy(M=64, N=64, block_M=32):
    @T.prim_func
    def main(X: T.Tensor((M, N), "uint16"), Y: T.Tensor((M, N), "uint16"), Z: T.Tensor((M, N // 2), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            b = T.alloc_shared((block_M, N), "bfloat16")
            h = T.alloc_shared((block_M, N), "float16")
            bu = T.view(b, dtype="uint16")
            bf = T.view(b, shape=[block_M, N // 2], dtype="float32")
            hf = T.view(h, shape=[block_M, N // 2], dtype="float32")
            hu = T.view(h, dtype="uint16")
            for i, j in T.Parallel(block_M, N):
                bu[i, j] = X[bx * block_M + i, j] | T.if_then_else(j % 8 == 1, T.uint16(0x7f80), T.uint16(0))
            for i, j in T.Parallel(block_M, N // 2):
                hf[i, j] = bf[i, j]
            for i, j in T.Parallel(block_M, N):
                Y[bx * block_M + i, j] = hu[i, j]
            for i, j in T.Parallel(block_M, N // 2):
                Z[bx * block_M + i, j] = T.if_then_else(T.isnan(hf[i, j]), -1.0, hf[i, j] * 2.0)

    return main


@tilelang.jit(out_idx=[1, 2])
def bits_copy_naive(M=64, N=64, block_M=32):
    @T.prim_func
    def main(X: T.Tensor((M, N), "uint16"), Y: T.Tensor((M, N), "uint16"), Z: T.Tensor((M, N // 2), "float32")):
        with T.Kernel(M, threads=1) as i:
            for j in T.serial(N):
                Y[i, j] = X[i, j] | T.if_then_else(j % 8 == 1, T.uint16(0x7f80), T.uint16(0))
            for j in T.serial(N // 2):
                lo = T.cast(Y[i, 2 * j], "uint32")
                hi = T.cast(Y[i, 2 * j + 1], "uint32")
                v = T.reinterpret(lo | (hi << 16), "float32")
                Z[i, j] = T.if_then_else(T.isnan(v), -1.0, v * 2.0)

    return main


# A float32 tile read through a narrower (uint16) view: the halves of each
# word, low half first.
@tilelang.jit(out_idx=[1])
def narrow_read(M=32, N=48):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), H: T.Tensor((M, 2 * N), "uint16")):
        with T.Kernel(1, threads=128) as bx:
            s = T.alloc_shared((M, N), "float32")
            su = T.view(s, shape=[M, 2 * N], dtype="uint16")
            T.copy(A, s)
            for i, j in T.Parallel(M, 2 * N):
                H[i, j] = su[i, j]

    return main


@tilelang.jit(out_idx=[1])
def narrow_read_naive(M=32, N=48):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), H: T.Tensor((M, 2 * N), "uint16")):
        with T.Kernel(M, threads=1) as i:
            for j in T.serial(N):
                u = T.reinterpret(A[i, j], "uint32")
                H[i, 2 * j] = T.cast(u & 0xFFFF, "uint16")
                H[i, 2 * j + 1] = T.cast(u >> 16, "uint16")

    return main


# TileLang's sparse MLA backward pattern: a bfloat16 shared tile reused as a
# float32 scratch of half the rows for an accumulator on its way out.
@tilelang.jit(out_idx=[2])
def scratch_reuse(M=64, K=32, N=64, block_M=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            a = T.alloc_shared((block_M, K), "bfloat16")
            b = T.alloc_shared((K, N), "bfloat16")
            big = T.alloc_shared((2 * block_M, N), "bfloat16")
            acc = T.alloc_fragment((block_M, N), "float32")
            scratch = T.view(big, shape=[block_M, N], dtype="float32")
            T.copy(A[bx * block_M, 0], a)
            T.copy(B, b)
            T.gemm(a, b, acc, clear_accum=True)
            T.copy(acc, scratch)
            for i, j in T.Parallel(block_M, N):
                C[bx * block_M + i, j] = scratch[i, j] + 1.0

    return main


@tilelang.jit(out_idx=[2])
def scratch_reuse_naive(M=64, K=32, N=64, block_M=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(M, threads=1) as i:
            for j in T.serial(N):
                acc = T.alloc_var("float32")
                acc = 0.0
                for k in T.serial(K):
                    acc += T.cast(A[i, k], "float32") * T.cast(B[k, j], "float32")
                C[i, j] = acc + 1.0

    return main
