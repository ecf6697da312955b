# ARGS: compile FILE --entry kern
import tilelang.language as T


def kern():
    xs = []
    xs.pop()

    @T.prim_func
    def main(O: T.Tensor((8,), "int32")):
        with T.Kernel(1) as bx:
            O[0] = 1

    return main
