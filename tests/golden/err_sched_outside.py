# ARGS: compile FILE --entry kern
# T.PersistentTileScheduler allocates per-thread state: only inside a kernel.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((8,), "int32")):
        sched = T.PersistentTileScheduler(4, 2, num_workers=2)
        with T.Kernel(2, threads=1) as b:
            sched.init(b)

    return main
