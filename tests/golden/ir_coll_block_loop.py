# ARGS: compile FILE --entry kern --target c --dump-after lower_coll
# T.allreduce of float16 tiles between 10 blocks (T.Scale("block")) after
# lower_coll: beyond 8 units the fold is a loop over the slots, in a
# float32 staging tile (coll_acc), cast back into the block's tile; the
# grid barriers around it as in ir_coll_block_lowered.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(X: T.Tensor((10, 4, 8), "float16")):
        with T.Kernel(10, threads=32) as bx:
            with T.Scale("block") as (b, nb):
                a = T.alloc_shared((4, 8), "float16")
                T.copy(X[b, 0, 0], a)
                T.allreduce(a)
                T.copy(a, X[b, 0, 0])

    return main
