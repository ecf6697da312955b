# ARGS: compile FILE --entry kern --target c --dump-after lower_coll
# The kernel of ir_coll_unit_op.py after the pass lower_coll: each unit's
# op became its copy into its slot of the scratch, a barrier of the block
# (bar.sync 1, 256), the fold of its rows of both slots in unit order (max),
# a second barrier before the scratch may be written again.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(X: T.Tensor((2, 8, 8), "float32"), Y: T.Tensor((2, 4, 8), "float32")):
        with T.Kernel(1, threads=256) as bx:
            with T.Scale("warpgroup") as (wg, nwg):
                a = T.alloc_shared((8, 8), "float32")
                b = T.alloc_shared((4, 8), "float32")
                T.copy(X[wg, 0, 0], a)
                T.reduce_scatter(a, b, op="max")
                T.copy(b, Y[wg, 0, 0])

    return main
