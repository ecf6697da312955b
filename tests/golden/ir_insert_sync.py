# ARGS: compile FILE --entry sync --target cuda --dump-after insert_sync
# insert_sync (compare ir_insert_sync_before.py, the same kernel after
# partition_threads): thread t owns a[t] and b[t] in every cyclic nest.
#  - a[i] * 2.0 reads back what the same thread wrote: no barrier;
#  - b[i] = a[63 - i] reads another thread's element: a barrier (RAW);
#  - in the loop, a[i] = b[(i + k) % 64] overwrites a while other threads
#    may still read it (WAR, against the nest before the loop and against
#    the second nest of the previous iteration: the loop's back edge) and
#    reads b written by others (RAW): one barrier at the top of the body
#    serves both; b[i] = a[(i + 1) % 64] needs one more (RAW on a, WAR on b);
#  - Y[i] = b[i] + 1.0 after the loop: b[t] was written by thread t: no barrier.
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
