# ARGS: compile FILE --entry k -D n=16 --target cuda
# ENV: TILESCALE_CUDA_ARCH=sm_90
# Fragment work inside a branch that depends on the thread index is refused
# (pass partition_threads): layout inference spreads the fragment over all
# 128 threads, but only the 32 that take the branch would do their part, so
# rows 4..15 of B were silently never stored.  (TileLang lays such a
# fragment over the 32 threads the condition bounds; the example this comes
# from is TileLang's deepseek_mhc/example_mhc_pre.py.)
import tilelang.language as T


def k(n):
    @T.prim_func
    def main(A: T.Tensor((n, n), "float32"), B: T.Tensor((n, n), "float32")):
        with T.Kernel(1, threads=128) as i:
            if T.get_thread_binding() < 32:
                cm = T.alloc_fragment((n, n), "float32")
                for j, k in T.Parallel(n, n):
                    cm[j, k] = A[j, k] * 2.0
                for j, k in T.Parallel(n, n):
                    B[j, k] = cm[j, k]

    return main
