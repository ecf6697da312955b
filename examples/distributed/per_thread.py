# Per-thread primitives, the way DeepEP's kernels use them: inside
# T.Parallel every thread does its own remote store, flag, atomic, wait,
# load and one-element get (on CUDA the calling thread alone, no block
# barrier; on the C target the same code runs as the loop's iterations).
# Thread j of rank r
#   - stores 2 * X[j] into box[r, j] on the next rank, then its flag
#     flag[r, j] = 1 there (a release store: the data is published first),
#   - adds 1.0 to cnt[j] on rank 0 (a system-scope atomic),
#   - waits for the previous rank's flag flag[prev, j] == 1 here, then
#     reads box[prev, j] into got[j] with T.ld (an acquire load),
#   - gets X[j] of the previous rank into pulled[j] (a one-element get).
#   tilescale run examples/distributed/per_thread.py --entry per_thread --ranks 4 \
#       -D P=4 -D N=300 --check-against per_thread_ref
import tilelang
import tilelang.language as T


def per_thread(P, N, threads=128):
    @T.prim_func
    def main(
        X: T.Tensor((N,), "float32"),
        box: T.Tensor((P, N), "float32"),
        flag: T.Tensor((P, N), "int32"),
        cnt: T.Tensor((N,), "float32"),
        got: T.Tensor((N,), "float32"),
        pulled: T.Tensor((N,), "float32"),
    ):
        with T.Kernel(T.ceildiv(N, threads), threads=threads) as (bx):
            me = T.get_rank()
            v = T.alloc_local((1,), "float32")  # each thread's own
            for i in T.Parallel(threads):
                if bx * threads + i < N:
                    T.st(box[me, bx * threads + i], X[bx * threads + i] * 2.0, dst_pe=(me + 1) % P)
                    T.st(flag[me, bx * threads + i], 1, scope="sys", sem="release", dst_pe=(me + 1) % P)
                    T.atom_add(cnt[bx * threads + i], 1.0, peer=0)
                    T.wait_eq(flag[(me + P - 1) % P, bx * threads + i], 1)
                    T.ld(box[(me + P - 1) % P, bx * threads + i], v[0], sem="acquire")
                    got[bx * threads + i] = v[0]
                    T.get_warp(src=T.address_of(X[bx * threads + i]), dst=T.address_of(pulled[bx * threads + i]),
                               size=1, src_pe=(me + P - 1) % P)

    return main


def per_thread_ref(P, N):
    @T.prim_func
    def main(
        X: T.Tensor((P, N), "float32"),
        box: T.Tensor((P, P, N), "float32"),
        flag: T.Tensor((P, P, N), "int32"),
        cnt: T.Tensor((P, N), "float32"),
        got: T.Tensor((P, N), "float32"),
        pulled: T.Tensor((P, N), "float32"),
    ):
        with T.Kernel(1, threads=1) as (bx):
            for r in T.serial(P):
                for j in T.serial(N):
                    box[r, (r + P - 1) % P, j] = X[(r + P - 1) % P, j] * 2.0
                    got[r, j] = X[(r + P - 1) % P, j] * 2.0
                    pulled[r, j] = X[(r + P - 1) % P, j]
            for j in T.serial(N):
                for r in T.serial(P):
                    cnt[0, j] = cnt[0, j] + 1.0

    return main
