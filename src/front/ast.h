/*
 * ast.h — the syntax tree of the Python subset that TileLang kernels use.
 *
 * The front end (lex.c, parse.c) turns a whole .py file into a TsModule:
 * a list of top-level statements.  A real TileLang example file also holds
 * host code (torch, argparse, f-strings, classes...).  The parser reads the
 * file one top-level statement at a time; a statement it cannot parse is
 * kept as an AST_STMT_UNPARSED placeholder carrying the name it would bind
 * (for `def`/`class`) and the diagnostic, so the error surfaces only if the
 * kernel actually uses that name.
 *
 * Nodes live in the module's arena and are never freed one by one.
 */
#ifndef TS_AST_H
#define TS_AST_H

#include "base/base.h"

typedef struct AstExpr AstExpr;
typedef struct AstStmt AstStmt;

/* Binary and unary operators.  X(enum, python spelling) */
#define AST_BINOPS(X)                                                          \
    X(AST_ADD, "+") X(AST_SUB, "-") X(AST_MUL, "*") X(AST_DIV, "/")            \
    X(AST_FLOORDIV, "//") X(AST_MOD, "%") X(AST_POW, "**") X(AST_LSHIFT, "<<") \
    X(AST_RSHIFT, ">>") X(AST_BITAND, "&") X(AST_BITOR, "|") X(AST_BITXOR, "^") \
    X(AST_MATMUL, "@")
#define AST_CMPOPS(X)                                                          \
    X(AST_EQ, "==") X(AST_NE, "!=") X(AST_LT, "<") X(AST_LE, "<=")             \
    X(AST_GT, ">") X(AST_GE, ">=") X(AST_IN, "in") X(AST_NOTIN, "not in")      \
    X(AST_IS, "is") X(AST_ISNOT, "is not")
#define AST_UNOPS(X) X(AST_NEG, "-") X(AST_POS, "+") X(AST_NOT, "not") X(AST_INVERT, "~")

typedef enum AstOp {
#define X(e, s) e,
    AST_BINOPS(X) AST_CMPOPS(X) AST_UNOPS(X)
#undef X
    AST_AND, AST_OR, AST_OP_COUNT
} AstOp;
const char *ast_op_name(AstOp op); /* python spelling */

typedef enum AstExprKind {
    AST_NAME,     /* name */
    AST_INT,      /* ival */
    AST_FLOAT,    /* fval */
    AST_STR,      /* str (escapes decoded; f-strings keep their raw text) */
    AST_TRUE,
    AST_FALSE,
    AST_NONE,
    AST_ELLIPSIS, /* ... */
    AST_BINOP,    /* op, a, b */
    AST_UNARY,    /* op, a */
    AST_BOOLOP,   /* op (AST_AND/AST_OR), a, b; chains are left-nested */
    AST_COMPARE,  /* a; then ncmp (ops[i], items[i]) pairs: a < x < y */
    AST_IFEXP,    /* `b if a else c`: a = cond, b = then, c = else */
    AST_CALL,     /* func=a; args items[0..n), kwarg names in kwnames[i] (NULL = positional) */
    AST_ATTR,     /* a.name */
    AST_SUBSCRIPT,/* a[b]; b is a TUPLE for a[i, j] */
    AST_SLICE,    /* lo:hi:step -> a, b, c (each may be NULL) */
    AST_TUPLE,    /* items */
    AST_LIST,     /* items */
    AST_DICT,     /* items = k0, v0, k1, v1, ... */
    AST_STARRED,  /* *a (in calls, tuples) */
    AST_DSTARRED, /* **a (in calls) */
    AST_LAMBDA,   /* params + a (body expression) */
    AST_COMP,     /* [a for target in iter if cond]: name = "list", "set", "dict" or "gen";
                   * a = element (dict: key; c = value), b = iterable of the first `for`
                   * clause; the clauses in comp[0..ncomp) (evaluated at compile time). */
    /* Added by the front end (additive; nothing above was renumbered): */
    AST_SET,      /* {a, b}: items */
    AST_YIELD,    /* yield a / yield from a (op unused; a may be NULL): host code only */
} AstExprKind;

/* One `for target in iter if cond...` clause of a comprehension. */
typedef struct AstCompFor {
    AstExpr *target;  /* the loop target (a name or a tuple of names) */
    AstExpr *iter;    /* the iterable */
    AstExpr **ifs;    /* its `if` conditions, all of which must hold */
    int nifs;
} AstCompFor;

typedef struct AstParam {
    const char *name;
    AstExpr *annot;   /* annotation or NULL */
    AstExpr *dflt;    /* default or NULL */
    int star;         /* 1: *args, 2: **kwargs */
    TsLoc loc;
    int kwonly;       /* 1: keyword-only (after `*` or *args) */
    int posonly;      /* 1: positional-only (before `/`) */
} AstParam;

struct AstExpr {
    AstExprKind kind;
    TsLoc loc;         /* first token, except: BINOP/BOOLOP/COMPARE the operator,
                        * ATTR the name after the dot, CALL/SUBSCRIPT the loc of
                        * the callee/subscripted node (see parse.c) */
    AstOp op;
    const char *name;  /* AST_NAME, AST_ATTR */
    const char *str;   /* AST_STR */
    int64_t ival;      /* AST_INT */
    double fval;       /* AST_FLOAT */
    AstExpr *a, *b, *c; /* operands; IFEXP: a=cond, b=then, c=else */
    AstExpr **items;   /* TUPLE, LIST, DICT, CALL args, COMPARE operands */
    const char **kwnames; /* CALL: keyword names parallel to items (NULL = positional) */
    AstOp *ops;        /* COMPARE: ops[i] between (i==0 ? a : items[i-1]) and items[i] */
    int n;             /* count of items (and ops for COMPARE) */
    AstParam *params;  /* LAMBDA */
    int nparams;
    int parens;        /* 1 if written inside parentheses (tuple vs. grouping) */
    int fstring;       /* AST_STR: 1 if any concatenated part was an f-string; str is
                        * then the raw text between the quotes, nothing decoded */
    size_t len;        /* AST_STR: length of str in bytes ("\0" escapes can put NUL
                        * bytes inside; str is NUL-terminated after len bytes too) */
    int ival_u64;      /* AST_INT: 1 if the literal is above INT64_MAX (at most
                        * UINT64_MAX): ival holds its value as a uint64 bit pattern */
    AstCompFor *comp;  /* AST_COMP: its for clauses, in order */
    int ncomp;         /* AST_COMP: how many */
};
/* AST_DICT: a `**m` entry is stored as a key/value pair whose key and value
 * are both the same AST_DSTARRED node.  Starred call arguments (*a, **k)
 * are AST_STARRED / AST_DSTARRED items with a NULL kwname. */

typedef enum AstStmtKind {
    AST_EXPR,      /* a: an expression statement (also docstrings) */
    AST_ASSIGN,    /* targets[0..ntargets) = value;  a = b = v has ntargets 2 */
    AST_AUGASSIGN, /* target op= value */
    AST_ANNASSIGN, /* target: annot (= value)? */
    AST_IF,        /* cond, body, orelse (elif is an IF inside orelse) */
    AST_FOR,       /* for target in iter: body (else: orelse) */
    AST_WHILE,     /* while cond: body (else: orelse) */
    AST_WITH,      /* with items[i] as targets[i]: body; targets[i] NULL without `as` */
    AST_DEF,       /* decorators; def name(params) -> returns: body */
    AST_CLASS,     /* class name: body (decorators kept, bases dropped); skipped at evaluation */
    AST_RETURN,    /* value may be NULL */
    AST_PASS,
    AST_BREAK,
    AST_CONTINUE,
    AST_IMPORT,    /* import a.b.c as x / from a.b import c as x: see fields */
    AST_GLOBAL,    /* global/nonlocal names (targets: AST_NAME exprs): ignored */
    AST_ASSERT,    /* cond, value (message, may be NULL) */
    AST_RAISE,     /* value (may be NULL; `from` cause dropped) */
    AST_DEL,       /* targets */
    AST_TRY,       /* body only kept; handlers, else and finally skipped */
    AST_UNPARSED   /* a top-level statement that did not parse: see fields */
} AstStmtKind;

typedef struct AstBlock {
    AstStmt **v;
    int n;
} AstBlock;

struct AstStmt {
    AstStmtKind kind;
    TsLoc loc;
    const char *name;      /* DEF/CLASS name; UNPARSED: name it would bind (def, class,
                            * or a plain `NAME = ...`/`NAME: ...` target) or NULL */
    AstExpr **targets;     /* ASSIGN targets; WITH `as` targets (NULL if none) */
    int ntargets;
    AstExpr *target;       /* AUGASSIGN, ANNASSIGN, FOR */
    AstExpr *value;        /* ASSIGN, AUGASSIGN, ANNASSIGN (may be NULL), RETURN, EXPR, RAISE */
    AstExpr *annot;        /* ANNASSIGN */
    AstOp op;              /* AUGASSIGN */
    AstExpr *cond;         /* IF, WHILE, ASSERT;  FOR: iter */
    AstExpr **items;       /* WITH context expressions (ntargets of them) */
    AstBlock body, orelse;
    AstExpr **decorators;  /* DEF */
    int ndecorators;
    AstParam *params;      /* DEF */
    int nparams;
    AstExpr *returns;      /* DEF: -> annotation */
    /* IMPORT: module path ("tilelang.language"; relative imports keep their
     * leading dots, ".utils"), imported member for `from m import member`
     * (NULL for plain import; "*" for `from m import *`), and the alias:
     * the `as` name if written; else, for from-imports, the member (what
     * Python binds); else (plain `import a.b.c`) NULL -- Python then binds
     * the first component `a` to the package `a`, not to a.b.c. */
    const char *module, *member, *alias;
    int import_as;         /* IMPORT: 1 if an `as` clause was written */
    /* UNPARSED: the diagnostic text the parser produced. */
    const char *error;
    TsStatus error_status;
};

typedef struct AstModule {
    const TsSource *src;
    AstBlock body;
    const struct LexToken *fatal; /* a TK_ERROR that makes the whole file unusable, or NULL */
} AstModule;

/* Parse a whole file.  Never fails on content: top-level statements that
 * do not parse become AST_UNPARSED.  All nodes live in `a`. */
AstModule *ts_parse_module(TsArena *a, const TsSource *src);

/* Parse one statement list strictly (for tests): on the first syntax error,
 * report it through d (ts_fail_at) instead of skipping. */
AstModule *ts_parse_strict(TsArena *a, TsDiag *d, const TsSource *src);

/* Debug dump of the tree in an s-expression form (golden tests). */
void ast_dump_module(TsBuf *b, const AstModule *m);

#endif
