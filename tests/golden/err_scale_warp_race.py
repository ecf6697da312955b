# ARGS: compile FILE --entry kern --target cuda --emit ir
# In a T.Scale("warp") branch the lanes of a warp share the copies, a
# __syncwarp between them; that orders the lanes of one warp only.  Here
# warps 0 and 1 both fill and read the same tile S (its rows do not depend
# on the warp): a race between warps inside thread-level code, which no
# barrier can order, so insert_sync refuses it (the __syncwarp must not
# hide it).
import tilelang.language as T


def kern():
    @T.prim_func
    def main(X: T.Tensor((64, 16), "float32"), Y: T.Tensor((64, 16), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((4, 16), "float32")
            with T.Scale("warp") as (w, nw):
                if w < 2:
                    T.copy(X[w * 4:w * 4 + 4, 0:16], S[0:4, 0:16])
                    T.copy(S[0:4, 0:16], Y[w * 4:w * 4 + 4, 0:16])

    return main
