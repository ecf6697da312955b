# TVM's T.tvm_thread_allreduce inside `with T.attr(T.comm_reducer(...),
# "reduce_scope", ...)` (TileLang's examples/gemv), against naive kernels:
# tests/run/allreduce.sh on the C target, bench/gpu_covlang.sh on a GPU; the
# CUDA IR is pinned by tests/golden/ir_allreduce_cuda.py.
import tilelang
import tilelang.language as T


# y[n] = sum_k A[k] * B[n, k]: threads (BLOCK_N, R), each of the R threads of
# a row sums a strided share of k, then the row's R partial sums are reduced
# across threadIdx.y; also the row's largest product, by a max combine.
@tilelang.jit(out_idx=[2, 3])
def gemv_allreduce(N=40, K=200, BLOCK_N=4, R=8):
    @T.prim_func
    def main(A: T.Tensor((K,), "float32"), B: T.Tensor((N, K), "float32"), Y: T.Tensor((N,), "float32"),
             Mx: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, BLOCK_N), threads=(BLOCK_N, R)) as bn:
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            part = T.alloc_local((1,), "float32")
            big = T.alloc_local((1,), "float32")
            part[0] = 0.0
            big[0] = -T.infinity("float32")
            for kk in T.serial(T.ceildiv(K, R)):
                k = kk * R + tk
                if k < K and bn * BLOCK_N + tn < N:
                    part[0] += A[k] * B[bn * BLOCK_N + tn, k]
                    big[0] = T.max(big[0], A[k] * B[bn * BLOCK_N + tn, k])
            tot = T.alloc_local((1,), "float32")
            mx = T.alloc_local((1,), "float32")
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, "float32")]), "reduce_scope",
                        T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), part[0], True, tot[0], tk, dtype="handle"))
            with T.attr(T.comm_reducer(lambda x, y: T.max(x, y), [-T.infinity("float32")]), "reduce_scope",
                        T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), big[0], True, mx[0], tk, dtype="handle"))
            if bn * BLOCK_N + tn < N:
                Y[bn * BLOCK_N + tn] = tot[0]
                Mx[bn * BLOCK_N + tn] = mx[0]

    return main


@tilelang.jit(out_idx=[2, 3])
def gemv_allreduce_naive(N=40, K=200, BLOCK_N=4, R=8):
    @T.prim_func
    def main(A: T.Tensor((K,), "float32"), B: T.Tensor((N, K), "float32"), Y: T.Tensor((N,), "float32"),
             Mx: T.Tensor((N,), "float32")):
        with T.Kernel(N, threads=1) as n:
            tot = T.alloc_var("float32")
            mx = T.alloc_var("float32")
            tot = 0.0
            mx = -T.infinity("float32")
            for t in T.serial(R):  # the same partial sums, added in the same order
                part = T.alloc_var("float32")
                part = 0.0
                for kk in T.serial(T.ceildiv(K, R)):
                    if kk * R + t < K:
                        part += A[kk * R + t] * B[n, kk * R + t]
                        mx = T.max(mx, A[kk * R + t] * B[n, kk * R + t])
                tot += part
            Y[n] = tot
            Mx[n] = mx

    return main
