# ARGS: compile FILE --entry kern --target cuda --dump-after insert_sync
# ENV: TILESCALE_CUDA_ARCH=sm_90
# T.allreduce between the two warpgroups of a 256-thread block (issue 6,
# part C): the body runs as one role per warpgroup; each copies its own
# tile into its slot of the call site's shared scratch coll_unit_L_C
# [2, 4, 8] (allocated once, before the roles), the units meet at a
# barrier of the block (bar.sync 1, 256: insert_sync numbers the roles'
# own barriers above it), each folds the slots in unit order into its
# tile (slot 0 + slot 1), a second barrier before the scratch may be
# written again.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(X: T.Tensor((2, 4, 8), "float32"), Y: T.Tensor((2, 4, 8), "float32")):
        with T.Kernel(1, threads=256) as bx:
            with T.Scale("warpgroup") as (wg, nwg):
                a = T.alloc_shared((4, 8), "float32")
                T.copy(X[wg, 0, 0], a)
                T.allreduce(a)
                T.copy(a, Y[wg, 0, 0])

    return main
