# ARGS: compile FILE --entry kern
# A stateless T.PersistentTileScheduler only decodes tiles (sched.coord):
# init/next_tile/valid/m_idx need the state it did not allocate.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((8,), "int32")):
        with T.Kernel(2, threads=1) as b:
            sched = T.PersistentTileScheduler(4, 2, num_workers=2, stateful=False)
            m, n = sched.coord(b)
            A[m] = n
            sched.init(b)

    return main
