# Device views (T.view with T.FullRow / T.FullCol / T.Replica) in the style
# of TileScale's README: a kernel parameter is one rank's shard of a logical
# tensor, and tiles of the logical tensor are copied from whichever rank
# owns them.
#   ag_gemm_views:  C [P*M, N] = A_g @ B where A_g = T.view(A, layout=T.FullRow)
#                   is the row-split logical [P*M, K]: every tile of A_g is
#                   pulled from its owner (an all-gather GEMM by pulling).
#   tp_gemm_views:  K split over the ranks: A_g = T.view(A, FullCol) [M, P*KP],
#                   B_g = T.view(B, FullRow) [P*KP, N], C_g = T.view(C,
#                   Replica); each rank multiplies its own K range (tiles of
#                   the views that it owns), then T.allreduce(C_g).
#   tilescale run examples/distributed/views.py --entry ag_gemm_views --ranks 4 \
#       -D M=64 -D N=64 -D K=64 -D P=4 --check-against ag_gemm_views_ref
import tilelang
import tilelang.language as T


def ag_gemm_views(M, N, K, P, block_M=32, block_N=32, block_K=32, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((P * M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), P * M // block_M, threads=128) as (bx, by):
            with T.Scale("device") as (dev_id, dev_num):
                A_g = T.view(A, layout=T.FullRow)
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A_g[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main


def ag_gemm_views_ref(M, N, K, P, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((P, M, K), dtype), B: T.Tensor((P, K, N), dtype), C: T.Tensor((P, P * M, N), dtype)):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(P * M):
                for j in T.serial(N):
                    acc = T.alloc_var("float32")
                    acc = 0.0
                    for kk in T.serial(K):
                        acc = acc + T.cast(A[i // M, i % M, kk], "float32") * T.cast(B[r, kk, j], "float32")
                    C[r, i, j] = acc

    return main


def tp_gemm_views(M, N, KP, block_M=32, block_N=32, block_K=32, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, KP), dtype), B: T.Tensor((KP, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            with T.Scale("device") as (dev_id, dev_num):
                A_g = T.view(A, layout=T.FullCol)
                B_g = T.view(B, layout=T.FullRow)
                C_g = T.view(C, layout=T.Replica)
            with T.Scale("block"):
                A_s = T.alloc_shared((block_M, block_K), dtype)
                B_s = T.alloc_shared((block_K, block_N), dtype)
                C_l = T.alloc_fragment((block_M, block_N), "float32")
                T.clear(C_l)
                for k in T.Pipelined(T.ceildiv(KP, block_K), num_stages=2):
                    kg = dev_id * KP + k * block_K  # this rank's range of the logical K
                    T.copy(A_g[by * block_M, kg], A_s)
                    T.copy(B_g[kg, bx * block_N], B_s)
                    T.gemm(A_s, B_s, C_l)
                T.copy(C_l, C_g[by * block_M, bx * block_N])
            with T.Scale("device"):
                T.allreduce(C_g)

    return main


def tp_gemm_views_ref(M, N, KP, P, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((P, M, KP), dtype), B: T.Tensor((P, KP, N), dtype), C: T.Tensor((P, M, N), "float32")):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(M):
                for j in T.serial(N):
                    acc = T.alloc_var("float32")
                    acc = 0.0
                    for p in T.serial(P):
                        for k in T.serial(KP):
                            acc = acc + T.cast(A[p, i, k], "float32") * T.cast(B[p, k, j], "float32")
                    C[r, i, j] = acc

    return main
