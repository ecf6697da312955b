# ARGS: compile FILE --entry part -D N=200 --target cuda --dump-after rasterize
# The kernel of ir_partition_threads.py before partition_threads (after
# rasterize): block-level T.Parallel nests and uniform stores.
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
