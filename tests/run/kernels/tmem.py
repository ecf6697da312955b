# Blackwell tensor memory on targets without it (pass lower_tmem,
# doc/LANGUAGE.md "Tensor memory"): T.alloc_tmem tiles become register
# fragments, T.tcgen05_gemm a T.gemm followed by its one arrive on `mbar`.
# Each kernel has a naive reference below (tests/run/tmem.sh).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def tc_gemm(M, N, K, block_M=64, block_N=64, block_K=32, trans_B=True, dtype="bfloat16", threads=128, num_stages=2):
    # C = A @ B^T (B stored N x K) or A @ B, accumulated in tensor memory;
    # the gemm of K tile k is awaited on its mbarrier at parity k % 2, the
    # first one clears the accumulator (a run-time clear_accum)
    B_shape = (N, K) if trans_B else (K, N)
    B_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            a_tile = T.alloc_shared((block_M, block_K), dtype)
            b_tile = T.alloc_shared(B_tile, dtype)
            acc_tm = T.alloc_tmem([block_M, block_N], "float32")
            done = T.alloc_barrier(1)
            out = T.alloc_fragment((block_M, block_N), "float32")
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], a_tile)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], b_tile)
                else:
                    T.copy(B[k * block_K, bx * block_N], b_tile)
                T.tcgen05_gemm(a_tile, b_tile, acc_tm, transpose_B=trans_B, mbar=done, clear_accum=k == 0)
                T.mbarrier_wait_parity(done, k % 2)
            T.copy(acc_tm, out)
            T.copy(out, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def tc_gemm_two(M, N, K, block_M=64, block_N=64, block_K=32, dtype="bfloat16", threads=128):
    # two mbarriers in one array, the halves of each K tile issued without
    # waiting (mbar=None on the first: its completion is published by the
    # second), the accumulator read once at the end through a shared tile
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            a0 = T.alloc_shared((block_M, block_K // 2), dtype)
            a1 = T.alloc_shared((block_M, block_K // 2), dtype)
            b0 = T.alloc_shared((block_N, block_K // 2), dtype)
            b1 = T.alloc_shared((block_N, block_K // 2), dtype)
            acc_tm = T.alloc_tmem([block_M, block_N], "float32")
            bars = T.alloc_barrier([1, 1])
            out = T.alloc_fragment((block_M, block_N), "float32")
            out_s = T.alloc_shared((block_M, block_N), "float32")
            for k in T.serial(T.ceildiv(K, block_K)):
                T.copy(A[by * block_M, k * block_K], a0)
                T.copy(A[by * block_M, k * block_K + block_K // 2], a1)
                T.copy(B[bx * block_N, k * block_K], b0)
                T.copy(B[bx * block_N, k * block_K + block_K // 2], b1)
                T.tcgen05_gemm(a0, b0, acc_tm, False, True, clear_accum=k == 0, mbar=None)
                T.tcgen05_gemm(a1, b1, acc_tm, False, True, mbar=bars[k % 2])
                T.mbarrier_wait_parity(bars[k % 2], (k // 2) % 2)
            T.copy(acc_tm, out)
            T.copy(out, out_s)
            T.copy(out_s, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def gemm_ref(M, N, K, trans_B=True, dtype="bfloat16"):
    # naive C = A @ B^T or A @ B, one thread per row
    B_shape = (N, K) if trans_B else (K, N)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(M, threads=1) as i:
            s = T.alloc_var("float32")
            for j in T.serial(N):
                s = 0.0
                for kk in T.serial(K):
                    if trans_B:
                        s += T.cast(A[i, kk], "float32") * T.cast(B[j, kk], "float32")
                    else:
                        s += T.cast(A[i, kk], "float32") * T.cast(B[kk, j], "float32")
                C[i, j] = s

    return main


@tilelang.jit(out_idx=[3])
def tc_attn(batch, heads, seq_len, dim, is_causal, block_M=64, block_N=64, variant="ss", threads=128):
    # attention forward with the scores S and each tile's P.V in tensor
    # memory; variant "ts": P goes to tensor memory too and is the gemm's
    # A operand (a register A operand here), "ss": P goes through shared
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    shape = [batch, seq_len, heads, dim]
    ts = variant == "ts"

    @T.prim_func
    def main(
        Q: T.Tensor(shape, "bfloat16"),
        K: T.Tensor(shape, "bfloat16"),
        V: T.Tensor(shape, "bfloat16"),
        Output: T.Tensor(shape, "bfloat16"),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            q_s = T.alloc_shared([block_M, dim], "bfloat16")
            k_s = T.alloc_shared([block_N, dim], "bfloat16")
            v_s = T.alloc_shared([block_N, dim], "bfloat16")
            s_tm = T.alloc_tmem([block_M, block_N], "float32")
            pv_tm = T.alloc_tmem([block_M, dim], "float32")
            bar_s = T.alloc_barrier(1)
            bar_pv = T.alloc_barrier(1)
            if ts:
                p_op = T.alloc_tmem([block_M, block_N], "bfloat16")
            else:
                p_op = T.alloc_shared([block_M, block_N], "bfloat16")
            s = T.alloc_fragment([block_M, block_N], "float32")
            p = T.alloc_fragment([block_M, block_N], "bfloat16")
            o = T.alloc_fragment([block_M, dim], "float32")
            pv = T.alloc_fragment([block_M, dim], "float32")
            m = T.alloc_fragment([block_M], "float32")
            m_old = T.alloc_fragment([block_M], "float32")
            corr = T.alloc_fragment([block_M], "float32")
            rsum = T.alloc_fragment([block_M], "float32")
            l = T.alloc_fragment([block_M], "float32")

            T.copy(Q[bz, bx * block_M : (bx + 1) * block_M, by, :], q_s)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m, -T.infinity("float32"))
            n_tiles = T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N)) if is_causal else T.ceildiv(seq_len, block_N)
            for k in T.Pipelined(n_tiles, num_stages=1):
                T.copy(K[bz, k * block_N : (k + 1) * block_N, by, :], k_s)
                T.tcgen05_gemm(q_s, k_s, s_tm, transpose_B=True, mbar=bar_s, clear_accum=True)
                T.mbarrier_wait_parity(bar_s, k % 2)
                T.copy(s_tm, s)
                for i, j in T.Parallel(block_M, block_N):
                    keep = k * block_N + j < seq_len
                    if is_causal:
                        keep = keep and bx * block_M + i >= k * block_N + j
                    s[i, j] = T.if_then_else(keep, s[i, j], -T.infinity("float32"))
                T.copy(m, m_old)
                T.reduce_max(s, m, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    corr[i] = T.exp2(m_old[i] * scale - m[i] * scale)
                for i, j in T.Parallel(block_M, block_N):
                    s[i, j] = T.exp2(s[i, j] * scale - m[i] * scale)
                T.reduce_sum(s, rsum, dim=1)
                for i in T.Parallel(block_M):
                    l[i] = l[i] * corr[i] + rsum[i]
                for i, j in T.Parallel(block_M, dim):
                    o[i, j] *= corr[i]
                T.copy(s, p)
                T.copy(p, p_op)
                T.copy(V[bz, k * block_N : (k + 1) * block_N, by, :], v_s)
                T.tcgen05_gemm(p_op, v_s, pv_tm, mbar=bar_pv, clear_accum=True)
                T.mbarrier_wait_parity(bar_pv, k % 2)
                T.copy(pv_tm, pv)
                for i, j in T.Parallel(block_M, dim):
                    o[i, j] += pv[i, j]
            for i, j in T.Parallel(block_M, dim):
                o[i, j] /= l[i]
            T.copy(o, Output[bz, bx * block_M : (bx + 1) * block_M, by, :])

    return main


@tilelang.jit(out_idx=[3])
def attn_ref(batch, heads, seq_len, dim, is_causal):
    # naive attention, P rounded to bfloat16 before P.V as the kernel does
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    shape = [batch, seq_len, heads, dim]

    @T.prim_func
    def main(
        Q: T.Tensor(shape, "bfloat16"),
        K: T.Tensor(shape, "bfloat16"),
        V: T.Tensor(shape, "bfloat16"),
        Output: T.Tensor(shape, "bfloat16"),
    ):
        with T.Kernel(seq_len, heads, batch, threads=1) as (i, h, b):
            w = T.alloc_local([seq_len], "float32")
            mx = T.alloc_var("float32")
            tot = T.alloc_var("float32")
            s = T.alloc_var("float32")
            mx = -T.infinity("float32")
            for j in T.serial(seq_len):
                s = 0.0
                for d in T.serial(dim):
                    s += T.cast(Q[b, i, h, d], "float32") * T.cast(K[b, j, h, d], "float32")
                w[j] = s
                if is_causal:
                    if j > i:
                        w[j] = -T.infinity("float32")
                mx = T.max(mx, w[j])
            tot = 0.0
            for j in T.serial(seq_len):
                w[j] = T.exp2(w[j] * scale - mx * scale)
                tot += w[j]
                w[j] = T.cast(T.cast(w[j], "bfloat16"), "float32")
            for d in T.serial(dim):
                s = 0.0
                for j in T.serial(seq_len):
                    s += w[j] * T.cast(V[b, j, h, d], "float32")
                Output[b, i, h, d] = s / tot

    return main


@tilelang.jit(out_idx=[-1])
def tc_chain(M, N, D, block_M=64, block_N=64, threads=128):
    # T.tcgen05_gemm into fragments without an mbarrier (TileLang's
    # flash_attention_sm100 backward form): S = Q K^T, P = bfloat16(S),
    # O = P V with P a register A operand
    @T.prim_func
    def main(
        Q: T.Tensor((M, D), "bfloat16"),
        K: T.Tensor((N, D), "bfloat16"),
        V: T.Tensor((N, D), "bfloat16"),
        O: T.Tensor((M, D), "float32"),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            q_s = T.alloc_shared([block_M, D], "bfloat16")
            k_s = T.alloc_shared([block_N, D], "bfloat16")
            v_s = T.alloc_shared([block_N, D], "bfloat16")
            s = T.alloc_fragment([block_M, block_N], "float32")
            p = T.alloc_fragment([block_M, block_N], "bfloat16")
            o = T.alloc_fragment([block_M, D], "float32")
            T.copy(Q[bx * block_M, 0], q_s)
            T.clear(o)
            for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
                T.copy(K[k * block_N, 0], k_s)
                T.copy(V[k * block_N, 0], v_s)
                T.clear(s)
                T.tcgen05_gemm(q_s, k_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(s, p)
                T.tcgen05_gemm(p, v_s, o, policy=T.GemmWarpPolicy.FullRow)
            T.copy(o, O[bx * block_M, 0])

    return main


@tilelang.jit(out_idx=[-1])
def chain_ref(M, N, D):
    @T.prim_func
    def main(
        Q: T.Tensor((M, D), "bfloat16"),
        K: T.Tensor((N, D), "bfloat16"),
        V: T.Tensor((N, D), "bfloat16"),
        O: T.Tensor((M, D), "float32"),
    ):
        with T.Kernel(M, threads=1) as i:
            w = T.alloc_local([N], "float32")
            s = T.alloc_var("float32")
            for j in T.serial(N):
                s = 0.0
                for d in T.serial(D):
                    s += T.cast(Q[i, d], "float32") * T.cast(K[j, d], "float32")
                w[j] = T.cast(T.cast(s, "bfloat16"), "float32")
            for d in T.serial(D):
                s = 0.0
                for j in T.serial(N):
                    s += w[j] * T.cast(V[j, d], "float32")
                O[i, d] = s

    return main


@tilelang.jit(out_idx=[-1])
def tc_roles(M, N, K, block_M=64, block_N=64, threads=256):
    # TileLang's warp-specialized form: one role (threads [0, 128)) stages
    # A through registers into tensor memory, a one-warp role ([128, 160))
    # multiplies it by B into tensor memory once A is there, and the first
    # role reads the product back when the gemm's mbarrier says so; tiles
    # shared by two roles live in shared memory on targets without tensor
    # memory (K fits one tile: block_K = K)
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((N, K), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            b_s = T.alloc_shared((block_N, K), "bfloat16")
            a_l = T.alloc_fragment((block_M, K), "bfloat16")
            a_tm = T.alloc_tmem([block_M, K], "bfloat16")
            c_tm = T.alloc_tmem([block_M, block_N], "float32")
            c_l = T.alloc_fragment((block_M, block_N), "float32")
            bars = T.alloc_barrier([128, 1])
            tid = T.get_thread_binding()
            if tid < 128:
                T.copy(A[by * block_M, 0], a_l)
                T.copy(a_l, a_tm)
                T.mbarrier_arrive(bars[0])
            elif tid < 160:
                T.copy(B[bx * block_N, 0], b_s)
                T.mbarrier_wait_parity(bars[0], 0)
                T.tcgen05_gemm(a_tm, b_s, c_tm, transpose_B=True, mbar=bars[1], clear_accum=True)
            if tid < 128:
                T.mbarrier_wait_parity(bars[1], 0)
                T.copy(c_tm, c_l)
                T.copy(c_l, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def tc_ws(M, N, K, block_M=64, block_N=64, block_K=32, stages=2):
    # a producer warp fills `stages` slots of A and B tiles, an mma warp
    # multiplies each slot into tensor memory (its gemm's arrive frees the
    # slot) and, after the last, T.tcgen05_mma_arrive tells the whole block
    # that the accumulator is complete (gemm_tcgen05's warp-specialized form)
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            a_s = T.alloc_shared((stages, block_M, block_K), "bfloat16")
            b_s = T.alloc_shared((stages, block_K, block_N), "bfloat16")
            acc_tm = T.alloc_tmem([block_M, block_N], "float32")
            out = T.alloc_fragment((block_M, block_N), "float32")
            full = T.alloc_barrier([32] * stages)
            free = T.alloc_barrier([1] * stages)
            done = T.alloc_barrier([1])
            tid = T.get_thread_binding()
            nk = T.ceildiv(K, block_K)
            if tid < 32:
                for k in T.serial(nk):
                    T.mbarrier_wait_parity(free[k % stages], ((k // stages) & 1) ^ 1)
                    T.copy(A[by * block_M, k * block_K], a_s[k % stages, :, :])
                    T.copy(B[k * block_K, bx * block_N], b_s[k % stages, :, :])
                    T.mbarrier_arrive(full[k % stages])
            elif tid < 64:
                for k in T.serial(nk):
                    T.mbarrier_wait_parity(full[k % stages], (k // stages) & 1)
                    T.tcgen05_gemm(a_s[k % stages, :, :], b_s[k % stages, :, :], acc_tm, mbar=free[k % stages],
                                   clear_accum=k == 0)
                T.tcgen05_mma_arrive(done)
            T.mbarrier_wait_parity(done, 0)
            T.copy(acc_tm, out)
            T.copy(out, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def gemm_kn_ref(M, N, K):
    # naive C = A @ B with B stored K x N (tc_ws's reference)
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(M, threads=1) as i:
            s = T.alloc_var("float32")
            for j in T.serial(N):
                s = 0.0
                for kk in T.serial(K):
                    s += T.cast(A[i, kk], "float32") * T.cast(B[kk, j], "float32")
                C[i, j] = s

    return main


@tilelang.jit(out_idx=[-1])
def tg_gemm(M, N, K, block_M=64, block_N=64, block_K=32):
    # T.gemm into tensor memory with an mbar: TileLang waits on it itself
    # (the program does not); the accumulator read at the end
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((N, K), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            a_tile = T.alloc_shared((block_M, block_K), "bfloat16")
            b_tile = T.alloc_shared((block_N, block_K), "bfloat16")
            acc_tm = T.alloc_tmem([block_M, block_N], "float32")
            done = T.alloc_barrier(1)
            out = T.alloc_fragment((block_M, block_N), "float32")
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], a_tile)
                T.copy(B[bx * block_N, k * block_K], b_tile)
                T.gemm(a_tile, b_tile, acc_tm, transpose_B=True, mbar=done, clear_accum=k == 0)
            T.copy(acc_tm, out)
            T.copy(out, C[by * block_M, bx * block_N])

    return main
