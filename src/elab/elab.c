/*
 * elab.c — the elaborator's statements, the module level, and the entry
 * point ts_elaborate (values live in value.c, expressions in expr.c, the
 * T.* functions in builtins.c).
 *
 * One walker serves both worlds.  Outside a prim_func (the factory and
 * plain helper functions) statements simply run over compile-time values.
 * Inside a prim_func (E->in_kernel > 0) the same walker also meets values
 * only known when the kernel runs (V_EXPR, buffer accesses): arithmetic on
 * those builds IR expressions, and `for`/`if`/`while` on them emit IR loops
 * and branches into E->cur.  Arithmetic between two constants still folds
 * here, with Python's meaning (`/` on ints gives a float, `//` floors),
 * exactly as it would in TileLang, where Python runs before TVM sees the
 * kernel.
 */
#include "elab/elab_int.h"
#include "front/lex.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- statements -------------------------------------------------------------------------------- */

/* Store v into buffer element access `acc` (a V_ACCESS). */
static void emit_store(Elab *E, IrBuffer *buf, IrExpr **idx, Value *v, TsLoc loc) {
    IrExpr *e;
    if (val_is_const(v)) e = adapt_literal(E, v, buf->dt, loc);
    else e = val_to_expr(E, v, loc);
    if (e->dt != buf->dt) e = ir_cast(E->a, buf->dt, e);
    IrStmt *s = ir_store(E->a, buf, idx, buf->ndim, e);
    s->loc = loc;
    emit(E, s);
}

static IrExpr **zero_idx(Elab *E) {
    IrExpr **idx = TS_NEWN(E->a, IrExpr *, 1);
    idx[0] = ir_i32(E->a, 0);
    return idx;
}

static void assign(Elab *E, Env *env, const AstExpr *target, Value *v, TsLoc loc);
static Value *import_sibling(Elab *E, const char *module, const char *member, TsLoc loc);

void assign_target(Elab *E, Env *env, const AstExpr *target, Value *v, TsLoc loc) { assign(E, env, target, v, loc); }

static void assign(Elab *E, Env *env, const AstExpr *target, Value *v, TsLoc loc) {
    switch (target->kind) {
    case AST_NAME: {
        if (v->kind == V_BUFFER && !v->buf->name[0]) { /* T.alloc_* / T.empty result */
            v->buf->name = target->name;
            IrBuffer *st = v->buf->base && !v->buf->base->name[0] ? v->buf->base : v->buf; /* int4: the packed bytes */
            st->name = target->name;
            if (st->param >= 0 && st->param < E->k->params.n)
                E->k->params.v[st->param].name = target->name;
        }
        Value *old = env_lookup(env, target->name);
        if (E->in_kernel && old && old->kind == V_BUFFER && old->buf->scope == IR_SCOPE_VAR &&
            v->kind != V_BUFFER) {
            emit_store(E, old->buf, zero_idx(E), v, loc);
            return;
        }
        if (E->in_kernel && (v->kind == V_EXPR || v->kind == V_ACCESS) && E->cur) {
            IrExpr *e = val_to_expr(E, v, loc);
            if (expr_has_load(e)) {
                /* A let, so the value is read now, not wherever the name is used. */
                IrVar *var = ir_var(E->k, target->name, e->dt, IR_VAR_LET);
                IrStmt *s = ir_stmt(E->a, IR_S_LET, loc);
                s->let.var = var;
                s->let.value = e;
                emit(E, s);
                v = val_expr(E, ir_var_ref(E->a, var), loc);
            }
        }
        env_set(E, env, target->name, v);
        return;
    }
    case AST_TUPLE:
    case AST_LIST: {
        int n;
        Value **items = val_items(E, v, &n);
        if (v->kind != V_TUPLE && v->kind != V_LIST)
            elab_fail(E, TS_ERR_TYPE, loc, "cannot unpack a %s", val_kind_name(v));
        if (n != target->n)
            elab_fail(E, TS_ERR_TYPE, loc, "cannot unpack %d values into %d names", n, target->n);
        /* Python evaluates the whole right side before the first store: an
         * element read there (`a[0], a[1] = a[1], a[0]`) is bound to a let
         * first, so an earlier target's store cannot change what a later
         * target receives. */
        Value **rhs = TS_NEWN(E->a, Value *, n > 0 ? n : 1);
        for (int i = 0; i < n; i++) rhs[i] = items[i];
        items = rhs;
        for (int i = 0; n > 1 && i < n && E->in_kernel && E->cur; i++) {
            if (items[i]->kind != V_EXPR && items[i]->kind != V_ACCESS) continue;
            IrExpr *e = val_to_expr(E, items[i], loc);
            if (!expr_has_load(e)) continue;
            IrVar *var = ir_var(E->k, "rhs", e->dt, IR_VAR_LET);
            IrStmt *ls = ir_stmt(E->a, IR_S_LET, loc);
            ls->let.var = var;
            ls->let.value = e;
            emit(E, ls);
            items[i] = val_expr(E, ir_var_ref(E->a, var), loc);
        }
        for (int i = 0; i < n; i++) assign(E, env, target->items[i], items[i], loc);
        return;
    }
    case AST_SUBSCRIPT: {
        Value *dst = subscript(E, env, target);
        if (dst->kind == V_ACCESS) {
            emit_store(E, dst->buf, dst->idx, v, loc);
            return;
        }
        if (dst->kind == V_REGION)
            elab_fail(E, TS_ERR_UNSUPPORTED, loc,
                      "assigning to a slice is not supported; use T.copy or T.fill");
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "assigning into a %s is not supported",
                  val_kind_name(eval(E, env, target->a)));
    }
    default:
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "this assignment target is not supported");
    }
}

/*
 * Names bound inside a run-time construct (an IR loop body, a branch of a
 * run-time `if`, a run-time `while`) cannot be used after it: they may
 * name loop variables or lets that exist only inside, and a Python value
 * assigned in one branch would silently win over the other.  After such a
 * construct, every binding of `env` that it added or changed becomes an
 * opaque value that explains this if used.
 */
typedef struct EnvSnap {
    Binding *v;
    int n;
} EnvSnap;

static EnvSnap env_snapshot(Elab *E, Env *env) {
    EnvSnap sn = {TS_NEWN(E->a, Binding, env->vars.n ? env->vars.n : 1), env->vars.n};
    for (int i = 0; i < env->vars.n; i++) sn.v[i] = env->vars.v[i];
    return sn;
}

static void env_seal(Elab *E, Env *env, EnvSnap sn, const char *what, const char *hint) {
    for (int i = 0; i < env->vars.n; i++) {
        Binding *b = &env->vars.v[i];
        if (i < sn.n && sn.v[i].v == b->v) continue;
        if (b->v->kind == V_OPAQUE) continue;
        Value *o = val_new(E, V_OPAQUE, b->v->loc);
        o->s = ts_sprintf(E->a,
                          "'%s' was assigned inside a %s and cannot be used after it; %s",
                          b->name, what, hint);
        b->v = o;
    }
}

static void exec_for_ir(Elab *E, Env *env, const AstStmt *s, IterSpec *it) {
    EnvSnap snap = env_snapshot(E, env);
    const AstExpr *t = s->target;
    int nt = 1;
    const AstExpr *const *names = &t;
    if (t->kind == AST_TUPLE || t->kind == AST_LIST) {
        nt = t->n;
        names = (const AstExpr *const *)t->items;
    }
    if (nt != it->n)
        elab_fail(E, TS_ERR_TYPE, t->loc, "the loop has %d level%s but %d name%s", it->n,
                  it->n == 1 ? "" : "s", nt, nt == 1 ? "" : "s");
    if (s->orelse.n)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "`for ... else` is not supported in kernel code");
    IrStmt *saved = E->cur;
    IrStmt *outer = NULL, *inner_parent = NULL;
    for (int l = 0; l < it->n; l++) {
        if (names[l]->kind != AST_NAME)
            elab_fail(E, TS_ERR_UNSUPPORTED, names[l]->loc, "a loop variable must be a name");
        IrVar *var = ir_var(E->k, names[l]->name, TS_INT32, IR_VAR_LOOP);
        IrExpr *ve = ir_var_ref(E->a, var);
        Value *bound;
        IrExpr *extent = it->extent[l], *start = it->start[l];
        if (it->step) {
            /* for v in serial(start, stop, step): iterate i, v = start + i * step */
            bound = val_expr(E, ir_bin(E->a, IR_ADD, start, ir_bin(E->a, IR_MUL, ve, it->step)), s->loc);
            start = ir_i32(E->a, 0);
        } else {
            bound = val_expr(E, ve, s->loc);
        }
        env_set(E, env, names[l]->name, bound);
        IrStmt *body = ir_seq(E->a);
        IrStmt *f = ir_for(E->a, var, start, extent, it->kind, body);
        f->loc = s->loc;
        if (l == 0) {
            f->for_.num_stages = it->num_stages;
            f->for_.order = it->order;
            f->for_.stage = it->stage;
            f->for_.norder = it->norder;
        }
        if (!outer) outer = f;
        else ir_seq_push(E->a, inner_parent, f);
        inner_parent = body;
    }
    emit(E, outer);
    E->cur = inner_parent;
    E->ir_loops++;
    exec_block(E, env, &s->body);
    E->ir_loops--;
    if (it->kind == IR_FOR_PARALLEL && E->reducers.n) elab_parallel_reducers(E, outer);
    E->breaking = E->continuing = false;
    E->cur = saved;
    env_seal(E, env, snap, "run-time loop", "use T.alloc_var (or a buffer) for a value that outlives it");
}

/*
 * `for v0, .., vk in T.Persistent(domain, wave_size, index, group_size)`:
 * a persistent kernel's tile loop (TileLang's PersistentFor, src/ir.cc, is
 * where these semantics come from).  The tiles are numbered over a padded
 * domain whose last extent is split into groups of g = clamp(group_size, 1,
 * last): (ceildiv(last, g), d0, .., d(k-1), g), row-major.  Iteration w of
 * the loop (w < ceildiv(padded size, wave_size)) takes tile w * wave_size +
 * index; its digits give v0..v(k-1) and, from the first and the last digit,
 * vk = digit0 * g + digit_last; tiles with vk past the last extent are
 * skipped (that also covers the padding).
 */
static void exec_persistent(Elab *E, Env *env, const AstStmt *s, IterSpec *it) {
    TsArena *a = E->a;
    const AstExpr *t = s->target;
    int nt = t->kind == AST_TUPLE || t->kind == AST_LIST ? t->n : 1;
    if (nt != it->n)
        elab_fail(E, TS_ERR_TYPE, t->loc, "T.Persistent has %d extent%s but %d name%s", it->n, it->n == 1 ? "" : "s",
                  nt, nt == 1 ? "" : "s");
    if (s->orelse.n) elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "`for ... else` is not supported in kernel code");
    int n = it->n;
    IrExpr *last = it->domain[n - 1];
    IrExpr *g = ir_bin(a, IR_MAX, ir_i32(a, 1), ir_bin(a, IR_MIN, it->group, last));
    IrExpr *grouped[6];
    grouped[0] = ir_bin(a, IR_FLOORDIV, ir_bin(a, IR_ADD, last, ir_bin(a, IR_SUB, g, ir_i32(a, 1))), g);
    for (int i = 0; i + 1 < n; i++) grouped[i + 1] = it->domain[i];
    grouped[n] = g;
    IrExpr *padded = grouped[0];
    for (int i = 1; i <= n; i++) padded = ir_bin(a, IR_MUL, padded, grouped[i]);
    IrExpr *waves = ir_bin(a, IR_FLOORDIV, ir_bin(a, IR_ADD, padded, ir_bin(a, IR_SUB, it->wave, ir_i32(a, 1))),
                           it->wave);
    IrVar *w = ir_var(E->k, "w", TS_INT32, IR_VAR_LOOP);
    IrExpr *rem = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, ir_var_ref(a, w), it->wave), it->index);
    IrExpr *digit[6];
    for (int i = n; i >= 1; i--) {
        digit[i] = ir_bin(a, IR_FLOORMOD, rem, grouped[i]);
        rem = ir_bin(a, IR_FLOORDIV, rem, grouped[i]);
    }
    digit[0] = rem;
    IrExpr *lastc = ir_bin(a, IR_ADD, ir_bin(a, IR_MUL, digit[0], g), digit[n]);
    EnvSnap snap = env_snapshot(E, env);
    for (int i = 0; i < n; i++) {
        const AstExpr *ni = nt > 1 || t->kind == AST_TUPLE || t->kind == AST_LIST ? t->items[i] : t;
        if (ni->kind != AST_NAME) elab_fail(E, TS_ERR_UNSUPPORTED, ni->loc, "a loop variable must be a name");
        env_set(E, env, ni->name, val_expr(E, i + 1 < n ? digit[i + 1] : lastc, ni->loc));
    }
    IrStmt *body = ir_seq(a);
    IrStmt *f = ir_for(a, w, ir_i32(a, 0), waves, IR_FOR_SERIAL, body);
    f->loc = s->loc;
    IrStmt *guard = ir_stmt(a, IR_S_IF, s->loc);
    guard->if_.cond = ir_bin(a, IR_LT, lastc, last);
    guard->if_.then = ir_seq(a);
    ir_seq_push(a, body, guard);
    emit(E, f);
    IrStmt *saved = E->cur;
    E->cur = guard->if_.then;
    E->ir_loops++;
    exec_block(E, env, &s->body);
    E->ir_loops--;
    E->breaking = E->continuing = false;
    E->cur = saved;
    env_seal(E, env, snap, "run-time loop", "use T.alloc_var (or a buffer) for a value that outlives it");
}

static void exec_for(Elab *E, Env *env, const AstStmt *s) {
    Value *iter = eval(E, env, s->cond);
    if (iter->kind == V_ITER && iter->iter->persistent) {
        exec_persistent(E, env, s, iter->iter);
        return;
    }
    if (iter->kind == V_ITER && !iter->iter->host) {
        exec_for_ir(E, env, s, iter->iter);
        return;
    }
    /* Compile-time loop: range() over constants, tuples, lists, dict keys. */
    int64_t lo = 0, hi = 0, step = 1;
    int n = 0;
    Value **items = NULL;
    if (iter->kind == V_ITER) {
        int64_t c;
        ir_is_const_int(iter->iter->start[0], &lo);
        ir_is_const_int(iter->iter->extent[0], &c);
        step = iter->iter->step ? iter->iter->step->ival : 1;
        hi = lo + c * step;
    } else if (iter->kind == V_TUPLE || iter->kind == V_LIST) {
        items = iter->items;
        n = iter->n;
    } else if (iter->kind == V_DICT) {
        n = iter->n / 2;
        items = TS_NEWN(E->a, Value *, n ? n : 1);
        for (int i = 0; i < n; i++) items[i] = iter->items[2 * i];
    } else {
        if (iter->kind == V_OPAQUE) fail_opaque(E, iter, s->cond->loc);
        elab_fail(E, TS_ERR_TYPE, s->cond->loc, "cannot iterate over a %s", val_kind_name(iter));
    }
    int64_t count = items ? n : (step > 0 ? (hi - lo + step - 1) / step : (lo - hi - step - 1) / -step);
    bool broke = false;
    for (int64_t i = 0; i < count; i++) {
        Value *v = items ? items[i] : val_int(E, lo + i * step, s->loc);
        assign(E, env, s->target, v, s->loc);
        exec_block(E, env, &s->body);
        if (E->returning) return;
        if (E->breaking) {
            E->breaking = false;
            broke = true;
            break;
        }
        E->continuing = false;
    }
    if (!broke) exec_block(E, env, &s->orelse);
}

static void exec_if(Elab *E, Env *env, const AstStmt *s) {
    Value *c = eval(E, env, s->cond);
    if (!val_is_symbolic(c)) {
        exec_block(E, env, val_truthy(E, c, s->cond->loc) ? &s->body : &s->orelse);
        return;
    }
    IrStmt *st = ir_stmt(E->a, IR_S_IF, s->loc);
    st->if_.cond = val_to_expr(E, c, s->cond->loc);
    st->if_.then = ir_seq(E->a);
    emit(E, st);
    EnvSnap snap = env_snapshot(E, env);
    IrStmt *saved = E->cur;
    E->cur = st->if_.then;
    exec_block(E, env, &s->body);
    if (s->orelse.n) {
        st->if_.else_ = ir_seq(E->a);
        E->cur = st->if_.else_;
        exec_block(E, env, &s->orelse);
    }
    E->cur = saved;
    env_seal(E, env, snap, "run-time `if`", "use T.alloc_var (or a buffer) for a value that outlives it");
    if (E->returning)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "`return` under a run-time condition is not supported");
    /* A break/continue that reached here belongs to a loop run at compile
     * time (unrolled): it cannot depend on a run-time condition. */
    if (E->breaking || E->continuing)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc,
                  "`%s` under a run-time condition inside a loop that runs at compile time (a `while` on a "
                  "constant, a `for` over a tuple or list); use T.serial/range or a `while` on a run-time condition",
                  E->breaking ? "break" : "continue");
}

static void exec_while(Elab *E, Env *env, const AstStmt *s) {
    Value *c = eval(E, env, s->cond);
    if (val_is_symbolic(c)) {
        IrStmt *st = ir_stmt(E->a, IR_S_WHILE, s->loc);
        st->while_.cond = val_to_expr(E, c, s->cond->loc);
        /* A loop waiting on global memory waits for other blocks (or ranks):
         * the C target then runs blocks as coroutines so waiting never deadlocks. */
        if (expr_reads_global(st->while_.cond)) E->k->may_block = true;
        st->while_.body = ir_seq(E->a);
        emit(E, st);
        EnvSnap snap = env_snapshot(E, env);
        IrStmt *saved = E->cur;
        E->cur = st->while_.body;
        E->ir_loops++;
        exec_block(E, env, &s->body);
        E->ir_loops--;
        E->breaking = E->continuing = false;
        E->cur = saved;
        env_seal(E, env, snap, "run-time `while`", "use T.alloc_var (or a buffer) for a value that outlives it");
        return;
    }
    while (val_truthy(E, c, s->cond->loc)) {
        exec_block(E, env, &s->body);
        if (E->returning) return;
        if (E->breaking) {
            E->breaking = false;
            return;
        }
        E->continuing = false;
        c = eval(E, env, s->cond);
        if (val_is_symbolic(c))
            elab_fail(E, TS_ERR_UNSUPPORTED, s->cond->loc,
                      "a while condition that becomes a run-time value is not supported");
    }
    exec_block(E, env, &s->orelse);
}

/* pass_configs={...: v}: true if a key names the TileLang switch `attr`
 * (tilelang.PassConfigKey.<attr>, or its string `str`) and its value is
 * true.  Keys are matched by spelling: the PassConfigKey class is not
 * modelled; other keys are ignored.  The dict is written in the decorator
 * or is a module-level `name = {...}` the decorator names (topk_selector's
 * `pass_configs = {...}`). */
static bool wants_config(Elab *E, Env *env, const AstExpr *cfg, const char *attr, const char *str) {
    bool on = false;
    if (cfg->kind == AST_NAME && E->mod) {
        const AstExpr *found = NULL;
        for (int i = 0; i < E->mod->body.n; i++) {
            const AstStmt *s = E->mod->body.v[i];
            if (s->kind == AST_ASSIGN && s->ntargets == 1 && s->targets[0]->kind == AST_NAME &&
                !strcmp(s->targets[0]->name, cfg->name) && s->value && s->value->kind == AST_DICT)
                found = s->value;
        }
        if (found) cfg = found;
    }
    if (cfg->kind != AST_DICT) return false;
    for (int i = 0; i + 1 < cfg->n; i += 2) {
        const AstExpr *key = cfg->items[i];
        bool match = (key->kind == AST_ATTR && key->name && !strcmp(key->name, attr)) ||
                     (key->kind == AST_STR && key->str && !strcmp(key->str, str));
        if (match) on = val_truthy(E, eval(E, env, cfg->items[i + 1]), cfg->items[i + 1]->loc);
    }
    return on;
}

/* Is a TileLang target string ("hip -mcpu=gfx950", "cuda", "auto", ...) one
 * of a GPU backend this compiler does not build for?  Its kind is the first
 * word (TVM's Target("kind -opt...")). */
static bool foreign_target(const char *t) {
    static const char *const kinds[] = {"hip", "rocm", "metal", "webgpu", "opencl", "vulkan", NULL};
    size_t n = strcspn(t, " \t");
    for (int i = 0; kinds[i]; i++)
        if (n == strlen(kinds[i]) && !strncmp(t, kinds[i], n)) return true;
    return false;
}

/* A kernel function written for another GPU backend (its
 * @tilelang.jit(target=...)): refused when it is compiled, at the target,
 * before its body runs (whose host code would ask for that backend's
 * intrinsics). */
static void check_target(Elab *E, const Func *fn, const char *entry) {
    const AstExpr *t = fn->foreign_target;
    if (!t) return;
    size_t n = strcspn(t->str, " \t");
    bool amd = (n == 3 && !strncmp(t->str, "hip", 3)) || (n == 4 && !strncmp(t->str, "rocm", 4));
    elab_fail(E, TS_ERR_UNSUPPORTED, t->loc,
              "'%s' is written for the target '%s' (@tilelang.jit(target=...))%s; this compiler builds for CUDA "
              "(NVIDIA GPUs) and the CPU (the C target) only",
              entry, t->str, amd ? ", AMD ROCm (HIP)" : "");
}

/* The decorators that matter: T.prim_func, T.macro, tilelang.jit(out_idx=...,
 * pass_configs=..., target=...).  Others (autotune, functools) are left
 * unevaluated. */
static Func *make_func(Elab *E, Env *env, const AstStmt *s) {
    Func *fn = TS_NEW(E->a, Func);
    fn->def = s;
    fn->closure = env;
    fn->kind = FN_PLAIN;
    for (int i = 0; i < s->ndecorators; i++) {
        const AstExpr *d = s->decorators[i];
        const AstExpr *callee = d->kind == AST_CALL ? d->a : d;
        const char *name = callee->kind == AST_ATTR ? callee->name
                           : callee->kind == AST_NAME ? callee->name : "";
        if (!strcmp(name, "prim_func")) fn->kind = FN_PRIM;
        else if (!strcmp(name, "macro")) fn->kind = FN_MACRO;
        else if (!strcmp(name, "jit") && d->kind == AST_CALL) {
            for (int j = 0; j < d->n; j++)
                if (d->kwnames && d->kwnames[j] && !strcmp(d->kwnames[j], "out_idx"))
                    fn->out_idx = eval(E, env, d->items[j]);
                else if (d->kwnames && d->kwnames[j] && !strcmp(d->kwnames[j], "pass_configs"))
                {
                    fn->fast_math = wants_config(E, env, d->items[j], "TL_ENABLE_FAST_MATH", "tl.enable_fast_math");
                    fn->user_sync = wants_config(E, env, d->items[j], "TL_DISABLE_THREAD_STORAGE_SYNC",
                                                 "tl.disable_thread_storage_sync");
                }
                else if (d->kwnames && d->kwnames[j] && !strcmp(d->kwnames[j], "target") &&
                         d->items[j]->kind == AST_STR && foreign_target(d->items[j]->str))
                    fn->foreign_target = d->items[j];
        }
    }
    return fn;
}

static void exec_with(Elab *E, Env *env, const AstStmt *s) {
    /* `with T.Kernel(...) as bx, iket.range("name"):` — further contexts that do
     * nothing to the kernel (instrumentation, evaluated to None) are allowed */
    for (int i = 1; i < s->ntargets; i++) {
        Value *extra = eval(E, env, s->items[i]);
        if (extra->kind != V_NONE || s->targets[i])
            elab_fail(E, TS_ERR_UNSUPPORTED, s->items[i]->loc,
                      "only `with T.Kernel(...) as ...` is supported (a second context only when it is "
                      "instrumentation that does nothing here, such as iket.range)");
    }
    if (s->ntargets < 1)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "only `with T.Kernel(...) as ...` is supported");
    Value *ctx = eval(E, env, s->items[0]);
    if (ctx->kind == V_ENUM && !strncmp(ctx->s, "Scale.", 6)) { /* T.Scale: comm_builtins.c */
        comm_exec_scale(E, env, s, ctx);
        return;
    }
    if (ctx->kind == V_ENUM && !strcmp(ctx->s, "attr:reduce_scope")) { /* T.attr around an allreduce */
        if (s->targets[0]) elab_fail(E, TS_ERR_UNSUPPORTED, s->targets[0]->loc, "T.attr(...) binds no name");
        Value *saved = E->allreduce;
        E->allreduce = ctx;
        exec_block(E, env, &s->body);
        E->allreduce = saved;
        return;
    }
    if (ctx->kind == V_ENUM && !strcmp(ctx->s, "T.ws")) { /* warp specialization: barrier_builtins.c */
        bar_exec_role(E, env, s, ctx);
        return;
    }
    if (ctx->kind != V_KERNEL)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->items[0]->loc,
                  "only `with T.Kernel(...) as ...` is supported, not a %s", val_kind_name(ctx));
    if (!E->in_kernel)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "T.Kernel must be used inside a @T.prim_func");
    if (E->cur)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "a T.Kernel inside another T.Kernel is not supported");
    E->have_kernel = true;
    EnvSnap snap = env_snapshot(E, env);
    IrKernel *k = E->k;
    if (s->targets[0]) {
        const AstExpr *t = s->targets[0];
        int nt = (t->kind == AST_TUPLE || t->kind == AST_LIST) ? t->n : 1;
        if (nt != k->ngrid)
            elab_fail(E, TS_ERR_TYPE, t->loc, "T.Kernel has %d grid dimension%s but %d name%s bound",
                      k->ngrid, k->ngrid == 1 ? "" : "s", nt, nt == 1 ? " is" : "s are");
        for (int i = 0; i < nt; i++) {
            const AstExpr *ni = t->kind == AST_TUPLE || t->kind == AST_LIST ? t->items[i] : t;
            if (ni->kind != AST_NAME) elab_fail(E, TS_ERR_UNSUPPORTED, ni->loc, "expected a name");
            k->block_idx[i]->name = ni->name;
            env_set(E, env, ni->name, val_expr(E, ir_var_ref(E->a, k->block_idx[i]), ni->loc));
        }
    }
    IrStmt *saved = E->cur;
    E->cur = k->body;
    exec_block(E, env, &s->body);
    E->cur = saved;
    /* buffers and block indices of this kernel do not exist in the next one */
    env_seal(E, env, snap, "T.Kernel body",
             "kernels share only their parameters (pass data through a tensor parameter)");
}

void start_next_kernel(Elab *E) {
    IrKernel *prev = E->k, *k = ir_kernel_new(E->a, prev->name);
    k->body = ir_seq(E->a);
    k->next_id = prev->next_id; /* ids stay unique over the chain */
    k->fast_math = prev->fast_math;
    k->user_sync = prev->user_sync;
    for (int i = 0; i < prev->params.n; i++) {
        ts_vec_push(E->a, k->params, prev->params.v[i]);
        if (prev->params.v[i].buf) ts_vec_push(E->a, k->buffers, prev->params.v[i].buf);
    }
    for (int i = 0; i < prev->shape_vars.n; i++) ts_vec_push(E->a, k->shape_vars, prev->shape_vars.v[i]);
    /* T.import_source lands in TileLang's module, before every kernel of it: the next kernel
     * sees what the earlier ones imported (extern_loc stays its own: set where it uses them) */
    for (int i = 0; i < prev->extern_src.n; i++) ts_vec_push(E->a, k->extern_src, prev->extern_src.v[i]);
    prev->next = k;
    E->k = k;
    E->rng_state = NULL; /* per kernel: T.rng_init again in the next one */
}

static void exec_stmt(Elab *E, Env *env, const AstStmt *s) {
    if (++E->steps > 2000000)
        elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "compile-time evaluation runs too long (endless loop?)");
    switch (s->kind) {
    case AST_EXPR: {
        if (s->value->kind == AST_STR) return; /* docstring */
        Value *v = eval(E, env, s->value);
        if (v->kind == V_EXPR && v->e->kind == IR_E_CALL && v->e->call.fn == IR_EXTERN_CALL) {
            IrStmt *st = ir_stmt(E->a, IR_S_EVAL, s->loc); /* T.call_extern(...) alone: a call statement */
            st->eval.e = v->e;
            emit(E, st);
        }
        return;
    }
    case AST_ASSIGN: {
        Value *v = eval(E, env, s->value);
        for (int i = 0; i < s->ntargets; i++) assign(E, env, s->targets[i], v, s->loc);
        return;
    }
    case AST_AUGASSIGN: {
        const AstExpr *t = s->target;
        Value *rhs = eval(E, env, s->value);
        if (t->kind == AST_SUBSCRIPT) {
            Value *dst = subscript(E, env, t);
            if (dst->kind != V_ACCESS)
                elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "augmented assignment needs one element");
            emit_store(E, dst->buf, dst->idx, binop(E, s->op, dst, rhs, s->loc), s->loc);
            return;
        }
        if (t->kind != AST_NAME)
            elab_fail(E, TS_ERR_UNSUPPORTED, s->loc, "this augmented assignment target is not supported");
        Value *old = env_lookup(env, t->name);
        if (!old) elab_fail(E, TS_ERR_NAME, t->loc, "name '%s' is not defined", t->name);
        assign(E, env, t, binop(E, s->op, old, rhs, s->loc), s->loc);
        return;
    }
    case AST_ANNASSIGN: {
        if (!s->value) {
            /* Eager style: `A: T.Tensor((M, K), dtype)` declares parameter A. */
            Value *ann = eval(E, env, s->annot);
            if (!E->eager || s->target->kind != AST_NAME || ann->kind != V_TENSORTY || E->cur)
                elab_fail(E, TS_ERR_UNSUPPORTED, s->loc,
                          "an annotation without a value declares a tensor parameter only in an eager-style "
                          "@tilelang.jit function, before its T.Kernel");
            Value *bv = val_new(E, V_BUFFER, s->loc);
            bv->buf = add_tensor_param(E, s->target->name, ann, false, s->loc);
            env_set(E, env, s->target->name, bv);
            return;
        }
        Value *v = eval(E, env, s->value);
        /* Python does not evaluate a local variable's annotation (typing.Optional[str] and
         * the like in host code); in kernel code a dtype annotation converts the value */
        Value *ann = E->in_kernel ? eval(E, env, s->annot) : NULL;
        if (ann && ann->kind == V_DTYPE && (val_is_const(v) || val_is_symbolic(v)) && E->in_kernel) {
            IrExpr *e = val_is_const(v) ? adapt_literal(E, v, ann->dt, s->loc) : val_to_expr(E, v, s->loc);
            if (e->dt != ann->dt) e = ir_cast(E->a, ann->dt, e);
            v = val_expr(E, e, s->loc);
        }
        assign(E, env, s->target, v, s->loc);
        return;
    }
    case AST_IF: exec_if(E, env, s); return;
    case AST_FOR: exec_for(E, env, s); return;
    case AST_WHILE: exec_while(E, env, s); return;
    case AST_WITH: exec_with(E, env, s); return;
    case AST_DEF: {
        Value *v = val_new(E, V_FUNC, s->loc);
        v->fn = make_func(E, env, s);
        env_set(E, env, s->name, v);
        return;
    }
    case AST_CLASS: {
        Value *v = val_new(E, V_OPAQUE, s->loc);
        v->s = ts_sprintf(E->a, "class '%s' is outside the supported subset", s->name);
        env_set(E, env, s->name, v);
        return;
    }
    case AST_RETURN:
        E->retval = s->value ? eval(E, env, s->value) : val_none(E, s->loc);
        E->returning = true;
        return;
    case AST_PASS: case AST_GLOBAL: case AST_DEL: return;
    case AST_BREAK:
    case AST_CONTINUE:
        if (E->ir_loops > 0) {
            emit(E, ir_stmt(E->a, s->kind == AST_BREAK ? IR_S_BREAK : IR_S_CONTINUE, s->loc));
            return;
        }
        if (s->kind == AST_BREAK) E->breaking = true;
        else E->continuing = true;
        return;
    case AST_IMPORT: {
        const char *bind;
        Value *m;
        if (s->member && strcmp(s->member, "*") && (m = import_sibling(E, s->module, s->member, s->loc))) {
            env_set(E, env, s->alias ? s->alias : s->member, m);
            return;
        }
        if (s->member) {
            m = module_value(E, ts_sprintf(E->a, "%s.%s", s->module, s->member), s->loc);
            bind = s->alias ? s->alias : s->member;
        } else {
            m = module_value(E, s->module, s->loc);
            if (s->alias) bind = s->alias;
            else {
                /* `import a.b` binds `a` */
                const char *dot = strchr(s->module, '.');
                bind = dot ? ts_strndup(E->a, s->module, (size_t)(dot - s->module)) : s->module;
                if (dot) m = module_value(E, bind, s->loc);
            }
        }
        if (!strcmp(bind, "*")) return;
        env_set(E, env, bind, m);
        return;
    }
    case AST_ASSERT: {
        Value *c = eval(E, env, s->cond);
        if (val_is_symbolic(c)) return; /* a run-time assert: not checked on the C target */
        if (!val_truthy(E, c, s->loc)) {
            Value *msg = s->value ? eval(E, env, s->value) : NULL;
            elab_fail(E, TS_ERR_PARAM, s->loc, "assertion failed%s%s",
                      msg && msg->kind == V_STR ? ": " : "", msg && msg->kind == V_STR ? msg->s : "");
        }
        return;
    }
    case AST_RAISE:
        elab_fail(E, TS_ERR_PARAM, s->loc, "the kernel factory raised an exception");
    case AST_TRY: exec_block(E, env, &s->body); return;
    case AST_UNPARSED:
        ts_buf_puts(&E->d->msg, s->error ? s->error : "syntax error\n");
        ts_rethrow(E->d, s->error_status ? s->error_status : TS_ERR_SYNTAX);
    }
}

void exec_block(Elab *E, Env *env, const AstBlock *b) {
    for (int i = 0; i < b->n; i++) {
        exec_stmt(E, env, b->v[i]);
        if (E->returning || E->breaking || E->continuing) return;
    }
}

/* ---- module level --------------------------------------------------------------------------------- */

/* Top-level statements run as the module would, except that statements
 * whose evaluation fails (host code using torch, argparse...) leave their
 * names bound to an opaque value carrying the error.  `if __name__ ==
 * "__main__":` blocks are skipped. */
static void exec_module(Elab *E, const AstModule *m);

/*
 * `from helpers import f` where helpers.py sits beside the file being
 * compiled (an example's own helper module): that file is parsed and its
 * top level run as the main file's is (exec_module: host code it cannot
 * run leaves opaque names), once per compile, and `f` is bound to its
 * value there; functions keep that module as their scope, and diagnostics
 * point into it.  NULL (the name stays an opaque module member, as
 * before) when there is no such file, the source has no file name, or the
 * import is circular.
 */
static Value *import_sibling(Elab *E, const char *module, const char *member, TsLoc loc) {
    /* (paths are relative to the importing file: the main file, or a module
     * imported from beside it; `from .sub import x` is relative to that file's
     * folder, one level only; a package `pkg/` is its pkg/__init__.py) */
    const char *main = E->mod && E->mod->src ? E->mod->src->name : NULL;
    if (!main || !*main || main[0] == '<' || !module || !*module || (module[0] == '.' && module[1] == '.')) return NULL;
    if (module[0] == '.') module++;
    if (!*module) return NULL;
    const char *slash = strrchr(main, '/');
    TsBuf path = {0};
    if (slash) ts_buf_printf(&path, "%.*s/", (int)(slash - main), main);
    for (const char *c = module; *c; c++) ts_buf_printf(&path, "%c", *c == '.' ? '/' : *c);
    size_t stem = path.n;
    ts_buf_puts(&path, ".py");
    const char *file = ts_strdup(E->a, ts_buf_str(&path));
    path.n = stem;
    ts_buf_puts(&path, "/__init__.py");
    const char *pkg = ts_strdup(E->a, ts_buf_str(&path));
    ts_buf_free(&path);
    if (access(file, R_OK) != 0 && access(pkg, R_OK) == 0) file = pkg;
    Env *menv = NULL;
    for (int i = 0; i < E->imports.n; i++)
        if (!strcmp(E->imports.v[i].path, file)) {
            menv = E->imports.v[i].env;
            if (!menv) return NULL; /* being imported: a circular import */
            break;
        }
    if (!menv) {
        if (E->imports.n >= 32) return NULL;
        size_t len;
        char *text = ts_read_file(file, &len);
        if (!text) return NULL;
        TsSource *src = TS_NEW(E->a, TsSource);
        src->name = file;
        src->text = ts_strndup(E->a, text, len);
        src->len = len;
        free(text);
        ImportedModule im = {file, NULL};
        ts_vec_push(E->a, E->imports, im);
        int slot = E->imports.n - 1;
        const AstModule *saved_mod = E->mod;
        Env *saved_globals = E->globals;
        IrStmt *saved_cur = E->cur;
        int saved_in_kernel = E->in_kernel, saved_depth = E->depth, saved_loops = E->ir_loops;
        long saved_steps = E->steps;
        bool saved_ret = E->returning;
        Value *saved_retval = E->retval;
        E->mod = ts_parse_module(E->a, src);
        E->globals = env_new(E, NULL);
        E->cur = NULL;
        E->in_kernel = 0;
        E->returning = false;
        if (!E->mod->fatal) exec_module(E, E->mod);
        menv = E->globals;
        E->mod = saved_mod;
        E->globals = saved_globals;
        E->cur = saved_cur;
        E->in_kernel = saved_in_kernel;
        E->depth = saved_depth;
        E->ir_loops = saved_loops;
        E->steps = saved_steps;
        E->returning = saved_ret;
        E->retval = saved_retval;
        E->imports.v[slot].env = menv;
    }
    (void)loc;
    return env_lookup(menv, member);
}

static void exec_module(Elab *E, const AstModule *m) {
    for (int i = 0; i < m->body.n; i++) {
        const AstStmt *s = m->body.v[i];
        if (s->kind == AST_IF || s->kind == AST_EXPR || s->kind == AST_FOR || s->kind == AST_WHILE ||
            s->kind == AST_WITH || s->kind == AST_TRY || s->kind == AST_RETURN || s->kind == AST_RAISE)
            continue;
        if (s->kind == AST_UNPARSED) {
            if (s->name) {
                Value *v = val_new(E, V_OPAQUE, s->loc);
                v->s = ts_sprintf(E->a, "'%s' could not be parsed:\n%s", s->name, s->error ? s->error : "");
                v->i = s->error_status ? s->error_status : TS_ERR_SYNTAX;
                v->unparsed = s; /* as the entry, it reports the parser's own text */
                env_set(E, E->globals, s->name, v);
            }
            continue;
        }
        size_t msg_len = E->d->msg.n;
        jmp_buf jb;
        jmp_buf *volatile saved = NULL;
        if (ts_try(E->d, &jb, &saved)) {
            ts_try_end(E->d, saved);
            /* Remember why, drop the message: it matters only if used. */
            const char *why = ts_strdup(E->a, ts_buf_str(&E->d->msg) + msg_len);
            E->d->msg.n = msg_len;
            if (E->d->msg.s) E->d->msg.s[msg_len] = 0;
            E->steps = 0;
            E->cur = NULL;
            E->in_kernel = 0;
            E->depth = 0;
            E->returning = E->breaking = E->continuing = false;
            for (int t = 0; t < s->ntargets; t++)
                if (s->targets[t] && s->targets[t]->kind == AST_NAME) {
                    Value *v = val_new(E, V_OPAQUE, s->loc);
                    v->s = ts_sprintf(E->a, "'%s' is defined by code this compiler cannot run:\n%s",
                                      s->targets[t]->name, why);
                    env_set(E, E->globals, s->targets[t]->name, v);
                }
            continue;
        }
        exec_stmt(E, E->globals, s);
        ts_try_end(E->d, saved);
    }
}

/* Python's integer literal (decimal without leading zeros, 0x/0o/0b,
 * `_` between digits), with an optional sign as in the expression -5.
 * Returns 1 and *out on success, 0 if text is not an integer literal,
 * -1 if it is one that does not fit in 64 bits. */
static int parse_py_int(const char *text, int64_t *out) {
    const char *p = text;
    bool neg = false;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    int base = 10;
    if (p[0] == '0' && p[1] && strchr("xXoObB", p[1])) {
        base = p[1] == 'x' || p[1] == 'X' ? 16 : p[1] == 'o' || p[1] == 'O' ? 8 : 2;
        p += 2;
        if (*p == '_') p++; /* 0x_ff is valid Python */
    }
    if (!*p) return 0;
    uint64_t mag = 0;
    bool big = false, nonzero = false;
    const char *first = p;
    for (; *p; p++) {
        if (*p == '_') {
            if (p == first || !p[1] || p[1] == '_') return 0;
            continue;
        }
        int dgt = *p >= '0' && *p <= '9' ? *p - '0'
                  : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                  : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : 99;
        if (dgt >= base) return 0;
        /* Python 3 has no octal 010: a decimal literal with a leading 0 must be all zeros */
        if (base == 10 && dgt && !nonzero && p != first) return 0;
        if (dgt) nonzero = true;
        if (mag > (UINT64_MAX - (uint64_t)dgt) / (uint64_t)base) big = true;
        else mag = mag * (uint64_t)base + (uint64_t)dgt;
    }
    if (big || mag > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX)) return -1;
    *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return 1;
}

/* Python's decimal float literal (digits, one `.`, an exponent), signed. */
static bool is_py_float(const char *text) {
    const char *p = text;
    if (*p == '+' || *p == '-') p++;
    int digits = 0, dots = 0;
    for (; *p && *p != 'e' && *p != 'E'; p++) {
        if (*p == '.') dots++;
        else if (*p >= '0' && *p <= '9') digits++;
        else if (*p != '_') return false;
    }
    if (!digits || dots > 1) return false;
    if (*p) { /* exponent */
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!*p) return false;
        for (; *p; p++)
            if ((*p < '0' || *p > '9') && *p != '_') return false;
    } else if (!dots) {
        return false; /* an integer, handled by parse_py_int */
    }
    return true;
}

/* A -D value, read as Python reads a literal: an int (no octal 010, an
 * error if it does not fit in 64 bits), a float, True/False/None, or else
 * the text as a string (dtype names stay strings; anything expecting a
 * dtype accepts them).  Such a string is marked (b = true) so that using
 * it as a condition is an error rather than Python's "non-empty is true":
 * -D is_causal=maybe must not mean True. */
/* "(a, b)" / "[a, b]" (a -D value for a tuple or list parameter, e.g. the
 * batch sizes of a grouped GEMM): the items, each a -D value of its own
 * (nested sequences too), split at the commas outside brackets and
 * quotes.  NULL if text is not such a sequence. */
static Value *define_seq(Elab *E, const char *name, const char *text) {
    size_t n = strlen(text);
    while (n && (text[n - 1] == ' ')) n--;
    while (*text == ' ') text++, n--;
    if (n < 2 || !((text[0] == '(' && text[n - 1] == ')') || (text[0] == '[' && text[n - 1] == ']'))) return NULL;
    TS_VEC(Value *) items = {0};
    const char *p = text + 1, *end = text + n - 1;
    while (p < end) {
        const char *q = p;
        int depth = 0;
        char quote = 0;
        for (; q < end && (depth || quote || *q != ','); q++) {
            if (quote) {
                if (*q == quote) quote = 0;
            } else if (*q == '\'' || *q == '"') {
                quote = *q;
            } else if (*q == '(' || *q == '[') {
                depth++;
            } else if ((*q == ')' || *q == ']') && depth) {
                depth--;
            }
        }
        const char *a = p, *b = q;
        while (a < b && *a == ' ') a++;
        while (b > a && b[-1] == ' ') b--;
        if (a == b) {
            if (q == end) break; /* "(1, 2,)" or "()" */
            elab_fail(E, TS_ERR_PARAM, (TsLoc){0}, "-D %s=%s: an empty item in the sequence", name, text);
        }
        char *item = ts_strndup(E->a, a, (size_t)(b - a));
        size_t il = strlen(item);
        if (il >= 2 && (item[0] == '\'' || item[0] == '"') && item[il - 1] == item[0]) {
            item[il - 1] = 0;
            Value *sv = val_str(E, item + 1, (TsLoc){0});
            sv->b = true;
            ts_vec_push(E->a, items, sv);
        } else {
            ts_vec_push(E->a, items, define_value(E, name, item));
        }
        p = q < end ? q + 1 : end;
    }
    return val_seq(E, text[0] == '(' ? V_TUPLE : V_LIST, items.v, items.n, (TsLoc){0});
}

Value *define_value(Elab *E, const char *name, const char *text) {
    TsLoc none = {0};
    int64_t i;
    Value *seq = define_seq(E, name, text);
    if (seq) return seq;
    int r = parse_py_int(text, &i);
    if (r > 0) return val_int(E, i, none);
    if (r < 0)
        elab_fail(E, TS_ERR_PARAM, none, "-D %s=%s: the integer does not fit in 64 bits", name, text);
    if (is_py_float(text)) {
        char *clean = ts_strdup(E->a, text), *q = clean;
        for (const char *p = text; *p; p++)
            if (*p != '_') *q++ = *p;
        *q = 0;
        char *end;
        double f = strtod(clean, &end);
        if (!*end) {
            if (isinf(f))
                elab_fail(E, TS_ERR_PARAM, none, "-D %s=%s: the float does not fit in 64 bits", name, text);
            return val_float(E, f, none);
        }
    }
    if (!strcmp(text, "True")) return val_bool(E, true, none);
    if (!strcmp(text, "False")) return val_bool(E, false, none);
    if (!strcmp(text, "None")) return val_none(E, none);
    /* T.GemmWarpPolicy.Square (also without "T."): the policy, as the source's value is */
    const char *pol = !strncmp(text, "T.GemmWarpPolicy.", 17) ? text + 17
                    : !strncmp(text, "GemmWarpPolicy.", 15) ? text + 15 : NULL;
    if (pol) {
        if (strcmp(pol, "Square") && strcmp(pol, "FullRow") && strcmp(pol, "FullCol"))
            elab_fail(E, TS_ERR_PARAM, none, "-D %s=%s: unknown T.GemmWarpPolicy (Square, FullRow or FullCol)", name,
                      text);
        Value *v = val_new(E, V_ENUM, none);
        v->s = ts_sprintf(E->a, "GemmWarpPolicy.%s", pol);
        return v;
    }
    /* a leading digit or sign that did not make a number is a typo, not a string */
    if ((text[0] >= '0' && text[0] <= '9') || ((text[0] == '-' || text[0] == '+' || text[0] == '.') && text[1]))
        elab_fail(E, TS_ERR_PARAM, none,
                  "-D %s=%s: not a Python number (integers are decimal without leading zeros, "
                  "or 0x/0o/0b; floats like 1.5 or 1e-3)", name, text);
    Value *v = val_str(E, ts_strdup(E->a, text), none);
    v->b = true;
    return v;
}

IrBuffer *add_tensor_param(Elab *E, const char *name, Value *ann, bool is_output, TsLoc loc) {
    IrKernel *k = E->k;
    if (E->have_kernel)
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "tensor parameters must be declared before the first T.Kernel");
    for (int i = 0; i < k->params.n; i++)
        if (!strcmp(k->params.v[i].name, name))
            elab_fail(E, TS_ERR_TYPE, loc, "tensor parameter '%s' is declared twice", name);
    IrExpr **shape = TS_NEWN(E->a, IrExpr *, ann->n ? ann->n : 1);
    for (int d = 0; d < ann->n; d++) {
        shape[d] = val_to_expr(E, ann->items[d], loc);
        if (!ts_dtype_is_int(shape[d]->dt))
            elab_fail(E, TS_ERR_TYPE, loc, "tensor extents must be integers");
        int64_t c;
        if (ir_is_const_int(shape[d], &c) && c < 0)
            elab_fail(E, TS_ERR_SHAPE, loc, "extent %d of tensor parameter '%s' is %lld: extents cannot be negative",
                      d, name, (long long)c);
    }
    /* int4, float4_e2m1fn: the parameter is its packed int8 bytes, the name a view of them */
    bool int4 = ann->dt == TS_INT4 || ann->dt == TS_FLOAT4_E2M1;
    IrExpr **pshape = int4 ? elab_int4_packed_shape(E, shape, ann->n, loc, name && *name ? name : "a 4-bit tensor") : shape;
    IrBuffer *b = ir_buffer(k, name, int4 ? TS_INT8 : ann->dt, IR_SCOPE_GLOBAL, ann->n, pshape, loc);
    b->param = k->params.n;
    IrParam ip = {name, b, NULL, is_output};
    ts_vec_push(E->a, k->params, ip);
    return int4 ? elab_int4_view(E, b, ann->dt, shape, ann->n, loc) : b;
}

/* Apply @tilelang.jit(out_idx=...) to the kernel's parameters. */
/* Give every kernel of the chain the first one's final parameter list. */
static void share_params(Elab *E) {
    for (IrKernel *k = E->k0->next; k; k = k->next) {
        k->params.n = 0;
        for (int i = 0; i < E->k0->params.n; i++) ts_vec_push(E->a, k->params, E->k0->params.v[i]);
    }
}

/* T.alloc_global workspaces (IrBuffer.workspace) after the caller's
 * parameters, in order, the parameter indices of buffers and scalars
 * renumbered; a workspace is named after its buffer. */
static void workspaces_last(Elab *E) {
    IrKernel *k = E->k0;
    int n = k->params.n, j = 0;
    IrParam *v = TS_NEWN(E->a, IrParam, n ? n : 1);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            if ((k->params.v[i].buf && k->params.v[i].buf->workspace) == pass) v[j++] = k->params.v[i];
    for (int i = 0; i < n; i++) {
        k->params.v[i] = v[i];
        if (v[i].buf) v[i].buf->param = i;
        if (v[i].var) v[i].var->axis = i;
        if (v[i].buf && v[i].buf->workspace) {
            k->params.v[i].name = v[i].buf->name && *v[i].buf->name ? v[i].buf->name : ts_sprintf(E->a, "workspace%d", i);
            if (!*v[i].buf->name) v[i].buf->name = k->params.v[i].name;
        }
    }
}

static void mark_outputs(Elab *E) {
    IrKernel *k = E->k0;
    for (IrKernel *c = E->k0; c; c = c->next) {
        c->fast_math = E->fast_math;
        c->user_sync = E->user_sync;
    }
    workspaces_last(E);
    int nuser = 0;
    while (nuser < k->params.n && !(k->params.v[nuser].buf && k->params.v[nuser].buf->workspace)) nuser++;
    if (!E->out_idx) {
        share_params(E);
        return;
    }
    int n;
    Value **items = val_items(E, E->out_idx, &n);
    for (int i = 0; i < n; i++) {
        int64_t j = val_to_int(E, items[i], E->out_idx->loc, "an out_idx entry");
        if (j < 0) j += nuser;
        if (j < 0 || j >= nuser)
            elab_fail(E, TS_ERR_PARAM, E->out_idx->loc, "out_idx %lld is out of range (%d parameters)",
                      (long long)val_to_int(E, items[i], E->out_idx->loc, "an out_idx entry"), nuser);
        k->params.v[j].is_output = 1;
    }
    share_params(E);
}

static bool block_has(const AstBlock *b, bool (*pred)(const AstStmt *)) {
    for (int i = 0; i < b->n; i++) {
        const AstStmt *s = b->v[i];
        if (pred(s)) return true;
        if (s->kind != AST_DEF && s->kind != AST_CLASS &&
            (block_has(&s->body, pred) || block_has(&s->orelse, pred)))
            return true;
    }
    return false;
}

static bool is_prim_func_def(const AstStmt *s) {
    if (s->kind != AST_DEF) return false;
    for (int d = 0; d < s->ndecorators; d++) {
        const AstExpr *e = s->decorators[d];
        if (e->kind == AST_CALL) e = e->a;
        if (e->kind == AST_ATTR && !strcmp(e->name, "prim_func")) return true;
    }
    return false;
}

static bool is_kernel_with(const AstStmt *s) {
    if (s->kind != AST_WITH || s->ntargets < 1 || !s->items[0]) return false;
    const AstExpr *e = s->items[0];
    if (e->kind == AST_CALL) e = e->a;
    return e->kind == AST_ATTR && !strcmp(e->name, "Kernel");
}

/*
 * Eager style (TileLang's newer @tilelang.jit form): the jit function is the
 * kernel.  Its parameters are compile-time values (from -D or defaults),
 * except those declared as tensors by `A: T.Tensor(shape, dtype)` in the
 * body; `T.const("M, N")` names shape values (from -D, else run-time shape
 * variables); `T.empty(shape, dtype)` creates an output.  Kernel parameters:
 * the tensor parameters in signature order, then the T.empty outputs.
 */
static void elab_eager(Elab *E, Func *fn, const TsDefine *defs, int ndefs, bool lenient) {
    const AstStmt *def = fn->def;
    E->defs_used = TS_NEWN(E->a, bool, ndefs ? ndefs : 1);
    IrKernel *k = E->k;
    k->name = def->name;
    Env *env = env_new(E, fn->closure);
    for (int p = 0; p < def->nparams; p++) {
        const AstParam *pa = &def->params[p];
        bool tensor = false;
        for (int i = 0; i < def->body.n; i++) {
            const AstStmt *s = def->body.v[i];
            if (s->kind == AST_ANNASSIGN && !s->value && s->target->kind == AST_NAME &&
                !strcmp(s->target->name, pa->name))
                tensor = true;
        }
        const TsDefine *dv = NULL;
        for (int i = 0; i < ndefs; i++)
            if (!strcmp(defs[i].name, pa->name)) {
                dv = &defs[i];
                E->defs_used[i] = true;
            }
        Value *v;
        if (tensor) {
            v = val_new(E, V_OPAQUE, pa->loc);
            v->s = ts_sprintf(E->a, "tensor parameter '%s' is used before its `%s: T.Tensor(...)` annotation",
                              pa->name, pa->name);
        } else if (dv) {
            v = define_value(E, dv->name, dv->value);
        } else if (pa->dflt) {
            v = eval(E, fn->closure, pa->dflt);
        } else if (pa->star) {
            v = val_seq(E, pa->star == 1 ? V_TUPLE : V_DICT, NULL, 0, pa->loc);
        } else {
            ts_diag_add(E->d, pa->loc, "error", "missing compile-time value for '%s' of '%s': pass -D %s=VALUE",
                        pa->name, def->name, pa->name);
            ts_rethrow(E->d, TS_ERR_PARAM);
        }
        env_set(E, env, pa->name, v);
    }
    E->eager = true;
    E->defs = defs;
    E->ndefs = ndefs;
    E->in_kernel++;
    E->cur = NULL;
    exec_block(E, env, &def->body);
    E->in_kernel--;
    /* -D names that are neither parameters nor T.const names are errors */
    for (int i = 0; i < ndefs && !lenient; i++)
        if (!E->defs_used[i]) {
            ts_diag_add(E->d, def->loc, "error", "-D %s: '%s' has no parameter or T.const named '%s'",
                        defs[i].name, def->name, defs[i].name);
            ts_rethrow(E->d, TS_ERR_PARAM);
        }
    if (!E->have_kernel)
        elab_fail(E, TS_ERR_UNSUPPORTED, def->loc, "'%s' has no `with T.Kernel(...)`", def->name);
    /* reorder: signature tensors first, then outputs, keeping each group's order */
    TS_VEC(IrParam) ordered = {0};
    for (int p = 0; p < def->nparams; p++)
        for (int i = 0; i < k->params.n; i++)
            if (!k->params.v[i].is_output && !strcmp(k->params.v[i].name, def->params[p].name))
                ts_vec_push(E->a, ordered, k->params.v[i]);
    for (int i = 0; i < k->params.n; i++) {
        bool in_sig = false;
        for (int p = 0; p < def->nparams; p++)
            in_sig |= !k->params.v[i].is_output && !strcmp(k->params.v[i].name, def->params[p].name);
        if (!in_sig) ts_vec_push(E->a, ordered, k->params.v[i]);
    }
    k->params.n = 0;
    for (int i = 0; i < ordered.n; i++) {
        IrParam ip = ordered.v[i];
        if (ip.buf) ip.buf->param = i;
        if (ip.var) ip.var->axis = i;
        ts_vec_push(E->a, k->params, ip);
    }
    mark_outputs(E);
}

/* Elaborate a @T.prim_func into E->k: parameters first, then the body. */
static void elab_prim_func(Elab *E, Func *fn) {
    const AstStmt *def = fn->def;
    IrKernel *k = E->k;
    k->name = def->name;
    Env *env = env_new(E, fn->closure);
    for (int p = 0; p < def->nparams; p++) {
        const AstParam *pa = &def->params[p];
        if (!pa->annot)
            elab_fail(E, TS_ERR_TYPE, pa->loc,
                      "parameter '%s' of a @T.prim_func needs an annotation such as T.Tensor((M, N), \"float16\")",
                      pa->name);
        Value *ann = eval(E, fn->closure, pa->annot);
        IrParam ip = {pa->name, NULL, NULL, 0};
        if (ann->kind == V_TENSORTY) {
            Value *bv = val_new(E, V_BUFFER, pa->loc);
            bv->buf = add_tensor_param(E, pa->name, ann, false, pa->annot->loc);
            env_set(E, env, pa->name, bv);
            continue;
        } else if (ann->kind == V_DTYPE) {
            IrVar *v = ir_var(k, pa->name, ann->dt, IR_VAR_SCALAR);
            v->axis = k->params.n;
            ip.var = v;
            env_set(E, env, pa->name, val_expr(E, ir_var_ref(E->a, v), pa->loc));
        } else {
            elab_fail(E, TS_ERR_TYPE, pa->annot->loc,
                      "parameter annotation must be T.Tensor(shape, dtype) or a dtype, got %s",
                      val_kind_name(ann));
        }
        ts_vec_push(E->a, k->params, ip);
    }
    mark_outputs(E);
    E->in_kernel++;
    E->cur = NULL;
    exec_block(E, env, &def->body);
    E->in_kernel--;
    if (!E->have_kernel)
        elab_fail(E, TS_ERR_UNSUPPORTED, def->loc, "@T.prim_func '%s' has no `with T.Kernel(...)`", def->name);
}

IrKernel *ts_elaborate(TsDiag *d, TsArena *a, const AstModule *m, const char *entry,
                       const TsDefine *defs, int ndefs, bool lenient_defines) {
    return ts_elaborate_for(d, a, m, entry, defs, ndefs, lenient_defines, NULL);
}

IrKernel *ts_elaborate_for(TsDiag *d, TsArena *a, const AstModule *m, const char *entry,
                           const TsDefine *defs, int ndefs, bool lenient_defines, const TsCaps *caps) {
    Elab E0 = {0}, *E = &E0;
    E->caps = caps;
    E->d = d;
    E->a = a;
    E->mod = m;
    E->globals = env_new(E, NULL);
    E->k = E->k0 = ir_kernel_new(a, entry);
    E->k->body = ir_seq(a);
    if (m->fatal) elab_fail(E, m->fatal->err, m->fatal->loc, "%s", m->fatal->text);
    exec_module(E, m);

    TsLoc none = {0};
    Value *ev = env_lookup(E->globals, entry);
    if (!ev || ev->kind == V_OPAQUE) {
        if (ev && ev->kind == V_OPAQUE && ev->unparsed) {
            const AstStmt *u = ev->unparsed;
            ts_buf_puts(&d->msg, u->error ? u->error : "syntax error\n");
            ts_rethrow(d, (TsStatus)ev->i);
        }
        if (ev && ev->kind == V_OPAQUE) fail_opaque(E, ev, ev->loc);
        ts_buf_printf(&d->msg, "tilescale: error: no function '%s' in %s; defined functions:", entry, m->src->name);
        for (int i = 0; i < E->globals->vars.n; i++)
            if (E->globals->vars.v[i].v->kind == V_FUNC)
                ts_buf_printf(&d->msg, " %s", E->globals->vars.v[i].name);
        ts_buf_puts(&d->msg, "\n");
        ts_rethrow(d, TS_ERR_NAME);
    }
    if (ev->kind != V_FUNC)
        elab_fail(E, TS_ERR_NAME, ev->loc, "'%s' is a %s, not a kernel function", entry, val_kind_name(ev));
    Func *fn = ev->fn;
    if (fn->kind == FN_PRIM) {
        if (ndefs && !lenient_defines)
            elab_fail(E, TS_ERR_PARAM, fn->def->loc,
                      "'%s' is a @T.prim_func and takes no -D values; -D %s was given", entry, defs[0].name);
        check_target(E, fn, entry);
        E->fast_math = fn->fast_math;
        E->user_sync = fn->user_sync;
        elab_prim_func(E, fn);
        return E->k0;
    }
    if (fn->kind == FN_MACRO)
        elab_fail(E, TS_ERR_NAME, fn->def->loc, "'%s' is a @T.macro, not a kernel factory", entry);
    const AstStmt *def = fn->def;
    check_target(E, fn, entry);
    if (!block_has(&def->body, is_prim_func_def) && block_has(&def->body, is_kernel_with)) {
        E->out_idx = fn->out_idx;
        E->fast_math = fn->fast_math;
        E->user_sync = fn->user_sync;
        elab_eager(E, fn, defs, ndefs, lenient_defines);
        return E->k0;
    }
    /* A factory: bind -D values to its parameters. */
    TS_VEC(const char *) kw = {0};
    TS_VEC(Value *) kwv = {0};
    for (int i = 0; i < ndefs; i++) {
        int found = 0;
        for (int p = 0; p < def->nparams; p++)
            if (!strcmp(def->params[p].name, defs[i].name) && !def->params[p].star) found = 1;
        /* a parameter of a function defined in the factory (the one it may
         * return, below): bound there, not here */
        for (int j = 0; j < def->body.n && !found; j++) {
            const AstStmt *in = def->body.v[j];
            for (int p = 0; in->kind == AST_DEF && p < in->nparams; p++)
                if (!strcmp(in->params[p].name, defs[i].name) && !in->params[p].star) found = 2;
        }
        if (found == 2) continue;
        if (!found && lenient_defines) continue;
        if (!found) {
            ts_diag_add(d, def->loc, "error", "-D %s: '%s' has no parameter named '%s'", defs[i].name,
                        entry, defs[i].name);
            ts_rethrow(d, TS_ERR_PARAM);
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(defs[j].name, defs[i].name))
                elab_fail(E, TS_ERR_PARAM, none, "-D %s given twice", defs[i].name);
        ts_vec_push(a, kw, defs[i].name);
        ts_vec_push(a, kwv, define_value(E, defs[i].name, defs[i].value));
    }
    for (int p = 0; p < def->nparams; p++) {
        const AstParam *pa = &def->params[p];
        if (pa->star || pa->dflt) continue;
        int given = 0;
        for (int i = 0; i < ndefs; i++) given |= !strcmp(defs[i].name, pa->name);
        if (!given) {
            ts_diag_add(d, pa->loc, "error", "missing compile-time value for '%s' of '%s': pass -D %s=VALUE",
                        pa->name, entry, pa->name);
            ts_rethrow(d, TS_ERR_PARAM);
        }
    }
    E->out_idx = fn->out_idx;
    E->fast_math = fn->fast_math;
    E->user_sync = fn->user_sync;
    Value *r = call_user(E, fn, NULL, 0, kw.v, kwv.v, kw.n, def->loc);
    /* A factory may return another factory (the autotuning idiom
     * `def matmul(M, N, K): def kernel(block_M, ...): ...; return kernel`):
     * call it with the -D values named after its parameters. */
    if (r->kind == V_FUNC && r->fn->kind == FN_PLAIN) {
        const AstStmt *inner = r->fn->def;
        TS_VEC(const char *) kw2 = {0};
        TS_VEC(Value *) kwv2 = {0};
        for (int i = 0; i < ndefs; i++)
            for (int p = 0; p < inner->nparams; p++)
                if (!strcmp(inner->params[p].name, defs[i].name) && !inner->params[p].star) {
                    ts_vec_push(a, kw2, defs[i].name);
                    ts_vec_push(a, kwv2, define_value(E, defs[i].name, defs[i].value));
                }
        if (r->fn->out_idx && !E->out_idx) E->out_idx = r->fn->out_idx;
        E->fast_math |= r->fn->fast_math;
        check_target(E, r->fn, entry);
        r = call_user(E, r->fn, NULL, 0, kw2.v, kwv2.v, kw2.n, inner->loc);
    }
    if (r->kind != V_FUNC || r->fn->kind != FN_PRIM)
        elab_fail(E, TS_ERR_TYPE, def->loc, "'%s' must return a @T.prim_func, but returned a %s", entry,
                  r->kind == V_FUNC ? "plain function" : val_kind_name(r));
    if (r->fn->out_idx && !E->out_idx) E->out_idx = r->fn->out_idx;
    E->fast_math |= r->fn->fast_math;
    check_target(E, r->fn, entry);
    elab_prim_func(E, r->fn);
    return E->k0;
}
