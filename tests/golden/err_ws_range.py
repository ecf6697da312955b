# ARGS: compile FILE --entry k
# T.ws(1) is warp group 1, threads [128, 256): outside a block of 128 threads.
import tilelang.language as T


def k():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            with T.ws(1):
                T.clear(A)

    return main
