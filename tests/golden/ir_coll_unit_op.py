# ARGS: compile FILE --entry kern --target c --dump-after check_bounds
# T.reduce_scatter between the two warpgroups of a 256-thread block (issue 6,
# part C) as the elaborator leaves it: one tile op per unit's role,
# coll.reduce_scatter(src -> dst, op, scratch, unit), the call site's shared
# scratch [2, 8, 8] allocated once before the roles.  The pass lower_coll
# expands it (ir_coll_unit_lowered.py has the same kernel after it).
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
