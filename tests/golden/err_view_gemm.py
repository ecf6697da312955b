# ARGS: compile FILE --entry kern --target cuda
# ENV: TILESCALE_CUDA_ARCH=sm_90a
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1) as bx:
            S = T.alloc_shared((64, 64), "float16")
            F = T.alloc_fragment((64, 64), "float32")
            V = T.reshape(S, (64, 64))
            T.copy(A[0:64, 0:64], S)
            T.gemm(V, S, F)
            T.copy(F, C[0:64, 0:64])

    return main
