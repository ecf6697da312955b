# ARGS: compile FILE --entry k --target c
# A grid barrier needs every thread of every block: T.sync_grid() in a
# branch on the thread index (here thread 0 only) is refused at the barrier
# (on CUDA its bar.sync would wait for threads that never come).
import tilelang.language as T


def k():
    @T.prim_func
    def main(X: T.Tensor((64,), "float32")):
        with T.Kernel(4, threads=32) as b:
            tx = T.get_thread_binding()
            for i in T.serial(2):
                if tx == 0:
                    X[b + i] = 1.0
                    T.sync_grid()

    return main
