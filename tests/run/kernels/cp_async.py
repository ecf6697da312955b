# TileLang's explicit asynchronous copies (tilelang/language: T.access_ptr,
# T.ptx_cp_async, T.ptx_commit_group, T.ptx_wait_group,
# T.cp_async_barrier_noinc), as deepseek_mla's warp-specialized decode and
# deepseek_v32's sparse MLA write them: each producer thread copies 4, 8 or
# 16 bytes from global to shared memory and hands them over through an
# mbarrier arrival made when they land, or waits for its groups.  Checked
# against naive kernels by tests/run/cp_async.sh (C target) and
# bench/cpasync_gpu_check.sh (CUDA).
import tilelang
import tilelang.language as T


# Warp group 1 loads A and B tiles row by row with cp.async (vec elements a
# copy), arriving on `full` when its copies have landed; warp group 0
# multiplies.  Rows of A past M and of B past N are predicated off (zeros).
@tilelang.jit(out_idx=[-1])
def ws_cp_async(M=256, N=256, K=256, block_M=64, block_N=64, block_K=64, vec=8, dtype="float16",
                accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((2, block_M, block_K), dtype)
            B_shared = T.alloc_shared((2, block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            full = T.alloc_barrier(arrive_count=[128, 128])
            free = T.alloc_barrier(arrive_count=[128, 128])
            tx = T.get_thread_binding()
            if tx >= 128:
                for k in T.serial(T.ceildiv(K, block_K)):
                    s = k % 2
                    T.barrier_wait(free[s], ((k // 2) & 1) ^ 1)
                    for r in T.serial(block_M * block_K // vec // 128):
                        e = (r * 128 + tx - 128) * vec
                        T.ptx_cp_async(T.access_ptr(A_shared[s, e // block_K, e % block_K], "w", vec),
                                       T.access_ptr(A[by * block_M + e // block_K, k * block_K + e % block_K], "r", vec),
                                       vec, by * block_M + e // block_K < M)
                    for r in T.serial(block_N * block_K // vec // 128):
                        e = (r * 128 + tx - 128) * vec
                        T.ptx_cp_async(T.access_ptr(B_shared[s, e // block_K, e % block_K], "w", vec),
                                       T.access_ptr(B[bx * block_N + e // block_K, k * block_K + e % block_K], "r", vec),
                                       vec, predicate=bx * block_N + e // block_K < N)
                    T.cp_async_barrier_noinc(full[s])
            else:
                T.clear(C_local)
                for k in T.serial(T.ceildiv(K, block_K)):
                    s = k % 2
                    T.barrier_wait(full[s], (k // 2) & 1)
                    T.gemm(A_shared[s, :, :], B_shared[s, :, :], C_local, transpose_B=True)
                    T.barrier_arrive(free[s])
                T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def matmul_nt_naive(M=256, N=256, K=256, block_M=64, block_N=64, block_K=64, vec=8, dtype="float16",
                    accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(M, threads=1) as i:
            for j in T.serial(N):
                acc = T.alloc_var(accum_dtype)
                acc = 0.0
                for k in T.serial(K):
                    acc += T.cast(A[i, k], accum_dtype) * T.cast(B[j, k], accum_dtype)
                C[i, j] = acc

    return main


# Gathered rows (deepseek_v32's sparse loads): each block copies the rows
# Idx[b, :] of X into shared memory with cp.async in groups of `per` copies,
# committing each group and waiting for all of them, then every thread reads
# rows another thread copied (insert_sync's barrier after the wait) and
# writes them out reversed, scaled by 2.  Indices out of range are
# predicated off: their rows read zeros.
@tilelang.jit(out_idx=[-1])
def gather_groups(R=1024, D=64, S=32, G=16, vec=4, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((R, D), dtype), Idx: T.Tensor((G, S), "int32"), Y: T.Tensor((G, S, D), dtype)):
        with T.Kernel(G, threads=128) as b:
            T_shared = T.alloc_shared((S, D), dtype)
            tx = T.get_thread_binding()
            for r in T.serial(S * D // vec // 128):
                e = (r * 128 + tx) * vec
                row = Idx[b, e // D]
                T.ptx_cp_async(T.access_ptr(T_shared[e // D, e % D], "w", vec),
                               T.access_ptr(X[row % R, e % D], "r", vec), vec, row >= 0 and row < R)
                T.ptx_commit_group()
            T.ptx_wait_group(0)
            for i, j in T.Parallel(S, D):
                Y[b, i, j] = T_shared[S - 1 - i, D - 1 - j] * 2

    return main


@tilelang.jit(out_idx=[-1])
def gather_naive(R=1024, D=64, S=32, G=16, vec=4, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((R, D), dtype), Idx: T.Tensor((G, S), "int32"), Y: T.Tensor((G, S, D), dtype)):
        with T.Kernel(G, threads=1) as b:
            for i in T.serial(S):
                row = Idx[b, S - 1 - i]
                for j in T.serial(D):
                    if row >= 0 and row < R:
                        Y[b, i, j] = X[row, D - 1 - j] * 2
                    else:
                        Y[b, i, j] = 0

    return main


# deepseek_v32's sparse MLA producer pattern: the 8 threads that copy one
# gathered row each store the row's validity flag (one value: it depends on
# the thread only through the row), test it right after (pass forward_stores:
# each reads its own store) and copy their part of the row only when valid;
# after the wait every thread reads flags and rows others wrote.  insert_sync
# accepts the 8 stores of one flag (sync_same_value.c).
@tilelang.jit(out_idx=[-1])
def gather_flags(R=1024, D=64, S=64, G=8, dtype="float16"):
    @T.prim_func
    def main(X: T.Tensor((R, D), dtype), Idx: T.Tensor((G, S), "int32"), Y: T.Tensor((G, S, D), dtype)):
        with T.Kernel(G, threads=128) as b:
            T_shared = T.alloc_shared((S, D), dtype)
            valid = T.alloc_shared((S,), "bool")
            row = T.alloc_var("int32")
            tx = T.get_thread_binding()
            for r in T.serial(S // 16):
                row = Idx[b, r * 16 + tx // 8]
                valid[r * 16 + tx // 8] = row >= 0 and row < R
                if valid[r * 16 + tx // 8]:
                    for u in T.serial(D // 64):
                        T.ptx_cp_async(T.access_ptr(T_shared[r * 16 + tx // 8, 64 * u + tx % 8 * 8], "w", 8),
                                       T.access_ptr(X[row, 64 * u + tx % 8 * 8], "r", 8), 8)
            T.ptx_commit_group()
            T.ptx_wait_group(0)
            for i, j in T.Parallel(S, D):
                Y[b, i, j] = T.if_then_else(valid[i], T_shared[i, j] * 2, -1)

    return main


@tilelang.jit(out_idx=[-1])
def gather_flags_naive(R=1024, D=64, S=64, G=8, dtype="float16"):
    @T.prim_func
    def main(X: T.Tensor((R, D), dtype), Idx: T.Tensor((G, S), "int32"), Y: T.Tensor((G, S, D), dtype)):
        with T.Kernel(G, threads=1) as b:
            for i in T.serial(S):
                row = Idx[b, i]
                for j in T.serial(D):
                    if row >= 0 and row < R:
                        Y[b, i, j] = X[row, j] * 2
                    else:
                        Y[b, i, j] = -1

    return main


# gather_flags with the copies in a branch of the thread index, as the sparse
# MLA producers write it (`if tx >= 64:`): the flag's store and its test are
# per-thread code of one thread range, and each thread's test reads its own
# store (pass forward_stores).
@tilelang.jit(out_idx=[-1])
def gather_flags_branch(R=1024, D=64, S=64, G=8, dtype="float16"):
    @T.prim_func
    def main(X: T.Tensor((R, D), dtype), Idx: T.Tensor((G, S), "int32"), Y: T.Tensor((G, S, D), dtype)):
        with T.Kernel(G, threads=128) as b:
            T_shared = T.alloc_shared((S, D), dtype)
            valid = T.alloc_shared((S,), "bool")
            row = T.alloc_var("int32")
            tx = T.get_thread_binding()
            if tx >= 64:
                for r in T.serial(S // 8):
                    row = Idx[b, r * 8 + (tx - 64) // 8]
                    valid[r * 8 + (tx - 64) // 8] = row >= 0 and row < R
                    if valid[r * 8 + (tx - 64) // 8]:
                        for u in T.serial(D // 64):
                            T.ptx_cp_async(T.access_ptr(T_shared[r * 8 + (tx - 64) // 8, 64 * u + (tx - 64) % 8 * 8], "w", 8),
                                           T.access_ptr(X[row, 64 * u + (tx - 64) % 8 * 8], "r", 8), 8)
                T.ptx_commit_group()
                T.ptx_wait_group(0)
            for i, j in T.Parallel(S, D):
                Y[b, i, j] = T.if_then_else(valid[i], T_shared[i, j] * 2, -1)

    return main
