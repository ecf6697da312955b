# ARGS: compile FILE --entry kern -D n=64 --target c --dump-after thread_loops_c
# The C target runs a block as one thread of control: the pass thread_loops_c
# puts what differs between the threads (T.get_thread_binding and what is
# derived from it) in thread ranges, which the C printer runs as loops over
# the threads.  Pinned here: uniform code (the T.Parallel loop, the uniform
# shared store, the register every thread holds alike) stays block-level; a
# let whose value differs between threads becomes a one-element register
# stored in a thread range; a register holding per-thread values gets a copy
# per thread ([tid, ...]); a per-thread `if` and per-thread stores are each a
# thread range.  (Checked by running: examples/distributed/thread_level.py.)
import tilelang.language as T


def kern(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=(n // 2, 2)) as bx:
            tx = T.get_thread_binding()
            ty = T.get_thread_binding(1)
            S = T.alloc_shared((n,), "float32")
            same = T.alloc_local((1,), "float32")
            own = T.alloc_local((1,), "float32")
            same[0] = 2.0
            for i in T.Parallel(n):
                S[i] = A[i] * same[0]
            T.sync_threads()
            t = ty * (n // 2) + tx
            own[0] = S[n - 1 - t]
            u = S[t] * 3.0
            B[t] = own[0] + u
            if t == 0:
                S[0] = 0.0

    return main
