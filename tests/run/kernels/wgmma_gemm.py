# GEMMs for the wgmma path (doc/HOPPER.md; tests/unit/test_wgmma.c): the
# transposed operand forms (K-major B, MN-major A), and T.wgmma_gemm with
# T.wait_wgmma (TileLang's asynchronous issue: on sm_90a's wgmma the gemms
# issue without waiting and the wait is the user's; elsewhere T.gemm).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemm_tb(M, N, K, block_M=128, block_N=128, block_K=64, dtype="float16", threads=128, num_stages=2):
    # C = A @ B^T, B stored N x K (K-major: wgmma's default B)
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_N, block_K), dtype)
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[bx * block_N, k * block_K], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=True)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def gemm_ta(M, N, K, block_M=64, block_N=64, block_K=32, dtype="float16", threads=128):
    # C = A^T @ B, A stored K x M (MN-major A)
    @T.prim_func
    def main(A: T.Tensor((K, M), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_s = T.alloc_shared((block_K, block_M), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_l)
            for k in T.serial(T.ceildiv(K, block_K)):
                T.copy(A[k * block_K, by * block_M], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l, transpose_A=True)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def gemm_async(M, N, K, block_M=64, block_N=64, block_K=64, dtype="float16", threads=128):
    # two halves of each K tile issued with T.wgmma_gemm, one T.wait_wgmma(0)
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A0 = T.alloc_shared((block_M, block_K // 2), dtype)
            A1 = T.alloc_shared((block_M, block_K // 2), dtype)
            B0 = T.alloc_shared((block_N, block_K // 2), dtype)
            B1 = T.alloc_shared((block_N, block_K // 2), dtype)
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_l)
            for k in T.serial(T.ceildiv(K, block_K)):
                T.copy(A[by * block_M, k * block_K], A0)
                T.copy(A[by * block_M, k * block_K + block_K // 2], A1)
                T.copy(B[bx * block_N, k * block_K], B0)
                T.copy(B[bx * block_N, k * block_K + block_K // 2], B1)
                T.wgmma_gemm(A0, B0, C_l, transpose_B=True)
                T.wgmma_gemm(A1, B1, C_l, transpose_B=True)
                T.wait_wgmma(0)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main


@T.macro
def store_sum(C0, C1, C, r0, c0, M, N):
    # C[r0:, c0:] = C0 + C1 (inside C's M x N), through shared tiles: an
    # element-wise use of an accumulator would keep it on mma.sync
    # (lower_gemm_cuda.c)
    S0 = T.alloc_shared(C0.shape, "float32")
    S1 = T.alloc_shared(C1.shape, "float32")
    T.copy(C0, S0)
    T.copy(C1, S1)
    for i, j in T.Parallel(C0.shape[0], C0.shape[1]):
        if r0 + i < M and c0 + j < N:
            C[r0 + i, c0 + j] = S0[i, j] + S1[i, j]


@tilelang.jit(out_idx=[-1])
def gemm_async_pipe(M, N, K, block_M=64, block_N=64, block_K=64, dtype="float16", threads=128):
    # two accumulators, each gemm left pending across the other's issue:
    # T.wait_wgmma(1) after a gemm completes the other accumulator's group
    # (of this or the previous iteration), whose tiles the next copy
    # overwrites; T.wait_wgmma(0) after the loop completes the last one.
    # The list each wait completes is pass wgmma_waits' (golden
    # ir_wgmma_waits: C1, C0, then C1)
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A0 = T.alloc_shared((block_M, block_K // 2), dtype)
            A1 = T.alloc_shared((block_M, block_K // 2), dtype)
            B0 = T.alloc_shared((block_N, block_K // 2), dtype)
            B1 = T.alloc_shared((block_N, block_K // 2), dtype)
            C0 = T.alloc_fragment((block_M, block_N), "float32")
            C1 = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C0)
            T.clear(C1)
            for k in T.serial(T.ceildiv(K, block_K)):
                T.copy(A[by * block_M, k * block_K], A0)
                T.copy(B[bx * block_N, k * block_K], B0)
                T.wgmma_gemm(A0, B0, C0, transpose_B=True)
                T.wait_wgmma(1)
                T.copy(A[by * block_M, k * block_K + block_K // 2], A1)
                T.copy(B[bx * block_N, k * block_K + block_K // 2], B1)
                T.wgmma_gemm(A1, B1, C1, transpose_B=True)
                T.wait_wgmma(1)
            T.wait_wgmma(0)
            store_sum(C0, C1, C, by * block_M, bx * block_N, M, N)

    return main


@tilelang.jit(out_idx=[-1])
def gemm_async_branch(M, N, K, block_M=64, block_N=64, block_K=32, dtype="float16", threads=128):
    # K tiles alternate between two accumulators (a run-time branch, each
    # arm its own tiles): pass wgmma_waits joins both arms, so the wait(0)s
    # (at the top of the loop, after it) may complete either accumulator and
    # list both, and the wait(1) after the branch, with at most one group
    # pending, none (golden ir_wgmma_waits_branch)
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A0 = T.alloc_shared((block_M, block_K), dtype)
            A1 = T.alloc_shared((block_M, block_K), dtype)
            B0 = T.alloc_shared((block_N, block_K), dtype)
            B1 = T.alloc_shared((block_N, block_K), dtype)
            C0 = T.alloc_fragment((block_M, block_N), "float32")
            C1 = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C0)
            T.clear(C1)
            for k in T.serial(T.ceildiv(K, block_K)):
                T.wait_wgmma(0)
                if k % 2 == 0:
                    T.copy(A[by * block_M, k * block_K], A0)
                    T.copy(B[bx * block_N, k * block_K], B0)
                    T.wgmma_gemm(A0, B0, C0, transpose_B=True)
                else:
                    T.copy(A[by * block_M, k * block_K], A1)
                    T.copy(B[bx * block_N, k * block_K], B1)
                    T.wgmma_gemm(A1, B1, C1, transpose_B=True)
                T.wait_wgmma(1)
            T.wait_wgmma(0)
            store_sum(C0, C1, C, by * block_M, bx * block_N, M, N)

    return main


@tilelang.jit(out_idx=[-1])
def gemm_tb_ref(M, N, K, dtype="float16"):
    # naive C = A @ B^T (the reference of gemm_tb and gemm_async)
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(M, threads=1) as i:
            acc = T.alloc_var("float32")
            for j in T.serial(N):
                acc = 0
                for k in T.serial(K):
                    acc += T.cast(A[i, k], "float32") * T.cast(B[j, k], "float32")
                C[i, j] = acc

    return main


@tilelang.jit(out_idx=[-1])
def gemm_ta_ref(M, N, K, dtype="float16"):
    # naive C = A^T @ B (the reference of gemm_ta)
    @T.prim_func
    def main(A: T.Tensor((K, M), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(M, threads=1) as i:
            acc = T.alloc_var("float32")
            for j in T.serial(N):
                acc = 0
                for k in T.serial(K):
                    acc += T.cast(A[k, i], "float32") * T.cast(B[k, j], "float32")
                C[i, j] = acc

    return main
