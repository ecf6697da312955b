# ARGS: compile FILE --entry kern --target c --dump-after check_bounds
# T.allreduce between the ranks of the world as the elaborator leaves it:
# one tile op, coll.allreduce(X -> X, op=sum, ranks) (issue 6: the
# elaborator used to write the expansion itself); ir_coll_rank_lowered.py
# has the same kernel after the pass lower_coll.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(X: T.Tensor((24, 40), "float32")):
        with T.Kernel(3, threads=128) as bx:
            with T.Scale("device") as (dev_id, dev_num):
                T.allreduce(X, op="sum")

    return main
