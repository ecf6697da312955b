# ARGS: compile FILE --entry kern --target cuda --emit ir
# ENV: TILESCALE_CUDA_ARCH=sm_90
# T.tvm_thread_allreduce under T.attr(T.comm_reducer(...)) on the CUDA target:
# each thread's value into its slot of a shared scratch, a barrier, a fold
# over the slots of the threads that differ only along threadIdx.y, a
# barrier before the scratch is written again (tests/run/allreduce.sh runs it).
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((4, 64), "float32"), Y: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=(4, 8)) as bx:
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            part = T.alloc_local((1,), "float32")
            tot = T.alloc_local((1,), "float32")
            part[0] = 0.0
            for j in T.serial(8):
                part[0] += A[tn, tk * 8 + j]
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, "float32")]), "reduce_scope",
                        T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), part[0], True, tot[0], tk, dtype="handle"))
            Y[tn] = tot[0]

    return main
