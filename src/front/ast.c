/*
 * ast.c — operator names and the s-expression dump of the syntax tree.
 *
 * The dump exists for tests: it must be compact enough to write expected
 * trees inline in a unit test, unambiguous about structure (every compound
 * node is parenthesized, with its kind first), and stable (no addresses,
 * floats printed in their shortest round-tripping form).  Statements go
 * one per line, blocks indented two spaces per level:
 *
 *     (def f (params a (b = 1))
 *       (= x (+ a (* b c)))
 *       (return x))
 *
 * Expressions: a NAME prints as itself, literals as in Python, operators
 * as `(op a b)` (unary minus/plus as `u-`/`u+`), comparisons as
 * `(cmp a < b not-in c)`, attributes `(. a name)`, subscripts `([] a i)`,
 * slices `(: lo hi step)` with `_` for an omitted part, calls
 * `(call f a k=v (* r) (** kw))`, containers `(tuple ...)`, `(list ...)`,
 * `(dict k v ...)`, `(set ...)`, comprehensions `(comp list elt iter)`.
 */
#include "front/ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ast_op_name(AstOp op) {
    static const char *const names[] = {
#define X(e, s) [e] = s,
        AST_BINOPS(X) AST_CMPOPS(X) AST_UNOPS(X)
#undef X
        [AST_AND] = "and", [AST_OR] = "or"};
    if ((int)op < 0 || (int)op >= TS_COUNTOF(names) || !names[op]) return "?";
    return names[op];
}

static void dump_expr(TsBuf *b, const AstExpr *e);

/* s[0..n) as a double-quoted string with C escapes. */

/* Shortest %g form that reads back as the same double, always with a '.'
 * or exponent so it cannot be mistaken for an integer. */
static void put_float(TsBuf *b, double v) {
    char buf[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    ts_buf_puts(b, buf);
    if (!strpbrk(buf, ".eEn")) ts_buf_puts(b, ".0");
}

static void dump_opt(TsBuf *b, const AstExpr *e) {
    if (e) dump_expr(b, e);
    else ts_buf_puts(b, "_");
}

static void dump_items(TsBuf *b, AstExpr *const *items, int n) {
    for (int i = 0; i < n; i++) {
        ts_buf_puts(b, " ");
        dump_expr(b, items[i]);
    }
}

/* (params p ...): p is `name`, `*name`, `**name`, or `(name : A = D)`;
 * `/` follows the positional-only ones, a bare `*` precedes keyword-only
 * ones when there is no *args. */
static void dump_params(TsBuf *b, const AstParam *ps, int n) {
    ts_buf_puts(b, "(params");
    int star_seen = 0;
    for (int i = 0; i < n; i++) {
        const AstParam *p = &ps[i];
        if (p->star == 1) star_seen = 1;
        if (p->kwonly && !star_seen) {
            ts_buf_puts(b, " *");
            star_seen = 1;
        }
        ts_buf_puts(b, " ");
        const char *pre = p->star == 1 ? "*" : p->star == 2 ? "**" : "";
        if (p->annot || p->dflt) {
            ts_buf_printf(b, "(%s%s", pre, p->name);
            if (p->annot) {
                ts_buf_puts(b, " : ");
                dump_expr(b, p->annot);
            }
            if (p->dflt) {
                ts_buf_puts(b, " = ");
                dump_expr(b, p->dflt);
            }
            ts_buf_puts(b, ")");
        } else {
            ts_buf_printf(b, "%s%s", pre, p->name);
        }
        if (p->posonly && (i + 1 == n || !ps[i + 1].posonly)) ts_buf_puts(b, " /");
    }
    ts_buf_puts(b, ")");
}

static void dump_expr(TsBuf *b, const AstExpr *e) {
    switch (e->kind) {
    case AST_NAME: ts_buf_puts(b, e->name); return;
    case AST_INT:
        if (e->ival_u64) ts_buf_printf(b, "%llu", (unsigned long long)e->ival);
        else ts_buf_printf(b, "%lld", (long long)e->ival);
        return;
    case AST_FLOAT: put_float(b, e->fval); return;
    case AST_STR:
        if (e->fstring) ts_buf_puts(b, "f");
        ts_buf_put_quoted(b, e->str, e->len);
        return;
    case AST_TRUE: ts_buf_puts(b, "True"); return;
    case AST_FALSE: ts_buf_puts(b, "False"); return;
    case AST_NONE: ts_buf_puts(b, "None"); return;
    case AST_ELLIPSIS: ts_buf_puts(b, "..."); return;
    case AST_BINOP: case AST_BOOLOP:
        ts_buf_printf(b, "(%s ", ast_op_name(e->op));
        dump_expr(b, e->a);
        ts_buf_puts(b, " ");
        dump_expr(b, e->b);
        ts_buf_puts(b, ")");
        return;
    case AST_UNARY:
        ts_buf_printf(b, "(%s ", e->op == AST_NEG ? "u-" : e->op == AST_POS ? "u+" : ast_op_name(e->op));
        dump_expr(b, e->a);
        ts_buf_puts(b, ")");
        return;
    case AST_COMPARE:
        ts_buf_puts(b, "(cmp ");
        dump_expr(b, e->a);
        for (int i = 0; i < e->n; i++) {
            const char *op = e->ops[i] == AST_NOTIN ? "not-in"
                             : e->ops[i] == AST_ISNOT ? "is-not"
                                                      : ast_op_name(e->ops[i]);
            ts_buf_printf(b, " %s ", op);
            dump_expr(b, e->items[i]);
        }
        ts_buf_puts(b, ")");
        return;
    case AST_IFEXP:
        ts_buf_puts(b, "(ifexp ");
        dump_expr(b, e->a);
        ts_buf_puts(b, " ");
        dump_expr(b, e->b);
        ts_buf_puts(b, " ");
        dump_expr(b, e->c);
        ts_buf_puts(b, ")");
        return;
    case AST_CALL:
        ts_buf_puts(b, "(call ");
        dump_expr(b, e->a);
        for (int i = 0; i < e->n; i++) {
            ts_buf_puts(b, " ");
            if (e->kwnames && e->kwnames[i]) ts_buf_printf(b, "%s=", e->kwnames[i]);
            dump_expr(b, e->items[i]);
        }
        ts_buf_puts(b, ")");
        return;
    case AST_ATTR:
        ts_buf_puts(b, "(. ");
        dump_expr(b, e->a);
        ts_buf_printf(b, " %s)", e->name);
        return;
    case AST_SUBSCRIPT:
        ts_buf_puts(b, "([] ");
        dump_expr(b, e->a);
        ts_buf_puts(b, " ");
        dump_expr(b, e->b);
        ts_buf_puts(b, ")");
        return;
    case AST_SLICE:
        ts_buf_puts(b, "(: ");
        dump_opt(b, e->a);
        ts_buf_puts(b, " ");
        dump_opt(b, e->b);
        ts_buf_puts(b, " ");
        dump_opt(b, e->c);
        ts_buf_puts(b, ")");
        return;
    case AST_TUPLE: case AST_LIST: case AST_DICT: case AST_SET:
        ts_buf_puts(b, e->kind == AST_TUPLE ? "(tuple" : e->kind == AST_LIST ? "(list"
                       : e->kind == AST_DICT ? "(dict" : "(set");
        dump_items(b, e->items, e->n);
        ts_buf_puts(b, ")");
        return;
    case AST_STARRED: case AST_DSTARRED:
        ts_buf_puts(b, e->kind == AST_STARRED ? "(* " : "(** ");
        dump_expr(b, e->a);
        ts_buf_puts(b, ")");
        return;
    case AST_LAMBDA:
        ts_buf_puts(b, "(lambda ");
        dump_params(b, e->params, e->nparams);
        ts_buf_puts(b, " ");
        dump_expr(b, e->a);
        ts_buf_puts(b, ")");
        return;
    case AST_COMP:
        ts_buf_printf(b, "(comp %s ", e->name ? e->name : "?");
        dump_opt(b, e->a);
        ts_buf_puts(b, " ");
        dump_opt(b, e->b);
        ts_buf_puts(b, ")");
        return;
    case AST_YIELD:
        ts_buf_puts(b, "(yield");
        if (e->a) {
            ts_buf_puts(b, " ");
            dump_expr(b, e->a);
        }
        ts_buf_puts(b, ")");
        return;
    }
    ts_buf_puts(b, "(?)");
}

static void dump_stmt(TsBuf *b, const AstStmt *s, int ind);

static void dump_block(TsBuf *b, const AstBlock *blk, int ind) {
    for (int i = 0; i < blk->n; i++) {
        ts_buf_puts(b, "\n");
        for (int k = 0; k < ind; k++) ts_buf_puts(b, "  ");
        dump_stmt(b, blk->v[i], ind);
    }
}

/* Body, then `else` and the orelse block if there is one. */
static void dump_bodies(TsBuf *b, const AstStmt *s, int ind) {
    dump_block(b, &s->body, ind + 1);
    if (s->orelse.n) {
        ts_buf_puts(b, "\n");
        for (int k = 0; k < ind + 1; k++) ts_buf_puts(b, "  ");
        ts_buf_puts(b, "else");
        dump_block(b, &s->orelse, ind + 1);
    }
    ts_buf_puts(b, ")");
}

static void dump_decorators(TsBuf *b, const AstStmt *s) {
    for (int i = 0; i < s->ndecorators; i++) {
        ts_buf_puts(b, " (@ ");
        dump_expr(b, s->decorators[i]);
        ts_buf_puts(b, ")");
    }
}

static void dump_stmt(TsBuf *b, const AstStmt *s, int ind) {
    switch (s->kind) {
    case AST_EXPR:
        ts_buf_puts(b, "(expr ");
        dump_expr(b, s->value);
        ts_buf_puts(b, ")");
        return;
    case AST_ASSIGN:
        ts_buf_puts(b, "(=");
        dump_items(b, s->targets, s->ntargets);
        ts_buf_puts(b, " ");
        dump_expr(b, s->value);
        ts_buf_puts(b, ")");
        return;
    case AST_AUGASSIGN:
        ts_buf_printf(b, "(%s= ", ast_op_name(s->op));
        dump_expr(b, s->target);
        ts_buf_puts(b, " ");
        dump_expr(b, s->value);
        ts_buf_puts(b, ")");
        return;
    case AST_ANNASSIGN:
        ts_buf_puts(b, "(ann ");
        dump_expr(b, s->target);
        ts_buf_puts(b, " ");
        dump_expr(b, s->annot);
        if (s->value) {
            ts_buf_puts(b, " ");
            dump_expr(b, s->value);
        }
        ts_buf_puts(b, ")");
        return;
    case AST_IF: case AST_WHILE:
        ts_buf_puts(b, s->kind == AST_IF ? "(if " : "(while ");
        dump_expr(b, s->cond);
        dump_bodies(b, s, ind);
        return;
    case AST_FOR:
        ts_buf_puts(b, "(for ");
        dump_expr(b, s->target);
        ts_buf_puts(b, " ");
        dump_expr(b, s->cond);
        dump_bodies(b, s, ind);
        return;
    case AST_WITH:
        ts_buf_puts(b, "(with");
        for (int i = 0; i < s->ntargets; i++) {
            ts_buf_puts(b, " ");
            if (s->targets && s->targets[i]) {
                ts_buf_puts(b, "(as ");
                dump_expr(b, s->items[i]);
                ts_buf_puts(b, " ");
                dump_expr(b, s->targets[i]);
                ts_buf_puts(b, ")");
            } else {
                dump_expr(b, s->items[i]);
            }
        }
        dump_bodies(b, s, ind);
        return;
    case AST_DEF:
        ts_buf_printf(b, "(def %s", s->name);
        dump_decorators(b, s);
        ts_buf_puts(b, " ");
        dump_params(b, s->params, s->nparams);
        if (s->returns) {
            ts_buf_puts(b, " -> ");
            dump_expr(b, s->returns);
        }
        dump_bodies(b, s, ind);
        return;
    case AST_CLASS:
        ts_buf_printf(b, "(class %s", s->name);
        dump_decorators(b, s);
        dump_bodies(b, s, ind);
        return;
    case AST_RETURN: case AST_RAISE:
        ts_buf_puts(b, s->kind == AST_RETURN ? "(return" : "(raise");
        if (s->value) {
            ts_buf_puts(b, " ");
            dump_expr(b, s->value);
        }
        ts_buf_puts(b, ")");
        return;
    case AST_PASS: ts_buf_puts(b, "(pass)"); return;
    case AST_BREAK: ts_buf_puts(b, "(break)"); return;
    case AST_CONTINUE: ts_buf_puts(b, "(continue)"); return;
    case AST_IMPORT:
        if (s->member) ts_buf_printf(b, "(from %s import %s", s->module, s->member);
        else ts_buf_printf(b, "(import %s", s->module);
        if (s->import_as) ts_buf_printf(b, " as %s", s->alias);
        ts_buf_puts(b, ")");
        return;
    case AST_GLOBAL: case AST_DEL:
        ts_buf_puts(b, s->kind == AST_GLOBAL ? "(global" : "(del");
        dump_items(b, s->targets, s->ntargets);
        ts_buf_puts(b, ")");
        return;
    case AST_ASSERT:
        ts_buf_puts(b, "(assert ");
        dump_expr(b, s->cond);
        if (s->value) {
            ts_buf_puts(b, " ");
            dump_expr(b, s->value);
        }
        ts_buf_puts(b, ")");
        return;
    case AST_TRY:
        ts_buf_puts(b, "(try");
        dump_bodies(b, s, ind);
        return;
    case AST_UNPARSED: {
        /* first line of the diagnostic only: the rest repeats the source */
        const char *msg = s->error ? s->error : "";
        const char *nl = strchr(msg, '\n');
        ts_buf_printf(b, "(unparsed %s ", s->name ? s->name : "_");
        ts_buf_put_quoted(b, msg, nl ? (size_t)(nl - msg) : strlen(msg));
        ts_buf_puts(b, ")");
        return;
    }
    }
    ts_buf_puts(b, "(?)");
}

void ast_dump_module(TsBuf *b, const AstModule *m) {
    for (int i = 0; i < m->body.n; i++) {
        dump_stmt(b, m->body.v[i], 0);
        ts_buf_puts(b, "\n");
    }
}
