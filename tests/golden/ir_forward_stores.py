# ARGS: compile FILE --entry k --target cuda --dump-after insert_sync
# ENV: TILESCALE_CUDA_ARCH=sm_90
# deepseek_v32's sparse MLA producer pattern (tests/run/kernels/cp_async.py
# gather_flags_branch): under `if tx >= 64:` the 8 threads of a row store its
# validity flag and test it at once.  Pass forward_stores makes the test read
# the thread's own value (`fw`, a let before the store); the 8 stores of one
# flag write one value (row[0] was just loaded from Idx at the row's index),
# which insert_sync accepts (sync_same_value.c); one barrier after the wait.
import tilelang.language as T


def k(R=1024, S=32):
    @T.prim_func
    def main(X: T.Tensor((R, 64), "float16"), Idx: T.Tensor((4, S), "int32"), Y: T.Tensor((4, S, 64), "float16")):
        with T.Kernel(4, threads=128) as b:
            T_shared = T.alloc_shared((S, 64), "float16")
            valid = T.alloc_shared((S,), "bool")
            row = T.alloc_var("int32")
            tx = T.get_thread_binding()
            if tx >= 64:
                for r in T.serial(S // 8):
                    row = Idx[b, r * 8 + (tx - 64) // 8]
                    valid[r * 8 + (tx - 64) // 8] = row >= 0 and row < R
                    if valid[r * 8 + (tx - 64) // 8]:
                        T.ptx_cp_async(T.access_ptr(T_shared[r * 8 + (tx - 64) // 8, (tx - 64) % 8 * 8], "w", 8),
                                       T.access_ptr(X[row, (tx - 64) % 8 * 8], "r", 8), 8)
                T.ptx_commit_group()
                T.ptx_wait_group(0)
            for i, j in T.Parallel(S, 64):
                Y[b, i, j] = T.if_then_else(valid[i], T_shared[i, j] * 2, -1)

    return main
