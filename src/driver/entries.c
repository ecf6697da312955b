/*
 * entries.c — ts_list_entries (`tilescale list FILE`) and ts_version.
 *
 * A user who opens a kernel file wants to know what --entry names exist
 * and which -D values each needs.  The answer comes from the syntax
 * alone: the file is parsed (src/front), never elaborated, so listing a
 * file runs none of its code and works even where an entry would fail to
 * compile.  Each top-level `def` is classified the way the elaborator will
 * treat it (src/elab/elab.c: ts_elaborate): a @T.prim_func; an eager
 * kernel (a `with T.Kernel` in its body and no @T.prim_func in it); a
 * factory (a @T.prim_func defined inside, possibly one level down in the
 * function it returns, whose parameters then take -D values too); @T.macro
 * definitions and plain helpers are not entries.
 *
 * Annotations and defaults are reported as written, cut from the source
 * text rather than printed from the AST: `dtype=T.float16` and `"float16"`
 * are what the user typed, and an expression printer would invent
 * spellings.  The text runs from after the `:` or `=` to the `,` or `)`
 * that ends the parameter at bracket depth 0 (strings and comments
 * skipped), blanks and line breaks folded into single spaces.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "front/ast.h"
#include "front/lex.h"

const char *ts_version(void) { return TILESCALE_VERSION; }

int ts_version_number(void) { return TILESCALE_VERSION_NUMBER; }

/* Byte offset of each line's start, for TsLoc -> text. */
typedef struct Lines {
    const TsSource *src; /* the file */
    size_t *start;       /* start[i]: offset of line i + 1 */
    int n;               /* lines */
} Lines;

static const char *loc_text(const Lines *L, TsLoc loc) {
    if (loc.line < 1 || loc.line > L->n) return NULL;
    size_t off = L->start[loc.line - 1] + (size_t)(loc.col > 0 ? loc.col - 1 : 0);
    return off <= L->src->len ? L->src->text + off : NULL;
}

/* Past a string literal starting at p (any prefix already skipped). */
static const char *skip_string(const char *p) {
    char q = *p;
    int triple = p[1] == q && p[2] == q;
    p += triple ? 3 : 1;
    while (*p) {
        if (*p == '\\' && p[1]) p += 2;
        else if (*p == q && (!triple || (p[1] == q && p[2] == q))) return p + (triple ? 3 : 1);
        else if (*p == '\n' && !triple) return p;
        else p++;
    }
    return p;
}

/* The end of an expression starting at p: the first ',' ')' ']' '}' at
 * depth 0 (with stop_eq also a lone '=', for the end of an annotation;
 * with stop_eq == 2 also a line break, for an annotation statement);
 * strings and comments skipped. */
static const char *expr_end(const char *p, int stop_eq) {
    int depth = 0;
    while (*p) {
        char c = *p;
        if (c == '"' || c == '\'') {
            p = skip_string(p);
            continue;
        }
        if (c == '#') {
            while (*p && *p != '\n') p++;
            continue;
        }
        if (c == '(' || c == '[' || c == '{') depth++;
        else if (c == ')' || c == ']' || c == '}') {
            if (depth == 0) return p;
            depth--;
        } else if (depth == 0 && (c == ',' || (c == '\n' && stop_eq == 2 && p[-1] != '\\'))) return p;
        else if (depth == 0 && stop_eq && c == '=' && p[1] != '=' && p[-1] != '=' && p[-1] != '!' &&
                 p[-1] != '<' && p[-1] != '>')
            return p;
        p++;
    }
    return p;
}

/* s[0..e) with blanks folded (comments dropped), into the arena. */
static const char *fold(TsArena *a, const char *s, const char *e) {
    char *out = ts_alloc(a, (size_t)(e - s) + 1), *o = out;
    int space = 0;
    for (const char *p = s; p < e;) {
        if (*p == '#') {
            while (p < e && *p != '\n') p++;
            continue;
        }
        if (*p == '"' || *p == '\'') {
            const char *q = skip_string(p);
            if (q > e) q = e;
            if (space && o > out) *o++ = ' ';
            space = 0;
            while (p < q) *o++ = *p++;
            continue;
        }
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\\') {
            space = 1;
            p++;
            continue;
        }
        if (space && o > out) *o++ = ' ';
        space = 0;
        *o++ = *p++;
    }
    *o = 0;
    return out;
}

static int decorated(const AstStmt *s, const char *attr) {
    for (int d = 0; d < s->ndecorators; d++) {
        const AstExpr *e = s->decorators[d];
        if (e->kind == AST_CALL) e = e->a;
        if ((e->kind == AST_ATTR || e->kind == AST_NAME) && !strcmp(e->name, attr)) return 1;
    }
    return 0;
}

static int is_kernel_with(const AstStmt *s) {
    if (s->kind != AST_WITH || s->ntargets < 1 || !s->items[0]) return 0;
    const AstExpr *e = s->items[0];
    if (e->kind == AST_CALL) e = e->a;
    return e->kind == AST_ATTR && !strcmp(e->name, "Kernel");
}

/* Does a statement of b (not inside nested defs) satisfy pred? */
static int block_has(const AstBlock *b, int (*pred)(const AstStmt *)) {
    for (int i = 0; i < b->n; i++) {
        const AstStmt *s = b->v[i];
        if (pred(s)) return 1;
        if (s->kind != AST_DEF && s->kind != AST_CLASS && (block_has(&s->body, pred) || block_has(&s->orelse, pred)))
            return 1;
    }
    return 0;
}

static int is_prim_def(const AstStmt *s) { return s->kind == AST_DEF && decorated(s, "prim_func"); }

/* A plain def in b whose own body defines a @T.prim_func (the factory a
 * factory returns), or NULL. */
static const AstStmt *inner_factory(const AstBlock *b) {
    for (int i = 0; i < b->n; i++) {
        const AstStmt *s = b->v[i];
        if (s->kind == AST_DEF && !decorated(s, "prim_func") && !decorated(s, "macro") &&
            block_has(&s->body, is_prim_def))
            return s;
    }
    return NULL;
}

typedef TS_VEC(TsEntryParam) ParamVec;

/* The parameters of def into v. */
static void add_params(TsArena *a, const Lines *L, const AstStmt *def, int inner, int prim, ParamVec *v) {
    for (int i = 0; i < def->nparams; i++) {
        const AstParam *pa = &def->params[i];
        if (pa->star) continue;
        TsEntryParam p = {0};
        p.name = pa->name;
        p.inner = inner;
        p.kind = TS_PARAM_DEFINE;
        const char *t = loc_text(L, pa->loc);
        if (t && !strncmp(t, pa->name, strlen(pa->name))) {
            const char *q = t + strlen(pa->name);
            while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' || *q == '\\') q++;
            if (*q == ':' && pa->annot) {
                const char *e = expr_end(q + 1, 1);
                p.annotation = fold(a, q + 1, e);
                q = e;
            }
            if (*q == '=' && pa->dflt) {
                const char *e = expr_end(q + 1, 0);
                p.default_text = fold(a, q + 1, e);
            }
        }
        if (prim) {
            const char *an = p.annotation ? p.annotation : "";
            p.kind = strstr(an, "Tensor") || strstr(an, "Buffer") || strstr(an, "ptr") ? TS_PARAM_TENSOR
                                                                                       : TS_PARAM_SCALAR;
        }
        ts_vec_push(a, *v, p);
    }
}

/* Eager kernels: parameters annotated `X: T.Tensor(...)` in the body are
 * tensors; `M, N = T.const("M, N")` names are T.const values. */
static void eager_params(TsArena *a, const Lines *L, const AstStmt *def, ParamVec *v) {
    for (int i = 0; i < def->body.n; i++) {
        const AstStmt *s = def->body.v[i];
        if (s->kind == AST_ANNASSIGN && s->target && s->target->kind == AST_NAME) {
            for (int j = 0; j < v->n; j++)
                if (!strcmp(v->v[j].name, s->target->name)) {
                    v->v[j].kind = TS_PARAM_TENSOR;
                    const char *t = loc_text(L, s->annot->loc);
                    /* the annotation's text: from after the ':' of this line */
                    const char *st = loc_text(L, s->loc);
                    const char *colon = st ? strchr(st, ':') : NULL;
                    if (colon && t) v->v[j].annotation = fold(a, colon + 1, expr_end(colon + 1, 2));
                }
        }
        const AstExpr *val = s->kind == AST_ASSIGN ? s->value : NULL;
        if (val && val->kind == AST_CALL && val->a->kind == AST_ATTR && !strcmp(val->a->name, "const") &&
            val->n >= 1 && val->items[0]->kind == AST_STR) {
            const char *p = val->items[0]->str;
            while (*p) {
                while (*p == ',' || *p == ' ') p++;
                const char *e = p;
                while (*e && *e != ',' && *e != ' ') e++;
                if (e > p) {
                    TsEntryParam q = {0};
                    q.name = ts_strndup(a, p, (size_t)(e - p));
                    q.kind = TS_PARAM_CONST;
                    ts_vec_push(a, *v, q);
                }
                p = e;
            }
        }
    }
}

/* `W = T.alloc_global(shape, dtype)` statements of a kernel's body (a
 * prim_func's, an eager kernel's, or a factory's prim_func's, nested in
 * ifs, before the T.Kernel): workspaces the launch allocates; the call as
 * written is the annotation. */
static void workspace_params(TsArena *a, const Lines *L, const AstBlock *b, int depth, ParamVec *v) {
    for (int i = 0; b && i < b->n && depth < 8; i++) {
        const AstStmt *s = b->v[i];
        if (s->kind == AST_DEF) { /* the factory's prim_func (or the function it returns) */
            if (!decorated(s, "macro")) workspace_params(a, L, &s->body, depth + 1, v);
            continue;
        }
        if (s->kind == AST_IF) {
            workspace_params(a, L, &s->body, depth + 1, v);
            workspace_params(a, L, &s->orelse, depth + 1, v);
            continue;
        }
        const AstExpr *val = s->kind == AST_ASSIGN && s->ntargets == 1 ? s->value : NULL;
        if (!val || val->kind != AST_CALL || val->a->kind != AST_ATTR || strcmp(val->a->name, "alloc_global") ||
            s->targets[0]->kind != AST_NAME)
            continue;
        TsEntryParam q = {0};
        q.name = s->targets[0]->name;
        q.kind = TS_PARAM_WORKSPACE;
        const char *st = loc_text(L, s->loc), *eq = st ? strchr(st, '=') : NULL;
        if (eq) q.annotation = fold(a, eq + 1, expr_end(eq + 1, 2));
        ts_vec_push(a, *v, q);
    }
}

/* out_idx=... of a @tilelang.jit(...) decorator, as written. */
static const char *out_idx_text(TsArena *a, const Lines *L, const AstStmt *def) {
    for (int d = 0; d < def->ndecorators; d++) {
        const AstExpr *e = def->decorators[d];
        if (e->kind != AST_CALL || !e->kwnames) continue;
        for (int i = 0; i < e->n; i++)
            if (e->kwnames[i] && !strcmp(e->kwnames[i], "out_idx")) {
                const char *t = loc_text(L, e->loc);
                const char *k = t ? strstr(t, "out_idx") : NULL;
                if (!k) return "?";
                k += 7;
                while (*k == ' ') k++;
                if (*k != '=') return "?";
                return fold(a, k + 1, expr_end(k + 1, 0));
            }
    }
    return NULL;
}

static const char *doc_line(TsArena *a, const AstStmt *def) {
    if (!def->body.n) return NULL;
    const AstStmt *s = def->body.v[0];
    if (s->kind != AST_EXPR || !s->value || s->value->kind != AST_STR || s->value->fstring) return NULL;
    const char *p = s->value->str;
    while (*p == ' ' || *p == '\n' || *p == '\t') p++;
    const char *e = p;
    while (*e && *e != '\n') e++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
    return e > p ? ts_strndup(a, p, (size_t)(e - p)) : NULL;
}

TsStatus ts_list_entries(TsContext *ctx, const char *path, const TsEntryInfo **entries, int *n) {
    if (!ctx || !path || !entries || !n) return TS_ERR_INVALID;
    ts_buf_free(&ctx->diag.msg);
    ctx->diag.status = TS_OK;
    *entries = NULL;
    *n = 0;
    size_t len;
    char *text = ts_read_file(path, &len);
    if (!text) {
        ts_buf_printf(&ctx->diag.msg, "tilescale: error: %s: cannot read: %s\n", path, ts_file_error(errno));
        return TS_ERR_IO;
    }
    if (strlen(text) != len) {
        free(text);
        ts_buf_printf(&ctx->diag.msg, "%s: error: file contains a NUL byte\n", path);
        return TS_ERR_SYNTAX;
    }
    ts_arena_free(&ctx->scratch);
    ts_arena_init(&ctx->scratch);
    TsArena *a = &ctx->scratch;
    jmp_buf jb, *saved;
    if (ts_try(&ctx->diag, &jb, &saved)) { /* the arena ran out of memory */
        ts_try_end(&ctx->diag, saved);
        free(text);
        return ctx->diag.status ? ctx->diag.status : TS_ERR_NOMEM;
    }
    a->oom = &jb;
    TsSource *src = TS_NEW(a, TsSource);
    src->name = ts_strdup(a, path);
    src->text = ts_strndup(a, text, len);
    src->len = len;
    free(text);
    Lines L = {src, NULL, 1};
    for (size_t i = 0; i < len; i++) L.n += src->text[i] == '\n';
    L.start = TS_NEWN(a, size_t, L.n);
    for (size_t i = 0, l = 1; i < len; i++)
        if (src->text[i] == '\n') L.start[l++] = i + 1;
    AstModule *m = ts_parse_module(a, src);
    TsStatus st = TS_OK;
    if (m->fatal) {
        ts_diag_add(&ctx->diag, m->fatal->loc, "error", "%s", m->fatal->text);
        st = m->fatal->err ? m->fatal->err : TS_ERR_SYNTAX;
    }
    TS_VEC(TsEntryInfo) out = {0};
    for (int i = 0; !st && i < m->body.n; i++) {
        const AstStmt *s = m->body.v[i];
        TsEntryInfo e = {0};
        e.name = s->name;
        e.line = s->loc.line;
        if (s->kind == AST_UNPARSED) {
            const char *t = loc_text(&L, s->loc);
            if (!s->name || !t || (strncmp(t, "def", 3) && strncmp(t, "@", 1) && strncmp(t, "async", 5))) continue;
            e.kind = TS_ENTRY_BROKEN;
            e.error = s->error ? s->error : "syntax error";
            ts_vec_push(a, out, e);
            continue;
        }
        if (s->kind != AST_DEF || decorated(s, "macro")) continue;
        ParamVec pv = {0};
        if (decorated(s, "prim_func")) {
            e.kind = TS_ENTRY_PRIM_FUNC;
            add_params(a, &L, s, 0, 1, &pv);
        } else if (!block_has(&s->body, is_prim_def) && block_has(&s->body, is_kernel_with)) {
            e.kind = TS_ENTRY_EAGER;
            add_params(a, &L, s, 0, 0, &pv);
            eager_params(a, &L, s, &pv);
        } else if (block_has(&s->body, is_prim_def)) {
            e.kind = TS_ENTRY_FACTORY;
            add_params(a, &L, s, 0, 0, &pv);
        } else {
            const AstStmt *in = inner_factory(&s->body);
            if (!in) continue; /* a helper, not an entry */
            e.kind = TS_ENTRY_FACTORY;
            add_params(a, &L, s, 0, 0, &pv);
            add_params(a, &L, in, 1, 0, &pv);
        }
        workspace_params(a, &L, &s->body, 0, &pv);
        e.out_idx = out_idx_text(a, &L, s);
        e.doc = doc_line(a, s);
        e.params = pv.v;
        e.nparams = pv.n;
        ts_vec_push(a, out, e);
    }
    ts_try_end(&ctx->diag, saved);
    a->oom = NULL;
    if (st) {
        ctx->diag.status = st;
        return st;
    }
    *entries = out.v;
    *n = out.n;
    return TS_OK;
}
