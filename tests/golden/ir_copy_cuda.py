# ARGS: compile FILE --entry copies -D M=50 -D N=70 --target cuda --dump-after lower_tile_ops
# T.copy from global to shared memory on the CUDA target (lower_copy_cuda):
# every thread of a thread range issues vector copies of 16 bytes (8 halves,
# 4 floats) or fewer lanes where the row demands it (6 floats: 2 lanes;
# 12 int8: 4 lanes), between two barriers; rows past the tensor's end are
# zero-filled by the predicate.  A float16 row of 7 elements has no 4-byte
# vector: the generic loops remain.  A row start known only at run time
# (off) is tested at run time, with the generic loops as the other branch.
import tilelang
import tilelang.language as T


@tilelang.jit
def copies(M, N):
    off = T.dynamic("off")

    @T.prim_func
    def main(H: T.Tensor((M, 64), "float16"), F: T.Tensor((M, N), "float32"), I: T.Tensor((M, 12), "int8"),
             O: T.Tensor((M, 7), "float16"), R: T.Tensor((M, off + 8), "float16")):
        with T.Kernel(T.ceildiv(M, 16), threads=64) as bx:
            hs = T.alloc_shared((16, 64), "float16")
            fs = T.alloc_shared((16, 6), "float32")
            its = T.alloc_shared((16, 12), "int8")
            os = T.alloc_shared((16, 7), "float16")
            rs = T.alloc_shared((16, 8), "float16")
            T.copy(H[bx * 16, 0], hs)
            T.copy(F[bx * 16, 6], fs)
            T.copy(I[bx * 16, 0], its)
            T.copy(O[bx * 16, 0], os)
            T.copy(R[bx * 16, off], rs)
            H[bx * 16, 0] = hs[1, 2] + os[3, 4] + rs[0, 0]
            F[bx * 16, 0] = fs[1, 2]
            I[bx * 16, 0] = its[1, 2]

    return main
