# T.gemm_sp (TileLang's 2:4 sparse GEMM, examples/gemm_sp): C = A @ B where
# A [M, K] is given compressed, A_sparse [M, K / 2] (the two kept values of
# each group of 4 along K) and E [M, K / e_factor] (their positions, 4 bits
# a group, natural row-major order: bits [1:0] the first, [3:2] the second;
# e_factor = the bits of E's dtype).  gemm_sp is the example's kernel
# (pipelined, rasterized; stage_c=True: C through shared memory as there); gemm_sp_naive decodes the metadata by hand in
# serial loops over global memory.  Any metadata is decoded the same way by
# both (a position equal to the first index takes the first value, else one
# equal to the second the second, else 0), so random E is a fair input.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemm_sp(M, N, K, e_dtype="int16", block_M=64, block_N=64, block_K=64, num_stages=2, threads=128,
            trans_b=False, policy=T.GemmWarpPolicy.Square, stage_c=False):
    e_factor = T.dtype(e_dtype).bits
    b_shape = (N, K) if trans_b else (K, N)
    b_tile = (block_N, block_K) if trans_b else (block_K, block_N)

    @T.prim_func
    def main(
        A_sparse: T.Tensor((M, K // 2), T.float16),
        E: T.Tensor((M, K // e_factor), e_dtype),
        B: T.Tensor(b_shape, T.float16),
        C: T.Tensor((M, N), T.float32),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K // 2), T.float16)
            E_shared = T.alloc_shared((block_M, block_K // e_factor), e_dtype)
            B_shared = T.alloc_shared(b_tile, T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            C_shared = T.alloc_shared((block_M, block_N), T.float32) if stage_c else None
            T.clear(C_local)
            if stage_c:  # the example's form: C through shared memory
                T.disable_warp_group_reg_alloc()
            T.use_swizzle(panel_size=10, enable=True)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A_sparse[by * block_M, k * block_K // 2], A_shared)
                T.copy(E[by * block_M, k * block_K // e_factor], E_shared)
                if trans_b:
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm_sp(A_shared, E_shared, B_shared, C_local, transpose_A=False, transpose_E=False,
                          transpose_B=trans_b, policy=policy)
            if stage_c:
                T.copy(C_local, C_shared)
                T.copy(C_shared, C[by * block_M, bx * block_N])
            else:
                T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def gemm_sp_naive(M, N, K, e_dtype="int16", block_M=64, block_N=64, block_K=64, num_stages=2, threads=128,
                  trans_b=False, policy=T.GemmWarpPolicy.Square, stage_c=False):
    e_factor = T.dtype(e_dtype).bits
    b_shape = (N, K) if trans_b else (K, N)

    @T.prim_func
    def main(
        A_sparse: T.Tensor((M, K // 2), T.float16),
        E: T.Tensor((M, K // e_factor), e_dtype),
        B: T.Tensor(b_shape, T.float16),
        C: T.Tensor((M, N), T.float32),
    ):
        with T.Kernel(M, threads=1) as r:
            row = T.alloc_local([K], T.float32)
            for g in T.serial(K // 4):
                word = T.alloc_var(T.int32)
                word = T.Cast(T.int32, E[r, g * 4 // e_factor])
                chunk = (word >> ((g % (e_factor // 4)) * 4)) & 15
                for p in T.serial(4):
                    row[g * 4 + p] = 0.0
                    if p == (chunk & 3):
                        row[g * 4 + p] = T.Cast(T.float32, A_sparse[r, g * 2])
                    elif p == ((chunk >> 2) & 3):
                        row[g * 4 + p] = T.Cast(T.float32, A_sparse[r, g * 2 + 1])
            for n in T.serial(N):
                acc = T.alloc_var(T.float32)
                acc = 0.0
                for kk in T.serial(K):
                    if trans_b:
                        acc = acc + row[kk] * T.Cast(T.float32, B[n, kk])
                    else:
                        acc = acc + row[kk] * T.Cast(T.float32, B[kk, n])
                C[r, n] = acc

    return main
