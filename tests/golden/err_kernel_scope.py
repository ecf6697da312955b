# ARGS: compile FILE --entry kern -D n=64
# A buffer allocated in one T.Kernel does not exist in the next one.
import tilelang.language as T


def kern(n):
    @T.prim_func
    def main(X: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            t = T.alloc_shared((n,), "float32")
            T.copy(X, t)
        with T.Kernel(1) as bx:
            T.copy(t, X)

    return main
