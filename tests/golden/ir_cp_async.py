# ARGS: compile FILE --entry gather --target cuda --dump-after insert_sync
# ENV: TILESCALE_CUDA_ARCH=sm_90
# T.ptx_cp_async (tilelang/language: T.access_ptr, tir ptx_cp_async): each
# thread's 16-byte copy is an async vector copy (cp_async<4>) with its
# predicate, committed per row by T.ptx_commit_group and waited for by
# T.ptx_wait_group(0); insert_sync keeps the shared writes in flight until
# that wait and puts the block barrier after it, before the T.Parallel nest
# reads rows that other threads copied.
import tilelang.language as T


def gather(R=1024, D=64, S=32, G=16):
    @T.prim_func
    def main(X: T.Tensor((R, D), "float32"), Idx: T.Tensor((G, S), "int32"), Y: T.Tensor((G, S, D), "float32")):
        with T.Kernel(G, threads=128) as b:
            T_shared = T.alloc_shared((S, D), "float32")
            tx = T.get_thread_binding()
            for r in T.serial(S * D // 4 // 128):
                e = (r * 128 + tx) * 4
                row = Idx[b, e // D]
                T.ptx_cp_async(T.access_ptr(T_shared[e // D, e % D], "w", 4),
                               T.access_ptr(X[row % R, e % D], "r", 4), 4, row >= 0 and row < R)
                T.ptx_commit_group()
            T.ptx_wait_group(0)
            for i, j in T.Parallel(S, D):
                Y[b, i, j] = T_shared[S - 1 - i, D - 1 - j] * 2

    return main
