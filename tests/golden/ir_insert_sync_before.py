# ARGS: compile FILE --entry sync --target cuda --dump-after partition_threads
# The kernel of ir_insert_sync.py before insert_sync: thread-level IR
# (thread ranges from partition_threads) without any barrier.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def sync():
    @T.prim_func
    def main(X: T.Tensor((64,), "float32"), Y: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            a = T.alloc_shared((64,), "float32")
            b = T.alloc_shared((64,), "float32")
            for i in T.Parallel(64):
                a[i] = X[i] * 0.5
            for i in T.Parallel(64):
                a[i] = a[i] * 2.0
            for i in T.Parallel(64):
                b[i] = a[63 - i]
            for k in T.serial(4):
                for i in T.Parallel(64):
                    a[i] = b[(i + k) % 64]
                for i in T.Parallel(64):
                    b[i] = a[(i + 1) % 64]
            for i in T.Parallel(64):
                Y[i] = b[i] + 1.0

    return main
