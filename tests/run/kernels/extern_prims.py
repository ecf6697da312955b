# What TileLang's external-source kernels need besides the external source
# itself, runnable on every target (session 10; tests/run/extern_prims.sh,
# tests/unit/test_interp_examples.c):
#   dp4a_dot        T.dp4a into an int32 register, per thread (bitnet's decode form);
#   dp4a_naive      the same dot products as plain int32 loops (the reference);
#   flat_split      per-thread loads and stores that split a flat index into rows
#                   themselves, [idx // K, idx % K] (TileLang's dequantization
#                   macros), stored with another thread mapping than the copy out
#                   reads them: insert_sync needs the barrier after the loop only;
#   flat_split_naive   its reference;
#   block_bind      T.get_block_binding and T.shift_left / T.shift_right.
import tilelang
import tilelang.language as T


def dp4a_dot(M=8, N=32, K=64):
    @T.prim_func
    def main(A: T.Tensor((M, K), "int8"), B: T.Tensor((N, K), "int8"), C: T.Tensor((M, N), "int32")):
        with T.Kernel(M, threads=N) as bx:
            acc = T.alloc_local((1,), "int32")
            a = T.alloc_local((4,), "int8")
            b = T.alloc_local((4,), "int8")
            n = T.get_thread_binding()
            acc[0] = 0
            for k in T.serial(K // 4):
                for v in T.vectorized(4):
                    a[v] = A[bx, k * 4 + v]
                    b[v] = B[n, k * 4 + v]
                T.dp4a(a[0], b[0], acc[0])
            C[bx, n] = acc[0]

    return main


def dp4a_naive(M=8, N=32, K=64):
    @T.prim_func
    def main(A: T.Tensor((M, K), "int8"), B: T.Tensor((N, K), "int8"), C: T.Tensor((M, N), "int32")):
        with T.Kernel(M, threads=N) as bx:
            for n in T.Parallel(N):
                C[bx, n] = 0
                for k in T.serial(K):
                    C[bx, n] = C[bx, n] + T.cast(A[bx, k], "int32") * T.cast(B[n, k], "int32")

    return main


def flat_split(N=128, K=128, threads=128):
    @T.prim_func
    def main(A: T.Tensor((N, K), "int32"), C: T.Tensor((N, K), "int32")):
        with T.Kernel(1, threads=threads) as bx:
            S = T.alloc_shared((N, K), "int32")
            D = T.alloc_shared((N, K), "int32")
            T.copy(A, S)
            tx = T.get_thread_binding()
            l = T.alloc_local((4,), "int32")
            for i in T.serial(N * K // threads // 4):
                for v in T.vectorized(4):
                    idx = i * threads * 4 + tx * 4 + v
                    l[v] = S[idx // K, idx % K]
                for v in T.unroll(4):
                    jdx = i * threads * 4 + v * threads + tx
                    D[jdx // K, jdx % K] = l[v] * 3 + 1
            T.copy(D, C)

    return main


def flat_split_naive(N=128, K=128, threads=128):
    @T.prim_func
    def main(A: T.Tensor((N, K), "int32"), C: T.Tensor((N, K), "int32")):
        with T.Kernel(1, threads=threads) as bx:
            for i, t, v in T.Parallel(N * K // threads // 4, threads, 4):
                jdx = i * threads * 4 + v * threads + t
                idx = i * threads * 4 + t * 4 + v
                C[jdx // K, jdx % K] = A[idx // K, idx % K] * 3 + 1

    return main


def block_bind(M=4, N=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), C: T.Tensor((M, N), "int32")):
        with T.Kernel(M, threads=N) as bx:
            t = T.get_thread_binding()
            b = T.get_block_binding(0)
            C[b, t] = T.shift_left(A[b, t], 2) + T.shift_right(A[b, t], 1) + b

    return main


def block_bind_naive(M=4, N=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), C: T.Tensor((M, N), "int32")):
        with T.Kernel(M, threads=N) as bx:
            for t in T.Parallel(N):
                C[bx, t] = A[bx, t] * 4 + A[bx, t] // 2 + bx

    return main
