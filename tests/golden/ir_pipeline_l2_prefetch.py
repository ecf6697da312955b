# ARGS: compile FILE --entry colsum -D N=128 -D bm=32 -D bn=64 --target cuda --dump-after inject_pipeline
# ENV: TILESCALE_CUDA_ARCH=sm_90 TILESCALE_CUDA_L2_PREFETCH=128
# The L2 prefetch hint of the asynchronous copies (TILESCALE_CUDA_L2_PREFETCH, off by
# default) is decided by inject_pipeline and recorded on the kernel
# ("cp_async_l2_prefetch 128 bytes"), which the CUDA printer only prints.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def colsum(N, bm, bn):
    M = T.dynamic("M")

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, bn), threads=64) as bx:
            Xs = T.alloc_shared((bm, bn), "float32")
            acc = T.alloc_shared((bn,), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(M, bm), num_stages=3):
                T.copy(X[k * bm, bx * bn], Xs)
                for j in T.Parallel(bn):
                    for i in T.serial(bm):
                        acc[j] += Xs[i, j]
            T.copy(acc, Y[bx * bn])

    return main
