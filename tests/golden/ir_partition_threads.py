# ARGS: compile FILE --entry part -D N=200 --target cuda --dump-after partition_threads
# partition_threads (compare ir_partition_threads_before.py, the same kernel
# after rasterize): the T.Parallel nest over 200 elements goes to 64 threads
# cyclically (t + r * 64, four rounds, the last guarded); the 2-D nest of
# 4 x 16 = 64 iterations takes one round (row i = t // 16, column t % 16);
# the uniform stores s[0] = ... and Y[0] = ... are done by one thread
# (thread_range(1)); the loop over k stays uniform; the plain copy
# Y[i + 4] = s[i + 4] (196 floats) becomes 49 vector copies of 4 floats,
# one per thread of thread_range(49).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def part(N):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            s = T.alloc_shared((N,), "float32")
            m = T.alloc_shared((4, 16), "float32")
            for i in T.Parallel(N):
                s[i] = X[i] * 2.0
            s[0] = s[0] + 1.0
            for k in T.serial(2):
                for i, j in T.Parallel(4, 16):
                    m[i, j] = s[i * 16 + j + k]
            Y[0] = m[3, 15]
            for i in T.Parallel(N - 4):
                Y[i + 4] = s[i + 4]

    return main
