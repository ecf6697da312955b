# Every memory semantics and scope of T.st / T.ld / T.atom_add (issue 6,
# part B's memory model; the PTX each one becomes is doc/DISTRIBUTED.md's
# table).  Thread j of rank r
#   - stores X[j] * (k + 1) into box[k, r, j] on the next rank with the k-th
#     (semantics, scope) of T.st, also a float16, an int64 and an int8
#     element (2, 8 and 1 bytes: the 1-byte one takes the fence form),
#   - adds 1 to cnt[j] on rank 0 with each semantics / scope of T.atom_add,
#   - publishes flag[r, j] = 1 on the next rank (release, system scope),
#   - waits for the previous rank's flag, then reads the previous rank's
#     values back from its own heap with the k-th (semantics, scope) of
#     T.ld into got[k, j] (and the other sizes into gh, gl, gb).
#   tilescale run examples/distributed/mem_model.py --entry mem_model --ranks 4 \
#       -D P=4 -D N=200 --check-against mem_model_ref
import tilelang.language as T


def mem_model(P, N, threads=64):
    @T.prim_func
    def main(
        X: T.Tensor((N,), "float32"),
        box: T.Tensor((8, P, N), "float32"),
        bh: T.Tensor((P, N), "float16"),
        bl: T.Tensor((P, N), "int64"),
        bb: T.Tensor((P, N), "int8"),
        flag: T.Tensor((P, N), "int32"),
        cnt: T.Tensor((N,), "int32"),
        got: T.Tensor((8, N), "float32"),
        gh: T.Tensor((N,), "float16"),
        gl: T.Tensor((N,), "int64"),
        gb: T.Tensor((N,), "int8"),
    ):
        with T.Kernel(T.ceildiv(N, threads), threads=threads) as (bx):
            me = T.get_rank()
            nx = (me + 1) % P
            pv = (me + P - 1) % P
            v = T.alloc_local((8,), "float32")
            h = T.alloc_local((1,), "float16")
            l = T.alloc_local((1,), "int64")
            b = T.alloc_local((1,), "int8")
            for i in T.Parallel(threads):
                j = bx * threads + i
                if j < N:
                    x = X[j]
                    T.st(box[0, me, j], x * 1.0, dst_pe=nx)
                    T.st(box[1, me, j], x * 2.0, sem="volatile", dst_pe=nx)
                    T.st(box[2, me, j], x * 3.0, scope="cta", sem="relaxed", dst_pe=nx)
                    T.st(box[3, me, j], x * 4.0, scope="gpu", sem="relaxed", dst_pe=nx)
                    T.st(box[4, me, j], x * 5.0, scope="sys", sem="relaxed", dst_pe=nx)
                    T.st(box[5, me, j], x * 6.0, scope="cta", sem="release", dst_pe=nx)
                    T.st(box[6, me, j], x * 7.0, scope="gpu", sem="release", dst_pe=nx)
                    T.st(box[7, me, j], x * 8.0, scope="sys", sem="release", dst_pe=nx)
                    T.st(bh[me, j], T.cast(x, "float16"), scope="sys", sem="relaxed", dst_pe=nx)
                    T.st(bl[me, j], T.cast(j * 3 + me, "int64"), scope="gpu", sem="release", dst_pe=nx)
                    T.st(bb[me, j], T.cast(j % 100 + me, "int8"), scope="sys", sem="release", dst_pe=nx)
                    T.atom_add(cnt[j], 1, peer=0)
                    T.atom_add(cnt[j], 2, scope="sys", sem="release", peer=0)
                    T.atom_add(cnt[j], 4, scope="gpu", sem="acquire", peer=0)
                    T.atom_add(cnt[j], 8, scope="sys", sem="acq_rel", peer=0)
                    T.st(flag[me, j], 1, scope="sys", sem="release", dst_pe=nx)
                    T.wait_eq(flag[pv, j], 1)
                    T.ld(box[0, pv, j], v[0])
                    T.ld(box[1, pv, j], v[1], sem="volatile")
                    T.ld(box[2, pv, j], v[2], scope="cta", sem="relaxed")
                    T.ld(box[3, pv, j], v[3], scope="gpu", sem="relaxed")
                    T.ld(box[4, pv, j], v[4], scope="sys", sem="relaxed")
                    T.ld(box[5, pv, j], v[5], scope="cta", sem="acquire")
                    T.ld(box[6, pv, j], v[6], scope="gpu", sem="acquire")
                    T.ld(box[7, pv, j], v[7], scope="sys", sem="acquire")
                    T.ld(bh[pv, j], h[0], scope="gpu", sem="acquire")
                    T.ld(bl[pv, j], l[0], scope="sys", sem="relaxed")
                    T.ld(bb[pv, j], b[0], scope="sys", sem="acquire")
                    for k in T.serial(8):
                        got[k, j] = v[k]
                    gh[j] = h[0]
                    gl[j] = l[0]
                    gb[j] = b[0]

    return main


def mem_model_ref(P, N):
    @T.prim_func
    def main(
        X: T.Tensor((P, N), "float32"),
        box: T.Tensor((P, 8, P, N), "float32"),
        bh: T.Tensor((P, P, N), "float16"),
        bl: T.Tensor((P, P, N), "int64"),
        bb: T.Tensor((P, P, N), "int8"),
        flag: T.Tensor((P, P, N), "int32"),
        cnt: T.Tensor((P, N), "int32"),
        got: T.Tensor((P, 8, N), "float32"),
        gh: T.Tensor((P, N), "float16"),
        gl: T.Tensor((P, N), "int64"),
        gb: T.Tensor((P, N), "int8"),
    ):
        with T.Kernel(1, threads=1) as (bx):
            for r in T.serial(P):
                for j in T.serial(N):
                    pv = (r + P - 1) % P
                    for k in T.serial(8):
                        box[r, k, pv, j] = X[pv, j] * T.cast(k + 1, "float32")
                        got[r, k, j] = X[pv, j] * T.cast(k + 1, "float32")
                    bh[r, pv, j] = T.cast(X[pv, j], "float16")
                    bl[r, pv, j] = T.cast(j * 3 + pv, "int64")
                    bb[r, pv, j] = T.cast(j % 100 + pv, "int8")
                    flag[r, pv, j] = 1
                    gh[r, j] = T.cast(X[pv, j], "float16")
                    gl[r, j] = T.cast(j * 3 + pv, "int64")
                    gb[r, j] = T.cast(j % 100 + pv, "int8")
            for j in T.serial(N):
                cnt[0, j] = cnt[0, j] + 15 * P

    return main
