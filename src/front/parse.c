/*
 * parse.c — recursive-descent parser for the Python subset of TileLang
 * kernel files, producing the tree of ast.h.
 *
 * Shape.  One function per grammar rule, in the style of chibicc: the rule
 * is written in a comment above the function, in the notation of the
 * Python grammar (`x*` repeat, `x?` optional, `'tok'` a literal token).
 * Precedence climbs from `expression` down to `atom` exactly as in the
 * Python reference, so `-a ** b` is `-(a ** b)`, `not a == b` is
 * `not (a == b)` and `a < b < c` is one comparison node.
 *
 * Input.  The whole file is tokenized first (lex.c); the parser walks the
 * token array with an index, which makes the few places that need more
 * than one token of look-ahead (keyword arguments, parenthesized `with`
 * items) simple and lets error recovery jump forward freely.
 *
 * Errors.  Every syntax error calls ts_fail_at() on the parser's TsDiag,
 * which longjmps out of any depth of recursion.  ts_parse_strict() hands
 * the caller's TsDiag to the parser, so the first error reaches the
 * caller's ts_try handler.  ts_parse_module() instead wraps each top-level
 * statement in its own ts_try on a private TsDiag: a statement that fails
 * becomes an AST_UNPARSED node holding the full diagnostic text, and
 * parsing resumes at the next token flagged `bol` by the lexer (the start
 * of a logical line at indentation 0), skipping decorator lines and the
 * `elif`/`else`/`except`/`finally` clauses that still belong to the broken
 * statement.  Host code the subset cannot express therefore only matters if
 * a kernel actually uses what it defines.  A depth counter bounds the
 * recursion so that hostile input ((((((...) fails cleanly instead of
 * overflowing the C stack.
 *
 * Locations.  A node's loc is the first token of its text, except: binary
 * operators, boolean operators and comparisons use the (first) operator
 * token; ATTR uses the attribute name after the dot; CALL and SUBSCRIPT
 * use the loc of the callee / subscripted node.  Statements use their
 * first token (the keyword for compound statements, `def` for decorated
 * functions).
 *
 * Nodes and strings live in the caller's arena; the parser itself keeps no
 * state beyond a Parser struct.
 */
#include "front/ast.h"
#include "front/lex.h"

#include <stdlib.h>
#include <string.h>

/* Bound on nesting (of expressions, blocks, and left-deep chains such as
 * a+b+c or elif ladders, which nest in the tree): keeps the parser, the
 * dump and every later tree walk well inside the C stack. */
#define PARSE_MAX_DEPTH 500

typedef TS_VEC(AstExpr *) ExprVec;
typedef TS_VEC(AstStmt *) StmtVec;
typedef TS_VEC(AstParam) ParamVec;
typedef TS_VEC(const char *) NameVec;
typedef TS_VEC(AstOp) OpVec;

typedef struct Parser {
    TsArena *a;          /* where nodes go */
    TsDiag *d;           /* where errors go */
    const TsSource *src; /* the file */
    LexToken *tok;       /* all tokens; tok[ntok-1] is EOF */
    int ntok;            /* token count */
    int pos;             /* index of the current token */
    int depth;           /* current nesting of recursive rules */
} Parser;

/* ---- tokens ---------------------------------------------------------------- */

static LexToken *peek(Parser *P) { return &P->tok[P->pos]; }

static LexToken *peek_at(Parser *P, int k) {
    int i = P->pos + k;
    return &P->tok[i < P->ntok ? i : P->ntok - 1];
}

static LexToken *next(Parser *P) {
    LexToken *t = &P->tok[P->pos];
    if (t->kind != TK_EOF) P->pos++;
    return t;
}

static int is_op(const LexToken *t, const char *s) {
    return t->kind == TK_OP && t->text[0] == s[0] && !strcmp(t->text, s);
}
static int is_kw(const LexToken *t, const char *s) {
    return t->kind == TK_KEYWORD && t->text[0] == s[0] && !strcmp(t->text, s);
}

static int accept_op(Parser *P, const char *s) {
    if (!is_op(peek(P), s)) return 0;
    P->pos++;
    return 1;
}
static int accept_kw(Parser *P, const char *s) {
    if (!is_kw(peek(P), s)) return 0;
    P->pos++;
    return 1;
}

/* How a token reads in a message: 'x', newline, end of file... */
static const char *describe(Parser *P, const LexToken *t) {
    switch (t->kind) {
    case TK_NAME: case TK_KEYWORD: case TK_OP: return ts_sprintf(P->a, "'%s'", t->text);
    case TK_INT: case TK_FLOAT: case TK_IMAG: return "number";
    case TK_STR: return "string literal";
    case TK_NEWLINE: return "end of line";
    case TK_INDENT: return "indent";
    case TK_DEDENT: return "dedent";
    case TK_EOF: return "end of file";
    case TK_ERROR: return "invalid token";
    }
    return "token";
}

/* Fail at token t.  If t is a lexer error token, its own message wins: it
 * says what is really wrong ("unterminated string literal"). */
TS_NORETURN static void fail_tok(Parser *P, const LexToken *t, TsStatus st, const char *fmt, ...)
    TS_PRINTF(4, 5);
TS_NORETURN static void fail_tok(Parser *P, const LexToken *t, TsStatus st, const char *fmt, ...) {
    if (t->kind == TK_ERROR) ts_fail_at(P->d, t->err, t->loc, "%s", t->text);
    va_list ap;
    va_start(ap, fmt);
    ts_vfail_at(P->d, st, t->loc, fmt, ap);
}

TS_NORETURN static void fail_at(Parser *P, TsLoc loc, TsStatus st, const char *fmt, ...)
    TS_PRINTF(4, 5);
TS_NORETURN static void fail_at(Parser *P, TsLoc loc, TsStatus st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ts_vfail_at(P->d, st, loc, fmt, ap);
}

/* Consume operator s or fail with "expected 's' <ctx>, found X". */
static LexToken *expect_op(Parser *P, const char *s, const char *ctx) {
    LexToken *t = peek(P);
    if (!is_op(t, s))
        fail_tok(P, t, TS_ERR_SYNTAX, "expected '%s' %s, found %s", s, ctx, describe(P, t));
    P->pos++;
    return t;
}

static LexToken *expect_name(Parser *P, const char *ctx) {
    LexToken *t = peek(P);
    if (t->kind != TK_NAME)
        fail_tok(P, t, TS_ERR_SYNTAX, "expected a name %s, found %s", ctx, describe(P, t));
    P->pos++;
    return t;
}

static void enter(Parser *P) {
    if (++P->depth > PARSE_MAX_DEPTH)
        fail_tok(P, peek(P), TS_ERR_UNSUPPORTED, "too many nested expressions or blocks");
}
static void leave(Parser *P) { P->depth--; }

/* A left-deep chain (a+b+c, f()()(), elif ladders) grows the tree's depth
 * by one per link even though the parser loops: bound it the same way. */
static void chain(Parser *P, int links) {
    if (P->depth + links > PARSE_MAX_DEPTH)
        fail_tok(P, peek(P), TS_ERR_UNSUPPORTED, "too many nested expressions or blocks");
}

/* ---- nodes ----------------------------------------------------------------- */

static AstExpr *new_expr(Parser *P, AstExprKind kind, TsLoc loc) {
    AstExpr *e = TS_NEW(P->a, AstExpr);
    e->kind = kind;
    e->loc = loc;
    return e;
}

static AstExpr *new_binary(Parser *P, AstExprKind kind, AstOp op, TsLoc loc, AstExpr *a,
                           AstExpr *b) {
    AstExpr *e = new_expr(P, kind, loc);
    e->op = op;
    e->a = a;
    e->b = b;
    return e;
}

static AstStmt *new_stmt(Parser *P, AstStmtKind kind, TsLoc loc) {
    AstStmt *s = TS_NEW(P->a, AstStmt);
    s->kind = kind;
    s->loc = loc;
    return s;
}

/* Can t begin an expression? (Used where an expression is optional.) */
static int starts_expr(const LexToken *t) {
    switch (t->kind) {
    case TK_NAME: case TK_INT: case TK_FLOAT: case TK_IMAG: case TK_STR: return 1;
    case TK_KEYWORD:
        return is_kw(t, "not") || is_kw(t, "lambda") || is_kw(t, "True") ||
               is_kw(t, "False") || is_kw(t, "None") || is_kw(t, "await");
    case TK_OP:
        return is_op(t, "(") || is_op(t, "[") || is_op(t, "{") || is_op(t, "-") ||
               is_op(t, "+") || is_op(t, "~") || is_op(t, "...") || is_op(t, "*");
    default: return 0;
    }
}

static const char *expr_what(const AstExpr *e) {
    switch (e->kind) {
    case AST_CALL: return "function call";
    case AST_INT: case AST_FLOAT: case AST_STR: case AST_TRUE: case AST_FALSE:
    case AST_NONE: case AST_ELLIPSIS: return "literal";
    case AST_COMPARE: return "comparison";
    case AST_BOOLOP: case AST_BINOP: case AST_UNARY: return "expression";
    case AST_IFEXP: return "conditional expression";
    case AST_LAMBDA: return "lambda";
    case AST_COMP: return "comprehension";
    case AST_DICT: return "dict literal";
    case AST_SET: return "set display";
    case AST_YIELD: return "yield expression";
    default: return "expression";
    }
}

/* Check that e may be assigned to.  `simple`: only a single name,
 * attribute or subscript (augmented and annotated assignment). */
static void check_target(Parser *P, const AstExpr *e, int simple, const char *ctx) {
    switch (e->kind) {
    case AST_NAME: case AST_ATTR: case AST_SUBSCRIPT: return;
    case AST_TUPLE: case AST_LIST:
        if (simple) break;
        for (int i = 0; i < e->n; i++) check_target(P, e->items[i], 0, ctx);
        return;
    case AST_STARRED:
        if (simple) break;
        check_target(P, e->a, 0, ctx);
        return;
    default: break;
    }
    if (simple && (e->kind == AST_TUPLE || e->kind == AST_LIST))
        fail_at(P, e->loc, TS_ERR_SYNTAX, "only a single target (not a %s) can be used in %s",
                e->kind == AST_TUPLE ? "tuple" : "list", ctx);
    fail_at(P, e->loc, TS_ERR_SYNTAX, "cannot assign to %s in %s", expr_what(e), ctx);
}

/* ---- expressions ------------------------------------------------------------ */

static AstExpr *parse_expr(Parser *P);
static AstExpr *parse_disjunction(Parser *P);
static AstExpr *parse_bitor(Parser *P);
static AstExpr *parse_factor(Parser *P);
static AstExpr *parse_star_exprs(Parser *P);
static AstExpr *parse_yield(Parser *P);
static void parse_params(Parser *P, ParamVec *out, int annots, const char *closer,
                         const char *ctx);

/* star_expression: '*' bitwise_or | expression */
static AstExpr *parse_star_expr(Parser *P) {
    LexToken *t = peek(P);
    if (accept_op(P, "*")) {
        AstExpr *e = new_expr(P, AST_STARRED, t->loc);
        e->a = parse_bitor(P);
        return e;
    }
    return parse_expr(P);
}

/*
 * star_expressions: star_expression (',' star_expression)* ','?
 * A comma makes an unparenthesized tuple (parens = 0).
 */
static AstExpr *parse_star_exprs(Parser *P) {
    AstExpr *first = parse_star_expr(P);
    if (!is_op(peek(P), ",")) return first;
    ExprVec v = {0};
    ts_vec_push(P->a, v, first);
    while (accept_op(P, ",")) {
        if (!starts_expr(peek(P))) break;
        ts_vec_push(P->a, v, parse_star_expr(P));
    }
    AstExpr *e = new_expr(P, AST_TUPLE, first->loc);
    e->items = v.v;
    e->n = v.n;
    return e;
}

/*
 * star_targets: star_target (',' star_target)* ','?
 * star_target: '*'? bitwise_or
 * (Targets of `for` and comprehensions; parsed above `in` so that
 * `for x in y` does not read `x in y` as a comparison.)
 */
static AstExpr *parse_targets(Parser *P, const char *ctx) {
    ExprVec v = {0};
    TsLoc loc = peek(P)->loc;
    int comma = 0;
    for (;;) {
        LexToken *t = peek(P);
        AstExpr *e;
        if (accept_op(P, "*")) {
            e = new_expr(P, AST_STARRED, t->loc);
            e->a = parse_bitor(P);
        } else {
            e = parse_bitor(P);
        }
        check_target(P, e, 0, ctx);
        ts_vec_push(P->a, v, e);
        if (!accept_op(P, ",")) break;
        comma = 1;
        if (!starts_expr(peek(P))) break;
    }
    if (!comma) return v.v[0];
    AstExpr *e = new_expr(P, AST_TUPLE, loc);
    e->items = v.v;
    e->n = v.n;
    return e;
}

/*
 * comp_for: ('for' star_targets 'in' disjunction ('if' disjunction)*)+
 * Builds the opaque AST_COMP: name = kind, a = element, b = first iterable.
 */
static AstExpr *parse_comp(Parser *P, const char *kind, AstExpr *elt, TsLoc loc) {
    AstExpr *e = new_expr(P, AST_COMP, loc);
    e->name = kind;
    e->a = elt;
    TS_VEC(AstCompFor) fors = {0};
    while (is_kw(peek(P), "for") || is_kw(peek(P), "async")) {
        if (is_kw(peek(P), "async"))
            fail_tok(P, peek(P), TS_ERR_UNSUPPORTED, "asynchronous comprehensions are not supported");
        next(P);
        AstCompFor f = {0};
        f.target = parse_targets(P, "comprehension 'for' target");
        if (!accept_kw(P, "in"))
            fail_tok(P, peek(P), TS_ERR_SYNTAX,
                     "expected 'in' after comprehension 'for' target, found %s",
                     describe(P, peek(P)));
        f.iter = parse_disjunction(P);
        if (!e->b) e->b = f.iter;
        ExprVec ifs = {0};
        while (accept_kw(P, "if")) ts_vec_push(P->a, ifs, parse_disjunction(P));
        f.ifs = ifs.v;
        f.nifs = ifs.n;
        ts_vec_push(P->a, fors, f);
    }
    e->comp = fors.v;
    e->ncomp = fors.n;
    return e;
}

/* strings: STRING+  (adjacent literals concatenate) */
static AstExpr *parse_strings(Parser *P) {
    LexToken *first = peek(P);
    int fstr = 0, bytes = -1;
    size_t total = 0;
    int i;
    for (i = P->pos; P->tok[i].kind == TK_STR; i++) {
        LexToken *t = &P->tok[i];
        if (t->strflags & LEX_STR_F) fstr = 1;
        int b = (t->strflags & LEX_STR_BYTES) != 0;
        if (bytes >= 0 && b != bytes)
            fail_tok(P, t, TS_ERR_SYNTAX, "cannot mix bytes and nonbytes literals");
        bytes = b;
    }
    for (int k = P->pos; k < i; k++) total += fstr ? strlen(P->tok[k].raw) : P->tok[k].len;
    char *s = ts_alloc(P->a, total + 1);
    size_t n = 0;
    for (; P->pos < i; P->pos++) {
        LexToken *t = &P->tok[P->pos];
        const char *part = fstr ? t->raw : t->text;
        size_t len = fstr ? strlen(t->raw) : t->len;
        memcpy(s + n, part, len);
        n += len;
    }
    s[n] = 0;
    AstExpr *e = new_expr(P, AST_STR, first->loc);
    e->str = s;
    e->len = n;
    e->fstring = fstr;
    return e;
}

/*
 * group: '(' ')'
 *      | '(' yield_expr ')'
 *      | '(' star_named_expression comp_for ')'
 *      | '(' star_named_expression (',' star_named_expression)* ','? ')'
 *      | '(' named_expression ')'
 */
static AstExpr *parse_paren(Parser *P) {
    LexToken *open = next(P);
    if (accept_op(P, ")")) {
        AstExpr *e = new_expr(P, AST_TUPLE, open->loc);
        e->parens = 1;
        return e;
    }
    if (is_kw(peek(P), "yield")) {
        AstExpr *e = parse_yield(P);
        expect_op(P, ")", "to close '(' around 'yield'");
        e->parens = 1;
        return e;
    }
    AstExpr *first = parse_star_expr(P);
    if (is_kw(peek(P), "for")) {
        AstExpr *e = parse_comp(P, "gen", first, open->loc);
        expect_op(P, ")", "to close generator expression");
        e->parens = 1;
        return e;
    }
    if (accept_op(P, ")")) {
        first->parens = 1;
        return first;
    }
    if (!is_op(peek(P), ","))
        fail_tok(P, peek(P), TS_ERR_SYNTAX, "expected ')' to close '(' at %d:%d, found %s",
                 open->loc.line, open->loc.col, describe(P, peek(P)));
    ExprVec v = {0};
    ts_vec_push(P->a, v, first);
    while (accept_op(P, ",")) {
        if (is_op(peek(P), ")")) break;
        ts_vec_push(P->a, v, parse_star_expr(P));
    }
    expect_op(P, ")", "to close tuple");
    AstExpr *e = new_expr(P, AST_TUPLE, open->loc);
    e->items = v.v;
    e->n = v.n;
    e->parens = 1;
    return e;
}

/* list: '[' star_named_expressions? ']' | '[' named_expression comp_for ']' */
static AstExpr *parse_list(Parser *P) {
    LexToken *open = next(P);
    ExprVec v = {0};
    if (!is_op(peek(P), "]")) {
        AstExpr *first = parse_star_expr(P);
        if (is_kw(peek(P), "for")) {
            AstExpr *e = parse_comp(P, "list", first, open->loc);
            expect_op(P, "]", "to close list comprehension");
            return e;
        }
        ts_vec_push(P->a, v, first);
        while (accept_op(P, ",")) {
            if (is_op(peek(P), "]")) break;
            ts_vec_push(P->a, v, parse_star_expr(P));
        }
    }
    expect_op(P, "]", "to close list");
    AstExpr *e = new_expr(P, AST_LIST, open->loc);
    e->items = v.v;
    e->n = v.n;
    return e;
}

/*
 * dict: '{' (kvpair (',' kvpair)* ','?)? '}' | '{' kvpair comp_for '}'
 * kvpair: expression ':' expression | '**' bitwise_or
 * set: '{' star_named_expression (',' star_named_expression)* ','? '}'
 *    | '{' named_expression comp_for '}'
 */
static AstExpr *parse_brace(Parser *P) {
    LexToken *open = next(P);
    ExprVec v = {0};
    if (accept_op(P, "}")) return new_expr(P, AST_DICT, open->loc);
    int is_dict;
    {
        LexToken *t = peek(P);
        if (accept_op(P, "**")) {
            AstExpr *ds = new_expr(P, AST_DSTARRED, t->loc);
            ds->a = parse_bitor(P);
            ts_vec_push(P->a, v, ds);
            ts_vec_push(P->a, v, ds);
            is_dict = 1;
        } else {
            AstExpr *first = parse_star_expr(P);
            if (accept_op(P, ":")) {
                AstExpr *val = parse_expr(P);
                if (is_kw(peek(P), "for")) {
                    AstExpr *e = parse_comp(P, "dict", first, open->loc);
                    e->c = val;
                    expect_op(P, "}", "to close dict comprehension");
                    return e;
                }
                ts_vec_push(P->a, v, first);
                ts_vec_push(P->a, v, val);
                is_dict = 1;
            } else {
                if (is_kw(peek(P), "for")) {
                    AstExpr *e = parse_comp(P, "set", first, open->loc);
                    expect_op(P, "}", "to close set comprehension");
                    return e;
                }
                ts_vec_push(P->a, v, first);
                is_dict = 0;
            }
        }
    }
    while (accept_op(P, ",")) {
        if (is_op(peek(P), "}")) break;
        LexToken *t = peek(P);
        if (is_dict) {
            if (accept_op(P, "**")) {
                AstExpr *ds = new_expr(P, AST_DSTARRED, t->loc);
                ds->a = parse_bitor(P);
                ts_vec_push(P->a, v, ds);
                ts_vec_push(P->a, v, ds);
                continue;
            }
            AstExpr *k = parse_expr(P);
            expect_op(P, ":", "after dict key");
            ts_vec_push(P->a, v, k);
            ts_vec_push(P->a, v, parse_expr(P));
        } else {
            ts_vec_push(P->a, v, parse_star_expr(P));
        }
    }
    expect_op(P, "}", is_dict ? "to close dict" : "to close set");
    AstExpr *e = new_expr(P, is_dict ? AST_DICT : AST_SET, open->loc);
    e->items = v.v;
    e->n = v.n;
    return e;
}

/*
 * atom: NAME | 'True' | 'False' | 'None' | strings | NUMBER | '...'
 *     | group | list | dict | set
 */
static AstExpr *parse_atom(Parser *P) {
    LexToken *t = peek(P);
    switch (t->kind) {
    case TK_NAME: {
        next(P);
        if (is_op(peek(P), ":="))
            fail_tok(P, peek(P), TS_ERR_UNSUPPORTED,
                     "assignment expressions (':=') are not supported");
        AstExpr *e = new_expr(P, AST_NAME, t->loc);
        e->name = t->text;
        return e;
    }
    case TK_INT: {
        next(P);
        AstExpr *e = new_expr(P, AST_INT, t->loc);
        e->ival = t->ival;
        e->ival_u64 = t->ival_u64;
        return e;
    }
    case TK_FLOAT: {
        next(P);
        AstExpr *e = new_expr(P, AST_FLOAT, t->loc);
        e->fval = t->fval;
        return e;
    }
    case TK_IMAG:
        fail_tok(P, t, TS_ERR_UNSUPPORTED, "complex (imaginary) literals are not supported");
    case TK_STR: return parse_strings(P);
    case TK_KEYWORD:
        if (is_kw(t, "True") || is_kw(t, "False") || is_kw(t, "None")) {
            next(P);
            return new_expr(P, t->text[0] == 'T' ? AST_TRUE : t->text[0] == 'F' ? AST_FALSE : AST_NONE,
                            t->loc);
        }
        if (is_kw(t, "await"))
            fail_tok(P, t, TS_ERR_UNSUPPORTED, "'await' is not supported");
        if (is_kw(t, "yield"))
            fail_tok(P, t, TS_ERR_SYNTAX, "a 'yield' expression here must be parenthesized");
        break;
    case TK_OP:
        if (is_op(t, "(")) return parse_paren(P);
        if (is_op(t, "[")) return parse_list(P);
        if (is_op(t, "{")) return parse_brace(P);
        if (is_op(t, "...")) {
            next(P);
            return new_expr(P, AST_ELLIPSIS, t->loc);
        }
        break;
    default: break;
    }
    fail_tok(P, t, TS_ERR_SYNTAX, "expected an expression, found %s", describe(P, t));
}

/*
 * arguments: arg (',' arg)* ','?
 * arg: '*' expression | '**' expression | NAME '=' expression
 *    | star_expression comp_for?
 * Positional arguments may not follow keyword arguments or `**`.
 */
static void parse_call_args(Parser *P, AstExpr *call, const char *closer) {
    ExprVec args = {0};
    NameVec names = {0};
    int seen_kw = 0, seen_dstar = 0;
    while (!is_op(peek(P), closer)) {
        LexToken *t = peek(P);
        AstExpr *arg;
        const char *kw = NULL;
        if (accept_op(P, "**")) {
            arg = new_expr(P, AST_DSTARRED, t->loc);
            arg->a = parse_expr(P);
            seen_dstar = 1;
        } else if (accept_op(P, "*")) {
            if (seen_dstar)
                fail_tok(P, t, TS_ERR_SYNTAX,
                         "iterable argument unpacking follows keyword argument unpacking");
            arg = new_expr(P, AST_STARRED, t->loc);
            arg->a = parse_expr(P);
        } else if (t->kind == TK_NAME && is_op(peek_at(P, 1), "=")) {
            P->pos += 2;
            kw = t->text;
            arg = parse_expr(P);
            seen_kw = 1;
        } else if (t->kind == TK_KEYWORD && is_op(peek_at(P, 1), "=") &&
                   !is_kw(t, "lambda") && !is_kw(t, "not")) {
            fail_tok(P, t, TS_ERR_SYNTAX, "cannot use keyword '%s' as an argument name", t->text);
        } else {
            arg = parse_expr(P);
            if (is_kw(peek(P), "for")) arg = parse_comp(P, "gen", arg, arg->loc);
            if (is_op(peek(P), "="))
                fail_tok(P, peek(P), TS_ERR_SYNTAX,
                         "expression cannot be used as a keyword argument name "
                         "(did you mean '=='?)");
            if (seen_kw || seen_dstar)
                fail_at(P, arg->loc, TS_ERR_SYNTAX,
                        seen_dstar ? "positional argument follows keyword argument unpacking"
                                   : "positional argument follows keyword argument");
        }
        ts_vec_push(P->a, args, arg);
        ts_vec_push(P->a, names, kw);
        if (!accept_op(P, ",")) break;
    }
    call->items = args.v;
    call->kwnames = names.v;
    call->n = args.n;
}

/*
 * slice: expression? ':' expression? (':' expression?)?
 *      | star_expression
 */
static AstExpr *parse_slice(Parser *P) {
    LexToken *t = peek(P);
    AstExpr *lo = NULL;
    if (!is_op(t, ":")) {
        lo = parse_star_expr(P);
        if (!is_op(peek(P), ":")) return lo;
    }
    next(P); /* ':' */
    AstExpr *e = new_expr(P, AST_SLICE, lo ? lo->loc : t->loc);
    e->a = lo;
    LexToken *u = peek(P);
    if (!is_op(u, ":") && !is_op(u, "]") && !is_op(u, ",")) e->b = parse_expr(P);
    if (accept_op(P, ":")) {
        u = peek(P);
        if (!is_op(u, "]") && !is_op(u, ",")) e->c = parse_expr(P);
    }
    return e;
}

/* slices: slice (',' slice)* ','?   (a comma makes a TUPLE, parens = 0) */
static AstExpr *parse_slices(Parser *P) {
    LexToken *t = peek(P);
    if (is_op(t, "]"))
        fail_tok(P, t, TS_ERR_SYNTAX, "expected an index or slice inside '[]'");
    AstExpr *first = parse_slice(P);
    if (!is_op(peek(P), ",")) return first;
    ExprVec v = {0};
    ts_vec_push(P->a, v, first);
    while (accept_op(P, ",")) {
        if (is_op(peek(P), "]")) break;
        ts_vec_push(P->a, v, parse_slice(P));
    }
    AstExpr *e = new_expr(P, AST_TUPLE, first->loc);
    e->items = v.v;
    e->n = v.n;
    return e;
}

/*
 * primary: atom ( '.' NAME | '(' arguments? ')' | '[' slices ']' )*
 */
static AstExpr *parse_primary(Parser *P) {
    AstExpr *e = parse_atom(P);
    for (int links = 1;; links++) {
        chain(P, links);
        LexToken *t = peek(P);
        if (accept_op(P, ".")) {
            LexToken *name = expect_name(P, "after '.'");
            AstExpr *x = new_expr(P, AST_ATTR, name->loc);
            x->a = e;
            x->name = name->text;
            e = x;
        } else if (accept_op(P, "(")) {
            AstExpr *x = new_expr(P, AST_CALL, e->loc);
            x->a = e;
            parse_call_args(P, x, ")");
            if (!is_op(peek(P), ")"))
                fail_tok(P, peek(P), TS_ERR_SYNTAX,
                         "expected ',' or ')' in call arguments (call opened at %d:%d), found %s",
                         t->loc.line, t->loc.col, describe(P, peek(P)));
            next(P);
            e = x;
        } else if (accept_op(P, "[")) {
            AstExpr *x = new_expr(P, AST_SUBSCRIPT, e->loc);
            x->a = e;
            x->b = parse_slices(P);
            expect_op(P, "]", "to close subscript");
            e = x;
        } else {
            return e;
        }
    }
}

/* power: primary ('**' factor)? */
static AstExpr *parse_power(Parser *P) {
    AstExpr *e = parse_primary(P);
    LexToken *t = peek(P);
    if (accept_op(P, "**")) return new_binary(P, AST_BINOP, AST_POW, t->loc, e, parse_factor(P));
    return e;
}

/* factor: ('+' | '-' | '~') factor | power */
static AstExpr *parse_factor(Parser *P) {
    LexToken *t = peek(P);
    AstExpr *e;
    enter(P); /* counts both unary chains and ** chains (power -> factor) */
    if (is_op(t, "-") || is_op(t, "+") || is_op(t, "~")) {
        next(P);
        e = new_expr(P, AST_UNARY, t->loc);
        e->op = t->text[0] == '-' ? AST_NEG : t->text[0] == '+' ? AST_POS : AST_INVERT;
        e->a = parse_factor(P);
    } else {
        e = parse_power(P);
    }
    leave(P);
    return e;
}

/* A table-driven left-associative binary level. */
typedef struct BinLevel {
    const char *tok; /* operator spelling */
    AstOp op;        /* its AstOp */
} BinLevel;

static AstExpr *parse_binlevel(Parser *P, const BinLevel *ops, int nops,
                               AstExpr *(*sub)(Parser *)) {
    AstExpr *e = sub(P);
    for (int links = 1;; links++) {
        LexToken *t = peek(P);
        int i;
        for (i = 0; i < nops; i++)
            if (is_op(t, ops[i].tok)) break;
        if (i == nops) return e;
        chain(P, links);
        next(P);
        e = new_binary(P, AST_BINOP, ops[i].op, t->loc, e, sub(P));
    }
}

/* term: term ('*' | '/' | '//' | '%' | '@') factor | factor */
static AstExpr *parse_term(Parser *P) {
    static const BinLevel ops[] = {
        {"*", AST_MUL}, {"/", AST_DIV}, {"//", AST_FLOORDIV}, {"%", AST_MOD}, {"@", AST_MATMUL}};
    return parse_binlevel(P, ops, TS_COUNTOF(ops), parse_factor);
}

/* sum: sum ('+' | '-') term | term */
static AstExpr *parse_sum(Parser *P) {
    static const BinLevel ops[] = {{"+", AST_ADD}, {"-", AST_SUB}};
    return parse_binlevel(P, ops, TS_COUNTOF(ops), parse_term);
}

/* shift_expr: shift_expr ('<<' | '>>') sum | sum */
static AstExpr *parse_shift(Parser *P) {
    static const BinLevel ops[] = {{"<<", AST_LSHIFT}, {">>", AST_RSHIFT}};
    return parse_binlevel(P, ops, TS_COUNTOF(ops), parse_sum);
}

/* bitwise_and: bitwise_and '&' shift_expr | shift_expr */
static AstExpr *parse_bitand(Parser *P) {
    static const BinLevel ops[] = {{"&", AST_BITAND}};
    return parse_binlevel(P, ops, 1, parse_shift);
}

/* bitwise_xor: bitwise_xor '^' bitwise_and | bitwise_and */
static AstExpr *parse_bitxor(Parser *P) {
    static const BinLevel ops[] = {{"^", AST_BITXOR}};
    return parse_binlevel(P, ops, 1, parse_bitand);
}

/* bitwise_or: bitwise_or '|' bitwise_xor | bitwise_xor */
static AstExpr *parse_bitor(Parser *P) {
    static const BinLevel ops[] = {{"|", AST_BITOR}};
    return parse_binlevel(P, ops, 1, parse_bitxor);
}

/* The comparison operator at the cursor (consumed), or -1. */
static int accept_cmpop(Parser *P) {
    static const BinLevel ops[] = {{"==", AST_EQ}, {"!=", AST_NE}, {"<", AST_LT},
                                   {"<=", AST_LE}, {">", AST_GT},  {">=", AST_GE}};
    LexToken *t = peek(P);
    for (int i = 0; i < TS_COUNTOF(ops); i++)
        if (is_op(t, ops[i].tok)) {
            next(P);
            return (int)ops[i].op;
        }
    if (is_kw(t, "in")) {
        next(P);
        return AST_IN;
    }
    if (is_kw(t, "not") && is_kw(peek_at(P, 1), "in")) {
        P->pos += 2;
        return AST_NOTIN;
    }
    if (is_kw(t, "is")) {
        next(P);
        return accept_kw(P, "not") ? AST_ISNOT : AST_IS;
    }
    return -1;
}

/*
 * comparison: bitwise_or (compare_op bitwise_or)*
 * compare_op: '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'not' 'in'
 *           | 'is' | 'is' 'not'
 */
static AstExpr *parse_comparison(Parser *P) {
    AstExpr *first = parse_bitor(P);
    LexToken *t = peek(P);
    int op = accept_cmpop(P);
    if (op < 0) return first;
    ExprVec items = {0};
    OpVec ops = {0};
    while (op >= 0) {
        ts_vec_push(P->a, ops, (AstOp)op);
        ts_vec_push(P->a, items, parse_bitor(P));
        op = accept_cmpop(P);
    }
    AstExpr *e = new_expr(P, AST_COMPARE, t->loc);
    e->a = first;
    e->items = items.v;
    e->ops = ops.v;
    e->n = items.n;
    return e;
}

/* inversion: 'not' inversion | comparison */
static AstExpr *parse_inversion(Parser *P) {
    LexToken *t = peek(P);
    if (!accept_kw(P, "not")) return parse_comparison(P);
    enter(P);
    AstExpr *e = new_expr(P, AST_UNARY, t->loc);
    e->op = AST_NOT;
    e->a = parse_inversion(P);
    leave(P);
    return e;
}

/* conjunction: inversion ('and' inversion)* */
static AstExpr *parse_conjunction(Parser *P) {
    AstExpr *e = parse_inversion(P);
    for (int links = 1;; links++) {
        LexToken *t = peek(P);
        if (!accept_kw(P, "and")) return e;
        chain(P, links);
        e = new_binary(P, AST_BOOLOP, AST_AND, t->loc, e, parse_inversion(P));
    }
}

/* disjunction: conjunction ('or' conjunction)* */
static AstExpr *parse_disjunction(Parser *P) {
    AstExpr *e = parse_conjunction(P);
    for (int links = 1;; links++) {
        LexToken *t = peek(P);
        if (!accept_kw(P, "or")) return e;
        chain(P, links);
        e = new_binary(P, AST_BOOLOP, AST_OR, t->loc, e, parse_conjunction(P));
    }
}

/* lambdef: 'lambda' lambda_params? ':' expression */
static AstExpr *parse_lambda(Parser *P) {
    LexToken *t = next(P);
    ParamVec params = {0};
    parse_params(P, &params, 0, ":", "lambda");
    expect_op(P, ":", "after lambda parameters");
    AstExpr *e = new_expr(P, AST_LAMBDA, t->loc);
    e->params = params.v;
    e->nparams = params.n;
    e->a = parse_expr(P);
    return e;
}

/*
 * expression: disjunction 'if' disjunction 'else' expression
 *           | disjunction
 *           | lambdef
 */
static AstExpr *parse_expr(Parser *P) {
    enter(P);
    AstExpr *e;
    if (is_kw(peek(P), "lambda")) {
        e = parse_lambda(P);
    } else {
        e = parse_disjunction(P);
        LexToken *t = peek(P);
        if (accept_kw(P, "if")) {
            AstExpr *x = new_expr(P, AST_IFEXP, e->loc);
            x->b = e;
            x->a = parse_disjunction(P);
            if (!accept_kw(P, "else"))
                fail_tok(P, peek(P), TS_ERR_SYNTAX,
                         "expected 'else' after 'if' expression (started at %d:%d), found %s",
                         t->loc.line, t->loc.col, describe(P, peek(P)));
            x->c = parse_expr(P);
            e = x;
        }
    }
    leave(P);
    return e;
}

/* yield_expr: 'yield' 'from' expression | 'yield' star_expressions? */
static AstExpr *parse_yield(Parser *P) {
    LexToken *t = next(P);
    AstExpr *e = new_expr(P, AST_YIELD, t->loc);
    if (accept_kw(P, "from")) e->a = parse_expr(P);
    else if (starts_expr(peek(P))) e->a = parse_star_exprs(P);
    return e;
}

/* The right side of an assignment: yield_expr | star_expressions */
static AstExpr *parse_rhs(Parser *P) {
    return is_kw(peek(P), "yield") ? parse_yield(P) : parse_star_exprs(P);
}

/*
 * params: param (',' param)* ','?
 * param: NAME (':' expression)? ('=' expression)?
 *      | '*' (NAME (':' expression)?)?
 *      | '**' NAME (':' expression)?
 *      | '/'
 * (Lambdas take no annotations: their ':' ends the parameter list.)
 */
static void parse_params(Parser *P, ParamVec *out, int annots, const char *closer,
                         const char *ctx) {
    int seen_default = 0, seen_star = 0, seen_slash = 0, seen_dstar = 0;
    while (!is_op(peek(P), closer)) {
        LexToken *t = peek(P);
        if (seen_dstar)
            fail_tok(P, t, TS_ERR_SYNTAX, "parameters cannot follow '**%s' in %s",
                     out->v[out->n - 1].name, ctx);
        if (accept_op(P, "/")) {
            if (seen_slash) fail_tok(P, t, TS_ERR_SYNTAX, "'/' may appear only once in %s", ctx);
            if (seen_star) fail_tok(P, t, TS_ERR_SYNTAX, "'/' must be ahead of '*' in %s", ctx);
            if (out->n == 0)
                fail_tok(P, t, TS_ERR_SYNTAX, "at least one parameter must precede '/' in %s", ctx);
            for (int i = 0; i < out->n; i++) out->v[i].posonly = 1;
            seen_slash = 1;
        } else {
            AstParam p = {0};
            p.loc = t->loc;
            if (accept_op(P, "**")) {
                p.star = 2;
                seen_dstar = 1;
            } else if (accept_op(P, "*")) {
                if (seen_star) fail_tok(P, t, TS_ERR_SYNTAX, "'*' may appear only once in %s", ctx);
                seen_star = 1;
                if (is_op(peek(P), ",") || is_op(peek(P), closer)) { /* bare '*' */
                    if (!accept_op(P, ",") || is_op(peek(P), closer) || is_op(peek(P), "**"))
                        fail_tok(P, t, TS_ERR_SYNTAX, "named parameters must follow bare '*' in %s",
                                 ctx);
                    continue;
                }
                p.star = 1;
            } else {
                p.kwonly = seen_star;
            }
            p.name = expect_name(P, ts_sprintf(P->a, "in %s parameter list", ctx))->text;
            for (int i = 0; i < out->n; i++) /* as CPython: a SyntaxError */
                if (!strcmp(out->v[i].name, p.name))
                    fail_at(P, p.loc, TS_ERR_SYNTAX, "duplicate parameter '%s' in %s", p.name, ctx);
            if (annots && accept_op(P, ":")) p.annot = parse_expr(P);
            if (accept_op(P, "=")) {
                if (p.star)
                    fail_tok(P, peek_at(P, -1), TS_ERR_SYNTAX,
                             "'%s%s' cannot have a default value", p.star == 1 ? "*" : "**",
                             p.name);
                p.dflt = parse_expr(P);
                if (!seen_star) seen_default = 1;
            } else if (!p.star && !seen_star && seen_default) {
                fail_at(P, p.loc, TS_ERR_SYNTAX,
                        "parameter without a default follows parameter with a default");
            }
            ts_vec_push(P->a, *out, p);
        }
        if (!accept_op(P, ",")) break;
    }
}

/* ---- statements -------------------------------------------------------------- */

static void parse_statement(Parser *P, StmtVec *out);

/* End of a simple statement: ';' or NEWLINE (';' is consumed by the caller). */
static void expect_stmt_end(Parser *P, const char *what) {
    LexToken *t = peek(P);
    if (t->kind == TK_NEWLINE || is_op(t, ";")) return;
    fail_tok(P, t, TS_ERR_SYNTAX, "expected end of line after %s, found %s", what,
             describe(P, t));
}

/*
 * block: NEWLINE INDENT statement+ DEDENT
 *      | simple_stmts
 */
static AstBlock parse_block(Parser *P, const char *ctx) {
    StmtVec v = {0};
    enter(P);
    LexToken *t = peek(P);
    if (t->kind == TK_NEWLINE) {
        next(P);
        LexToken *u = peek(P);
        if (u->kind != TK_INDENT)
            fail_tok(P, u, TS_ERR_SYNTAX, "expected an indented block after %s", ctx);
        next(P);
        while (peek(P)->kind != TK_DEDENT && peek(P)->kind != TK_EOF) parse_statement(P, &v);
        next(P);
    } else {
        parse_statement(P, &v); /* simple statements on the header's line */
        if (v.n && (v.v[0]->kind == AST_IF || v.v[0]->kind == AST_FOR ||
                    v.v[0]->kind == AST_WHILE || v.v[0]->kind == AST_WITH ||
                    v.v[0]->kind == AST_DEF || v.v[0]->kind == AST_CLASS ||
                    v.v[0]->kind == AST_TRY))
            fail_at(P, v.v[0]->loc, TS_ERR_SYNTAX,
                    "a compound statement cannot follow ':' on the same line (after %s)", ctx);
    }
    leave(P);
    return (AstBlock){v.v, v.n};
}

/* dotted_name: NAME ('.' NAME)*
 * (Built in the arena: a heap buffer would leak if expect_name unwinds.) */
static const char *parse_dotted_name(Parser *P, const char *prefix, const char *ctx) {
    const char *s = ts_sprintf(P->a, "%s%s", prefix, expect_name(P, ctx)->text);
    while (accept_op(P, "."))
        s = ts_sprintf(P->a, "%s.%s", s, expect_name(P, "after '.' in module name")->text);
    return s;
}

/*
 * import_name: 'import' dotted_as_name (',' dotted_as_name)*
 * dotted_as_name: dotted_name ('as' NAME)?
 * One AST_IMPORT per name.
 */
static void parse_import(Parser *P, StmtVec *out) {
    LexToken *t = next(P);
    do {
        AstStmt *s = new_stmt(P, AST_IMPORT, t->loc);
        s->module = parse_dotted_name(P, "", "after 'import'");
        if (accept_kw(P, "as")) {
            s->alias = expect_name(P, "after 'as'")->text;
            s->import_as = 1;
        }
        ts_vec_push(P->a, *out, s);
    } while (accept_op(P, ","));
    expect_stmt_end(P, "import");
}

/*
 * import_from: 'from' ('.' | '...')* dotted_name 'import' import_targets
 *            | 'from' ('.' | '...')+ 'import' import_targets
 * import_targets: '(' import_as_names ','? ')' | import_as_names | '*'
 * import_as_names: NAME ('as' NAME)? (',' NAME ('as' NAME)?)*
 */
static void parse_from_import(Parser *P, StmtVec *out) {
    LexToken *t = next(P);
    int dots = 0;
    for (;;) {
        if (accept_op(P, ".")) dots += 1;
        else if (accept_op(P, "...")) dots += 3;
        else break;
    }
    char *prefix = ts_alloc(P->a, (size_t)dots + 1);
    memset(prefix, '.', (size_t)dots);
    const char *module = prefix;
    if (peek(P)->kind == TK_NAME || dots == 0)
        module = parse_dotted_name(P, prefix, "after 'from'");
    if (!accept_kw(P, "import"))
        fail_tok(P, peek(P), TS_ERR_SYNTAX, "expected 'import' after 'from %s', found %s", module,
                 describe(P, peek(P)));
    if (accept_op(P, "*")) {
        AstStmt *s = new_stmt(P, AST_IMPORT, t->loc);
        s->module = module;
        s->member = s->alias = "*";
        ts_vec_push(P->a, *out, s);
        expect_stmt_end(P, "import");
        return;
    }
    int paren = accept_op(P, "(");
    for (;;) {
        AstStmt *s = new_stmt(P, AST_IMPORT, t->loc);
        s->module = module;
        s->member = s->alias = expect_name(P, "in 'from ... import' list")->text;
        if (accept_kw(P, "as")) {
            s->alias = expect_name(P, "after 'as'")->text;
            s->import_as = 1;
        }
        ts_vec_push(P->a, *out, s);
        if (!accept_op(P, ",")) break;
        if (paren && is_op(peek(P), ")")) break;
        if (!paren && peek(P)->kind == TK_NEWLINE)
            fail_tok(P, peek(P), TS_ERR_SYNTAX,
                     "trailing comma not allowed without surrounding parentheses");
    }
    if (paren) expect_op(P, ")", "to close 'from ... import ('");
    expect_stmt_end(P, "import");
}

/* 'global' NAME (',' NAME)*  |  'nonlocal' NAME (',' NAME)* */
static AstStmt *parse_global(Parser *P) {
    LexToken *t = next(P);
    ExprVec v = {0};
    do {
        LexToken *n = expect_name(P, ts_sprintf(P->a, "after '%s'", t->text));
        AstExpr *e = new_expr(P, AST_NAME, n->loc);
        e->name = n->text;
        ts_vec_push(P->a, v, e);
    } while (accept_op(P, ","));
    AstStmt *s = new_stmt(P, AST_GLOBAL, t->loc);
    s->targets = v.v;
    s->ntargets = v.n;
    return s;
}

static const BinLevel augops[] = {
    {"+=", AST_ADD},     {"-=", AST_SUB},     {"*=", AST_MUL},    {"/=", AST_DIV},
    {"//=", AST_FLOORDIV}, {"%=", AST_MOD},   {"**=", AST_POW},   {"<<=", AST_LSHIFT},
    {">>=", AST_RSHIFT}, {"&=", AST_BITAND},  {"|=", AST_BITOR},  {"^=", AST_BITXOR},
    {"@=", AST_MATMUL}};

/*
 * assignment: single_target ':' expression ('=' annotated_rhs)?
 *           | (star_targets '=')+ (yield_expr | star_expressions)
 *           | single_target augassign (yield_expr | star_expressions)
 * expr_stmt: star_expressions | yield_expr
 */
static AstStmt *parse_expr_stmt(Parser *P) {
    LexToken *t = peek(P);
    AstExpr *first = parse_rhs(P);
    LexToken *u = peek(P);
    if (accept_op(P, ":")) {
        if (first->kind == AST_TUPLE && !first->parens)
            fail_at(P, first->loc, TS_ERR_SYNTAX, "only a single target (not a tuple) can be annotated");
        check_target(P, first, 1, "annotated assignment");
        AstStmt *s = new_stmt(P, AST_ANNASSIGN, t->loc);
        s->target = first;
        s->annot = parse_expr(P);
        if (accept_op(P, "=")) s->value = parse_rhs(P);
        return s;
    }
    for (int i = 0; i < TS_COUNTOF(augops); i++) {
        if (!is_op(u, augops[i].tok)) continue;
        next(P);
        check_target(P, first, 1, "augmented assignment");
        AstStmt *s = new_stmt(P, AST_AUGASSIGN, t->loc);
        s->target = first;
        s->op = augops[i].op;
        s->value = parse_rhs(P);
        return s;
    }
    if (is_op(u, "=")) {
        ExprVec v = {0};
        ts_vec_push(P->a, v, first);
        while (accept_op(P, "=")) ts_vec_push(P->a, v, parse_rhs(P));
        AstStmt *s = new_stmt(P, AST_ASSIGN, t->loc);
        for (int i = 0; i < v.n - 1; i++) check_target(P, v.v[i], 0, "assignment");
        s->targets = v.v;
        s->ntargets = v.n - 1;
        s->value = v.v[v.n - 1];
        return s;
    }
    AstStmt *s = new_stmt(P, AST_EXPR, t->loc);
    s->value = first;
    return s;
}

/*
 * simple_stmt: assignment | expr_stmt | 'return' star_expressions?
 *            | import_name | import_from | 'raise' (expression ('from' expression)?)?
 *            | 'pass' | 'break' | 'continue' | 'del' star_targets
 *            | 'assert' expression (',' expression)? | 'global' ... | 'nonlocal' ...
 */
static void parse_simple_stmt(Parser *P, StmtVec *out) {
    LexToken *t = peek(P);
    AstStmt *s = NULL;
    if (t->kind == TK_KEYWORD) {
        if (is_kw(t, "import")) {
            parse_import(P, out);
            return;
        }
        if (is_kw(t, "from")) {
            parse_from_import(P, out);
            return;
        }
        if (is_kw(t, "pass") || is_kw(t, "break") || is_kw(t, "continue")) {
            next(P);
            s = new_stmt(P, t->text[0] == 'p' ? AST_PASS : t->text[0] == 'b' ? AST_BREAK : AST_CONTINUE,
                         t->loc);
        } else if (is_kw(t, "return")) {
            next(P);
            s = new_stmt(P, AST_RETURN, t->loc);
            if (starts_expr(peek(P))) s->value = parse_star_exprs(P);
        } else if (is_kw(t, "raise")) {
            next(P);
            s = new_stmt(P, AST_RAISE, t->loc);
            if (starts_expr(peek(P))) {
                s->value = parse_expr(P);
                if (accept_kw(P, "from")) parse_expr(P);
            }
        } else if (is_kw(t, "assert")) {
            next(P);
            s = new_stmt(P, AST_ASSERT, t->loc);
            s->cond = parse_expr(P);
            if (accept_op(P, ",")) s->value = parse_expr(P);
        } else if (is_kw(t, "del")) {
            next(P);
            s = new_stmt(P, AST_DEL, t->loc);
            AstExpr *e = parse_targets(P, "'del'");
            if (e->kind == AST_TUPLE && !e->parens) {
                s->targets = e->items;
                s->ntargets = e->n;
            } else {
                s->targets = TS_NEWN(P->a, AstExpr *, 1);
                s->targets[0] = e;
                s->ntargets = 1;
            }
        } else if (is_kw(t, "global") || is_kw(t, "nonlocal")) {
            s = parse_global(P);
        }
    }
    if (!s) s = parse_expr_stmt(P);
    ts_vec_push(P->a, *out, s);
    expect_stmt_end(P, "statement");
}

/* simple_stmts: simple_stmt (';' simple_stmt)* ';'? NEWLINE */
static void parse_simple_stmts(Parser *P, StmtVec *out) {
    for (;;) {
        parse_simple_stmt(P, out);
        if (!accept_op(P, ";")) break;
        if (peek(P)->kind == TK_NEWLINE) break;
    }
    LexToken *t = peek(P);
    if (t->kind != TK_NEWLINE)
        fail_tok(P, t, TS_ERR_SYNTAX, "expected end of line, found %s", describe(P, t));
    next(P);
}

/* The ':' that ends a compound statement header. */
static void expect_colon(Parser *P, const char *ctx) { expect_op(P, ":", ctx); }

/*
 * if_stmt: 'if' named_expression ':' block elif_stmt* else_block?
 * elif_stmt: 'elif' named_expression ':' block
 * else_block: 'else' ':' block
 * (An elif becomes an IF alone in the orelse of the one before it.)
 */
static AstStmt *parse_if(Parser *P) {
    LexToken *t = next(P);
    AstStmt *s = new_stmt(P, AST_IF, t->loc);
    s->cond = parse_expr(P);
    expect_colon(P, "after 'if' condition");
    s->body = parse_block(P, "'if' statement");
    AstStmt *cur = s;
    for (int links = 1;; links++) {
        LexToken *u = peek(P);
        if (accept_kw(P, "elif")) {
            chain(P, links);
            AstStmt *e = new_stmt(P, AST_IF, u->loc);
            e->cond = parse_expr(P);
            expect_colon(P, "after 'elif' condition");
            e->body = parse_block(P, "'elif' statement");
            AstStmt **one = TS_NEWN(P->a, AstStmt *, 1);
            one[0] = e;
            cur->orelse = (AstBlock){one, 1};
            cur = e;
        } else if (accept_kw(P, "else")) {
            expect_colon(P, "after 'else'");
            cur->orelse = parse_block(P, "'else'");
            return s;
        } else {
            return s;
        }
    }
}

/* while_stmt: 'while' named_expression ':' block else_block? */
static AstStmt *parse_while(Parser *P) {
    LexToken *t = next(P);
    AstStmt *s = new_stmt(P, AST_WHILE, t->loc);
    s->cond = parse_expr(P);
    expect_colon(P, "after 'while' condition");
    s->body = parse_block(P, "'while' statement");
    if (accept_kw(P, "else")) {
        expect_colon(P, "after 'else'");
        s->orelse = parse_block(P, "'else'");
    }
    return s;
}

/* for_stmt: 'for' star_targets 'in' star_expressions ':' block else_block? */
static AstStmt *parse_for(Parser *P) {
    LexToken *t = next(P);
    AstStmt *s = new_stmt(P, AST_FOR, t->loc);
    s->target = parse_targets(P, "'for' target");
    if (!accept_kw(P, "in"))
        fail_tok(P, peek(P), TS_ERR_SYNTAX, "expected 'in' after 'for' target, found %s",
                 describe(P, peek(P)));
    s->cond = parse_star_exprs(P);
    expect_colon(P, "after 'for' iterable");
    s->body = parse_block(P, "'for' statement");
    if (accept_kw(P, "else")) {
        expect_colon(P, "after 'else'");
        s->orelse = parse_block(P, "'else'");
    }
    return s;
}

/* Index of the token closing the bracket at index i, or -1 if the logical
 * line ends first. */
static int matching_close(Parser *P, int i) {
    int depth = 0;
    for (; i < P->ntok; i++) {
        LexToken *t = &P->tok[i];
        if (t->kind == TK_NEWLINE || t->kind == TK_EOF) return -1;
        if (is_op(t, "(") || is_op(t, "[") || is_op(t, "{")) depth++;
        else if (is_op(t, ")") || is_op(t, "]") || is_op(t, "}")) {
            if (--depth == 0) return i;
        }
    }
    return -1;
}

/* with_item: expression ('as' star_target)? */
static void parse_with_item(Parser *P, ExprVec *items, ExprVec *targets) {
    ts_vec_push(P->a, *items, parse_expr(P));
    AstExpr *target = NULL;
    if (accept_kw(P, "as")) {
        LexToken *t = peek(P);
        if (accept_op(P, "*")) {
            target = new_expr(P, AST_STARRED, t->loc);
            target->a = parse_bitor(P);
        } else {
            target = parse_bitor(P);
        }
        check_target(P, target, 0, "'with' target");
    }
    ts_vec_push(P->a, *targets, target);
}

/*
 * with_stmt: 'with' '(' with_item (',' with_item)* ','? ')' ':' block
 *          | 'with' with_item (',' with_item)* ':' block
 * The parenthesized form is chosen when the ')' matching the first '(' is
 * followed directly by ':'.
 */
static AstStmt *parse_with(Parser *P) {
    LexToken *t = next(P);
    AstStmt *s = new_stmt(P, AST_WITH, t->loc);
    ExprVec items = {0}, targets = {0};
    int close = is_op(peek(P), "(") ? matching_close(P, P->pos) : -1;
    if (close > 0 && is_op(&P->tok[close + 1], ":")) {
        next(P);
        while (!is_op(peek(P), ")")) {
            parse_with_item(P, &items, &targets);
            if (!accept_op(P, ",")) break;
        }
        expect_op(P, ")", "to close 'with' items");
        if (items.n == 0)
            fail_tok(P, t, TS_ERR_SYNTAX, "expected at least one item after 'with'");
    } else {
        do parse_with_item(P, &items, &targets);
        while (accept_op(P, ","));
    }
    expect_colon(P, "after 'with' items");
    s->items = items.v;
    s->targets = targets.v;
    s->ntargets = items.n;
    s->body = parse_block(P, "'with' statement");
    return s;
}

/*
 * try_stmt: 'try' ':' block except_block+ else_block? finally_block?
 *         | 'try' ':' block finally_block
 * except_block: 'except' '*'? (expression ('as' NAME)?)? ':' block
 * finally_block: 'finally' ':' block
 * Handlers, else and finally are parsed (so errors in them are caught) but
 * only the body is kept.
 */
static AstStmt *parse_try(Parser *P) {
    LexToken *t = next(P);
    AstStmt *s = new_stmt(P, AST_TRY, t->loc);
    expect_colon(P, "after 'try'");
    s->body = parse_block(P, "'try' statement");
    int handlers = 0, fin = 0;
    while (is_kw(peek(P), "except")) {
        next(P);
        accept_op(P, "*");
        if (!is_op(peek(P), ":")) {
            parse_expr(P);
            if (accept_kw(P, "as")) expect_name(P, "after 'except ... as'");
            else if (accept_op(P, ","))
                fail_tok(P, peek_at(P, -1), TS_ERR_SYNTAX,
                         "multiple exception types must be parenthesized");
        }
        expect_colon(P, "after 'except' clause");
        parse_block(P, "'except' clause");
        handlers++;
    }
    if (handlers && accept_kw(P, "else")) {
        expect_colon(P, "after 'else'");
        parse_block(P, "'else'");
    }
    if (accept_kw(P, "finally")) {
        expect_colon(P, "after 'finally'");
        parse_block(P, "'finally' clause");
        fin = 1;
    }
    if (!handlers && !fin)
        fail_tok(P, peek(P), TS_ERR_SYNTAX, "expected 'except' or 'finally' block after 'try'");
    return s;
}

/*
 * funcdef: 'def' NAME '(' params? ')' ('->' expression)? ':' block
 */
static AstStmt *parse_def(Parser *P) {
    LexToken *t = next(P);
    AstStmt *s = new_stmt(P, AST_DEF, t->loc);
    s->name = expect_name(P, "after 'def'")->text;
    if (is_op(peek(P), "["))
        fail_tok(P, peek(P), TS_ERR_UNSUPPORTED, "type parameter lists are not supported");
    expect_op(P, "(", ts_sprintf(P->a, "after function name '%s'", s->name));
    ParamVec params = {0};
    parse_params(P, &params, 1, ")", ts_sprintf(P->a, "'def %s'", s->name));
    expect_op(P, ")", ts_sprintf(P->a, "to close the parameter list of '%s'", s->name));
    s->params = params.v;
    s->nparams = params.n;
    if (accept_op(P, "->")) s->returns = parse_expr(P);
    expect_colon(P, ts_sprintf(P->a, "after the signature of '%s'", s->name));
    s->body = parse_block(P, ts_sprintf(P->a, "function definition '%s'", s->name));
    return s;
}

/* classdef: 'class' NAME ('(' arguments? ')')? ':' block   (bases dropped) */
static AstStmt *parse_class(Parser *P) {
    LexToken *t = next(P);
    AstStmt *s = new_stmt(P, AST_CLASS, t->loc);
    s->name = expect_name(P, "after 'class'")->text;
    if (is_op(peek(P), "["))
        fail_tok(P, peek(P), TS_ERR_UNSUPPORTED, "type parameter lists are not supported");
    if (accept_op(P, "(")) {
        AstExpr bases = {0};
        parse_call_args(P, &bases, ")");
        expect_op(P, ")", "to close the base class list");
    }
    expect_colon(P, ts_sprintf(P->a, "after 'class %s'", s->name));
    s->body = parse_block(P, ts_sprintf(P->a, "class definition '%s'", s->name));
    return s;
}

/* decorators: ('@' named_expression NEWLINE)+  (then funcdef or classdef) */
static AstStmt *parse_decorated(Parser *P) {
    ExprVec decos = {0};
    while (is_op(peek(P), "@")) {
        next(P);
        ts_vec_push(P->a, decos, parse_expr(P));
        LexToken *t = peek(P);
        if (t->kind != TK_NEWLINE)
            fail_tok(P, t, TS_ERR_SYNTAX, "expected end of line after decorator, found %s",
                     describe(P, t));
        next(P);
    }
    LexToken *t = peek(P);
    AstStmt *s;
    if (is_kw(t, "def")) s = parse_def(P);
    else if (is_kw(t, "class")) s = parse_class(P);
    else if (is_kw(t, "async"))
        fail_tok(P, t, TS_ERR_UNSUPPORTED, "'async def' is not supported");
    else
        fail_tok(P, t, TS_ERR_SYNTAX, "expected 'def' or 'class' after decorators, found %s",
                 describe(P, t));
    s->decorators = decos.v;
    s->ndecorators = decos.n;
    return s;
}

/*
 * statement: compound_stmt | simple_stmts
 * compound_stmt: funcdef | classdef | decorated | if_stmt | for_stmt
 *              | while_stmt | with_stmt | try_stmt
 */
static void parse_statement(Parser *P, StmtVec *out) {
    LexToken *t = peek(P);
    AstStmt *s = NULL;
    enter(P);
    if (t->kind == TK_INDENT) fail_tok(P, t, TS_ERR_SYNTAX, "unexpected indent");
    if (t->kind == TK_DEDENT || t->kind == TK_NEWLINE)
        fail_tok(P, t, TS_ERR_SYNTAX, "unexpected %s", describe(P, t));
    if (is_op(t, "@")) s = parse_decorated(P);
    else if (t->kind == TK_KEYWORD) {
        if (is_kw(t, "if")) s = parse_if(P);
        else if (is_kw(t, "for")) s = parse_for(P);
        else if (is_kw(t, "while")) s = parse_while(P);
        else if (is_kw(t, "with")) s = parse_with(P);
        else if (is_kw(t, "try")) s = parse_try(P);
        else if (is_kw(t, "def")) s = parse_def(P);
        else if (is_kw(t, "class")) s = parse_class(P);
        else if (is_kw(t, "async"))
            fail_tok(P, t, TS_ERR_UNSUPPORTED, "'async' statements are not supported");
        else if (is_kw(t, "elif") || is_kw(t, "else") || is_kw(t, "except") ||
                 is_kw(t, "finally"))
            fail_tok(P, t, TS_ERR_SYNTAX, "'%s' without a matching statement before it", t->text);
    } else if (t->kind == TK_NAME && !strcmp(t->text, "match") &&
               (peek_at(P, 1)->kind == TK_NAME || peek_at(P, 1)->kind == TK_STR)) {
        /* `match x:` (a soft keyword: `match = 1` and `match(x)` are plain code) */
        int i = P->pos + 1;
        while (P->tok[i].kind != TK_NEWLINE && P->tok[i].kind != TK_EOF) i++;
        if (is_op(&P->tok[i - 1], ":"))
            fail_tok(P, t, TS_ERR_UNSUPPORTED, "'match' statements are not supported");
    }
    if (s) ts_vec_push(P->a, *out, s);
    else parse_simple_stmts(P, out);
    leave(P);
}

/* ---- module --------------------------------------------------------------------- */

/* The index of the next token after i that starts a top-level line (or EOF). */
static int next_top_line(const Parser *P, int i) {
    for (i++; i < P->ntok - 1; i++)
        if (P->tok[i].bol) return i;
    return P->ntok - 1;
}

/* Where to resume after the top-level statement starting at `start` failed:
 * past its decorator lines, its own line(s), and any dangling clauses. */
static int recover_pos(const Parser *P, int start) {
    int i = start;
    while (is_op(&P->tok[i], "@") && P->tok[i].bol) i = next_top_line(P, i);
    i = next_top_line(P, i);
    for (;;) {
        const LexToken *t = &P->tok[i];
        if (t->kind == TK_EOF) return i;
        if (!(is_kw(t, "elif") || is_kw(t, "else") || is_kw(t, "except") || is_kw(t, "finally")))
            return i;
        i = next_top_line(P, i);
    }
}

/* The name the statement at `i` would bind: def/class name, or the NAME of
 * `NAME = ...` / `NAME: ...`. */
static const char *guess_name(const Parser *P, int i) {
    while (is_op(&P->tok[i], "@") && P->tok[i].bol) i = next_top_line(P, i);
    if (is_kw(&P->tok[i], "async") && i + 1 < P->ntok) i++;
    const LexToken *t = &P->tok[i];
    const LexToken *u = i + 1 < P->ntok ? &P->tok[i + 1] : t;
    if ((is_kw(t, "def") || is_kw(t, "class")) && u->kind == TK_NAME) return u->text;
    if (t->kind == TK_NAME && (is_op(u, "=") || is_op(u, ":"))) return t->text;
    return NULL;
}

/* State of ts_parse_module that must survive a longjmp: it lives in the
 * arena, reached through a pointer that is never modified after setjmp. */
typedef struct ModuleState {
    Parser P;      /* the parser (its d is `diag` below) */
    TsDiag diag;   /* private diagnostics for one statement at a time */
    StmtVec body;  /* statements so far */
    StmtVec tmp;   /* statements of the current top-level line */
    int start;     /* token index where the current statement began */
} ModuleState;

static AstModule *new_module(TsArena *a, const TsSource *src) {
    AstModule *m = TS_NEW(a, AstModule);
    m->src = src;
    return m;
}

/* Parse the top-level statement at the cursor into S->body; if it fails,
 * store an AST_UNPARSED for it and move the cursor to where parsing can
 * resume.  The handler's jmp_buf lives in this frame, which outlives every
 * ts_fail_at the statement can raise. */
static void parse_top_statement(ModuleState *S) {
    jmp_buf jb;
    jmp_buf *saved;
    S->start = S->P.pos;
    S->P.depth = 0;
    S->tmp.n = 0;
    if (ts_try(&S->diag, &jb, &saved)) {
        ts_try_end(&S->diag, saved);
        TsArena *a = S->P.a;
        AstStmt *u = new_stmt(&S->P, AST_UNPARSED, S->P.tok[S->start].loc);
        u->name = guess_name(&S->P, S->start);
        u->error = ts_strdup(a, ts_buf_str(&S->diag.msg));
        u->error_status = S->diag.status;
        ts_buf_free(&S->diag.msg);
        ts_vec_push(a, S->body, u);
        S->P.pos = recover_pos(&S->P, S->start);
        return;
    }
    parse_statement(&S->P, &S->tmp);
    ts_try_end(&S->diag, saved);
    for (int i = 0; i < S->tmp.n; i++) ts_vec_push(S->P.a, S->body, S->tmp.v[i]);
}

AstModule *ts_parse_module(TsArena *a, const TsSource *src) {
    AstModule *m = new_module(a, src);
    LexTokens toks = lex_tokenize(a, src);
    for (int i = 0; i < toks.n && !m->fatal; i++)
        if (toks.v[i].kind == TK_ERROR && toks.v[i].fatal) m->fatal = &toks.v[i];
    ModuleState *S = TS_NEW(a, ModuleState);
    S->P = (Parser){a, &S->diag, src, toks.v, toks.n, 0, 0};
    while (peek(&S->P)->kind != TK_EOF) parse_top_statement(S);
    ts_buf_free(&S->diag.msg);
    m->body = (AstBlock){S->body.v, S->body.n};
    return m;
}

AstModule *ts_parse_strict(TsArena *a, TsDiag *d, const TsSource *src) {
    AstModule *m = new_module(a, src);
    LexTokens toks = lex_tokenize(a, src);
    Parser P = {a, d, src, toks.v, toks.n, 0, 0};
    StmtVec body = {0};
    while (peek(&P)->kind != TK_EOF) parse_statement(&P, &body);
    m->body = (AstBlock){body.v, body.n};
    return m;
}
