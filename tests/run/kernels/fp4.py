# T.float4_e2m1fn (OCP MX FP4 E2M1; doc/LANGUAGE.md "T.float4_e2m1fn"): tensors
# are int8 bytes holding two codes each, the low nibble first, the last extent
# halved; fragments hold one code to a byte.
#   to_fp4: a T.Parallel store of converted values into a shared tile, copied
#     out whole (float -> fp4: nearest, ties to even, saturating at +-6);
#   to_fp4_frag: the same through a fragment and a T.copy into the tensor;
#   from_fp4: a T.Parallel read of the tensor's codes (fp4 -> float);
#   quant: block-wise FP4 quantization with power-of-two scales (the shape of
#     TileLang's deepseek_v4 act_quant fp4 kernel: T.reduce_absmax of a
#     bfloat16 fragment, a scale per row, an fp4 fragment, a shared fp4 tile);
#   gemm_bs: T.mma_gemm_blockscaled (the NVFP4 form: UE4M3 scale bytes, one
#     per 16 K elements, four to a uint32 word) in either scale layout.
# tests/unit/test_fp4.c runs them on the C target against naive references.
import tilelang
import tilelang.language as T


def to_fp4(N, src="float32", block=64, threads=32):
    @T.prim_func
    def main(X: T.Tensor((N,), src), Q: T.Tensor((N,), T.float4_e2m1fn)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            S = T.alloc_shared((block,), T.float4_e2m1fn)
            for i in T.Parallel(block):
                S[i] = X[bx * block + i]
            T.copy(S, Q[bx * block])

    return main


def to_fp4_frag(M, N, src="float32", block_M=16, threads=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), src), Q: T.Tensor((M, N), T.float4_e2m1fn)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            F = T.alloc_fragment((block_M, N), T.float4_e2m1fn)
            for i, j in T.Parallel(block_M, N):
                F[i, j] = X[bx * block_M + i, j]
            T.copy(F, Q[bx * block_M, 0])

    return main


def from_fp4(N, dst="float32", block=64, threads=32):
    @T.prim_func
    def main(Q: T.Tensor((N,), T.float4_e2m1fn), Y: T.Tensor((N,), dst)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            for i in T.Parallel(block):
                Y[bx * block + i] = Q[bx * block + i]

    return main


def quant(M, N, group=32, block_M=32, threads=128):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.bfloat16), Q: T.Tensor((M, N), T.float4_e2m1fn), S: T.Tensor((M, N // group), T.float32)):
        with T.Kernel(T.ceildiv(M, block_M), N // group, threads=threads) as (bx, by):
            xs = T.alloc_shared((block_M, group), T.bfloat16)
            xf = T.alloc_fragment((block_M, group), T.bfloat16)
            amax = T.alloc_fragment((block_M,), T.float32)
            sc = T.alloc_fragment((block_M,), T.float32)
            yf = T.alloc_fragment((block_M, group), T.float4_e2m1fn)
            ys = T.alloc_shared((block_M, group), T.float4_e2m1fn)
            T.copy(X[bx * block_M, by * group], xs)
            T.copy(xs, xf)
            T.reduce_absmax(xf, amax, dim=1)
            for i in T.Parallel(block_M):
                # the power of two at or above amax / 6 (amax at least 6 * 2^-126)
                bits = T.reinterpret(T.max(amax[i], 6 * (2**-126)) * (1.0 / 6.0), "uint32")
                e = T.Cast("int32", ((bits >> 23) & 0xFF) - 127 + T.if_then_else((bits & 0x7FFFFF) != 0, 1, 0))
                sc[i] = T.reinterpret((e + 127) << 23, "float32")
            for i, j in T.Parallel(block_M, group):
                yf[i, j] = T.clamp(xf[i, j] / sc[i], -6.0, 6.0)
            for i in T.Parallel(block_M):
                S[bx * block_M + i, by] = sc[i]
            T.copy(yf, ys)
            T.copy(ys, Q[bx * block_M, by * group])

    return main


def gemm_bs(M, N, K, block_M=64, block_N=64, block_K=128, layout="blockscaled_chunk_kmajor", threads=128):
    kw = block_K // 64  # scale words per tile row
    k_blocks = K // block_K
    M_pad = -(-M // block_M) * block_M
    N_pad = -(-N // block_N) * block_N
    chunk = layout == "blockscaled_chunk_kmajor"

    @T.prim_func
    def main(
        A: T.Tensor((M, K), T.float4_e2m1fn),
        B: T.Tensor((N, K), T.float4_e2m1fn),
        SFA: T.Tensor((M_pad * k_blocks, kw), T.uint32),
        SFB: T.Tensor((N_pad * k_blocks, kw), T.uint32),
        C: T.Tensor((M, N), T.float32),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            As = T.alloc_shared((block_M, block_K), T.float4_e2m1fn)
            Bs = T.alloc_shared((block_N, block_K), T.float4_e2m1fn)
            SFAs = T.alloc_shared((block_M, kw), T.uint32)
            SFBs = T.alloc_shared((block_N, kw), T.uint32)
            acc = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(acc)
            for ko in T.Pipelined(k_blocks, num_stages=2):
                T.copy(A[by * block_M, ko * block_K], As)
                T.copy(B[bx * block_N, ko * block_K], Bs)
                if chunk:  # tile (by, ko)'s words: rows (by * k_blocks + ko) * block_M ..
                    for r, w in T.Parallel(block_M, kw):
                        SFAs[r, w] = SFA[(by * k_blocks + ko) * block_M + r, w]
                    for r, w in T.Parallel(block_N, kw):
                        SFBs[r, w] = SFB[(bx * k_blocks + ko) * block_N + r, w]
                else:  # row-major words: SF[row, K / 64] viewed as (rows * k_blocks, kw)
                    for r, w in T.Parallel(block_M, kw):
                        SFAs[r, w] = SFA[(by * block_M + r) * k_blocks + ko, w]
                    for r, w in T.Parallel(block_N, kw):
                        SFBs[r, w] = SFB[(bx * block_N + r) * k_blocks + ko, w]
                T.mma_gemm_blockscaled(As, Bs, acc, SFAs, SFBs, transpose_B=True, k_start=0,
                                       sf_a_granularity_k=16, sf_b_granularity_k=16, sf_layout=layout)
            T.copy(acc, C[by * block_M, bx * block_N])

    return main


def to_fp4_dyn(threads=32):
    # run-time extents: the packed tensor is (M, (N + 1) // 2) bytes
    M = T.dynamic("M")
    N = T.dynamic("N")

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Q: T.Tensor((M, N), T.float4_e2m1fn)):
        with T.Kernel(T.ceildiv(N, 32), M, threads=threads) as (bx, by):
            for j in T.Parallel(32):
                Q[by, bx * 32 + j] = X[by, bx * 32 + j]

    return main
