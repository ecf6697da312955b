# T.make_tensor(ptr, shape, dtype): global tensors at addresses read at run
# time from pointer tables (T.Tensor([n], T.ptr)), as TileLang's grouped GEMM
# by pointers (examples/grouped_gemm/example_grouped_gemm_fwd_ptr.py) uses
# them: group g's A, B and C are separate allocations whose addresses the
# caller puts in A_ptrs[g], B_ptrs[g], C_ptrs[g].  A pointer table cannot be
# written as a .npy file, so tests/unit/test_make_tensor.c builds the tables
# through the C API and checks these kernels on the C target against a naive
# grouped GEMM; bench/cov7_gpu_check.sh runs them on a GPU.
import tilelang
import tilelang.language as T


# The example's kernel: row tiles of all groups in one grid dimension, each
# block finding its group from the tile offsets.
def grouped_ptr(sizes=(5, 9, 13), K=64, N=96, block_M=64, block_N=64, block_K=32, threads=128, dtype="float16"):
    count = len(sizes)
    max_M = max(sizes)
    offsets = [0]
    for s in sizes[:-1]:
        offsets.append(offsets[-1] + (s + block_M - 1) // block_M)
    total = sum((s + block_M - 1) // block_M for s in sizes)

    @T.prim_func
    def main(
        A_ptrs: T.Tensor([count], T.ptr),
        B_ptrs: T.Tensor([count], T.ptr),
        C_ptrs: T.Tensor([count], T.ptr),
        tile_offsets: T.Tensor([count], T.int32),
    ):
        with T.Kernel(total, T.ceildiv(N, block_N), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            g = T.alloc_var(T.int32)
            off = T.alloc_var(T.int32)
            g = 0
            off = 0
            for i in range(count):
                here = bx >= tile_offsets[i]
                g = T.if_then_else(here, i, g)
                off = T.if_then_else(here, tile_offsets[i], off)
            m0 = (bx - off) * block_M
            A = T.make_tensor(A_ptrs[g], (max_M, K), dtype)
            B = T.make_tensor(B_ptrs[g], (K, N), dtype)
            C = T.make_tensor(C_ptrs[g], (max_M, N), dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=1):
                T.copy(A[m0, ko * block_K], A_shared)
                T.copy(B[ko * block_K, by * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[m0, by * block_N])

    return main


# Element by element through one table of float32 rows: Y[g, j] = 2 * X_g[j] + g
# (a table of `count` vectors of n elements each), with the address re-read
# in a loop over the groups.
def scaled_rows(count=3, n=40):
    @T.prim_func
    def main(X_ptrs: T.Tensor([count], T.ptr), Y: T.Tensor((count, n), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for g in T.serial(count):
                X = T.make_tensor(X_ptrs[g], (n,), "float32")
                for j in T.Parallel(n):
                    Y[g, j] = X[j] * 2.0 + T.cast(g, "float32")

    return main
