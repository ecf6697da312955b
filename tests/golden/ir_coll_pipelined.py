# ARGS: compile FILE --entry kern --target cuda --dump-after pipeline_planning
# ENV: TILESCALE_CUDA_ARCH=sm_90
# A collective between two warpgroups inside a T.Pipelined loop: the CUDA
# pass pipeline_planning runs before lower_coll and sees the collective as
# one op, coll.allreduce(a -> a, ...), with its regions (it reads and
# writes `a` and the shared scratch), not its copies and barriers.  Here
# it plans no stages: every statement of the body uses `a` in place.
import tilelang.language as T


def kern(K=4):
    @T.prim_func
    def main(X: T.Tensor((K, 2, 4, 8), "float32"), Y: T.Tensor((K, 2, 4, 8), "float32")):
        with T.Kernel(1, threads=256) as bx:
            with T.Scale("warpgroup") as (wg, nwg):
                a = T.alloc_shared((4, 8), "float32")
                for k in T.Pipelined(K, num_stages=2):
                    T.copy(X[k, wg, 0, 0], a)
                    T.allreduce(a)
                    T.copy(a, Y[k, wg, 0, 0])

    return main
