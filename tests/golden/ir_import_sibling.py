# ARGS: compile FILE --entry kern -D n=64 -D block=32 --target c --emit ir
# `from helpers import f` where helpers.py is beside the compiled file (here
# data/import_helpers.py): the helper module's top level runs at compile time
# and its functions are called with their own module as scope (issue 8 D;
# TileLang's examples share helpers between files this way).
import tilelang.language as T
from data.import_helpers import check_block, scaled


def kern(n, block):
    check_block(block)
    factor = scaled(2)

    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(n // block, threads=block) as bx:
            for i in T.Parallel(block):
                A[bx * block + i] = A[bx * block + i] * factor

    return main
