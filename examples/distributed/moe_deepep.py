# MoE dispatch and combine in DeepEP's intranode style (github.com/deepseek-ai/
# DeepEP; TileScale's port in examples/distributed/deepseek_deepep): one block
# per rank, thread-level code, warps as the senders and receivers of ranks'
# channels, counts told to the peers before the data, per-source receive
# buffers, flags after the data.  Rank d holds experts d*E .. d*E+E-1; an
# expert is a scale (y = scale[e] * x) so that the check is exact.
#
#   1. layout    thread t routes tokens t, t + NT, ...: its top-K experts by
#                repeated arg-max of the router scores (lowest index on
#                ties) -> topk_idx, topk_w, and in_rank[t, d] (some pick on d)
#   2. notify    thread d numbers the tokens going to rank d (send_pos) and
#                stores their count + 1 into recv_cnt[me] there (a release
#                store: 0 means "not told yet", DeepEP's encoding)
#   3. dispatch  warp w sends to ranks w, w + NW, ...: each token row with
#                T.put_warp into recv_x[me, send_pos] there, lane 0 its source
#                index, experts and weights with T.st; after a fence and a
#                barrier thread d sets ready[me] on rank d
#   4. experts   warp w serves sources w, w + NW, ...: waits for ready[s],
#                each lane takes every 32nd element of a received row and
#                sends sum_k [idx_k on me] w_k * scale[idx_k % E] * x back
#                into back[me, src] on rank s (per-thread T.st); then thread
#                d sets back_ready[me] on rank d
#   5. combine   after every back_ready: out[t] = sum over the ranks d the
#                token went to of back[d, t]
#
#   tilescale run examples/distributed/moe_deepep.py --entry moe_deepep --ranks 4 \
#       -D P=4 -D TOK=24 -D H=40 -D E=2 -D K=2 --check-against moe_deepep_ref
#
# The reference sees every rank's tensors stacked and does the same routing
# and arithmetic naively, writing the same receive slots.
import tilelang
import tilelang.language as T


def moe_deepep(P, TOK, H, E, K, threads=128):
    NE = P * E
    NW = threads // 32

    @T.prim_func
    def main(
        x: T.Tensor((TOK, H), "float32"),           # this rank's tokens
        scores: T.Tensor((TOK, NE), "float32"),     # their router scores
        scale: T.Tensor((E,), "float32"),           # this rank's experts
        topk_idx: T.Tensor((TOK, K), "int32"),      # chosen experts (global ids)
        topk_w: T.Tensor((TOK, K), "float32"),      # and their scores
        in_rank: T.Tensor((TOK, P), "int32"),       # 1: token goes to rank d
        send_pos: T.Tensor((TOK, P), "int32"),      # its slot in rank d's buffer for this source
        recv_cnt: T.Tensor((P,), "int32"),          # tokens from source s, + 1 (0: not told yet)
        recv_x: T.Tensor((P, TOK, H), "float32"),   # rows received from source s
        recv_w: T.Tensor((P, TOK, K), "float32"),   # their weights
        recv_idx: T.Tensor((P, TOK, K), "int32"),   # their experts
        recv_src: T.Tensor((P, TOK), "int32"),      # their token index on the source
        ready: T.Tensor((P,), "int32"),             # source s's rows are here
        back_ready: T.Tensor((P,), "int32"),        # rank d's results are here
        back: T.Tensor((P, TOK, H), "float32"),     # results from rank d, by token
        out: T.Tensor((TOK, H), "float32"),         # combined
    ):
        with T.Kernel(1, threads=threads) as bx:
            tx = T.get_thread_binding(0)
            warp = tx // 32
            lane = tx % 32
            me = T.get_rank()
            best = T.alloc_local((1,), "float32")
            arg = T.alloc_local((1,), "int32")
            n = T.alloc_local((1,), "int32")
            acc = T.alloc_local((1,), "float32")
            # 1. layout
            for t in T.serial(tx, TOK, threads):
                for d in T.serial(P):
                    in_rank[t, d] = 0
                for k in T.serial(K):
                    best[0] = -3.0e38
                    arg[0] = 0
                    for g in T.serial(NE):
                        n[0] = 0
                        for k2 in T.serial(k):
                            if topk_idx[t, k2] == g:
                                n[0] = 1
                        if n[0] == 0 and scores[t, g] > best[0]:
                            best[0] = scores[t, g]
                            arg[0] = g
                    topk_idx[t, k] = arg[0]
                    topk_w[t, k] = best[0]
                    in_rank[t, arg[0] // E] = 1
            T.sync_threads()
            # 2. notify
            if tx < P:
                n[0] = 0
                for t in T.serial(TOK):
                    if in_rank[t, tx] == 1:
                        send_pos[t, tx] = n[0]
                        n[0] = n[0] + 1
                T.st(recv_cnt[me], n[0] + 1, scope="sys", sem="release", dst_pe=tx)
            T.sync_threads()
            # 3. dispatch
            for d in T.serial(warp, P, NW):
                for t in T.serial(TOK):
                    if in_rank[t, d] == 1:
                        T.put_warp(src=T.address_of(x[t, 0]), dst=T.address_of(recv_x[me, send_pos[t, d], 0]), size=H, dst_pe=d)
                        if lane == 0:
                            T.st(recv_src[me, send_pos[t, d]], t, dst_pe=d)
                            for k in T.serial(K):
                                T.st(recv_idx[me, send_pos[t, d], k], topk_idx[t, k], dst_pe=d)
                                T.st(recv_w[me, send_pos[t, d], k], topk_w[t, k], dst_pe=d)
            T.fence()
            T.sync_threads()
            if tx < P:
                T.signal_op(T.address_of(ready[me]), 1, T.Amo.SIGNAL_SET, tx)
            # 4. experts, results back to the sources
            for s in T.serial(warp, P, NW):
                T.signal_wait_until(T.address_of(ready[s]), T.CmpType.EQ, 1)
                for i in T.serial(recv_cnt[s] - 1):
                    for h in T.serial(lane, H, 32):
                        acc[0] = 0.0
                        for k in T.serial(K):
                            if recv_idx[s, i, k] // E == me:
                                acc[0] = acc[0] + recv_w[s, i, k] * scale[recv_idx[s, i, k] % E]
                        T.st(back[me, recv_src[s, i], h], acc[0] * recv_x[s, i, h], dst_pe=s)
            T.fence()
            T.sync_threads()
            if tx < P:
                T.signal_op(T.address_of(back_ready[me]), 1, T.Amo.SIGNAL_SET, tx)
            # 5. combine
            if tx < P:
                T.signal_wait_until(T.address_of(back_ready[tx]), T.CmpType.EQ, 1)
            T.sync_threads()
            for e in T.serial(tx, TOK * H, threads):
                acc[0] = 0.0
                for d in T.serial(P):
                    if in_rank[e // H, d] == 1:
                        acc[0] = acc[0] + back[d, e // H, e % H]
                out[e // H, e % H] = acc[0]

    return main


def moe_deepep_ref(P, TOK, H, E, K):
    NE = P * E

    @T.prim_func
    def main(
        x: T.Tensor((P, TOK, H), "float32"),
        scores: T.Tensor((P, TOK, NE), "float32"),
        scale: T.Tensor((P, E), "float32"),
        topk_idx: T.Tensor((P, TOK, K), "int32"),
        topk_w: T.Tensor((P, TOK, K), "float32"),
        in_rank: T.Tensor((P, TOK, P), "int32"),
        send_pos: T.Tensor((P, TOK, P), "int32"),
        recv_cnt: T.Tensor((P, P), "int32"),
        recv_x: T.Tensor((P, P, TOK, H), "float32"),
        recv_w: T.Tensor((P, P, TOK, K), "float32"),
        recv_idx: T.Tensor((P, P, TOK, K), "int32"),
        recv_src: T.Tensor((P, P, TOK), "int32"),
        ready: T.Tensor((P, P), "int32"),
        back_ready: T.Tensor((P, P), "int32"),
        back: T.Tensor((P, P, TOK, H), "float32"),
        out: T.Tensor((P, TOK, H), "float32"),
    ):
        with T.Kernel(1, threads=1) as bx:
            best = T.alloc_var("float32")
            arg = T.alloc_var("int32")
            taken = T.alloc_var("int32")
            pos = T.alloc_var("int32")
            acc = T.alloc_var("float32")
            for s in T.serial(P):
                for t in T.serial(TOK):
                    for d in T.serial(P):
                        in_rank[s, t, d] = 0
                    for k in T.serial(K):
                        best = -3.0e38
                        arg = 0
                        for g in T.serial(NE):
                            taken = 0
                            for k2 in T.serial(k):
                                if topk_idx[s, t, k2] == g:
                                    taken = 1
                            if taken == 0 and scores[s, t, g] > best:
                                best = scores[s, t, g]
                                arg = g
                        topk_idx[s, t, k] = arg
                        topk_w[s, t, k] = best
                        in_rank[s, t, arg // E] = 1
            for s in T.serial(P):
                for d in T.serial(P):
                    pos = 0
                    for t in T.serial(TOK):
                        if in_rank[s, t, d] == 1:
                            for h in T.serial(H):
                                recv_x[d, s, pos, h] = x[s, t, h]
                            for k in T.serial(K):
                                recv_w[d, s, pos, k] = topk_w[s, t, k]
                            # the expert's result for this token on rank d
                            acc = 0.0
                            for k in T.serial(K):
                                if topk_idx[s, t, k] // E == d:
                                    acc = acc + topk_w[s, t, k] * scale[d, topk_idx[s, t, k] % E]
                            for h in T.serial(H):
                                back[s, d, t, h] = acc * x[s, t, h]
                            pos = pos + 1
            for s in T.serial(P):
                for t in T.serial(TOK):
                    for h in T.serial(H):
                        acc = 0.0
                        for d in T.serial(P):
                            if in_rank[s, t, d] == 1:
                                acc = acc + back[s, d, t, h]
                        out[s, t, h] = acc

    return main
