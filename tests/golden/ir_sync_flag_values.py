# ARGS: compile FILE --entry k --target cuda --dump-after insert_sync
# ENV: TILESCALE_CUDA_ARCH=sm_90
# The 8 threads tx // 8 == i all store flag[i] with one value, B[i] (the
# thread enters it only through tx // 8, the index's varying part; B is an
# input no statement writes): insert_sync accepts the stores of one element
# from several threads (sync_same_value.c) and puts one barrier before the
# copy out.  A value that differs between them is refused
# (err_sync_flag_values).
import tilelang.language as T


def k():
    @T.prim_func
    def main(B: T.Tensor((16,), "int32"), A: T.Tensor((16,), "int32")):
        with T.Kernel(1, threads=128) as bx:
            flag = T.alloc_shared((16,), "int32")
            tx = T.get_thread_binding()
            v = T.alloc_var("int32")
            v = B[tx // 8] * 3
            flag[tx // 8] = v + 1
            T.copy(flag, A)

    return main
