# A 2-D convolution as TileLang's examples/convolution writes it: T.im2col
# tiles of the NHWC image times tiles of the flattened filter
# (T.Tensor(shape, dtype, kernel.data)), stored through a flattened view of
# the output; against a naive convolution (tests/run/conv.sh, and the CUDA
# passes in tests/unit/test_interp_examples.c).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def convolution(N=2, C=16, H=9, W=7, F=32, K=3, S=1, D=1, P=1, block_M=32, block_N=32, block_K=16, threads=128):
    KH, KW = K, K
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1

    @T.prim_func
    def main(data: T.Tensor((N, H, W, C), "float16"), kernel: T.Tensor((KH, KW, C, F), "float16"),
             out: T.Tensor((N, OH, OW, F), "float32")):
        with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(N * OH * OW, block_M), threads=threads) as (bx, by):
            data_shared = T.alloc_shared((block_M, block_K), "float16")
            kernel_shared = T.alloc_shared((block_K, block_N), "float16")
            out_local = T.alloc_fragment((block_M, block_N), "float32")
            kernel_flat = T.Tensor((KH * KW * C, F), "float16", kernel.data)
            out_flat = T.Tensor((N * OH * OW, F), "float32", out.data)
            T.clear(out_local)
            for k_iter in T.Pipelined(T.ceildiv(KH * KW * C, block_K), num_stages=2):
                T.im2col(data, data_shared, by, k_iter, KH, S, D, P)
                T.copy(kernel_flat[k_iter * block_K, bx * block_N], kernel_shared)
                T.gemm(data_shared, kernel_shared, out_local)
            T.copy(out_local, out_flat[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[2])
def convolution_naive(N=2, C=16, H=9, W=7, F=32, K=3, S=1, D=1, P=1, block_M=32, block_N=32, block_K=16, threads=128):
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1

    @T.prim_func
    def main(data: T.Tensor((N, H, W, C), "float16"), kernel: T.Tensor((K, K, C, F), "float16"),
             out: T.Tensor((N, OH, OW, F), "float32")):
        with T.Kernel(N * OH * OW, threads=1) as p:
            n = p // (OH * OW)
            oh = p % (OH * OW) // OW
            ow = p % OW
            for f in T.serial(F):
                acc = T.alloc_var("float32")
                acc = 0.0
                for kh in T.serial(K):
                    for kw in T.serial(K):
                        h = oh * S + kh * D - P
                        w = ow * S + kw * D - P
                        if h >= 0 and h < H and w >= 0 and w < W:
                            for c in T.serial(C):
                                acc += T.cast(data[n, h, w, c], "float32") * T.cast(kernel[kh, kw, c, f], "float32")
                out[n, oh, ow, f] = acc

    return main
