# ARGS: run FILE --entry k --seed 1 --target c --threads 1
# ENV: TILESCALE_WAIT_TIMEOUT=1
# The consumer's role waits on a phase of 256 arrivals; the producer's role (128 threads)
# arrives once, so the phase never completes.  The roles run as coroutines on the C target
# (the consumer comes first in program order and waits while the producer runs), and the wait
# ends at the wait timeout with an error naming the mbarrier and the line, not a hang.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def k():
    @T.prim_func
    def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            S = T.alloc_shared((128,), "float32")
            full = T.alloc_barrier(256)
            with T.ws(1):
                T.barrier_wait(full, 0)
                T.copy(S, B)
            with T.ws(0):
                T.copy(A, S)
                T.barrier_arrive(full)

    return main
