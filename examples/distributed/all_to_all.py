# All-to-all with equal splits: A [P * chunk, N] on every rank is P chunks;
# chunk s of rank r goes to chunk r of rank s's B.  One block per (chunk of
# rows, destination): T.put_block from global memory straight to the peer,
# then T.barrier_all so no rank leaves before all data has arrived.
#   tilescale run examples/distributed/all_to_all.py --entry all_to_all --ranks 4 \
#       -D P=4 -D chunk=8 -D N=16 --check-against all_to_all_ref
import tilelang
import tilelang.language as T


def all_to_all(P, chunk, N, dtype="float32"):
    @T.prim_func
    def main(
        A: T.Tensor((P * chunk, N), dtype),
        B: T.Tensor((P * chunk, N), dtype),
    ):
        with T.Kernel(P, threads=128) as (dst):
            me = T.get_rank()
            T.put_block(src=T.address_of(A[dst * chunk, 0]), dst=T.address_of(B[me * chunk, 0]),
                        size=chunk * N, dst_pe=dst)
            T.barrier_all()

    return main


def all_to_all_ref(P, chunk, N, dtype="float32"):
    @T.prim_func
    def main(
        A: T.Tensor((P, P * chunk, N), dtype),
        B: T.Tensor((P, P * chunk, N), dtype),
    ):
        with T.Kernel(P, threads=1) as (r):
            for s in T.serial(P):
                for i in T.serial(chunk):
                    for j in T.serial(N):
                        B[r, s * chunk + i, j] = A[s, r * chunk + i, j]

    return main
