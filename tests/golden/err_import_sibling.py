# ARGS: compile FILE --entry kern -D n=64 -D block=48 --target c
# An assertion in a helper imported from beside the file fails with the
# helper's own file:line:col and message.
import tilelang.language as T
from data.import_helpers import check_block


def kern(n, block):
    check_block(block)

    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[0] = 0.0

    return main
