# ARGS: compile FILE --entry kern --target c
# A T.Scale("warp") body with a tile operator of the whole warp (here
# T.gemm) runs as a role of each warp's 32 threads; every warp writing the
# same block fragment is a race between the warps (they run at the same
# time), refused with a message naming the tile (each warp needs its own
# accumulator, or its T.view part of the block's).
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
