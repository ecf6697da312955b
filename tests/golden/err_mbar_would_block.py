# ARGS: run FILE --entry k --seed 1 --target c --threads 1
# The consumer's role comes first in program order and waits on a phase only the producer's
# role (after it) completes: the C target runs the roles one after another, so the wait
# cannot return; the run stops with an error naming the mbarrier and the line.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def k():
    @T.prim_func
    def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            S = T.alloc_shared((128,), "float32")
            full = T.alloc_barrier(128)
            with T.ws(1):
                T.barrier_wait(full, 0)
                T.copy(S, B)
            with T.ws(0):
                T.copy(A, S)
                T.barrier_arrive(full)

    return main
