# ARGS: compile FILE --entry main --target c --emit c
# T.tcgen05_mma_arrive (one arrive for the group running it) under a branch
# on the thread index that is not a T.ws role (no tile op in it: per-thread
# code): refused by pass lower_tmem on every target, naming the branch's
# line (partition_threads would otherwise have each thread of the group
# arrive on an mbarrier expecting that many arrivals, and only some would).
import tilelang.language as T

@T.prim_func
def main(C: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        done = T.alloc_barrier([1])
        tid = T.get_thread_binding()
        if tid < 32:
            T.tcgen05_mma_arrive(done)
        T.mbarrier_wait_parity(done, 0)
        C[tid] = 1.0
