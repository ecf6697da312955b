# ARGS: compile FILE --entry kern --target c --dump-after lower_coll
# The kernel of ir_coll_rank_op.py after the pass lower_coll: staging and
# accumulator tiles in shared memory, a world barrier, then rounds of tiles
# of whole rows over the blocks (one round here: 24 x 40 in one tile), each
# pulling every peer's tile and folding it, a world barrier (in place: no
# rank overwrites a tile a peer still pulls), the write.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(X: T.Tensor((24, 40), "float32")):
        with T.Kernel(3, threads=128) as bx:
            with T.Scale("device") as (dev_id, dev_num):
                T.allreduce(X, op="sum")

    return main
