# SUMMA (scalable universal matrix multiplication) on a q x q grid of ranks
# (P = q * q): rank p = i * q + j holds the blocks A[i, j] (BM x BK) and
# B[i, j] (BK x BN) of the block matrices A (q BM x q BK), B (q BK x q BN),
# and computes C[i, j] = sum_k A[i, k] @ B[k, j].  Step k of q:
#   broadcast  rank (i, k) sends its A block along its grid row (to every
#              (i, j)), rank (k, j) its B block down its grid column (to
#              every (i, j)), each into half k % 2 of a double buffer;
#   barrier    T.barrier_all: the panels of step k are complete everywhere;
#   multiply   every block of every rank adds its bm x bn tile of
#              Apanel @ Bpanel into its accumulator.
# One barrier per step is enough with two halves: a rank that writes half
# k % 2 again (step k + 2) has passed the barrier of step k + 1, which no
# rank reaches before it has finished multiplying step k.
# Unlike Cannon's (cannon.py) no skew and no shifting: the owners of the
# k-th panels send them directly.  The broadcasts are remote tile copies
# (T.copy(..., dst=peer)), split over the blocks: the blocks of column 0
# push A's rows [by * bm, +bm) (whole rows: one range each), the blocks of
# row 0 push B's columns [bx * bn, +bn) (a 2-D tile: one range of rows).
#   tilescale run examples/distributed/summa.py --entry summa --ranks 4 \
#       -D q=2 -D BM=64 -D BN=64 -D BK=64 --check-against summa_ref
import tilelang
import tilelang.language as T


def summa(q, BM, BN, BK, bm=32, bn=32, bk=32, dtype="float16"):
    @T.prim_func
    def main(
        A: T.Tensor((BM, BK), dtype),
        B: T.Tensor((BK, BN), dtype),
        Apanel: T.Tensor((2, BM, BK), dtype),
        Bpanel: T.Tensor((2, BK, BN), dtype),
        C: T.Tensor((BM, BN), "float32"),
    ):
        with T.Kernel(BN // bn, BM // bm, threads=128) as (bx, by):
            me = T.get_rank()
            i = me // q
            j = me % q
            A_s = T.alloc_shared((bm, bk), dtype)
            B_s = T.alloc_shared((bk, bn), dtype)
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for k in T.serial(q):
                if j == k and bx == 0:
                    for t in T.serial(q):
                        T.copy(A[by * bm : by * bm + bm, 0:BK], Apanel[k % 2, by * bm, 0], dst=i * q + t)
                if i == k and by == 0:
                    for t in T.serial(q):
                        T.copy(B[0:BK, bx * bn : bx * bn + bn], Bpanel[k % 2, 0, bx * bn], dst=t * q + j)
                T.barrier_all()
                for kk in T.serial(BK // bk):
                    T.copy(Apanel[k % 2, by * bm, kk * bk], A_s)
                    T.copy(Bpanel[k % 2, kk * bk, bx * bn], B_s)
                    T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def summa_ref(q, BM, BN, BK, P, dtype="float16"):
    @T.prim_func
    def main(
        A: T.Tensor((P, BM, BK), dtype),
        B: T.Tensor((P, BK, BN), dtype),
        Apanel: T.Tensor((P, 2, BM, BK), dtype),
        Bpanel: T.Tensor((P, 2, BK, BN), dtype),
        C: T.Tensor((P, BM, BN), "float32"),
    ):
        with T.Kernel(P, threads=1) as (p):
            for m in T.serial(BM):
                for n in T.serial(BN):
                    acc = T.alloc_var("float32")
                    acc = 0.0
                    for k in T.serial(q):
                        for h in T.serial(BK):
                            acc = acc + T.cast(A[(p // q) * q + k, m, h], "float32") * T.cast(
                                B[k * q + p % q, h, n], "float32")
                    C[p, m, n] = acc
            # half s % 2 of the panels holds the last step of that parity:
            # A[i, s] and B[s, j]
            for s in T.serial(q):
                if s + 2 >= q:
                    for m in T.serial(BM):
                        for h in T.serial(BK):
                            Apanel[p, s % 2, m, h] = A[(p // q) * q + s, m, h]
                    for h in T.serial(BK):
                        for n in T.serial(BN):
                            Bpanel[p, s % 2, h, n] = B[s * q + p % q, h, n]

    return main
