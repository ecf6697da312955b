# Misused distributed primitives, for tests/run/dist_errors.sh: each entry
# must fail with a clear message on sim ranks, never hang.
import tilelang
import tilelang.language as T


# rank 0 waits for a flag no rank ever sets
def lonely_wait(P):
    @T.prim_func
    def main(sig: T.Tensor((P,), "int32")):
        with T.Kernel(1, threads=32) as (bx):
            if T.get_rank() == 0:
                T.wait_eq(sig[1], 1)

    return main


# a collective called by some ranks only
def partial_barrier(P):
    @T.prim_func
    def main(x: T.Tensor((P,), "float32")):
        with T.Kernel(2, threads=32) as (bx):
            if T.get_rank() != 1:
                T.barrier_all()

    return main


# T.barrier_blocks that rank 1 skips
def partial_barrier_blocks(P):
    @T.prim_func
    def main(bar: T.Tensor((P,), "int32")):
        with T.Kernel(1, threads=32) as (bx):
            if T.get_rank() != 1:
                T.barrier_blocks(bar)

    return main


# T.st to a rank that does not exist
def bad_peer(P):
    @T.prim_func
    def main(x: T.Tensor((P,), "float32")):
        with T.Kernel(1, threads=32) as (bx):
            T.st(x[0], 1.0, dst_pe=T.get_rank() + P)

    return main


# a get running past the end of its source
def get_past_end(N):
    @T.prim_func
    def main(x: T.Tensor((N,), "float32"), y: T.Tensor((2 * N,), "float32")):
        with T.Kernel(1, threads=32) as (bx):
            T.get_block(src=T.address_of(x[0]), dst=T.address_of(y[0]), size=2 * N, src_pe=0)

    return main


# rank 1 fails at once (a peer that does not exist) while rank 0 waits for
# a flag from it: the failure must end rank 0's wait long before its timeout
def fail_while_waiting(P):
    @T.prim_func
    def main(sig: T.Tensor((P,), "int32")):
        with T.Kernel(1, threads=32) as (bx):
            if T.get_rank() == 0:
                T.wait_eq(sig[1], 1)
            else:
                T.st(sig[0], 1, dst_pe=P + 1)

    return main
