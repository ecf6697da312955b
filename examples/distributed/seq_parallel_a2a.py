# Sequence-parallel attention's all-to-alls, as remote tile copies.
# Before attention every rank holds a slice of the sequence for all heads,
# X [B, H, S/P, D]; attention wants all of the sequence for a slice of the
# heads, Y [B, H/P, S, D] (pre_attn_a2a).  Afterwards the transpose back
# (post_attn_a2a).  Block (b, t) sends this rank's heads t*H/P.. of batch b
# to rank t with T.copy(src, dst, dst=t); T.barrier_all ends the exchange.
#   tilescale run examples/distributed/seq_parallel_a2a.py --entry pre_attn_a2a --ranks 4 \
#       -D P=4 -D B=2 -D H=8 -D S=16 -D D=8 --check-against pre_attn_a2a_ref
import tilelang
import tilelang.language as T


def pre_attn_a2a(P, B, H, S, D, dtype="float16"):
    HP, SP = H // P, S // P

    @T.prim_func
    def main(X: T.Tensor((B, H, SP, D), dtype), Y: T.Tensor((B, HP, S, D), dtype)):
        with T.Kernel(B, P, threads=128) as (b, t):
            with T.Scale("device") as (me, n):
                T.copy(X[b, t * HP:(t + 1) * HP, :, :], Y[b, :, me * SP:(me + 1) * SP, :], dst=t)
                T.barrier_all()

    return main


def pre_attn_a2a_ref(P, B, H, S, D, dtype="float16"):
    HP, SP = H // P, S // P

    @T.prim_func
    def main(X: T.Tensor((P, B, H, SP, D), dtype), Y: T.Tensor((P, B, HP, S, D), dtype)):
        with T.Kernel(P, threads=1) as (r):
            for b in T.serial(B):
                for h in T.serial(HP):
                    for s in T.serial(S):
                        for d in T.serial(D):
                            Y[r, b, h, s, d] = X[s // SP, b, r * HP + h, s % SP, d]

    return main


def post_attn_a2a(P, B, H, S, D, dtype="float16"):
    HP, SP = H // P, S // P

    @T.prim_func
    def main(Y: T.Tensor((B, HP, S, D), dtype), X: T.Tensor((B, H, SP, D), dtype)):
        with T.Kernel(B, P, threads=128) as (b, t):
            with T.Scale("device") as (me, n):
                T.copy(Y[b, :, t * SP:(t + 1) * SP, :], X[b, me * HP:(me + 1) * HP, :, :], dst=t)
                T.barrier_all()

    return main


def post_attn_a2a_ref(P, B, H, S, D, dtype="float16"):
    HP, SP = H // P, S // P

    @T.prim_func
    def main(Y: T.Tensor((P, B, HP, S, D), dtype), X: T.Tensor((P, B, H, SP, D), dtype)):
        with T.Kernel(P, threads=1) as (r):
            for b in T.serial(B):
                for h in T.serial(H):
                    for s in T.serial(SP):
                        for d in T.serial(D):
                            X[r, b, h, s, d] = Y[h // HP, b, h % HP, r * SP + s, d]

    return main
