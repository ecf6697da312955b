/*
 * sched_builtins.c — T.PersistentTileScheduler (tile-ai/tilelang at
 * a35008a: tilelang/language/tile_schedule.py), a persistent kernel's tile
 * loop written by hand:
 *
 *   sched = T.PersistentTileScheduler(m_tiles, n_tiles, num_workers=None,
 *               swizzle_size=1, column_major=True, cluster_size=1,
 *               stateful=True, name=None)
 *   sched.init(worker)           # worker: this block's (or cluster's) index
 *   while sched.valid():         # linear_idx < the number of tiles
 *       bx, by = sched.m_idx, sched.n_idx     # the tile; current_iter: 0, 1, ..
 *       ...
 *       sched.next_tile()        # linear_idx += num_workers
 *
 * Worker w takes the linear tiles w, w + W, w + 2W, ... (W = num_workers,
 * default the target's SM count // cluster_size, what
 * driver.get_num_sms() answers here, so a grid of that many blocks covers
 * every tile once).  A linear index t becomes (m, n) over the grid of
 * M' = ceildiv(m_tiles, cluster_size) cluster rows by n_tiles columns:
 * the "primary" axis (m when column_major, else n) is swept whole inside a
 * panel of s = swizzle_size lines of the other ("secondary") axis:
 *   g = t // (P s), base = g s, width = max(1, min(s, S - base)),
 *   r = t - g P s, fast = r // width, slow = base + r % width,
 *   (m, n) = (fast, slow) if column_major else (slow, fast);
 * the last panel is narrower when S is not a multiple of s.  With a
 * cluster, m is the cluster row: the block's row is m * cluster_size +
 * T.block_rank_in_cluster().
 *
 * It elaborates to what TileLang's meta_class inlines: four int32
 * T.alloc_var scalars per thread ({name}_m_idx, _n_idx, _linear_idx,
 * _current_iter; TileLang's names) and stores into them at init and
 * next_tile; valid(), coord(t) and the properties are expressions.  The
 * while loop is an ordinary run-time `while` (every target runs it).
 * stateful=False allocates nothing and offers only coord(t).
 *
 * Misuse refused here, naming the call: a swizzle_size or cluster_size
 * that is not a positive constant, a num_workers that is not a positive
 * integer, column_major/stateful that are not compile-time, state
 * methods on a stateless scheduler, a scheduler outside a kernel.
 */
#include "elab/elab_int.h"

#include <string.h>

/* The constructor's and the methods' ids: ELAB_SCHED_BASE + these. */
enum { S_NEW, S_INIT, S_NEXT, S_VALID, S_COORD, S_COUNT };
static const char *const sched_fn_names[S_COUNT] = {"T.PersistentTileScheduler", "init", "next_tile", "valid",
                                                      "coord"};

Value *sched_builtin_lookup(Elab *E, const char *name, TsLoc loc) {
    if (strcmp(name, "PersistentTileScheduler")) return NULL;
    Value *v = val_new(E, V_BUILTIN, loc);
    v->bi = ELAB_SCHED_BASE + S_NEW;
    return v;
}

/* The argument at `pos` or keyword `name` (marked used), or NULL. */
static Value *sarg(Elab *E, const char *fn, Value **args, int nargs, const char **kw, Value **kwv, int nkw,
                   bool *used, int pos, const char *name, TsLoc loc) {
    Value *v = pos >= 0 && pos < nargs ? args[pos] : NULL;
    for (int i = 0; i < nkw; i++)
        if (!strcmp(kw[i], name)) {
            if (v) elab_fail(E, TS_ERR_TYPE, loc, "%s got two values for '%s'", fn, name);
            v = kwv[i];
            used[i] = true;
        }
    return v;
}

static void sched_check_args(Elab *E, const char *fn, int nargs, int maxpos, const char **kw, int nkw,
                             const bool *used, TsLoc loc) {
    if (nargs > maxpos)
        elab_fail(E, TS_ERR_TYPE, loc, "%s takes at most %d positional argument%s, %d given", fn, maxpos,
                  maxpos == 1 ? "" : "s", nargs);
    for (int i = 0; i < nkw; i++)
        if (!used[i]) elab_fail(E, TS_ERR_TYPE, loc, "%s got an unexpected keyword argument '%s'", fn, kw[i]);
}

/* A run-time or constant integer as int32 (the scheduler's arithmetic, as TileLang's). */
static IrExpr *sched_int(Elab *E, Value *v, const char *fn, const char *what, TsLoc loc) {
    IrExpr *e = val_to_expr(E, v, loc);
    if (!ts_dtype_is_int(e->dt))
        elab_fail(E, TS_ERR_TYPE, loc, "%s: %s must be an integer, got %s", fn, what, ts_dtype_name(e->dt));
    int64_t c;
    if (ir_is_const_int(e, &c) && c <= 0)
        elab_fail(E, TS_ERR_TYPE, loc, "%s: %s must be positive, got %lld", fn, what, (long long)c);
    return e->dt == TS_INT32 ? e : ir_cast(E->a, TS_INT32, e);
}

/* A positive compile-time integer (default dflt when absent). */
static int64_t sched_const(Elab *E, Value *v, int64_t dflt, const char *fn, const char *what, TsLoc loc) {
    if (!v || v->kind == V_NONE) return dflt;
    if (v->kind != V_INT && v->kind != V_BOOL)
        elab_fail(E, TS_ERR_TYPE, loc, "%s: %s must be a compile-time integer, got a %s", fn, what,
                  val_kind_name(v));
    int64_t c = v->kind == V_BOOL ? v->b : v->i;
    if (c < 1 || c > (1 << 20))
        elab_fail(E, TS_ERR_TYPE, loc, "%s: %s must be in 1..%d, got %lld", fn, what, 1 << 20, (long long)c);
    return c;
}

static bool sched_flag(Elab *E, Value *v, bool dflt, const char *fn, const char *what, TsLoc loc) {
    if (!v) return dflt;
    if (val_is_symbolic(v))
        elab_fail(E, TS_ERR_TYPE, loc, "%s: %s must be known at compile time", fn, what);
    return val_truthy(E, v, loc);
}

static IrBuffer *sched_var(Elab *E, const char *prefix, const char *field, TsLoc loc) {
    IrExpr *one = ir_i32(E->a, 1);
    IrBuffer *b = ir_buffer(E->k, prefix ? ts_sprintf(E->a, "%s_%s", prefix, field) : field, TS_INT32, IR_SCOPE_VAR, 1,
                            &one, loc);
    IrStmt *s = ir_stmt(E->a, IR_S_ALLOC, loc);
    s->alloc.buf = b;
    emit(E, s);
    return b;
}

static IrExpr *sched_load(Elab *E, IrBuffer *b) {
    IrExpr **idx = TS_NEWN(E->a, IrExpr *, 1);
    idx[0] = ir_i32(E->a, 0);
    return ir_load(E->a, b, idx, 1);
}

static void sched_store(Elab *E, IrBuffer *b, IrExpr *v, TsLoc loc) {
    IrExpr **idx = TS_NEWN(E->a, IrExpr *, 1);
    idx[0] = ir_i32(E->a, 0);
    IrStmt *s = ir_store(E->a, b, idx, 1, v);
    s->loc = loc;
    emit(E, s);
}

/* Linear tile t as (m, n): see the top of the file. */
static void sched_coord(Elab *E, const TileSched *S, IrExpr *t, IrExpr **m, IrExpr **n) {
    TsArena *a = E->a;
    IrExpr *sw = ir_i32(a, S->swizzle);
    IrExpr *panel = ir_bin(a, IR_MUL, S->primary, sw);
    IrExpr *g = ir_bin(a, IR_FLOORDIV, t, panel);
    IrExpr *base = ir_bin(a, IR_MUL, g, sw);
    IrExpr *width = ir_bin(a, IR_MAX, ir_i32(a, 1), ir_bin(a, IR_MIN, sw, ir_bin(a, IR_SUB, S->secondary, base)));
    IrExpr *r = ir_bin(a, IR_SUB, t, ir_bin(a, IR_MUL, g, panel));
    IrExpr *fast = S->swizzle == 1 ? r : ir_bin(a, IR_FLOORDIV, r, width);
    IrExpr *slow = S->swizzle == 1 ? g : ir_bin(a, IR_ADD, base, ir_bin(a, IR_FLOORMOD, r, width));
    *m = S->column_major ? fast : slow;
    *n = S->column_major ? slow : fast;
}

static void sched_update(Elab *E, const TileSched *S, TsLoc loc) {
    IrExpr *m, *n;
    sched_coord(E, S, sched_load(E, S->lin), &m, &n);
    sched_store(E, S->m, m, loc);
    sched_store(E, S->n, n, loc);
}

static Value *sched_new(Elab *E, const char *fn, Value **args, int nargs, const char **kw, Value **kwv, int nkw,
                        TsLoc loc) {
    bool *used = TS_NEWN(E->a, bool, nkw ? nkw : 1);
    Value *mv = sarg(E, fn, args, nargs, kw, kwv, nkw, used, 0, "num_m_tiles", loc);
    Value *nv = sarg(E, fn, args, nargs, kw, kwv, nkw, used, 1, "num_n_tiles", loc);
    Value *wv = sarg(E, fn, args, nargs, kw, kwv, nkw, used, 2, "num_workers", loc);
    Value *swv = sarg(E, fn, args, nargs, kw, kwv, nkw, used, 3, "swizzle_size", loc);
    Value *cmv = sarg(E, fn, args, nargs, kw, kwv, nkw, used, 4, "column_major", loc);
    Value *csv = sarg(E, fn, args, nargs, kw, kwv, nkw, used, 5, "cluster_size", loc);
    Value *stv = sarg(E, fn, args, nargs, kw, kwv, nkw, used, 6, "stateful", loc);
    Value *namev = sarg(E, fn, args, nargs, kw, kwv, nkw, used, 7, "name", loc);
    sched_check_args(E, fn, nargs, 8, kw, nkw, used, loc);
    if (!E->cur) elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s must be used inside `with T.Kernel(...)`", fn);
    if (!mv || !nv) elab_fail(E, TS_ERR_TYPE, loc, "%s needs the tile counts num_m_tiles and num_n_tiles", fn);
    if (namev && namev->kind != V_NONE && namev->kind != V_STR)
        elab_fail(E, TS_ERR_TYPE, loc, "%s: name must be a string, got a %s", fn, val_kind_name(namev));
    TileSched *S = TS_NEW(E->a, TileSched);
    S->swizzle = sched_const(E, swv, 1, fn, "swizzle_size", loc);
    S->cluster = sched_const(E, csv, 1, fn, "cluster_size", loc);
    S->column_major = sched_flag(E, cmv, true, fn, "column_major", loc);
    S->stateful = sched_flag(E, stv, true, fn, "stateful", loc);
    TsArena *a = E->a;
    IrExpr *mt = sched_int(E, mv, fn, "num_m_tiles", loc), *nt = sched_int(E, nv, fn, "num_n_tiles", loc);
    IrExpr *cs = ir_i32(a, S->cluster);
    IrExpr *mc = S->cluster == 1 ? mt : ir_bin(a, IR_FLOORDIV, ir_bin(a, IR_ADD, mt, ir_i32(a, S->cluster - 1)), cs);
    S->total = ir_bin(a, IR_MUL, mc, nt);
    S->primary = S->column_major ? mc : nt;
    S->secondary = S->column_major ? nt : mc;
    if (wv && wv->kind != V_NONE) S->workers = sched_int(E, wv, fn, "num_workers", loc);
    else {
        int64_t sms = elab_num_sms(E) / S->cluster;
        if (sms < 1)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: cluster_size %lld leaves no worker of the %lld SMs (pass num_workers)",
                      fn, (long long)S->cluster, (long long)elab_num_sms(E));
        S->workers = ir_i32(a, sms);
    }
    const char *prefix = namev && namev->kind == V_STR ? namev->s : NULL;
    if (S->stateful) {
        S->m = sched_var(E, prefix, "m_idx", loc);
        S->n = sched_var(E, prefix, "n_idx", loc);
        S->lin = sched_var(E, prefix, "linear_idx", loc);
        S->iter = sched_var(E, prefix, "current_iter", loc);
    }
    Value *v = val_new(E, V_SCHED, loc);
    v->sched = S;
    return v;
}

static IrBuffer *state(Elab *E, const TileSched *S, IrBuffer *b, const char *what, TsLoc loc) {
    if (!S->stateful)
        elab_fail(E, TS_ERR_TYPE, loc,
                  "T.PersistentTileScheduler(stateful=False) has no %s: it only decodes tiles (sched.coord(t))", what);
    return b;
}

Value *sched_attr(Elab *E, Value *obj, const char *name, TsLoc loc) {
    const TileSched *S = obj->sched;
    static const char *const props[] = {"m_idx", "n_idx", "linear_idx", "current_iter"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, props[i])) {
            IrBuffer *b = i == 0 ? S->m : i == 1 ? S->n : i == 2 ? S->lin : S->iter;
            return val_expr(E, sched_load(E, state(E, S, b, ts_sprintf(E->a, "state '%s'", name), loc)), loc);
        }
    if (!strcmp(name, "num_workers")) return val_expr(E, S->workers, loc);
    if (!strcmp(name, "swizzle_size")) return val_int(E, S->swizzle, loc);
    if (!strcmp(name, "cluster_size")) return val_int(E, S->cluster, loc);
    for (int i = S_INIT; i < S_COUNT; i++)
        if (!strcmp(name, sched_fn_names[i])) {
            Value *m = val_new(E, V_BUILTIN, loc);
            m->bi = ELAB_SCHED_BASE + i;
            m->items = TS_NEWN(E->a, Value *, 1);
            m->items[0] = obj;
            m->n = 1;
            return m;
        }
    return NULL;
}

Value *sched_builtin_call(Elab *E, Value *f, Value **args, int nargs, const char **kw, Value **kwv, int nkw,
                          TsLoc loc) {
    int id = f->bi - ELAB_SCHED_BASE;
    if (id == S_NEW) return sched_new(E, sched_fn_names[S_NEW], args, nargs, kw, kwv, nkw, loc);
    const TileSched *S = f->items[0]->sched;
    const char *fn = ts_sprintf(E->a, "sched.%s()", sched_fn_names[id]);
    int want = id == S_INIT || id == S_COORD ? 1 : 0;
    if (nkw || nargs != want)
        elab_fail(E, TS_ERR_TYPE, loc, "%s takes %s", fn, want ? "one positional argument" : "no arguments");
    if (!E->cur) elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s must be used inside `with T.Kernel(...)`", fn);
    switch (id) {
    case S_COORD: {
        IrExpr *m, *n;
        sched_coord(E, S, sched_int(E, args[0], fn, "the tile index", loc), &m, &n);
        Value **items = TS_NEWN(E->a, Value *, 2);
        items[0] = val_expr(E, m, loc);
        items[1] = val_expr(E, n, loc);
        return val_seq(E, V_TUPLE, items, 2, loc);
    }
    case S_VALID:
        return val_expr(E, ir_bin(E->a, IR_LT, sched_load(E, state(E, S, S->lin, "valid()", loc)), S->total), loc);
    case S_INIT: {
        state(E, S, S->lin, "init()", loc);
        IrExpr *w = val_to_expr(E, args[0], loc);
        if (!ts_dtype_is_int(w->dt))
            elab_fail(E, TS_ERR_TYPE, loc, "%s: the worker index must be an integer, got %s", fn, ts_dtype_name(w->dt));
        sched_store(E, S->iter, ir_i32(E->a, 0), loc);
        sched_store(E, S->lin, w->dt == TS_INT32 ? w : ir_cast(E->a, TS_INT32, w), loc);
        sched_update(E, S, loc);
        return val_none(E, loc);
    }
    case S_NEXT:
        state(E, S, S->lin, "next_tile()", loc);
        sched_store(E, S->iter, ir_bin(E->a, IR_ADD, sched_load(E, S->iter), ir_i32(E->a, 1)), loc);
        sched_store(E, S->lin, ir_bin(E->a, IR_ADD, sched_load(E, S->lin), S->workers), loc);
        sched_update(E, S, loc);
        return val_none(E, loc);
    default: break;
    }
    elab_fail(E, TS_ERR_INTERNAL, loc, "unknown scheduler method %d", id);
}
