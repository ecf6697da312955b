# ARGS: compile FILE --entry kern --dump-after resolve_views
# T.float4_e2m1fn after resolve_views: a fragment of codes (one to a uint8),
# a packed shared tile (two codes to an int8 byte, the low nibble first), the
# conversions as integer and float32 arithmetic (float -> code: the midpoints
# counted, ties to the even code; code -> float: the magnitudes' halves
# are the nibbles of 0xC8643210), the T.Parallel store split into byte pairs,
# the copy fragment -> shared moving codes, the copy shared -> global moving bytes.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(X: T.Tensor((8, 16), "bfloat16"), Q: T.Tensor((8, 16), T.float4_e2m1fn), Y: T.Tensor((8, 16), "float32")):
        with T.Kernel(1, threads=32) as bx:
            F = T.alloc_fragment((8, 16), T.float4_e2m1fn)
            S = T.alloc_shared((8, 16), T.float4_e2m1fn)
            for i, j in T.Parallel(8, 16):
                F[i, j] = X[i, j] * 2
            T.copy(F, S)
            T.copy(S, Q)
            for i, j in T.Parallel(8, 16):
                Y[i, j] = T.Cast("float32", S[i, j]) + T.float4_e2m1fn(2.6)

    return main
