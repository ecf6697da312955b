# Kernels for timing the distributed primitives (bench/dist_gpu_bench.sh):
# each repeats its work `reps` times inside one launch so that launch costs
# amortize, and each has a reference so a timed run is also a checked one.
#   put_loop:   every rank pushes its X (n float32) into Y on rank ^ 1 with
#               T.put_block, blocks of `chunk` elements, reps times.
#   copy_loop:  the same bytes copied locally (dst_pe = -1): the device-copy
#               baseline through the same code path.
#   ping_pong:  2 ranks, one block each: rank 0 sets rank 1's flag to i,
#               rank 1 waits for it and answers; reps round trips.
import tilelang
import tilelang.language as T


def put_loop(n, chunk=1048576, reps=10, threads=1024, peer_xor=1):
    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, chunk), threads=threads) as (bx):
            for it in T.serial(reps):
                T.put_block(src=T.address_of(X[bx * chunk]), dst=T.address_of(Y[bx * chunk]),
                            size=T.min(chunk, n - bx * chunk), dst_pe=T.get_rank() ^ peer_xor)

    return main


def put_loop_ref(n, P, peer_xor=1):
    @T.prim_func
    def main(X: T.Tensor((P, n), "float32"), Y: T.Tensor((P, n), "float32")):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(n):
                Y[r, i] = X[r ^ peer_xor, i]

    return main


def copy_loop(n, chunk=1048576, reps=10, threads=1024):
    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, chunk), threads=threads) as (bx):
            for it in T.serial(reps):
                T.put_block(src=T.address_of(X[bx * chunk]), dst=T.address_of(Y[bx * chunk]),
                            size=T.min(chunk, n - bx * chunk), dst_pe=-1)

    return main


def copy_loop_ref(n, P):
    @T.prim_func
    def main(X: T.Tensor((P, n), "float32"), Y: T.Tensor((P, n), "float32")):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(n):
                Y[r, i] = X[r, i]

    return main


def ping_pong(reps=1000):
    # flags only grow: launch e waits for values above e * reps (epoch[0],
    # each rank's own launch count), so repeated launches time real trips
    @T.prim_func
    def main(flag: T.Tensor((2,), "int32"), epoch: T.Tensor((1,), "int32"), done: T.Tensor((2,), "float32")):
        with T.Kernel(1, threads=32) as (bx):
            me = T.get_rank()
            base = epoch[0] * reps
            for i in T.serial(reps):
                if me == 0:
                    T.st(flag[1], base + i + 1, sem="release", dst_pe=1)
                    T.wait_ge(flag[0], base + i + 1)
                else:
                    T.wait_ge(flag[1], base + i + 1)
                    T.st(flag[0], base + i + 1, sem="release", dst_pe=0)
            epoch[0] = epoch[0] + 1
            done[me] = 1.0

    return main


def ping_pong_ref(P):
    @T.prim_func
    def main(flag: T.Tensor((P, 2), "int32"), epoch: T.Tensor((P, 1), "int32"), done: T.Tensor((P, 2), "float32")):
        with T.Kernel(P, threads=1) as (r):
            done[r, r] = 1.0

    return main


# All-gather and all-to-all for timing against NCCL (bench/dist_multi_gpu.sh):
# `reps` rounds in one launch, each a push with T.put_block from every
# block to its destination followed by T.barrier_all (so a round is a
# complete collective, as one NCCL call is).  X holds n float32 per rank
# (ag) or P chunks of n (a2a).
#   ag_loop:  Y[me * n + i] on every rank = X[i] of rank me
#   a2a_loop: Y[me * n + i] on rank d = X[d * n + i] of rank me
def ag_loop(P, n, chunk=16384, reps=1, threads=256):
    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((P * n,), "float32")):
        with T.Kernel(T.ceildiv(n, chunk), P, threads=threads) as (bx, by):
            me = T.get_rank()
            for it in T.serial(reps):
                T.put_block(src=T.address_of(X[bx * chunk]), dst=T.address_of(Y[me * n + bx * chunk]),
                            size=T.min(chunk, n - bx * chunk), dst_pe=(me + by) % P)
                T.barrier_all()

    return main


def ag_loop_ref(P, n):
    @T.prim_func
    def main(X: T.Tensor((P, n), "float32"), Y: T.Tensor((P, P * n), "float32")):
        with T.Kernel(P, threads=1) as (r):
            for s in T.serial(P):
                for i in T.serial(n):
                    Y[r, s * n + i] = X[s, i]

    return main


def a2a_loop(P, n, chunk=16384, reps=1, threads=256):
    @T.prim_func
    def main(X: T.Tensor((P * n,), "float32"), Y: T.Tensor((P * n,), "float32")):
        with T.Kernel(T.ceildiv(n, chunk), P, threads=threads) as (bx, by):
            me = T.get_rank()
            for it in T.serial(reps):
                T.put_block(src=T.address_of(X[((me + by) % P) * n + bx * chunk]),
                            dst=T.address_of(Y[me * n + bx * chunk]),
                            size=T.min(chunk, n - bx * chunk), dst_pe=(me + by) % P)
                T.barrier_all()

    return main


def a2a_loop_ref(P, n):
    @T.prim_func
    def main(X: T.Tensor((P, P * n), "float32"), Y: T.Tensor((P, P * n), "float32")):
        with T.Kernel(P, threads=1) as (r):
            for s in T.serial(P):
                for i in T.serial(n):
                    Y[r, s * n + i] = X[s, r * n + i]

    return main
