/*
 * comm.c — the lowering of the communication tile op (TS_OP_COMM).
 *
 * The element primitives (put/get of a flat range, st, ld, waits, atomics,
 * signals, fences, barriers) stay tile ops after lowering, marked
 * TS_OP_INST_COMM: what they need — an address on another rank's heap, a
 * bounded spin, a fence — is not expressible in loads and stores, so each
 * target's emitter prints them (target/c/comm_c.c).  This file checks
 * their operands once for every target.
 *
 * The tile form, a remote T.copy (op/comm.h: COPY), becomes a loop nest
 * over the matched regions, exactly as T.copy pairs them (op_pair_regions),
 * whose body is one ST (destination remote) or LD (source remote) per
 * element, with the same bounds guards as T.copy on global buffers.  The
 * collectives of the hierarchical layer are written in the front end in
 * terms of these (elab/comm_builtins.c), so they arrive here already as
 * primitives and remote copies.
 */
#include "op/comm.h"

#include "op/op_util.h"

const char *ts_comm_cmp_text(int cmp) {
    switch (cmp) {
    case TS_CMP_EQ: return "==";
    case TS_CMP_NE: return "!=";
    case TS_CMP_GE: return ">=";
    case TS_CMP_LE: return "<=";
    case TS_CMP_GT: return ">";
    case TS_CMP_LT: return "<";
    default: return "?";
    }
}

bool ts_comm_used(const IrStmt *s) {
    if (!s) return false;
    switch (s->kind) {
    case IR_S_TILEOP: return s->op && s->op->kind == TS_OP_COMM;
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++)
            if (ts_comm_used(s->seq.v[i])) return true;
        return false;
    case IR_S_FOR: return ts_comm_used(s->for_.body);
    case IR_S_IF: return ts_comm_used(s->if_.then) || ts_comm_used(s->if_.else_);
    case IR_S_WHILE: return ts_comm_used(s->while_.body);
    default: return false;
    }
}

/* The one-element region buf[idx]. */
static IrRegion elem_region(TsArena *a, IrBuffer *b, IrExpr **idx) {
    IrRegion r = {b, b->ndim, idx, TS_NEWN(a, IrExpr *, b->ndim > 0 ? b->ndim : 1)};
    for (int d = 0; d < b->ndim; d++) r.extent[d] = ir_i32(a, 1);
    return r;
}

static IrStmt *comm_stmt(TsArena *a, TsLoc loc, const IrTileOp *proto) {
    IrStmt *s = ir_stmt(a, IR_S_TILEOP, loc);
    s->op = TS_NEW(a, IrTileOp);
    *s->op = *proto;
    s->op->inst = TS_OP_INST_COMM;
    return s;
}

/* COPY: loops of ST (remote destination) or LD (remote source). */
static IrStmt *lower_copy(TsLowerCtx *cx, const IrStmt *s) {
    TsArena *a = cx->arena;
    const IrTileOp *op = s->op;
    const IrRegion *src = &op->r[0], *dst = &op->r[1];
    OpPair p;
    op_pair_regions(cx, s, "T.copy", src, dst, &p);
    IrTileOp e = {0};
    e.kind = TS_OP_COMM;
    e.args[0] = op->args[0];
    e.cflags[1] = TS_SEM_WEAK;
    e.cflags[2] = TS_SCOPE_SYS;
    if (op->cflags[0] == 0) {
        e.comm = TS_COMM_ST;
        e.r[0] = elem_region(a, dst->buf, p.dst_idx);
        e.nr = 1;
        IrExpr *v = ir_load(a, src->buf, p.src_idx, src->ndim);
        e.args[1] = v->dt == dst->buf->dt ? v : ir_cast(a, dst->buf->dt, v);
    } else {
        e.comm = TS_COMM_LD;
        e.r[0] = elem_region(a, src->buf, p.src_idx);
        e.r[1] = elem_region(a, dst->buf, p.dst_idx);
        e.nr = 2;
    }
    IrStmt *body = comm_stmt(a, s->loc, &e);
    body = op_if(a, s->loc, op_in_bounds(a, src->buf, p.src_idx), body, NULL);
    body = op_if(a, s->loc, op_in_bounds(a, dst->buf, p.dst_idx), body, NULL);
    return op_loops(a, s->loc, p.v, p.ext, p.n, IR_FOR_SERIAL, body);
}

static void need_int(TsLowerCtx *cx, const IrStmt *s, const IrExpr *e, const char *what) {
    if (e && !ts_dtype_is_int(e->dt))
        ts_fail_at(cx->diag, TS_ERR_TYPE, s->loc, "%s: %s must be an integer, not %s",
                   ts_comm_name(s->op->comm), what, ts_dtype_name(e->dt));
}

IrStmt *ts_op_comm_lower(TsLowerCtx *cx, const IrStmt *s) {
    const IrTileOp *op = s->op;
    if (op->comm < 0 || op->comm >= TS_COMM_COUNT)
        ts_internal(cx->diag, "communication op of unknown kind %d", op->comm);
    need_int(cx, s, op->args[0], "the peer rank");
    switch (op->comm) {
    case TS_COMM_COPY: return lower_copy(cx, s);
    case TS_COMM_PUT:
    case TS_COMM_GET:
        need_int(cx, s, op->args[1], "the size");
        if (op->nr < 2 || !op->args[1]) ts_internal(cx->diag, "put/get without two addresses and a size");
        break;
    case TS_COMM_WAIT:
    case TS_COMM_ATOM_ADD:
    case TS_COMM_SIGNAL:
    case TS_COMM_BARRIER_BLOCKS: {
        const IrBuffer *b = op->r[0].buf;
        if (op->nr < 1) ts_internal(cx->diag, "%s without an address", ts_comm_name(op->comm));
        if (op->comm == TS_COMM_BARRIER_BLOCKS && b->dt != TS_INT32)
            ts_fail_at(cx->diag, TS_ERR_TYPE, s->loc,
                       "T.barrier_blocks: the barrier '%s' must be an int32 array of num_ranks words, not %s",
                       b->name, ts_dtype_name(b->dt));
        if (op->comm != TS_COMM_ATOM_ADD && op->comm != TS_COMM_WAIT && !ts_dtype_is_int(b->dt))
            ts_fail_at(cx->diag, TS_ERR_TYPE, s->loc, "%s: the signal '%s' must be an integer buffer, not %s",
                       ts_comm_name(op->comm), b->name, ts_dtype_name(b->dt));
        if (op->comm == TS_COMM_BARRIER_BLOCKS && b->scope != IR_SCOPE_GLOBAL)
            ts_fail_at(cx->diag, TS_ERR_TYPE, s->loc,
                       "T.barrier_blocks: the barrier '%s' must be a tensor on the symmetric heap", b->name);
        break;
    }
    default: break;
    }
    return comm_stmt(cx->arena, s->loc, op);
}
