# Tensor-parallel GEMMs written with T.Scale and the tile-level collectives
# (the shape of TileScale's README example, with each rank's shards passed
# in directly, since device views are not implemented yet):
#   gemm_allreduce:  C = A @ B with K split over the ranks: each rank has
#                    A [M, K/P] and B [K/P, N], computes its partial C,
#                    then T.allreduce(C) inside T.Scale("device").
#   gemm_rs:         the same partial products, then T.reduce_scatter: rank
#                    r keeps rows r*M/P.. of the sum (GEMM-RS).
#   tilescale run examples/distributed/tp_gemm.py --entry gemm_allreduce --ranks 4 \
#       -D M=64 -D N=64 -D KP=32 --check-against gemm_allreduce_ref
import tilelang
import tilelang.language as T


def gemm_allreduce(M, N, KP, block_M=32, block_N=32, block_K=32, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, KP), dtype), B: T.Tensor((KP, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            with T.Scale("block"):
                A_s = T.alloc_shared((block_M, block_K), dtype)
                B_s = T.alloc_shared((block_K, block_N), dtype)
                C_l = T.alloc_fragment((block_M, block_N), "float32")
                T.clear(C_l)
                for k in T.Pipelined(T.ceildiv(KP, block_K), num_stages=2):
                    T.copy(A[by * block_M, k * block_K], A_s)
                    T.copy(B[k * block_K, bx * block_N], B_s)
                    T.gemm(A_s, B_s, C_l)
                T.copy(C_l, C[by * block_M, bx * block_N])
            with T.Scale("device"):
                T.allreduce(C)

    return main


def gemm_allreduce_ref(M, N, KP, P, dtype="float16"):
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


def gemm_rs(M, N, KP, P, block_M=32, block_N=32, block_K=32, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, KP), dtype), B: T.Tensor((KP, N), dtype), C: T.Tensor((M, N), "float32"),
             R: T.Tensor((M // P, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(KP, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])
            with T.Scale("device"):
                T.reduce_scatter(C, R)

    return main


def gemm_rs_ref(M, N, KP, P, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((P, M, KP), dtype), B: T.Tensor((P, KP, N), dtype), C: T.Tensor((P, M, N), "float32"),
             R: T.Tensor((P, M // P, N), "float32")):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(M):
                for j in T.serial(N):
                    C[r, i, j] = 0.0
                    for k in T.serial(KP):
                        C[r, i, j] = C[r, i, j] + T.cast(A[r, i, k], "float32") * T.cast(B[r, k, j], "float32")
            for i in T.serial(M // P):
                for j in T.serial(N):
                    acc = T.alloc_var("float32")
                    acc = 0.0
                    for p in T.serial(P):
                        for k in T.serial(KP):
                            acc = acc + T.cast(A[p, r * (M // P) + i, k], "float32") * T.cast(B[p, k, j], "float32")
                    R[r, i, j] = acc

    return main


# GEMM-RS overlapped: the reduce-scatter rides on the GEMM's epilogue.
# Block (bx, by) computes its partial tile of C = A @ B (this rank's K
# range), stores it tile-major in Ct, and at once pushes it to the rank
# that owns those rows of the result (rank by // MBP) with
# T.putmem_signal_nbi_block, which sets the tile's flag sig[me, tile] :=
# round there after the data.  The same block on the owner waits for that
# tile's P flags and sums the P partials into R, so the reduction of tiles
# whose partials are in runs while other tiles are still being computed;
# there is no barrier over the whole GEMM.  `round` lets the same buffers
# serve several launches (flags only grow).
#   tilescale run examples/distributed/tp_gemm.py --entry gemm_rs_overlap --ranks 4 \
#       -D M=256 -D N=64 -D KP=64 -D P=4 --in round=1 --check-against gemm_rs_overlap_ref
def gemm_rs_overlap(M, N, KP, P, block_M=32, block_N=32, block_K=32, dtype="float16"):
    MB, NB = M // block_M, N // block_N
    MBP = MB // P  # row tiles of R per rank

    @T.prim_func
    def main(A: T.Tensor((M, KP), dtype), B: T.Tensor((KP, N), dtype),
             Ct: T.Tensor((MB, NB, block_M, block_N), "float32"),
             stage: T.Tensor((P, MBP, NB, block_M, block_N), "float32"),
             sig: T.Tensor((P, MBP * NB), "uint64"),
             R: T.Tensor((M // P, N), "float32"), round: T.int32):
        with T.Kernel(NB, MB, threads=128) as (bx, by):
            me = T.get_rank()
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(KP, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, Ct[by, bx, 0:block_M, 0:block_N])
            # the epilogue: this partial tile to its owner, flag after data
            T.putmem_signal_nbi_block(T.address_of(stage[me, by % MBP, bx, 0, 0]), T.address_of(Ct[by, bx, 0, 0]),
                                      block_M * block_N * 4, T.address_of(sig[me, (by % MBP) * NB + bx]), round, 9,
                                      by // MBP)
            if by // MBP == me:
                for s in T.serial(P):
                    T.signal_wait_until(T.address_of(sig[s, (by % MBP) * NB + bx]), 5, round)  # GE
                acc = T.alloc_fragment((block_M, block_N), "float32")
                T.clear(acc)
                for s in T.serial(P):
                    for i, j in T.Parallel(block_M, block_N):
                        acc[i, j] += stage[s, by % MBP, bx, i, j]
                T.copy(acc, R[(by % MBP) * block_M, bx * block_N])

    return main


def gemm_rs_overlap_ref(M, N, KP, P, block_M=32, block_N=32, dtype="float16"):
    MB, NB = M // block_M, N // block_N
    MBP = MB // P

    @T.prim_func
    def main(A: T.Tensor((P, M, KP), dtype), B: T.Tensor((P, KP, N), dtype),
             Ct: T.Tensor((P, MB, NB, block_M, block_N), "float32"),
             stage: T.Tensor((P, P, MBP, NB, block_M, block_N), "float32"),
             sig: T.Tensor((P, P, MBP * NB), "uint64"),
             R: T.Tensor((P, M // P, N), "float32"), round: T.int32):
        with T.Kernel(1, threads=1) as (bx):
            for r in T.serial(P):
                for i in T.serial(M):
                    for j in T.serial(N):
                        acc = T.alloc_var("float32")
                        acc = 0.0
                        for k in T.serial(KP):
                            acc = acc + T.cast(A[r, i, k], "float32") * T.cast(B[r, k, j], "float32")
                        Ct[r, i // block_M, j // block_N, i % block_M, j % block_N] = acc
            for r in T.serial(P):
                for t in T.serial(MBP):
                    for tj in T.serial(NB):
                        for i in T.serial(block_M):
                            for j in T.serial(block_N):
                                s_ = T.alloc_var("float32")
                                s_ = 0.0
                                for s in T.serial(P):
                                    stage[r, s, t, tj, i, j] = Ct[s, r * MBP + t, tj, i, j]
                                    s_ = s_ + Ct[s, r * MBP + t, tj, i, j]
                                R[r, t * block_M + i, tj * block_N + j] = s_

    return main
