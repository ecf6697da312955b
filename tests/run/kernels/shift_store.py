# A gemm accumulator stored in parts through a small shared buffer, as
# TileLang's sparse MLA backward stores its dKV accumulator: the nest that
# fills the buffer reads the fragment at its variables plus an offset that
# changes with a serial loop (acc[i + s * (M // parts), j]), so no fragment
# is indexed by the nest's own variables.  Layout inference rewrites such a
# nest over the fragment's indices (shift_nest) when every iteration that
# does anything stays inside the fragment:
#   guarded=1: T.Parallel(M, N) under `if i < M // parts` (the example's form);
#   guarded=0: T.Parallel(M // parts, N), no guard.
# split_store_view: the same through a float32 T.view of a bfloat16 shared
# tile (dsa_sparse_finetune's copy of the kernel): each float32 element is
# stored as two bfloat16 halves, whose base indices resolve_views writes per
# row so that insert_sync proves the threads' halves apart.
# tests/unit/test_interp_examples.c runs them thread by thread against the C
# target (fragments in registers, no shared copy of the accumulator).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def split_store(M, N, K, parts=2, guarded=1, threads=128):
    rows = M // parts

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            As = T.alloc_shared((M, K), "float16")
            Bs = T.alloc_shared((N, K), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            part = T.alloc_shared((rows, N), "float32")
            T.copy(A, As)
            T.copy(B, Bs)
            T.gemm(As, Bs, acc, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)
            for s in range(parts):
                if guarded:
                    for i, j in T.Parallel(M, N):
                        if i < rows:
                            part[i, j] = acc[i + s * rows, j] * (s + 1)
                else:
                    for i, j in T.Parallel(rows, N):
                        part[i, j] = acc[i + s * rows, j] * (s + 1)
                for i, j in T.Parallel(rows, N):
                    C[i + s * rows, j] = part[rows - 1 - i, j] + s

    return main


@tilelang.jit(out_idx=[2])
def split_store_view(M, N, K, parts=2, guarded=1, threads=128):
    rows = M // parts

    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((N, K), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            As = T.alloc_shared((M, K), "bfloat16")
            Bs = T.alloc_shared((N, K), "bfloat16")
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(A, As)
            T.copy(B, Bs)
            T.gemm(As, Bs, acc, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)
            part = T.view(Bs, shape=[rows, N], dtype="float32")  # Bs's bytes, once the gemm has read them
            for s in range(parts):
                if guarded:
                    for i, j in T.Parallel(M, N):
                        if i < rows:
                            part[i, j] = acc[i + s * rows, j] * (s + 1)
                else:
                    for i, j in T.Parallel(rows, N):
                        part[i, j] = acc[i + s * rows, j] * (s + 1)
                for i, j in T.Parallel(rows, N):
                    C[i + s * rows, j] = part[rows - 1 - i, j] + s

    return main
