# AG-GEMM: all-gather of A overlapped with the GEMM through per-tile signals.
# Every rank holds A [M, K] (its rows) and B [K, N] (its columns of a
# tensor-parallel weight) and computes C = all_gather(A) @ B, [P * M, N].
# Blocks with bx == 0 push their block_M-row tile of A into A_ag on every
# rank (T.putmem_signal_nbi_block: the tile, then flag sig[me, tile] := 1
# there); every block waits only for the one tile it needs
# (T.signal_wait_until) and starts its GEMM as soon as that tile is in, so
# the communication of later tiles overlaps the GEMMs of earlier ones.
# Flags are set to `round` and awaited with >=, so repeated launches
# (--bench, which increases `round`) each wait for their own tiles.
#   tilescale run examples/distributed/ag_gemm.py --entry ag_gemm --ranks 4 \
#       -D P=4 -D M=64 -D N=64 -D K=64 --in round=1 --check-against ag_gemm_ref
import tilelang
import tilelang.language as T


def ag_gemm(P, M, N, K, block_M=32, block_N=32, block_K=32, dtype="float16", accum_dtype="float32"):
    MB = M // block_M

    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        A_ag: T.Tensor((P * M, K), dtype),
        sig: T.Tensor((P * MB,), "uint64"),
        C: T.Tensor((P * M, N), dtype),
        round: T.int32,
    ):
        with T.Kernel(T.ceildiv(N, block_N), P * MB, threads=128) as (bx, by):
            me = T.get_rank()
            if bx == 0 and by < MB:
                for k in T.serial(P):
                    peer = (me + k) % P
                    T.putmem_signal_nbi_block(T.address_of(A_ag[me * M + by * block_M, 0]),
                                              T.address_of(A[by * block_M, 0]), block_M * K * 2,
                                              T.address_of(sig[me * MB + by]), round, 9, peer)
            # the tile of A_ag this block multiplies: rows by * block_M .. of rank by // MB
            T.signal_wait_until(T.address_of(sig[by]), 5, round)  # GE: flags only grow
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A_ag[by * block_M, ko * block_K], A_s)
                T.copy(B[ko * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main


def ag_gemm_ref(P, M, N, K, block_M=32, dtype="float16"):
    @T.prim_func
    def main(
        A: T.Tensor((P, M, K), dtype),
        B: T.Tensor((P, K, N), dtype),
        A_ag: T.Tensor((P, P * M, K), dtype),
        sig: T.Tensor((P, P * (M // block_M)), "uint64"),
        C: T.Tensor((P, P * M, N), dtype),
        round: T.int32,
    ):
        with T.Kernel(P, threads=1) as (r):
            for s in T.serial(P):
                for i in T.serial(M):
                    for kk in T.serial(K):
                        A_ag[r, s * M + i, kk] = A[s, i, kk]
            for i in T.serial(P * M):
                for j in T.serial(N):
                    acc = T.alloc_var("float32")
                    acc = 0.0
                    for kk in T.serial(K):
                        acc = acc + T.cast(A[i // M, i % M, kk], "float32") * T.cast(B[r, kk, j], "float32")
                    C[r, i, j] = acc

    return main
