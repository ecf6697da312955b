# References for TileScale's own distributed examples (github.com/tile-ai/tilescale,
# examples/distributed), which tests/tools/tilescale_compat.sh runs unchanged on sim
# ranks with `--check-against tests/tools/tilescale_refs.py:ENTRY`.  Each is written
# from what the example's host code expects (its torch reference or the data it
# scatters), as a naive kernel over all ranks' tensors stacked along a leading axis
# of extent P; each takes the same compile-time parameters as the kernel it checks.
import tilelang
import tilelang.language as T


# example_simple_shift.py: every block puts block_M x block_N elements of A from
# its start to B's start on rank + 1 (one tile: M = block_M, N = block_N).
def simple_shift_ref(M, N, block_M, block_N, P, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((P, M, N), dtype), B: T.Tensor((P, M, N), dtype)):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(block_M):
                for j in T.serial(block_N):
                    B[r, i, j] = A[(r + P - 1) % P, i, j]

    return main


# primitives/example_put_block.py: dst on rank r ^ 1 receives src of rank r.
def put_block_ref(M, num_rank, block_M, threads, P):
    @T.prim_func
    def main(dst: T.Tensor((P, M), "float32"), src: T.Tensor((P, M), "float32")):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(M):
                dst[r, i] = src[r ^ 1, i]

    return main


# primitives/example_get_block.py: rank r pulls src of rank r ^ 1 into dst.
def get_block_ref(M, num_rank, block_M, threads, P):
    @T.prim_func
    def main(dst: T.Tensor((P, M), "float32"), src: T.Tensor((P, M), "float32")):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(M):
                dst[r, i] = src[r ^ 1, i]

    return main


# example_allgather.py: rank p's rows (M / PE_num of them) go to rows
# p * M / PE_num of B on every other rank; a rank's own slot is the host's
# to fill (a local copy before the kernel), so it keeps what it held.
def allgather_ref(PE_num, M, N, P, dtype="float16"):
    Mr = M // PE_num

    @T.prim_func
    def main(A: T.Tensor((P, Mr, N), dtype), B: T.Tensor((P, M, N), dtype)):
        with T.Kernel(P, threads=1) as (r):
            for p in T.serial(P):
                if p != r:
                    for i in T.serial(Mr):
                        for j in T.serial(N):
                            B[r, p * Mr + i, j] = A[p, i, j]

    return main


# example_allgather_gemm.py (one tile: M = block_M, K = block_K): A_ag on every
# rank is all ranks' A stacked, signal[k] = k + 1, C = A_ag @ B.
def allgather_gemm_ref(PE_num, M, N, K, block_M, block_N, block_K, P, dtype="float16"):
    @T.prim_func
    def main(
        A: T.Tensor((P, M, K), dtype),
        A_ag: T.Tensor((P, M * PE_num, K), dtype),
        B: T.Tensor((P, K, N), dtype),
        signal: T.Tensor((P, PE_num), "uint64"),
        C: T.Tensor((P, M * PE_num, N), dtype),
    ):
        with T.Kernel(P, threads=1) as (r):
            for p in T.serial(P):
                for i in T.serial(M):
                    for k in T.serial(K):
                        A_ag[r, p * M + i, k] = A[p, i, k]
                    for n in T.serial(N):
                        acc = T.alloc_var("float32")
                        acc = 0.0
                        for k in T.serial(K):
                            acc = acc + T.cast(A[p, i, k], "float32") * T.cast(B[r, k, n], "float32")
                        C[r, p * M + i, n] = acc

    return main


# primitives/example_put_warp.py: as put_block, in bfloat16 (every warp puts its
# share of the block's range).
def put_warp_ref(M, num_rank, block_M, threads, P):
    @T.prim_func
    def main(dst: T.Tensor((P, M), "bfloat16"), src: T.Tensor((P, M), "bfloat16")):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(M):
                dst[r, i] = src[r ^ 1, i]

    return main


# example_pre_attn_all2all.py: [B, H, S/P, D] on every rank -> [B, H/P, S, D]:
# rank t's heads t * H/P .. from every rank p, at sequence rows p * S/P ..
def pre_attn_all2all_ref(PE_num, BATCH_SIZE, NUM_HEADS, SEQ_LEN, HEAD_DIM, P, dtype="float16"):
    SP, HP = SEQ_LEN // PE_num, NUM_HEADS // PE_num

    @T.prim_func
    def main(
        data_src: T.Tensor((P, BATCH_SIZE, NUM_HEADS, SP, HEAD_DIM), dtype),
        data_dst: T.Tensor((P, BATCH_SIZE, HP, SEQ_LEN, HEAD_DIM), dtype),
        signal: T.Tensor((P, PE_num), "uint64"),
    ):
        with T.Kernel(P, threads=1) as (t):
            for p in T.serial(P):
                for b in T.serial(BATCH_SIZE):
                    for h in T.serial(HP):
                        for s in T.serial(SP):
                            for d in T.serial(HEAD_DIM):
                                data_dst[t, b, h, p * SP + s, d] = data_src[p, b, t * HP + h, s, d]

    return main


# example_pre_attn_all2all_transpose.py: the same from [B, S/P, H, D].
def pre_attn_all2all_transpose_ref(PE_num, BATCH_SIZE, NUM_HEADS, SEQ_LEN, HEAD_DIM, P, dtype="float16"):
    SP, HP = SEQ_LEN // PE_num, NUM_HEADS // PE_num

    @T.prim_func
    def main(
        data_src: T.Tensor((P, BATCH_SIZE, SP, NUM_HEADS, HEAD_DIM), dtype),
        data_dst: T.Tensor((P, BATCH_SIZE, HP, SEQ_LEN, HEAD_DIM), dtype),
        signal: T.Tensor((P, PE_num), "uint64"),
    ):
        with T.Kernel(P, threads=1) as (t):
            for p in T.serial(P):
                for b in T.serial(BATCH_SIZE):
                    for h in T.serial(HP):
                        for s in T.serial(SP):
                            for d in T.serial(HEAD_DIM):
                                data_dst[t, b, h, p * SP + s, d] = data_src[p, b, s, t * HP + h, d]

    return main


# example_post_attn_all2all_transpose.py: [B, H/P, S, D] -> [B, S/P, H, D]:
# rank t's sequence rows t * S/P .. of every rank p's heads, at heads p * H/P ..
def post_attn_all2all_transpose_ref(PE_num, BATCH_SIZE, NUM_HEADS, SEQ_LEN, HEAD_DIM, P, dtype="float16"):
    SP, HP = SEQ_LEN // PE_num, NUM_HEADS // PE_num

    @T.prim_func
    def main(
        data_src: T.Tensor((P, BATCH_SIZE, HP, SEQ_LEN, HEAD_DIM), dtype),
        data_dst: T.Tensor((P, BATCH_SIZE, SP, NUM_HEADS, HEAD_DIM), dtype),
        signal: T.Tensor((P, PE_num), "uint64"),
    ):
        with T.Kernel(P, threads=1) as (t):
            for p in T.serial(P):
                for b in T.serial(BATCH_SIZE):
                    for h in T.serial(HP):
                        for s in T.serial(SP):
                            for d in T.serial(HEAD_DIM):
                                data_dst[t, b, s, p * HP + h, d] = data_src[p, b, h, t * SP + s, d]

    return main


# example_cannon.py (MESH = 2, its 2 x 2 run): rank (i, j) starts with the A
# and B tiles its host code scatters (already skewed: the k-th slice is
# (i + j) % MESH); at step ko it holds A of rank (i, j + ko) and B of rank
# (i + ko, j) and adds A @ B^T to C (fp32 inside a step, C in fp16 between
# steps); each step's send lands in the other half of the double buffer, so
# afterwards half 1 holds the step-1 tiles and half 0 the step-2 ones (its
# own again).
def cannon_ref(MESH, M, N, K, block_M, block_N, block_K, P, dtype="float16"):
    ML, NL, KL = (M + MESH - 1) // MESH, (N + MESH - 1) // MESH, (K + MESH - 1) // MESH

    @T.prim_func
    def main(
        A: T.Tensor((P, 2, ML, KL), dtype),
        B: T.Tensor((P, 2, NL, KL), dtype),
        A_signal_to: T.Tensor((P, (M + block_M - 1) // block_M), "uint64"),
        A_signal_from: T.Tensor((P, (M + block_M - 1) // block_M), "uint64"),
        B_signal_to: T.Tensor((P, (N + block_N - 1) // block_N), "uint64"),
        B_signal_from: T.Tensor((P, (N + block_N - 1) // block_N), "uint64"),
        C: T.Tensor((P, ML, NL), dtype),
    ):
        with T.Kernel(P, threads=1) as (r):
            acc = T.alloc_var("float32")
            i = r // MESH
            j = r % MESH
            for ko in T.serial(MESH):
                for m in T.serial(ML):
                    for n in T.serial(NL):
                        acc = T.cast(C[r, m, n], "float32")
                        for k in T.serial(KL):
                            acc = acc + T.cast(A[i * MESH + (j + ko) % MESH, 0, m, k], "float32") * T.cast(
                                B[((i + ko) % MESH) * MESH + j, 0, n, k], "float32")
                        C[r, m, n] = acc
            for m in T.serial(ML):
                for k in T.serial(KL):
                    A[r, 1, m, k] = A[i * MESH + (j + 1) % MESH, 0, m, k]
            for n in T.serial(NL):
                for k in T.serial(KL):
                    B[r, 1, n, k] = B[((i + 1) % MESH) * MESH + j, 0, n, k]

    return main


# example_summa.py as its kernel's data flow actually runs (NOT its host's
# A @ B.T; doc/DISTRIBUTED.md, part F, says why, with line numbers).  Rank
# r = (i, j) = divmod(r, MESH) starts with A0(r) = A[r, 0] and B0(r) = B[r, 0].
# Step ko multiplies half ko % 2 (lines 110-111) while that step's owner
# (i, ko) broadcasts its half ko % 2 into half (ko + 1) % 2 of the ranks of
# its grid row, A and B alike (lines 61-68, 80-88).  So step 0 uses the
# rank's own blocks, and every later step what the previous owner forwarded,
# which is always rank (i, 0)'s: C += A0(i, 0) @ B0(i, 0)^T for ko >= 1.  C
# starts from C's contents (line 108 loads it before every step; the host
# never fills it), is accumulated in float32 within a step and stored in
# fp16 between steps.  Afterwards both halves of A and B hold rank (i, 0)'s
# blocks.
def summa_dataflow_ref(MESH, M, N, K, block_M, block_N, block_K, P, dtype="float16"):
    ML, NL, KL = (M + MESH - 1) // MESH, (N + MESH - 1) // MESH, (K + MESH - 1) // MESH

    @T.prim_func
    def main(
        A: T.Tensor((P, 2, ML, KL), dtype),
        B: T.Tensor((P, 2, NL, KL), dtype),
        A_signal_to: T.Tensor((P, (M + block_M - 1) // block_M), "uint64"),
        A_signal_from: T.Tensor((P, (M + block_M - 1) // block_M), "uint64"),
        B_signal_to: T.Tensor((P, (N + block_N - 1) // block_N), "uint64"),
        B_signal_from: T.Tensor((P, (N + block_N - 1) // block_N), "uint64"),
        C: T.Tensor((P, ML, NL), dtype),
    ):
        with T.Kernel(P, threads=1) as (r):
            acc = T.alloc_var("float32")
            i = r // MESH
            src = i * MESH
            for ko in T.serial(MESH):
                owner = T.if_then_else(ko == 0, r, src)
                for m in T.serial(ML):
                    for n in T.serial(NL):
                        acc = T.cast(C[r, m, n], "float32")
                        for k in T.serial(KL):
                            acc = acc + T.cast(A[owner, 0, m, k], "float32") * T.cast(B[owner, 0, n, k], "float32")
                        C[r, m, n] = acc
        with T.Kernel(P, threads=1) as (r):
            src = (r // MESH) * MESH
            for h in T.serial(2):
                for m in T.serial(ML):
                    for k in T.serial(KL):
                        A[r, 1 - h, m, k] = A[src, 0, m, k]
                for n in T.serial(NL):
                    for k in T.serial(KL):
                        B[r, 1 - h, n, k] = B[src, 0, n, k]

    return main
