# ARGS: compile FILE --entry kern
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((64,), "uint32")):
        with T.Kernel(1, threads=1) as bx:
            for i in T.serial(64):
                A[i] = T.rng_rand()

    return main
