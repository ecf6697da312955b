# ARGS: compile FILE --entry kern
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=(8, 8)) as bx:
            tk = T.get_thread_binding(1)
            s = T.alloc_local((1,), "float32")
            r = T.alloc_local((1,), "float32")
            s[0] = A[tk]
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), s[0], True, r[0], tk, dtype="handle"))
            A[tk] = r[0]

    return main
