# ARGS: compile FILE --entry kern --target c
# T.Scale("warp") bodies run once per warp, on the warp's first lane (real
# warps: concurrently on CUDA); a tile operator that needs the whole block
# (here T.gemm) cannot be in one, and says so.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((16, 16), "float32"), B: T.Tensor((16, 16), "float32"), C: T.Tensor((16, 16), "float32")):
        with T.Kernel(1, threads=64) as bx:
            acc = T.alloc_fragment((16, 16), "float32")
            with T.Scale("warp") as (w, nw):
                T.gemm(A, B, acc)
            T.copy(acc, C)

    return main
