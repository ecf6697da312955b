# Cannon's distributed GEMM on a q x q grid of ranks (P = q * q): rank
# p = i * q + j holds the blocks A[i, j] (BM x BK), B[i, j] (BK x BN) of the
# block matrices A (q BM x q BK) and B (q BK x q BN) and computes
# C[i, j] = sum_k A[i, k] @ B[k, j].
#   skew     A[i, j] goes to rank (i, j - i), B[i, j] to rank (i - j, j)
#            (indices mod q): rank (i, j) then holds A[i, i + j], B[i + j, j]
#   q steps  multiply the held blocks into C, then pass A one rank left and B
#            one rank up (T.put_block into the other half of a double buffer;
#            the last step passes nothing)
# with T.barrier_all after the skew and after every step: the barrier is
# what makes the next buffer complete and guarantees that nobody is still
# reading the half a neighbour is about to overwrite.  Block (0, 0) of each
# rank moves the data; every block multiplies its bm x bn tile of C.
#   tilescale run examples/distributed/cannon.py --entry cannon --ranks 4 \
#       -D q=2 -D BM=64 -D BN=64 -D BK=64 --check-against cannon_ref
import tilelang
import tilelang.language as T


def cannon(q, BM, BN, BK, bm=32, bn=32, bk=32, dtype="float16"):
    @T.prim_func
    def main(
        A: T.Tensor((BM, BK), dtype),
        B: T.Tensor((BK, BN), dtype),
        Abuf: T.Tensor((2, BM, BK), dtype),
        Bbuf: T.Tensor((2, BK, BN), dtype),
        C: T.Tensor((BM, BN), "float32"),
    ):
        with T.Kernel(BN // bn, BM // bm, threads=128) as (bx, by):
            me = T.get_rank()
            i = me // q
            j = me % q
            if bx == 0 and by == 0:
                T.put_block(src=T.address_of(A[0, 0]), dst=T.address_of(Abuf[0, 0, 0]), size=BM * BK,
                            dst_pe=i * q + (j + q - i) % q)
                T.put_block(src=T.address_of(B[0, 0]), dst=T.address_of(Bbuf[0, 0, 0]), size=BK * BN,
                            dst_pe=((i + q - j) % q) * q + j)
            T.barrier_all()
            A_s = T.alloc_shared((bm, bk), dtype)
            B_s = T.alloc_shared((bk, bn), dtype)
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for s in T.serial(q):
                for k in T.serial(BK // bk):
                    T.copy(Abuf[s % 2, by * bm, k * bk], A_s)
                    T.copy(Bbuf[s % 2, k * bk, bx * bn], B_s)
                    T.gemm(A_s, B_s, C_l)
                if s < q - 1 and bx == 0 and by == 0:
                    T.put_block(src=T.address_of(Abuf[s % 2, 0, 0]), dst=T.address_of(Abuf[(s + 1) % 2, 0, 0]),
                                size=BM * BK, dst_pe=i * q + (j + q - 1) % q)
                    T.put_block(src=T.address_of(Bbuf[s % 2, 0, 0]), dst=T.address_of(Bbuf[(s + 1) % 2, 0, 0]),
                                size=BK * BN, dst_pe=((i + q - 1) % q) * q + j)
                T.barrier_all()
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def cannon_ref(q, BM, BN, BK, P, dtype="float16"):
    @T.prim_func
    def main(
        A: T.Tensor((P, BM, BK), dtype),
        B: T.Tensor((P, BK, BN), dtype),
        Abuf: T.Tensor((P, 2, BM, BK), dtype),
        Bbuf: T.Tensor((P, 2, BK, BN), dtype),
        C: T.Tensor((P, BM, BN), "float32"),
    ):
        with T.Kernel(1, threads=1) as (bx):
            for p in T.serial(P):
                for m in T.serial(BM):
                    for n in T.serial(BN):
                        acc = T.alloc_var("float32")
                        acc = 0.0
                        for k in T.serial(q):
                            for h in T.serial(BK):
                                acc = acc + T.cast(A[(p // q) * q + k, m, h], "float32") * T.cast(
                                    B[k * q + p % q, h, n], "float32")
                        C[p, m, n] = acc
                # the double buffer holds what the last steps of each parity held:
                # step s has A[i, i + j + s] and B[i + j + s, j]
                for s in T.serial(q):
                    if s + 2 >= q:
                        for m in T.serial(BM):
                            for h in T.serial(BK):
                                Abuf[p, s % 2, m, h] = A[(p // q) * q + ((p // q) + (p % q) + s) % q, m, h]
                        for h in T.serial(BK):
                            for n in T.serial(BN):
                                Bbuf[p, s % 2, h, n] = B[(((p // q) + (p % q) + s) % q) * q + p % q, h, n]

    return main
