# ARGS: compile FILE --entry chain -D n=8 --target cuda --dump-after insert_sync
# ENV: TILESCALE_CUDA_ARCH=sm_90
# A block that waits for another block's flag (may_block): partition_threads
# makes the polling loop one thread's read of the flag into a shared word
# (wait_flag) that the whole block decides on, so every thread leaves the loop
# in the same iteration, and marks the loop acquire (the CUDA printer's fence
# after it); insert_sync places the barriers around the shared word.
import tilelang
import tilelang.language as T


def chain(n):
    @T.prim_func
    def main(flags: T.Tensor((n,), 'int32'), vals: T.Tensor((n,), 'int32'),
             seed: T.Tensor((n,), 'int32')):
        with T.Kernel(n, threads=32) as bx:
            if bx < n - 1:
                while flags[bx + 1] == 0:
                    pass
                vals[bx] = vals[bx + 1] + seed[bx]
            else:
                vals[bx] = seed[bx]
            flags[bx] = 1
    return main
