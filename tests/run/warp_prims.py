# Warp primitives (issue 6): T.shfl_xor / shfl_down / shfl_up / shfl_sync
# (with TileLang's width), the votes (T.ballot_sync, T.any_sync,
# T.all_sync, TileScale's T.warp_any), T.warp_reduce_sum/max/min/bitand/
# bitor, T.get_lane_idx, a butterfly of shuffles in a loop and a shuffle in
# a branch that differs between the threads (half warps).  `warp_prims`
# is checked against `warp_prims_ref`, a plain serial kernel that computes
# every lane's value from CUDA's rules (the reductions as CUDA's butterfly:
# offsets 16, 8, 4, 2, 1, own value op the partner's), on random data:
#   tilescale run tests/run/warp_prims.py --entry warp_prims --check-against warp_prims_ref
# threads=(32, TY): the lanes are those of the flat thread index.
import tilelang.language as T


def warp_prims(B=2, TY=4):
    NT = 32 * TY
    N = B * NT

    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), I: T.Tensor((N,), "int32"), O: T.Tensor((N, 10), "float32"),
             Q: T.Tensor((N, 9), "int32"), V: T.Tensor((N,), "int64")):
        with T.Kernel(B, threads=(32, TY)) as (bx):
            tx = T.get_thread_binding(0)
            ty = T.get_thread_binding(1)
            g = bx * NT + ty * 32 + tx
            x = X[g]
            i = I[g]
            lane = T.get_lane_idx()
            O[g, 0] = T.shfl_xor(x, 5)
            O[g, 1] = T.shfl_down(x, 3)
            O[g, 2] = T.shfl_up(x, 7, width=16)
            O[g, 3] = T.shfl_sync(x, (lane * 7 + 3) % 32)
            O[g, 4] = T.shfl_xor(x, 9, 8)
            O[g, 5] = T.warp_reduce_max(x)
            O[g, 6] = T.warp_reduce_min(x)
            acc = T.alloc_var("float32")
            acc = x
            for k in T.serial(5):
                acc = acc + T.shfl_xor(acc, 16 >> k)
            O[g, 7] = acc
            O[g, 8] = T.warp_reduce_sum(x)
            if lane < 16:  # half warps apart: each names its own lanes
                O[g, 9] = T.shfl_down(x * 2.0, 1, width=16, mask=0x0000FFFF)
            else:
                O[g, 9] = T.shfl_sync(x, 31 - lane, 16, 0xFFFF0000)
            Q[g, 0] = T.warp_reduce_sum(i)
            Q[g, 1] = T.warp_reduce_bitor(i)
            Q[g, 2] = T.warp_reduce_bitand(i)
            Q[g, 3] = T.any_sync(0xFFFFFFFF, x > 0.9)
            Q[g, 4] = T.all_sync(0xFFFFFFFF, i > -9)
            Q[g, 5] = T.warp_any(i > 6)
            Q[g, 6] = T.warp_all(x > 0.0)
            Q[g, 7] = lane
            Q[g, 8] = T.shfl_up(i, 1) + T.shfl_down(T.shfl_xor(i, 2), 30)
            V[g] = T.ballot_sync(0xFFFFFFFF, x > 0)

    return main


def warp_prims_ref(B=2, TY=4):
    NT = 32 * TY
    N = B * NT

    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), I: T.Tensor((N,), "int32"), O: T.Tensor((N, 10), "float32"),
             Q: T.Tensor((N, 9), "int32"), V: T.Tensor((N,), "int64")):
        with T.Kernel(1, threads=1) as (bx):
            f = T.alloc_local((32, 4), "float32")  # the butterfly of x: sum, max, min
            h = T.alloc_local((32, 4), "float32")
            n = T.alloc_local((32, 3), "int32")    # sum, or, and of i
            m = T.alloc_local((32, 3), "int32")
            for w in T.serial(N // 32):
                for l in T.serial(32):
                    for c in T.serial(4):
                        f[l, c] = X[w * 32 + l]
                    for c in T.serial(3):
                        n[l, c] = I[w * 32 + l]
                for k in T.serial(5):
                    o = 16 >> k
                    for l in T.serial(32):
                        p = l ^ o
                        h[l, 0] = f[l, 0] + f[p, 0]
                        h[l, 1] = T.if_then_else(f[p, 1] > f[l, 1], f[p, 1], f[l, 1])
                        h[l, 2] = T.if_then_else(f[p, 2] < f[l, 2], f[p, 2], f[l, 2])
                        m[l, 0] = n[l, 0] + n[p, 0]
                        m[l, 1] = n[l, 1] | n[p, 1]
                        m[l, 2] = n[l, 2] & n[p, 2]
                    for l in T.serial(32):
                        for c in T.serial(3):
                            f[l, c] = h[l, c]
                            n[l, c] = m[l, c]
                anyx = T.alloc_var("int32")
                alli = T.alloc_var("int32")
                anyi = T.alloc_var("int32")
                allx = T.alloc_var("int32")
                bal = T.alloc_var("int64")
                anyx = 0
                alli = 1
                anyi = 0
                allx = 1
                bal = 0
                for l in T.serial(32):
                    if X[w * 32 + l] > 0.9:
                        anyx = 1
                    if I[w * 32 + l] <= -9:
                        alli = 0
                    if I[w * 32 + l] > 6:
                        anyi = 1
                    if X[w * 32 + l] <= 0.0:
                        allx = 0
                    if X[w * 32 + l] > 0:
                        bal = bal | (T.int64(1) << l)
                for l in T.serial(32):
                    g = w * 32 + l
                    x = X[g]
                    O[g, 0] = X[w * 32 + (l ^ 5)]
                    O[g, 1] = T.if_then_else(l + 3 < 32, X[w * 32 + T.min(l + 3, 31)], x)
                    O[g, 2] = T.if_then_else(l % 16 >= 7, X[w * 32 + T.max(l - 7, 0)], x)
                    O[g, 3] = X[w * 32 + (l * 7 + 3) % 32]
                    s = l ^ 9
                    O[g, 4] = T.if_then_else(s < (l // 8) * 8 + 8, X[w * 32 + T.min(s, 31)], x)
                    O[g, 5] = f[l, 1]
                    O[g, 6] = f[l, 2]
                    O[g, 7] = f[l, 0]
                    O[g, 8] = f[l, 0]
                    if l < 16:
                        O[g, 9] = T.if_then_else(l + 1 < 16, X[w * 32 + T.min(l + 1, 31)] * 2.0, x * 2.0)
                    else:
                        O[g, 9] = X[w * 32 + 16 + (31 - l) % 16]
                    Q[g, 0] = n[l, 0]
                    Q[g, 1] = n[l, 1]
                    Q[g, 2] = n[l, 2]
                    Q[g, 3] = anyx
                    Q[g, 4] = alli
                    Q[g, 5] = anyi
                    Q[g, 6] = allx
                    Q[g, 7] = l
                    up = T.if_then_else(l >= 1, I[w * 32 + T.max(l - 1, 0)], I[g])
                    # shfl_down(shfl_xor(i, 2), 30): lane l + 30 when < 32, of the xor'ed values
                    dn = T.if_then_else(l + 30 < 32, I[w * 32 + ((T.min(l + 30, 31)) ^ 2)], I[w * 32 + (l ^ 2)])
                    Q[g, 8] = up + dn
                    V[g] = bal

    return main


# Misuse on the C target: a block that is not whole warps, a shuffle under
# a while loop whose condition differs between the threads.
def warp_bad(case=0):
    @T.prim_func
    def main(X: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=48 if case == 0 else 64) as (bx):
            tx = T.get_thread_binding(0)
            if case == 0:
                X[tx] = T.shfl_xor(X[tx], 1)
            else:
                while X[tx] > 100.0:
                    X[tx] = T.shfl_xor(X[tx], 1)

    return main


# DeepEP's pattern (TileScale's notify_dispatch): each warp takes channels
# warp, warp + W, ... (a loop whose bounds are the warp's own), its lanes sum
# a channel's row with a strided loop, T.warp_reduce_sum combines them and
# the lane T.shuffle_elect(32) picks stores the count; channels beyond
# NCH // W leave some warps with one trip fewer.
def warp_loops(NCH=7, W=4, L=80):
    @T.prim_func
    def main(X: T.Tensor((NCH, L), "int32"), C: T.Tensor((NCH,), "int32"), E: T.Tensor((W * 32,), "int32")):
        with T.Kernel(1, threads=W * 32) as (bx):
            tx = T.get_thread_binding(0)
            lane, warp = tx % 32, tx // 32
            for ch in T.serial(warp, NCH, W):
                cnt = T.alloc_var("int32")
                cnt = 0
                for i in T.serial(lane, L, 32):
                    cnt += X[ch, i]
                cnt = T.warp_reduce_sum(cnt)
                if T.shuffle_elect(32):
                    C[ch] = cnt
            E[tx] = T.shuffle_elect(64) + 2 * T.shuffle_elect(0)

    return main


def warp_loops_ref(NCH=7, W=4, L=80):
    @T.prim_func
    def main(X: T.Tensor((NCH, L), "int32"), C: T.Tensor((NCH,), "int32"), E: T.Tensor((W * 32,), "int32")):
        with T.Kernel(1, threads=1) as (bx):
            for ch in T.serial(NCH):
                s = T.alloc_var("int32")
                s = 0
                for i in T.serial(L):
                    s += X[ch, i]
                C[ch] = s
            for t in T.serial(W * 32):
                E[t] = T.if_then_else(t % 64 == 0, 1, 0) + T.if_then_else(t == 0, 2, 0)

    return main
