# T.Scale("warp") and T.Scale("warpgroup") with a T.gemm of the unit's own
# tile (issue 6, part C; TileScale's README: "the following T.gemm
# represents a warp GEMM, which executes on all warps in parallel", and its
# warpgroups splitting K with T.view).  Each unit runs the body as a role of
# its threads (a warp's 32, a warpgroup's 128), so its T.gemm is done by
# that unit's warps alone (mma.sync on the unit's fragment on CUDA), and
# T.view of a block tile is the unit's part of it (T.FullRow: its rows,
# T.FullCol: its columns).
#   tilescale run examples/scale_gemm.py --entry warp_gemm --check-against warp_gemm_ref
#   tilescale run examples/scale_gemm.py --entry wg_gemm --check-against wg_gemm_ref
import tilelang.language as T

def warp_gemm(M=64, N=16, K=32):
    # warp w of the 4 computes rows [16 w, 16 w + 16) of A @ B into its own fragment
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((K, N), "float16")
            C_s = T.alloc_shared((M, N), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            with T.Scale("warp") as (w, nw):
                acc = T.alloc_fragment((M // 4, N), "float32")
                T.clear(acc)
                T.gemm(T.view(A_s, layout=T.FullRow), B_s, acc)
                T.copy(acc, T.view(C_s, layout=T.FullRow))
            T.copy(C_s, C)

    return main


def warp_gemm_ref(M=64, N=16, K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=1) as bx:
            for i in T.serial(M):
                for j in T.serial(N):
                    C[i, j] = 0.0
                    for k in T.serial(K):
                        C[i, j] = C[i, j] + T.cast(A[i, k], "float32") * T.cast(B[k, j], "float32")

    return main


def wg_gemm(M=64, N=64, K=64):
    # warpgroup g of the 2 multiplies its half of K: C[g] = A[:, K/2 g:] @ B[K/2 g:, :] (its own fragment)
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((2, M, N), "float32")):
        with T.Kernel(1, threads=256) as bx:
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((K, N), "float16")
            T.copy(A, A_s)
            T.copy(B, B_s)
            with T.Scale("warpgroup") as (wg, nwg):
                acc = T.alloc_fragment((M, N), "float32")
                T.clear(acc)
                T.gemm(T.view(A_s, layout=T.FullCol), T.view(B_s, layout=T.FullRow), acc)
                T.copy(acc, C[wg, 0, 0])

    return main


def wg_gemm_ref(M=64, N=64, K=64):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((2, M, N), "float32")):
        with T.Kernel(1, threads=1) as bx:
            for g in T.serial(2):
                for i in T.serial(M):
                    for j in T.serial(N):
                        C[g, i, j] = 0.0
                        for k in T.serial(K // 2):
                            C[g, i, j] = C[g, i, j] + T.cast(A[i, g * (K // 2) + k], "float32") * T.cast(B[g * (K // 2) + k, j], "float32")

    return main
