# ARGS: compile FILE --entry k --target cuda --emit cuda
# ENV: TILESCALE_CUDA_ARCH=sm_90
# The 8 threads tx // 8 == i all store flag[i], but not one value (tx % 8
# differs between them): a write-write race with an outcome that depends on
# which store lands last, which no barrier inside thread-level code can
# order, so insert_sync refuses it.  (Stores of one value, as
# tests/run/kernels/cp_async.py gather_flags makes, are accepted:
# sync_same_value.c.)
import tilelang.language as T


def k():
    @T.prim_func
    def main(A: T.Tensor((16,), "int32")):
        with T.Kernel(1, threads=128) as bx:
            flag = T.alloc_shared((16,), "int32")
            tx = T.get_thread_binding()
            flag[tx // 8] = tx % 8
            T.copy(flag, A)

    return main
