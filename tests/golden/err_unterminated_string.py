# ARGS: compile FILE --entry kern
# An unterminated """ at the end of the file swallows the rest: Python refuses
# the whole file, and so do we (it used to be accepted silently).
import tilelang.language as T


def kern(n=4):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            A[0] = 1.0

    return main


"""
The end.
