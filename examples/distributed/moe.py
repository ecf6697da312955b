# Mixture-of-experts token dispatch and combine across ranks, as one tile
# kernel (expert parallelism: rank d holds experts d*E .. d*E+E-1).
#
#   1. route     each token's top-K experts from its router scores (repeated
#                arg-max below the previous pick) -> topk_idx, topk_w
#   2. splits    block 0 counts this rank's tokens per expert (counts[me, g],
#                and pos[t, k]: the rank of (t, k) among them) and pushes its
#                row of counts to every rank: every rank then holds the full
#                [P, P*E] split matrix
#   3. dispatch  token t goes to row  sum_{s < me} counts[s, g] + pos[t, k]
#                of expert g's buffer recv_x[g % E] on rank g // E (sources in
#                rank order, a source's tokens in token order: a layout every
#                rank computes alone, no second exchange), with T.put_block
#   4. experts   y[e] = recv_x[e] @ W[e], a tiled T.gemm over the buffer
#   5. combine   out[t] = sum_k topk_w[t, k] * y[g % E, slot[t, k]] pulled back
#                from rank g // E with a remote tile copy (T.copy(..., src=rank))
# with T.barrier_all between the phases.  `full=0` stops after the dispatch.
#
#   tilescale run examples/distributed/moe.py --entry moe --ranks 4 \
#       -D P=4 -D TOK=16 -D H=32 -D E=2 -D K=2 --check-against moe_ref
#
# The reference (moe_ref) sees every rank's tensors stacked and does the
# same arithmetic naively, element by element.
import tilelang
import tilelang.language as T


def moe(P, TOK, H, E, K, full=1, blocks=2, BM=16, threads=128):
    NE = P * E
    CAP = P * TOK  # an expert may receive every token of every rank

    @T.prim_func
    def main(
        scores: T.Tensor((TOK, NE), "float32"),    # router scores of this rank's tokens
        x: T.Tensor((TOK, H), "float32"),          # this rank's tokens
        W: T.Tensor((E, H, H), "float32"),         # this rank's experts
        topk_w: T.Tensor((TOK, K), "float32"),     # the chosen experts' scores
        topk_idx: T.Tensor((TOK, K), "int32"),     # the chosen experts (global ids)
        pos: T.Tensor((TOK, K), "int32"),          # rank of (t, k) among this rank's tokens for its expert
        slot: T.Tensor((TOK, K), "int32"),         # row of (t, k) in its expert's buffer
        counts: T.Tensor((P, NE), "int32"),        # counts[s, g]: tokens rank s sends to expert g
        recv_x: T.Tensor((E, CAP, H), "float32"),  # tokens received, per local expert
        y: T.Tensor((E, CAP, H), "float32"),       # expert outputs
        out: T.Tensor((TOK, H), "float32"),        # combined outputs of this rank's tokens
    ):
        with T.Kernel(blocks, threads=threads) as (bx):
            me = T.get_rank()
            # 1. routing
            for i in T.serial(T.ceildiv(TOK, blocks)):
                t = i * blocks + bx
                if t < TOK:
                    prev = T.alloc_var("float32")
                    prev = 3.0e38
                    for k in T.serial(K):
                        best = T.alloc_var("int32")
                        bv = T.alloc_var("float32")
                        best = 0
                        bv = -3.0e38
                        for g in T.serial(NE):
                            if scores[t, g] < prev and scores[t, g] > bv:
                                bv = scores[t, g]
                                best = g
                        topk_idx[t, k] = best
                        topk_w[t, k] = bv
                        prev = bv
            T.barrier_all()
            # 2. splits: this rank's row of counts, pushed to every rank
            if bx == 0:
                for g in T.serial(NE):
                    counts[me, g] = 0
                for t in T.serial(TOK):
                    for k in T.serial(K):
                        pos[t, k] = counts[me, topk_idx[t, k]]
                        counts[me, topk_idx[t, k]] = counts[me, topk_idx[t, k]] + 1
                for p in T.serial(P):
                    if p != me:
                        T.put_block(src=T.address_of(counts[me, 0]), dst=T.address_of(counts[me, 0]),
                                    size=NE, dst_pe=p)
            T.barrier_all()
            # 3. dispatch
            for i in T.serial(T.ceildiv(TOK, blocks)):
                t = i * blocks + bx
                if t < TOK:
                    for k in T.serial(K):
                        base = T.alloc_var("int32")
                        base = 0
                        for s in T.serial(P):
                            if s < me:
                                base += counts[s, topk_idx[t, k]]
                        slot[t, k] = base + pos[t, k]
                        T.put_block(src=T.address_of(x[t, 0]),
                                    dst=T.address_of(recv_x[topk_idx[t, k] % E, base + pos[t, k], 0]),
                                    size=H, dst_pe=topk_idx[t, k] // E)
            T.barrier_all()
            if full:
                # 4. experts: a tiled GEMM over every local expert's buffer
                xs = T.alloc_shared((BM, H), "float32")
                ws = T.alloc_shared((H, H), "float32")
                acc = T.alloc_fragment((BM, H), "float32")
                for i in T.serial(T.ceildiv(E * (CAP // BM), blocks)):
                    tile = i * blocks + bx
                    if tile < E * (CAP // BM):
                        T.copy(recv_x[tile // (CAP // BM), (tile % (CAP // BM)) * BM, 0], xs)
                        T.copy(W[tile // (CAP // BM), 0, 0], ws)
                        T.clear(acc)
                        T.gemm(xs, ws, acc)
                        T.copy(acc, y[tile // (CAP // BM), (tile % (CAP // BM)) * BM, 0])
                T.barrier_all()
                # 5. combine: pull each chosen expert's row back, weighted sum
                row = T.alloc_shared((1, H), "float32")
                o = T.alloc_fragment((H,), "float32")
                for i in T.serial(T.ceildiv(TOK, blocks)):
                    t = i * blocks + bx
                    if t < TOK:
                        T.clear(o)
                        for k in T.serial(K):
                            T.copy(y[topk_idx[t, k] % E, slot[t, k], 0], row, src=topk_idx[t, k] // E)
                            for j in T.Parallel(H):
                                o[j] += topk_w[t, k] * row[0, j]
                        T.copy(o, out[t, 0])
                T.barrier_all()  # nobody leaves while a peer may still read its y

    return main


def moe_ref(P, TOK, H, E, K, full=1):
    NE = P * E
    CAP = P * TOK

    @T.prim_func
    def main(
        scores: T.Tensor((P, TOK, NE), "float32"),
        x: T.Tensor((P, TOK, H), "float32"),
        W: T.Tensor((P, E, H, H), "float32"),
        topk_w: T.Tensor((P, TOK, K), "float32"),
        topk_idx: T.Tensor((P, TOK, K), "int32"),
        pos: T.Tensor((P, TOK, K), "int32"),
        slot: T.Tensor((P, TOK, K), "int32"),
        counts: T.Tensor((P, P, NE), "int32"),
        recv_x: T.Tensor((P, E, CAP, H), "float32"),
        y: T.Tensor((P, E, CAP, H), "float32"),
        out: T.Tensor((P, TOK, H), "float32"),
    ):
        with T.Kernel(1, threads=1) as (bx):
            for s in T.serial(P):
                for g in T.serial(NE):
                    counts[0, s, g] = 0
            # routing, and each (t, k)'s place among its rank's tokens for its expert
            for s in T.serial(P):
                for t in T.serial(TOK):
                    prev = T.alloc_var("float32")
                    prev = 3.0e38
                    for k in T.serial(K):
                        best = T.alloc_var("int32")
                        bv = T.alloc_var("float32")
                        best = 0
                        bv = -3.0e38
                        for g in T.serial(NE):
                            if scores[s, t, g] < prev and scores[s, t, g] > bv:
                                bv = scores[s, t, g]
                                best = g
                        topk_idx[s, t, k] = best
                        topk_w[s, t, k] = bv
                        prev = bv
                        pos[s, t, k] = counts[0, s, best]
                        counts[0, s, best] = counts[0, s, best] + 1
            # dispatch: sources in rank order
            for s in T.serial(P):
                for t in T.serial(TOK):
                    for k in T.serial(K):
                        g = topk_idx[s, t, k]
                        base = T.alloc_var("int32")
                        base = 0
                        for q in T.serial(s):
                            base += counts[0, q, g]
                        slot[s, t, k] = base + pos[s, t, k]
                        for h in T.serial(H):
                            recv_x[g // E, g % E, base + pos[s, t, k], h] = x[s, t, h]
            if full:
                for d in T.serial(P):
                    for e in T.serial(E):
                        for m in T.serial(CAP):
                            for n in T.serial(H):
                                a = T.alloc_var("float32")
                                a = 0.0
                                for h in T.serial(H):
                                    a += recv_x[d, e, m, h] * W[d, e, h, n]
                                y[d, e, m, n] = a
                for s in T.serial(P):
                    for t in T.serial(TOK):
                        for n in T.serial(H):
                            a = T.alloc_var("float32")
                            a = 0.0
                            for k in T.serial(K):
                                g = topk_idx[s, t, k]
                                a += topk_w[s, t, k] * y[g // E, g % E, slot[s, t, k], n]
                            out[s, t, n] = a

    return main
