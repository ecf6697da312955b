# Buffer views (T.reshape, T.view(buf, shape=), T.Tensor(shape, dtype,
# buf.data)): each kernel against a naive one that indexes the same
# storage by hand (tests/run/views.sh; the CUDA passes in
# tests/unit/test_interp_examples.c).
import tilelang
import tilelang.language as T


# A gemm accumulator [block_N, Q*H] seen as [block_N, Q, H]: a T.Parallel
# nest and a tile reduction over the view (fp8_lighting_indexer's pattern).
@tilelang.jit(out_idx=[2])
def reshape_reduce(M=96, H=4, Q=8, K=32, block_N=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((Q * H, K), "float16"), L: T.Tensor((M, Q), "float32")):
        with T.Kernel(T.ceildiv(M, block_N), threads=128) as bx:
            a = T.alloc_shared((block_N, K), "float16")
            b = T.alloc_shared((Q * H, K), "float16")
            s = T.alloc_fragment((block_N, Q * H), "float32")
            s3 = T.reshape(s, (block_N, Q, H))
            lg = T.alloc_fragment((block_N, Q), "float32")
            T.copy(A[bx * block_N, 0], a)
            T.copy(B[0, 0], b)
            T.gemm(a, b, s, transpose_B=True, clear_accum=True)
            for i, q, h in T.Parallel(block_N, Q, H):
                s3[i, q, h] = T.max(s3[i, q, h], 0) * (h + 1)
            T.reduce_sum(s3, lg, dim=-1, clear=True)
            T.copy(lg, L[bx * block_N, 0])

    return main


@tilelang.jit(out_idx=[2])
def reshape_reduce_naive(M=96, H=4, Q=8, K=32, block_N=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((Q * H, K), "float16"), L: T.Tensor((M, Q), "float32")):
        with T.Kernel(M, threads=1) as i:
            for q in T.serial(Q):
                tot = T.alloc_var("float32")
                tot = 0.0
                for h in T.serial(H):
                    acc = T.alloc_var("float32")
                    acc = 0.0
                    for kk in T.serial(K):
                        acc += T.cast(A[i, kk], "float32") * T.cast(B[q * H + h, kk], "float32")
                    tot += T.max(acc, 0) * (h + 1)
                L[i, q] = tot

    return main


# Global tensors seen flat (example_convolution's kernel_flat/out_flat):
# X [B, R, C] as [B*R, C] and Y [B, R, C] as [B*R, C], tiles copied through
# shared memory with a scale; a partial last tile.
@tilelang.jit(out_idx=[1])
def flat_copy(B=3, R=10, C=64, block_M=16):
    @T.prim_func
    def main(X: T.Tensor((B, R, C), "float32"), Y: T.Tensor((B, R, C), "float32")):
        with T.Kernel(T.ceildiv(B * R, block_M), threads=128) as bx:
            xf = T.Tensor((B * R, C), "float32", X.data)
            yf = T.Tensor((B * R, C), "float32", Y.data)
            t = T.alloc_shared((block_M, C), "float32")
            T.copy(xf[bx * block_M, 0], t)
            for i, j in T.Parallel(block_M, C):
                t[i, j] = t[i, j] * 2 + j
            T.copy(t, yf[bx * block_M, 0])

    return main


@tilelang.jit(out_idx=[1])
def flat_copy_naive(B=3, R=10, C=64, block_M=16):
    @T.prim_func
    def main(X: T.Tensor((B, R, C), "float32"), Y: T.Tensor((B, R, C), "float32")):
        with T.Kernel(B, threads=1) as b:
            for r in T.serial(R):
                for j in T.serial(C):
                    Y[b, r, j] = X[b, r, j] * 2 + j

    return main


# A shared tile [N] written through a [N/W, W] view (T.view(shape=)), then
# its row sums through a reshape of the view (a view of a view).
@tilelang.jit(out_idx=[1])
def view_rows(N=256, W=16):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), S: T.Tensor((N // W,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            t = T.alloc_shared((N,), "float32")
            tv = T.view(t, shape=[N // W, W])
            tr = T.reshape(tv, (N // W, W // 4, 4))
            s = T.alloc_fragment((N // W, W // 4), "float32")
            for i, j in T.Parallel(N // W, W):
                tv[i, j] = X[i * W + j] + i
            T.reduce_sum(tr, s, dim=2)
            for i in T.Parallel(N // W):
                S[i] = s[i, 0] - s[i, W // 4 - 1]

    return main


@tilelang.jit(out_idx=[1])
def view_rows_naive(N=256, W=16):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), S: T.Tensor((N // W,), "float32")):
        with T.Kernel(N // W, threads=1) as i:
            a = T.alloc_var("float32")
            b = T.alloc_var("float32")
            a = 0.0
            b = 0.0
            for j in T.serial(4):
                a += X[i * W + j] + i
                b += X[i * W + W - 4 + j] + i
            S[i] = a - b

    return main


# A flat shared buffer filled through a 2-D view by T.copy inside
# T.Pipelined (the copy of a view is not multi-buffered: it stays in order),
# read through the view: row sums of X.
@tilelang.jit(out_idx=[1])
def pipelined_view(M=64, N=256, block_N=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            t = T.alloc_shared((M * block_N,), "float32")
            tv = T.reshape(t, (M, block_N))
            acc = T.alloc_fragment((M,), "float32")
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
                T.copy(X[0, ko * block_N], tv)
                for i in T.Parallel(M):
                    for j in T.serial(block_N):
                        acc[i] += tv[i, j]
            T.copy(acc, Y[0])

    return main


@tilelang.jit(out_idx=[1])
def pipelined_view_naive(M=64, N=256, block_N=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M,), "float32")):
        with T.Kernel(M, threads=1) as i:
            s = T.alloc_var("float32")
            s = 0.0
            for j in T.serial(N):
                s += X[i, j]
            Y[i] = s

    return main
