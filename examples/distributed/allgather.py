# All-gather by pushing (in the style of TileScale's example_allgather.py):
# rank r's A [M_per_rank, N] lands in rows r*M_per_rank.. of B [M, N] on every
# rank.  Block (bx, by) stages a block_M-row tile of A in shared memory and
# sends it to rank (r + by) % P with T.putmem_nbi_block (by == 0: itself).
#   tilescale run examples/distributed/allgather.py --entry allgather --ranks 4 \
#       -D PE_num=4 -D M=64 -D N=32 --check-against allgather_ref
import tilelang
import tilelang.language as T


def allgather(PE_num, M, N, dtype="float16", threads=128):
    M_per_rank = M // PE_num
    block_M = 4
    elem = 2 if dtype in ("float16", "bfloat16") else 4

    @T.prim_func
    def main(
        A: T.Tensor((M_per_rank, N), dtype),  # type: ignore
        B: T.Tensor((M, N), dtype),  # type: ignore
    ):
        with T.Kernel(M_per_rank // block_M, PE_num, threads=threads) as (bx, by):
            mype = T.get_pe()
            npes = T.get_pe_num()
            A_shared = T.alloc_shared((block_M, N), dtype)
            local_base = bx * block_M
            global_base = M_per_rank * mype + local_base
            T.copy(A[local_base : local_base + block_M, :], A_shared)
            peer = (mype + by) % npes
            T.putmem_nbi_block(T.address_of(B[global_base, 0]), T.address_of(A_shared[0, 0]), block_M * N * elem, peer)

    return main


def allgather_ref(PE_num, M, N, P, dtype="float16"):
    M_per_rank = M // PE_num

    @T.prim_func
    def main(
        A: T.Tensor((P, M_per_rank, N), dtype),  # type: ignore
        B: T.Tensor((P, M, N), dtype),  # type: ignore
    ):
        with T.Kernel(P, threads=1) as (r):
            for s in T.serial(P):
                for i in T.serial(M_per_rank):
                    for j in T.serial(N):
                        B[r, s * M_per_rank + i, j] = A[s, i, j]

    return main
