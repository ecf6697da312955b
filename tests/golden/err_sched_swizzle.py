# ARGS: compile FILE --entry kern
# T.PersistentTileScheduler's swizzle_size is a positive compile-time integer.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((8,), "int32")):
        with T.Kernel(2, threads=1) as b:
            sched = T.PersistentTileScheduler(4, 2, num_workers=2, swizzle_size=0)
            sched.init(b)

    return main
