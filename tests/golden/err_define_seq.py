# ARGS: compile FILE --entry f -D sizes=(3,,5) --target c
# A -D sequence with an empty item is an error naming the value.
import tilelang
import tilelang.language as T


@tilelang.jit
def f(sizes):
    @T.prim_func
    def main(A: T.Tensor((sum(sizes),), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[0] = 1.0

    return main
