/*
 * test_parse.c — unit tests of the parser (src/front/parse.c) and of the
 * tree dump (src/front/ast.c).
 *
 * Most checks parse a small source strictly and compare ast_dump_module()
 * with the tree written by hand.  Three larger checks:
 *   - random expressions: a generator builds random expression trees,
 *     prints them with the fewest parentheses Python's precedence rules
 *     allow (a printer written independently of the parser), and checks
 *     that parsing the text gives back the same tree;
 *   - recovery: a file whose host code uses unsupported or broken syntax
 *     still yields every following definition;
 *   - mutation fuzz: thousands of random mutations and truncations of a
 *     kernel file must parse without crashing, and ts_parse_module and
 *     ts_parse_strict must agree (same first error, same tree).
 * Random tests take a fresh seed each run (printed; TS_TEST_SEED=n
 * reproduces a run).
 */
#include "front/ast.h"
#include "front/lex.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static TsArena arena;
static TsStatus last_status; /* status of the last failed strict parse */

static TsSource *source(const char *text, size_t len) {
    TsSource *src = TS_NEW(&arena, TsSource);
    src->name = "t.py";
    src->text = text;
    src->len = len;
    return src;
}

static const char *dump_module(const AstModule *m) {
    TsBuf b = {0};
    ast_dump_module(&b, m);
    const char *s = ts_strdup(&arena, ts_buf_str(&b));
    ts_buf_free(&b);
    return s;
}

/* Strict parse: the module, or NULL with *msg set to the diagnostic. */
static AstModule *strict(const char *text, size_t len, const char **msg) {
    TsDiag d = {0};
    jmp_buf jb;
    jmp_buf *saved;
    AstModule *volatile m = NULL;
    *msg = NULL;
    if (ts_try(&d, &jb, &saved)) {
        ts_try_end(&d, saved);
        *msg = ts_strdup(&arena, ts_buf_str(&d.msg));
        last_status = d.status;
        ts_buf_free(&d.msg);
        return NULL;
    }
    m = ts_parse_strict(&arena, &d, source(text, len));
    ts_try_end(&d, saved);
    ts_buf_free(&d.msg);
    return m;
}

/* Dump of a strict parse, or "ERROR: <diagnostic>". */
static const char *P(const char *text) {
    const char *msg;
    AstModule *m = strict(text, strlen(text), &msg);
    if (!m) return ts_sprintf(&arena, "ERROR: %s", msg);
    return dump_module(m);
}

/* The diagnostic of a strict parse that must fail ("(parsed)" if not). */
static const char *E(const char *text) {
    const char *msg;
    AstModule *m = strict(text, strlen(text), &msg);
    return m ? "(parsed)" : msg;
}

/* The first statement of a strict parse (NULL on error). */
static AstStmt *S(const char *text) {
    const char *msg;
    AstModule *m = strict(text, strlen(text), &msg);
    if (!m || m->body.n == 0) {
        fprintf(stderr, "parse failed: %s\n", msg ? msg : "(empty)");
        return NULL;
    }
    return m->body.v[0];
}

static AstModule *module(const char *text) {
    return ts_parse_module(&arena, source(text, strlen(text)));
}

/* ---- expressions ------------------------------------------------------------ */

static void test_precedence(void) {
    CHECK_EQ_STR("(expr (u- (** a b)))\n", P("-a ** b"));
    CHECK_EQ_STR("(expr (+ a (// (* b c) d)))\n", P("a + b * c // d"));
    CHECK_EQ_STR("(expr (cmp a < b <= c))\n", P("a < b <= c"));
    CHECK_EQ_STR("(expr (not (cmp a == b)))\n", P("not a == b"));
    CHECK_EQ_STR("(expr (** a (** b c)))\n", P("a ** b ** c"));
    CHECK_EQ_STR("(expr (** 2 (u- 1)))\n", P("2 ** -1"));
    CHECK_EQ_STR("(expr (- (- a b) c))\n", P("a - b - c"));
    CHECK_EQ_STR("(expr (or a (and b (not c))))\n", P("a or b and not c"));
    CHECK_EQ_STR("(expr (or (or a b) c))\n", P("a or b or c"));
    CHECK_EQ_STR("(expr (| a (^ b (& c (<< d e)))))\n", P("a | b ^ c & d << e"));
    CHECK_EQ_STR("(expr (+ (~ x) 1))\n", P("~x + 1"));
    CHECK_EQ_STR("(expr (@ a b))\n", P("a @ b"));
    CHECK_EQ_STR("(expr (% (* (u- a) b) c))\n", P("-a * b % c"));
    CHECK_EQ_STR("(expr (cmp a not-in b is-not c in d is e))\n", P("a not in b is not c in d is e"));
    CHECK_EQ_STR("(expr (cmp (>> a 1) != (+ b 2) >= c > d))\n", P("a >> 1 != b + 2 >= c > d"));
    CHECK_EQ_STR("(expr (ifexp c x (ifexp d y z)))\n", P("x if c else y if d else z"));
    CHECK_EQ_STR("(expr (ifexp (or a b) (+ x 1) (u- y)))\n", P("x + 1 if a or b else -y"));
    CHECK_EQ_STR("(expr (* (+ a b) c))\n", P("(a + b) * c"));
    CHECK_EQ_STR("(expr (u- (. (call f) x)))\n", P("-f().x"));
    CHECK_EQ_STR("(expr (not (not a)))\n", P("not not a"));
    CHECK_EQ_STR("(expr (lambda (params x (y = 1)) (+ x y)))\n", P("lambda x, y=1: x + y"));
}

static void test_atoms(void) {
    CHECK_EQ_STR("(expr (tuple 1 2.5 \"ab\" True False None ... (list 1 2) (dict 1 2 (** d) (** d)) "
                 "(set 1 2) (tuple) (tuple 1) (list) (dict)))\n",
                 P("(1, 2.5, 'a' \"b\", True, False, None, ..., [1, 2], {1: 2, **d}, {1, 2}, (), "
                   "(1,), [], {})"));
    CHECK_EQ_STR("(expr (tuple 255 1000000 0.001 1.0 5 0.5))\n", P("0xff, 1_000_000, 1e-3, 1., 0b101, .5"));
    CHECK_EQ_STR("(expr \"doc\\nstring\")\n", P("\"\"\"doc\nstring\"\"\"\n"));
    CHECK_EQ_STR("(expr \"a\\\\nb\")\n", P("r'a\\n' 'b'"));
    /* decoded NUL bytes are kept (len), big unsigned literals are flagged */
    CHECK_EQ_STR("(expr \"a\\x00b\\x00\")\n", P("'a\\0b' '\\x00'"));
    CHECK_EQ_STR("(expr (call (. T uint64) 18446744073709551615 9223372036854775807))\n",
                 P("T.uint64(0xFFFFFFFFFFFFFFFF, 9223372036854775807)"));
    {
        AstStmt *s = S("'a\\0b'");
        CHECK(s && s->value->len == 3 && s->value->str[1] == 0 && s->value->str[3] == 0);
        s = S("x = 18446744073709551615");
        CHECK(s && s->value->ival == -1 && s->value->ival_u64 == 1);
    }
    {
        AstStmt *s = S("x = f'{a}' 'b'");
        CHECK(s && s->value->kind == AST_STR && s->value->fstring == 1);
        CHECK(s && !strcmp(s->value->str, "{a}b"));
        AstStmt *t = S("x = 'a' 'b'");
        CHECK(t && t->value->fstring == 0);
    }
    CHECK_EQ_STR("(expr (list (* a) b))\n", P("[*a, b]"));
    CHECK_EQ_STR("(expr (tuple (* a) b))\n", P("*a, b"));
    CHECK_EQ_STR("(expr (dict (** a) (** a) (ifexp 0 \"k\" k) 1))\n", P("{**a, 'k' if 0 else k: 1}"));
    /* comprehensions are opaque: kind, element, first iterable */
    CHECK_EQ_STR("(expr (comp list (* x 2) (call range n)))\n", P("[x * 2 for x in range(n) if x if x > 1]"));
    CHECK_EQ_STR("(expr (comp dict k (call (. d items))))\n", P("{k: v for k, v in d.items()}"));
    CHECK_EQ_STR("(expr (comp set x s))\n", P("{x for x in s}"));
    CHECK_EQ_STR("(expr (call sum (comp gen x y)))\n", P("sum(x for x in y)"));
    CHECK_EQ_STR("(expr (comp gen (tuple a b) c))\n", P("((a, b) for a, b in c for d in a)"));
    CHECK_EQ_STR("(expr (comp list x (ifexp c a b)))\n", P("[x for x in (a if c else b)]"));
}

static void test_parens_flag(void) {
    AstStmt *s = S("x = (a)");
    CHECK(s && s->value->kind == AST_NAME && s->value->parens == 1);
    s = S("x = a, b");
    CHECK(s && s->value->kind == AST_TUPLE && s->value->parens == 0 && s->value->n == 2);
    s = S("x = (a, b)");
    CHECK(s && s->value->kind == AST_TUPLE && s->value->parens == 1);
    s = S("x = (a + b) * c");
    CHECK(s && s->value->a->kind == AST_BINOP && s->value->a->parens == 1 && s->value->parens == 0);
    s = S("x = ()");
    CHECK(s && s->value->kind == AST_TUPLE && s->value->n == 0 && s->value->parens == 1);
}

static void test_trailers(void) {
    CHECK_EQ_STR("(expr ([] A (tuple bz (: (* bx M) (* (+ bx 1) M) _) by (: _ _ _))))\n",
                 P("A[bz, bx*M:(bx+1)*M, by, :]"));
    CHECK_EQ_STR("(expr ([] A (: _ _ 2)))\n", P("A[::2]"));
    CHECK_EQ_STR("(expr ([] A (: 1 _ _)))\n", P("A[1:]"));
    CHECK_EQ_STR("(expr ([] A (: _ (u- 1) _)))\n", P("A[:-1]"));
    CHECK_EQ_STR("(expr ([] A (: a b c)))\n", P("A[a:b:c]"));
    CHECK_EQ_STR("(expr ([] A (tuple (: _ _ _) None)))\n", P("A[:, None]"));
    CHECK_EQ_STR("(expr ([] A (tuple ... 0)))\n", P("A[..., 0]"));
    CHECK_EQ_STR("(expr ([] A (tuple i)))\n", P("A[i,]"));
    CHECK_EQ_STR("(expr ([] ([] A i) j))\n", P("A[i][j]"));
    CHECK_EQ_STR("(expr (call f a (* b) k=1 (** c)))\n", P("f(a, *b, k=1, **c)"));
    CHECK_EQ_STR("(expr (call f a k=(lambda (params) 0)))\n", P("f(a, k=lambda: 0,)"));
    CHECK_EQ_STR("(expr ([] (. (call (call f a) b) c) d))\n", P("f(a)(b).c[d]"));
    CHECK_EQ_STR("(expr (call (. (. T language) copy) ([] A (tuple (* by M) 0)) A_s))\n",
                 P("T.language.copy(A[by * M, 0], A_s)"));
    AstStmt *s = S("f(a, b=1, *c, d=2)");
    CHECK(s && s->value->n == 4 && s->value->kwnames[0] == NULL &&
          !strcmp(s->value->kwnames[1], "b") && s->value->kwnames[2] == NULL &&
          s->value->items[2]->kind == AST_STARRED && !strcmp(s->value->kwnames[3], "d"));
}

/* ---- statements ----------------------------------------------------------------- */

static void test_assignments(void) {
    CHECK_EQ_STR("(= x 1)\n", P("x = 1\n"));
    CHECK_EQ_STR("(= a b c)\n", P("a = b = c"));
    CHECK_EQ_STR("(= (tuple a b) (tuple b a))\n", P("a, b = b, a"));
    CHECK_EQ_STR("(= (tuple a (* b)) x)\n", P("a, *b = x"));
    CHECK_EQ_STR("(= (tuple ([] (. x y) i) (tuple p q)) (call f))\n", P("x.y[i], (p, q) = f()"));
    CHECK_EQ_STR("(= (list a b) (tuple a b) c)\n", P("[a, b] = a, b = c"));
    static const char *ops[] = {"+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "@"};
    for (int i = 0; i < TS_COUNTOF(ops); i++) {
        char src[64], want[64];
        snprintf(src, sizeof src, "x[i] %s= y", ops[i]);
        snprintf(want, sizeof want, "(%s= ([] x i) y)\n", ops[i]);
        CHECK_EQ_STR(want, P(src));
        AstStmt *s = S(src);
        CHECK(s && s->kind == AST_AUGASSIGN && !strcmp(ast_op_name(s->op), ops[i]));
    }
    CHECK_EQ_STR("(ann x int 5)\n", P("x: int = 5"));
    CHECK_EQ_STR("(ann A (call (. T Tensor) (tuple M K) dtype))\n", P("A: T.Tensor((M, K), dtype)"));
    CHECK_EQ_STR("(ann (. self x) ([] list int))\n", P("self.x: list[int]"));
    AstStmt *s = S("A: T.Tensor((M, K), dtype)");
    CHECK(s && s->kind == AST_ANNASSIGN && s->value == NULL && s->target->kind == AST_NAME);
}

static void test_compound(void) {
    CHECK_EQ_STR("(if a\n  (pass)\n  else\n  (if b\n    (= x 1)\n    else\n    (= y 2)))\n",
                 P("if a:\n    pass\nelif b:\n    x = 1\nelse:\n    y = 2\n"));
    CHECK_EQ_STR("(for (tuple i j) (call (. T Parallel) M N)\n  (= ([] C (tuple i j)) 0)\n  else\n"
                 "  (pass))\n",
                 P("for i, j in T.Parallel(M, N):\n    C[i, j] = 0\nelse:\n    pass\n"));
    CHECK_EQ_STR("(for x (tuple a b)\n  (pass))\n", P("for x in a, b: pass"));
    CHECK_EQ_STR("(while (cmp i < n)\n  (+= i 1)\n  (if i\n    (break))\n  (continue))\n",
                 P("while i < n:\n    i += 1\n    if i: break\n    continue\n"));
    CHECK_EQ_STR("(while 1\n  (pass)\n  else\n  (pass))\n", P("while 1:\n pass\nelse:\n pass\n"));
    CHECK_EQ_STR("(= a 1)\n(= b 2)\n(if x\n  (= y 1)\n  (= z 2))\n",
                 P("a = 1; b = 2;\nif x: y = 1; z = 2\n"));
    /* comments and blank lines anywhere in blocks */
    CHECK_EQ_STR("(def f (params)\n  (= x 1)\n  (return x))\n",
                 P("def f():\n\n    # c\n    x = 1  # d\n\n\n        # e\n    return x\n# end"));
}

static void test_with(void) {
    CHECK_EQ_STR("(with (as (call (. T Kernel) (call (. T ceildiv) N bn) threads=128) (tuple bx by))\n"
                 "  (pass))\n",
                 P("with T.Kernel(T.ceildiv(N, bn), threads=128) as (bx, by):\n    pass\n"));
    CHECK_EQ_STR("(with (as (call (. T Kernel) 8) bx)\n  (pass))\n",
                 P("with T.Kernel(8) as bx:\n    pass\n"));
    CHECK_EQ_STR("(with (as a x) b (as c (. y z))\n  (pass))\n", P("with a as x, b, c as y.z:\n pass"));
    CHECK_EQ_STR("(with (as (call open p) f) (as (call g) h)\n  (pass))\n",
                 P("with (open(p) as f,\n      g() as h,):\n pass"));
    CHECK_EQ_STR("(with a b\n  (pass))\n", P("with (a, b):\n pass"));
    CHECK_EQ_STR("(with (as a x)\n  (pass))\n", P("with (a) as x:\n pass"));
    CHECK_EQ_STR("(with (as (call f) (list a b))\n  (pass))\n", P("with f() as [a, b]: pass"));
    AstStmt *s = S("with T.Kernel(1, 2) as (bx, by), T.Scope() :\n    pass\n");
    CHECK(s && s->kind == AST_WITH && s->ntargets == 2);
    CHECK(s && s->targets[0]->kind == AST_TUPLE && s->targets[0]->parens == 1 &&
          s->targets[0]->n == 2 && s->targets[1] == NULL);
}

static void test_defs(void) {
    CHECK_EQ_STR("(def f (params a (b : int) (c = 1) *args d (e : float = 2.0) **kw) -> (. T int32)\n"
                 "  (return a))\n",
                 P("def f(a, b: int, c=1, *args, d, e: float = 2.0, **kw) -> T.int32:\n    return a\n"));
    CHECK_EQ_STR("(def g (params a / b * c)\n  (pass))\n", P("def g(a, /, b, *, c):\n pass"));
    CHECK_EQ_STR("(def h (params)\n  (return))\n", P("def h(): return"));
    CHECK_EQ_STR("(def h (params (a = (tuple 1 2)) (*b : int) (**c : str))\n  (pass))\n",
                 P("def h(a=(1, 2), *b: int, **c: str,):\n  pass"));
    {
        AstStmt *s = S("def g(a, /, b, *, c, d=1, **k): pass");
        CHECK(s && s->nparams == 5);
        CHECK(s && s->params[0].posonly == 1 && s->params[1].posonly == 0);
        CHECK(s && s->params[1].kwonly == 0 && s->params[2].kwonly == 1 &&
              s->params[3].kwonly == 1 && s->params[4].star == 2 && s->params[4].kwonly == 0);
        CHECK(s && s->params[3].dflt && s->params[3].dflt->ival == 1);
    }
    CHECK_EQ_STR("(def k (@ (call (. tilelang jit) out_idx=(list 3) pass_configs=(dict (. (. tilelang "
                 "PassConfigKey) TL_ENABLE_FAST_MATH) True))) (@ (. T prim_func)) (params)\n  (pass))\n",
                 P("@tilelang.jit(out_idx=[3], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: "
                   "True})\n@T.prim_func\ndef k():\n    pass\n"));
    CHECK_EQ_STR("(def outer (params M)\n  (def inner (@ (. T prim_func)) (params (A : (call (. T Tensor) "
                 "(tuple M) float16)))\n    (pass))\n  (return inner))\n",
                 P("def outer(M):\n    @T.prim_func\n    def inner(A: T.Tensor((M,), float16)):\n"
                   "        pass\n    return inner\n"));
    CHECK_EQ_STR("(class A (@ dataclass)\n  (= x 1)\n  (def f (params self)\n    (return (. self x))))\n",
                 P("@dataclass\nclass A(B, metaclass=M):\n    x = 1\n    def f(self):\n"
                   "        return self.x\n"));
    CHECK_EQ_STR("(class E\n  (pass))\n", P("class E: pass"));
    CHECK_EQ_STR("(def g (params)\n  (expr (yield))\n  (= x (yield 1))\n  (expr (yield y))\n"
                 "  (= z (yield (tuple a b))))\n",
                 P("def g():\n    yield\n    x = yield 1\n    yield from y\n    z = (yield a, b)\n"));
}

static void test_simple(void) {
    CHECK_EQ_STR("(import a.b.c)\n(import d as e)\n(from . import x)\n(from ..m.n import p as q)\n"
                 "(from ..m.n import r)\n(from tilelang import *)\n(from ...x import y)\n",
                 P("import a.b.c, d as e\nfrom . import x\nfrom ..m.n import (p as q, r,)\n"
                   "from tilelang import *\nfrom ...x import y\n"));
    {
        const char *msg;
        const char *t = "import a.b.c, tilelang.language as T\nfrom m import x, y as z\n";
        AstModule *m = strict(t, strlen(t), &msg);
        CHECK(m && m->body.n == 4);
        if (m && m->body.n == 4) {
            AstStmt **v = m->body.v;
            CHECK(!strcmp(v[0]->module, "a.b.c") && !v[0]->member && v[0]->alias == NULL &&
                  v[0]->import_as == 0);
            CHECK(!strcmp(v[1]->module, "tilelang.language") && !strcmp(v[1]->alias, "T") &&
                  v[1]->import_as == 1);
            CHECK(!strcmp(v[2]->module, "m") && !strcmp(v[2]->member, "x") &&
                  !strcmp(v[2]->alias, "x") && v[2]->import_as == 0);
            CHECK(!strcmp(v[3]->member, "y") && !strcmp(v[3]->alias, "z") && v[3]->import_as == 1);
        }
    }
    CHECK_EQ_STR("(def f (params)\n  (global a b)\n  (global c))\n",
                 P("def f():\n    global a, b\n    nonlocal c\n"));
    CHECK_EQ_STR("(assert (cmp x > 0) \"msg\")\n(raise (call ValueError \"bad\"))\n(raise)\n"
                 "(del a ([] b 0))\n(assert x)\n",
                 P("assert x > 0, \"msg\"\nraise ValueError(\"bad\") from e\nraise\ndel a, b[0]\n"
                   "assert x\n"));
    CHECK_EQ_STR("(try\n  (= x 1))\n(try\n  (pass))\n",
                 P("try:\n    x = 1\nexcept (A, B) as e:\n    pass\nexcept:\n    pass\nelse:\n"
                   "    y = 1\nfinally:\n    z = 1\ntry:\n  pass\nfinally:\n  pass\n"));
    CHECK_EQ_STR("(= f (lambda (params x (y = 1) *a **k) (+ x y)))\n(= g (lambda (params) 0))\n"
                 "(= h (lambda (params * k) k))\n",
                 P("f = lambda x, y=1, *a, **k: x + y\ng = lambda: 0\nh = lambda *, k: k\n"));
    CHECK_EQ_STR("(return (tuple a b))\n(pass)\n(break)\n(continue)\n(expr x)\n",
                 P("return a, b\npass\nbreak\ncontinue\nx"));
    /* soft keywords are names */
    CHECK_EQ_STR("(= match 1)\n(expr (call match x))\n(= type 2)\n", P("match = 1\nmatch(x)\ntype = 2\n"));
}

static void test_locations(void) {
    AstStmt *s = S("x = foo.bar(a + b)\n");
    CHECK(s && s->loc.line == 1 && s->loc.col == 1);
    if (!s) return;
    AstExpr *call = s->value;
    CHECK_EQ_INT(AST_CALL, call->kind);
    CHECK_EQ_INT(9, call->loc.col);        /* the callee's loc: the attribute name */
    CHECK_EQ_INT(9, call->a->loc.col);     /* ATTR: the name after the dot */
    CHECK_EQ_INT(5, call->a->a->loc.col);  /* foo */
    CHECK_EQ_INT(15, call->items[0]->loc.col); /* BINOP: the operator */
    s = S("\n\nif a:\n    pass\nelif b:\n    pass\n");
    CHECK(s && s->loc.line == 3 && s->orelse.n == 1 && s->orelse.v[0]->loc.line == 5);
    s = S("@d\ndef f(x): pass");
    CHECK(s && s->loc.line == 2 && s->params[0].loc.col == 7);
}

/* ---- errors ---------------------------------------------------------------------- */

static void test_errors(void) {
    CHECK_EQ_STR("t.py:1:5: error: expected ':' after 'if' condition, found end of line\n"
                 "    if x\n"
                 "        ^\n",
                 E("if x\n    pass\n"));
    CHECK_EQ_INT(TS_ERR_SYNTAX, last_status);
    CHECK_EQ_STR("t.py:2:3: error: unexpected indent\n"
                 "      y = 2\n"
                 "      ^\n",
                 E("x = 1\n  y = 2\n"));
    CHECK_CONTAINS(E("if x:\npass\n"), "t.py:2:1: error: expected an indented block after 'if' statement");
    CHECK_CONTAINS(E("def f(a):\nreturn a\n"),
                   "t.py:2:1: error: expected an indented block after function definition 'f'");
    CHECK_CONTAINS(E("x = 'abc\n"), "t.py:1:5: error: unterminated string literal");
    CHECK_CONTAINS(E("x = 1 $ 2\n"), "t.py:1:7: error: invalid character '$' (U+0024)");
    CHECK_CONTAINS(E("f(a=1, b)"), "t.py:1:8: error: positional argument follows keyword argument");
    CHECK_CONTAINS(E("f(**a, *b)"), "iterable argument unpacking follows keyword argument unpacking");
    CHECK_CONTAINS(E("x + 1 = 2"), "t.py:1:3: error: cannot assign to expression in assignment");
    CHECK_CONTAINS(E("f() = 1"), "cannot assign to function call in assignment");
    CHECK_CONTAINS(E("for f() in x: pass"), "cannot assign to function call in 'for' target");
    CHECK_CONTAINS(E("with a as 1: pass"), "cannot assign to literal in 'with' target");
    CHECK_CONTAINS(E("def f(a, b, a): pass"), "t.py:1:13: error: duplicate parameter 'a' in 'def f'");
    CHECK_CONTAINS(E("g = lambda x, *x: x"), "duplicate parameter 'x' in lambda");
    CHECK_CONTAINS(E("a, b += 1"), "only a single target (not a tuple) can be used in augmented assignment");
    CHECK_CONTAINS(E("a, b: int"), "only a single target (not a tuple) can be annotated");
    CHECK_CONTAINS(E("def f(a=1, b): pass"), "parameter without a default follows parameter with a default");
    CHECK_CONTAINS(E("def f(*, **k): pass"), "named parameters must follow bare '*'");
    CHECK_CONTAINS(E("def f(*a, *b): pass"), "'*' may appear only once");
    CHECK_CONTAINS(E("def f(/, a): pass"), "at least one parameter must precede '/'");
    CHECK_CONTAINS(E("def f(**k, a): pass"), "parameters cannot follow '**k'");
    CHECK_CONTAINS(E("def f(a b): pass"), "expected ')' to close the parameter list of 'f'");
    CHECK_CONTAINS(E("def (): pass"), "expected a name after 'def'");
    CHECK_CONTAINS(E("for x y: pass"), "expected 'in' after 'for' target, found 'y'");
    CHECK_CONTAINS(E("while x pass"), "expected ':' after 'while' condition");
    CHECK_CONTAINS(E("else:\n pass"), "'else' without a matching statement before it");
    CHECK_CONTAINS(E("x = (1, 2\ny = 3\n"), "expected ')' to close tuple, found 'y'");
    CHECK_CONTAINS(E("x = (1 +\n"), "t.py:1:5: error: '(' was never closed");
    CHECK_CONTAINS(E("x = [1, 2\ndef g(): pass\n"), "t.py:1:5: error: '[' was never closed");
    CHECK_CONTAINS(E("f(a b)"), "expected ',' or ')' in call arguments (call opened at 1:2), found 'b'");
    CHECK_CONTAINS(E("x = a if b"), "expected 'else' after 'if' expression");
    CHECK_CONTAINS(E("x = "), "expected an expression, found end of line");
    CHECK_CONTAINS(E("x = )"), "unmatched ')'");
    CHECK_CONTAINS(E("x = y = "), "expected an expression");
    CHECK_CONTAINS(E("try:\n pass\nx = 1\n"), "expected 'except' or 'finally' block after 'try'");
    CHECK_CONTAINS(E("import a.\n"), "t.py:1:10: error: expected a name after '.' in module name");
    CHECK_CONTAINS(E("from x import a,\n"), "trailing comma not allowed");
    CHECK_CONTAINS(E("import\n"), "expected a name after 'import'");
    CHECK_CONTAINS(E("A[]"), "expected an index or slice inside '[]'");
    CHECK_CONTAINS(E("if x: for y in z: pass"), "a compound statement cannot follow ':' on the same line");
    CHECK_CONTAINS(E("x = b'a' 'b'"), "cannot mix bytes and nonbytes literals");
    CHECK_CONTAINS(E("f(True=1)"), "cannot use keyword 'True' as an argument name");
    CHECK_CONTAINS(E("f(a.b=1)"), "expression cannot be used as a keyword argument name");
    /* unsupported constructs carry TS_ERR_UNSUPPORTED */
    CHECK_CONTAINS(E("(x := 1)"), "t.py:1:4: error: assignment expressions (':=') are not supported");
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED, last_status);
    CHECK_CONTAINS(E("x = 1j"), "complex (imaginary) literals are not supported");
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED, last_status);
    CHECK_CONTAINS(E("async def f(): pass"), "'async' statements are not supported");
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED, last_status);
    CHECK_CONTAINS(E("match x:\n    case 1:\n        pass\n"), "'match' statements are not supported");
    CHECK_CONTAINS(E("x = await y"), "'await' is not supported");
    CHECK_CONTAINS(E("def f[T](x): pass"), "type parameter lists are not supported");
    CHECK_CONTAINS(E("x = 99999999999999999999"), "integer literal too large for 64 bits");
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED, last_status);
    /* deep nesting fails cleanly */
    {
        char *buf = malloc(20000);
        strcpy(buf, "x = ");
        for (int i = 0; i < 5000; i++) strcat(buf, "-");
        strcat(buf, "1");
        CHECK_CONTAINS(E(buf), "too many nested expressions or blocks");
        CHECK_EQ_INT(TS_ERR_UNSUPPORTED, last_status);
        strcpy(buf, "x = ");
        for (int i = 0; i < 3000; i++) strcat(buf, "not ");
        strcat(buf, "1");
        CHECK_CONTAINS(E(buf), "too many nested");
        strcpy(buf, "x = ");
        for (int i = 0; i < 150; i++) strcat(buf, "[");
        for (int i = 0; i < 150; i++) strcat(buf, "]");
        CHECK(strncmp(P(buf), "(= x (list (list", 16) == 0); /* 150 levels still parse */
        strcpy(buf, "x = ");
        for (int i = 0; i < 2000; i++) strcat(buf, "a**");
        strcat(buf, "1");
        CHECK_CONTAINS(E(buf), "too many nested");
        free(buf);
    }
}

/* ---- recovery ---------------------------------------------------------------------- */

static const char *recovery_src =
    "import tilelang.language as T\n"                     /* 1 */
    "\n"
    "def host(x):\n"                                      /* 3 */
    "    if (n := len(x)) > 3:\n"                         /* 4 */
    "        return n\n"
    "\n"
    "@tilelang.jit\n"                                     /* 7 */
    "def broken(A):\n"
    "    x = [1, 2\n"                                     /* 9 */
    "    return x\n"
    "\n"
    "def kernel(A):\n"                                    /* 12 */
    "    return A\n"
    "\n"
    "class C:\n"                                          /* 15 */
    "    async def f(self): pass\n"
    "\n"
    "x = 1 +\n"                                           /* 18 */
    "y = 2\n"
    "if a:\n"                                             /* 20 */
    "    $\n"
    "elif b:\n"
    "    pass\n"
    "else:\n"
    "    pass\n"
    "def last(): pass\n"                                  /* 26 */
    "  unexpected = 1\n"                                  /* 27 */
    "@deco(\n"                                            /* 28 */
    "def after_deco(): pass\n"
    "\n"
    "@deco\n"                                             /* 31 */
    "@deco2(1)\n"
    "def bad_body():\n"
    "    return )\n"
    "def final(a, b):\n"                                  /* 35 */
    "    return a + b\n";

static void test_recovery(void) {
    AstModule *m = module(recovery_src);
    const char *want_kinds = "IUUDUUAUDUUUD";
    const char *want_names[] = {NULL, "host", "broken", "kernel", "C", "x", NULL, NULL, "last",
                                NULL, "after_deco", "bad_body", "final"};
    CHECK_EQ_INT((int)strlen(want_kinds), m->body.n);
    if (m->body.n != (int)strlen(want_kinds)) {
        fprintf(stderr, "%s", dump_module(m));
        return;
    }
    for (int i = 0; i < m->body.n; i++) {
        AstStmt *s = m->body.v[i];
        char k = s->kind == AST_IMPORT ? 'I' : s->kind == AST_UNPARSED ? 'U'
                 : s->kind == AST_DEF  ? 'D' : s->kind == AST_ASSIGN ? 'A' : '?';
        CHECK_EQ_INT(want_kinds[i], k);
        if (want_names[i]) CHECK_EQ_STR(want_names[i], s->name);
        else CHECK(s->name == NULL || s->kind != AST_UNPARSED);
    }
    AstStmt **v = m->body.v;
    /* the full diagnostic: location, message, source line, caret */
    CHECK_EQ_STR("t.py:4:11: error: assignment expressions (':=') are not supported\n"
                 "        if (n := len(x)) > 3:\n"
                 "              ^\n",
                 v[1]->error);
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED, v[1]->error_status);
    CHECK_EQ_INT(3, v[1]->loc.line);
    CHECK_CONTAINS(v[2]->error, "t.py:10:5: error: expected ']' to close list, found 'return'");
    CHECK_EQ_INT(TS_ERR_SYNTAX, v[2]->error_status);
    CHECK_EQ_INT(7, v[2]->loc.line); /* the statement starts at its decorator */
    CHECK_EQ_INT(12, v[3]->loc.line);
    CHECK_CONTAINS(v[4]->error, "t.py:16:5: error: 'async' statements are not supported");
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED, v[4]->error_status);
    CHECK_CONTAINS(v[5]->error, "t.py:18:8: error: expected an expression, found end of line");
    CHECK_CONTAINS(v[7]->error, "t.py:21:5: error: invalid character '$'");
    CHECK_EQ_INT(26, v[8]->loc.line);
    CHECK_CONTAINS(v[9]->error, "t.py:27:3: error: unexpected indent");
    CHECK_CONTAINS(v[10]->error, "t.py:28:6: error: '(' was never closed");
    CHECK_CONTAINS(v[11]->error, "t.py:34:12: error: unmatched ')'");
    CHECK_EQ_INT(35, v[12]->loc.line);
    CHECK_EQ_INT(2, v[12]->nparams);

    /* the dump shows the first line of each diagnostic */
    CHECK_CONTAINS(dump_module(m), "(unparsed host \"t.py:4:11: error: assignment expressions "
                                   "(':=') are not supported\")\n(unparsed broken ");
    /* strict parsing stops at the first of them */
    CHECK_CONTAINS(E(recovery_src), "t.py:4:11: error: assignment expressions");
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED, last_status);

    /* an empty file and a file of only comments */
    CHECK_EQ_INT(0, module("")->body.n);
    CHECK_EQ_INT(0, module("# nothing\n\n")->body.n);
    /* an unterminated docstring swallows the rest: one UNPARSED, no crash */
    AstModule *u = module("def f():\n    \"\"\"doc\n    return 1\ndef g(): pass\n");
    CHECK(u->body.n == 1 && u->body.v[0]->kind == AST_UNPARSED &&
          !strcmp(u->body.v[0]->name, "f"));
    CHECK_CONTAINS(u->body.v[0]->error, "t.py:2:5: error: unterminated triple-quoted string literal");
}

/* ---- a kernel file (written for this test) ----------------------------------------- */

static const char *kernel_src =
    "\"\"\"Tiled GEMM with a host driver: parser test input.\"\"\"\n"
    "import argparse\n"
    "import tilelang\n"
    "import tilelang.language as T\n"
    "from tilelang.profiler import do_bench as bench, Profiler\n"
    "\n"
    "\n"
    "@tilelang.jit(out_idx=[-1], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})\n"
    "def gemm(M, N, K, block_M=128, block_N=128, block_K=32, dtype=\"float16\", accum=\"float\"):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),\n"
    "             C: T.Tensor((M, N), dtype)):\n"
    "        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):\n"
    "            A_s = T.alloc_shared((block_M, block_K), dtype)\n"
    "            B_s = T.alloc_shared((block_K, block_N), dtype)\n"
    "            C_l = T.alloc_fragment((block_M, block_N), accum)\n"
    "            T.clear(C_l)\n"
    "            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):\n"
    "                T.copy(A[by * block_M, ko * block_K], A_s)\n"
    "                for k, j in T.Parallel(block_K, block_N):\n"
    "                    B_s[k, j] = B[ko * block_K + k, bx * block_N + j]\n"
    "                T.gemm(A_s, B_s, C_l, transpose_B=False)\n"
    "            for i, j in T.Parallel(block_M, block_N):\n"
    "                C_l[i, j] = T.max(C_l[i, j], 0) if accum == \"float\" else -C_l[i, j] ** 2\n"
    "            T.copy(C_l, C[by * block_M:(by + 1) * block_M, bx * block_N:, ::1])\n"
    "\n"
    "    return main\n"
    "\n"
    "\n"
    "class Config:\n"
    "    sizes = {\"small\": (256, 256, 256), 'large': (4096, 4096, 4096)}\n"
    "\n"
    "    def __init__(self, **kw):\n"
    "        self.__dict__.update(kw)\n"
    "\n"
    "\n"
    "def ref_program(A, B):\n"
    "    return A @ B.T\n"
    "\n"
    "\n"
    "def main(argv=None):\n"
    "    parser = argparse.ArgumentParser(description=__doc__)\n"
    "    parser.add_argument(\"--m\", type=int, default=1024)\n"
    "    args, _ = parser.parse_known_args(argv)\n"
    "    kernel = gemm(args.m, args.m, args.m)\n"
    "    try:\n"
    "        import torch\n"
    "    except ImportError:\n"
    "        print(\"no torch\")\n"
    "        return 1\n"
    "    a = torch.randn(args.m, args.m, dtype=torch.float16, device=\"cuda\")\n"
    "    sizes = [s * 2 for s in (128, 256) if s > 64]\n"
    "    lat = bench(lambda: kernel(a, a), warmup=10)\n"
    "    print(f\"latency {lat:.3f} ms, {2 * args.m ** 3 / lat * 1e-9:>8.2f} TFLOPS, {sizes!r}\")\n"
    "    assert abs(lat) >= 0, \\\n"
    "        \"negative time\"\n"
    "    return 0\n"
    "\n"
    "\n"
    "if __name__ == \"__main__\":\n"
    "    raise SystemExit(main())\n";

static void test_kernel_file(void) {
    AstModule *m = module(kernel_src);
    int unparsed = 0;
    for (int i = 0; i < m->body.n; i++) unparsed += m->body.v[i]->kind == AST_UNPARSED;
    CHECK_EQ_INT(0, unparsed);
    CHECK_EQ_INT(11, m->body.n);
    if (m->body.n != 11) return;
    AstStmt *g = m->body.v[6];
    CHECK(g->kind == AST_DEF && !strcmp(g->name, "gemm") && g->ndecorators == 1 && g->nparams == 8);
    AstStmt *inner = g->body.v[0];
    CHECK(inner->kind == AST_DEF && !strcmp(inner->name, "main") && inner->nparams == 3);
    AstStmt *w = inner->body.v[0];
    CHECK(w->kind == AST_WITH && w->ntargets == 1 && w->targets[0]->kind == AST_TUPLE);
    CHECK_EQ_INT(7, w->body.n);
    const char *d = dump_module(m);
    CHECK_CONTAINS(d, "(= ([] B_s (tuple k j)) ([] B (tuple (+ (* ko block_K) k) (+ (* bx block_N) j))))");
    CHECK_CONTAINS(d, "(= ([] C_l (tuple i j)) (ifexp (cmp accum == \"float\") (call (. T max) "
                      "([] C_l (tuple i j)) 0) (u- (** ([] C_l (tuple i j)) 2))))");
    CHECK_CONTAINS(d, "(expr (call (. T copy) C_l ([] C (tuple (: (* by block_M) (* (+ by 1) block_M) _) "
                      "(: (* bx block_N) _ _) (: _ _ 1)))))");
    CHECK_CONTAINS(d, "(from tilelang.profiler import do_bench as bench)\n"
                      "(from tilelang.profiler import Profiler)\n");
}

/* ---- random expressions against an independent printer ------------------------------ */

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}
static int rng(uint64_t *s, int n) { return (int)(rng_next(s) % (uint64_t)n); }

typedef struct RNode {
    int kind;             /* 0 leaf, 1 binop, 2 unary, 3 boolop, 4 compare, 5 ifexp, 6 call */
    int op;               /* index into the kind's table */
    const char *leaf;     /* leaf text */
    struct RNode *k[4];   /* children (compare: up to 4 operands) */
    int nk;
} RNode;

/* Python precedence levels (higher binds tighter). */
static const struct { const char *s; int prec; } rbin[] = {
    {"|", 6}, {"^", 7}, {"&", 8}, {"<<", 9}, {">>", 9}, {"+", 10}, {"-", 10}, {"*", 11},
    {"@", 11}, {"/", 11}, {"//", 11}, {"%", 11}, {"**", 13}};
static const char *const runary[] = {"-", "+", "~", "not"};
static const char *const rcmp[] = {"<", ">", "==", ">=", "<=", "!=", "in", "not in", "is", "is not"};
static const char *const rcmp_dump[] = {"<", ">", "==", ">=", "<=", "!=", "in", "not-in", "is", "is-not"};
static const char *const rleaves[] = {"a", "b", "c", "x1", "0", "7", "42", "True", "None"};

static RNode *rgen(uint64_t *s, int depth) {
    RNode *n = TS_NEW(&arena, RNode);
    n->kind = depth <= 0 ? 0 : rng(s, 7);
    switch (n->kind) {
    case 0: n->leaf = rleaves[rng(s, TS_COUNTOF(rleaves))]; break;
    case 1: case 3:
        n->op = n->kind == 1 ? rng(s, TS_COUNTOF(rbin)) : rng(s, 2);
        n->k[0] = rgen(s, depth - 1);
        n->k[1] = rgen(s, depth - 1);
        n->nk = 2;
        break;
    case 2: n->op = rng(s, 4); n->k[0] = rgen(s, depth - 1); n->nk = 1; break;
    case 4:
        n->nk = 2 + rng(s, 3);
        for (int i = 0; i < n->nk; i++) n->k[i] = rgen(s, depth - 1);
        n->op = rng_next(s) & 0xffff; /* op of pair i: (op >> 4i) % 10 */
        break;
    case 5: case 6:
        n->nk = n->kind == 5 ? 3 : 1;
        for (int i = 0; i < n->nk; i++) n->k[i] = rgen(s, depth - 1);
        break;
    }
    return n;
}

static int rprec(const RNode *n) {
    switch (n->kind) {
    case 1: return rbin[n->op].prec;
    case 2: return n->op == 3 ? 4 : 12;
    case 3: return n->op == 0 ? 3 : 2; /* and, or */
    case 4: return 5;
    case 5: return 1;
    default: return 14;
    }
}

/* Print with the fewest parentheses that keep the tree. */
static void rprint(TsBuf *b, const RNode *n, int min) {
    int p = rprec(n);
    if (p < min) ts_buf_puts(b, "(");
    switch (n->kind) {
    case 0: ts_buf_puts(b, n->leaf); break;
    case 1:
        if (p == 13) { /* ** is right-associative; its left side must be a primary */
            rprint(b, n->k[0], 14);
            ts_buf_puts(b, " ** ");
            rprint(b, n->k[1], 12);
        } else {
            rprint(b, n->k[0], p);
            ts_buf_printf(b, " %s ", rbin[n->op].s);
            rprint(b, n->k[1], p + 1);
        }
        break;
    case 2:
        ts_buf_printf(b, "%s ", runary[n->op]);
        rprint(b, n->k[0], n->op == 3 ? 4 : 12);
        break;
    case 3:
        rprint(b, n->k[0], p);
        ts_buf_puts(b, n->op == 0 ? " and " : " or ");
        rprint(b, n->k[1], p + 1);
        break;
    case 4:
        rprint(b, n->k[0], 6);
        for (int i = 1; i < n->nk; i++) {
            ts_buf_printf(b, " %s ", rcmp[(n->op >> (4 * i)) % 10]);
            rprint(b, n->k[i], 6);
        }
        break;
    case 5:
        rprint(b, n->k[1], 2);
        ts_buf_puts(b, " if ");
        rprint(b, n->k[0], 2);
        ts_buf_puts(b, " else ");
        rprint(b, n->k[2], 1);
        break;
    case 6:
        ts_buf_puts(b, "f(");
        rprint(b, n->k[0], 1);
        ts_buf_puts(b, ")");
        break;
    }
    if (p < min) ts_buf_puts(b, ")");
}

/* The tree in ast_dump_module's notation, written from the tree. */
static void rdump(TsBuf *b, const RNode *n) {
    switch (n->kind) {
    case 0: ts_buf_puts(b, n->leaf); return;
    case 1: case 3:
        ts_buf_printf(b, "(%s ", n->kind == 1 ? rbin[n->op].s : n->op == 0 ? "and" : "or");
        rdump(b, n->k[0]);
        ts_buf_puts(b, " ");
        rdump(b, n->k[1]);
        ts_buf_puts(b, ")");
        return;
    case 2:
        ts_buf_printf(b, "(%s ", n->op == 0 ? "u-" : n->op == 1 ? "u+" : runary[n->op]);
        rdump(b, n->k[0]);
        ts_buf_puts(b, ")");
        return;
    case 4:
        ts_buf_puts(b, "(cmp ");
        rdump(b, n->k[0]);
        for (int i = 1; i < n->nk; i++) {
            ts_buf_printf(b, " %s ", rcmp_dump[(n->op >> (4 * i)) % 10]);
            rdump(b, n->k[i]);
        }
        ts_buf_puts(b, ")");
        return;
    case 5:
        ts_buf_puts(b, "(ifexp ");
        for (int i = 0; i < 3; i++) {
            if (i) ts_buf_puts(b, " ");
            rdump(b, n->k[i]);
        }
        ts_buf_puts(b, ")");
        return;
    case 6:
        ts_buf_puts(b, "(call f ");
        rdump(b, n->k[0]);
        ts_buf_puts(b, ")");
        return;
    }
}

static void test_random_expressions(uint64_t seed) {
    uint64_t s = seed;
    int bad = 0;
    for (int iter = 0; iter < 3000 && bad < 5; iter++) {
        RNode *n = rgen(&s, 1 + rng(&s, 6));
        TsBuf src = {0}, want = {0};
        ts_buf_puts(&src, "v = ");
        rprint(&src, n, 0);
        ts_buf_puts(&src, "\n");
        ts_buf_puts(&want, "(= v ");
        rdump(&want, n);
        ts_buf_puts(&want, ")\n");
        const char *got = P(ts_buf_str(&src));
        if (strcmp(got, ts_buf_str(&want))) {
            bad++;
            fprintf(stderr, "random expression (seed %llu):\n  src  %s  want %s  got  %s\n",
                    (unsigned long long)seed, ts_buf_str(&src), ts_buf_str(&want), got);
        }
        ts_buf_free(&src);
        ts_buf_free(&want);
    }
    CHECK_EQ_INT(0, bad);
}

/* ---- mutation fuzz -------------------------------------------------------------------- */

static int count_lines(const char *s, size_t n) {
    int lines = 1;
    for (size_t i = 0; i < n; i++) lines += s[i] == '\n' || (s[i] == '\r' && (i + 1 == n || s[i + 1] != '\n'));
    return lines;
}

/* Check the invariants of one (possibly broken) source; returns 0 if broken.
 * Adds the number of UNPARSED statements to *unparsed. */
static int fuzz_one(const char *text, size_t len, uint64_t seed, int iter, long *unparsed) {
    TsArena a;
    ts_arena_init(&a);
    TsSource src = {"f.py", text, len};
    AstModule *m = ts_parse_module(&a, &src);
    int ok = 1, lines = count_lines(text, len);
    const AstStmt *first_bad = NULL;
    int prev_line = 0;
    for (int i = 0; i < m->body.n; i++) {
        const AstStmt *s = m->body.v[i];
        if (s->loc.line < 1 || s->loc.line > lines || s->loc.line < prev_line) ok = 0;
        prev_line = s->loc.line;
        if (s->kind == AST_UNPARSED) {
            ++*unparsed;
            if (!first_bad) first_bad = s;
            if (!s->error || !strstr(s->error, ": error: ")) ok = 0;
            if (s->error_status != TS_ERR_SYNTAX && s->error_status != TS_ERR_UNSUPPORTED) ok = 0;
        }
    }
    TsBuf dm = {0};
    ast_dump_module(&dm, m);

    /* strict must fail exactly when the module has an UNPARSED statement,
     * with the same diagnostic; otherwise produce the same tree */
    TsDiag d = {0};
    jmp_buf jb;
    jmp_buf *saved;
    if (ts_try(&d, &jb, &saved)) {
        ts_try_end(&d, saved);
        if (!first_bad || strcmp(first_bad->error, ts_buf_str(&d.msg)) ||
            first_bad->error_status != d.status)
            ok = 0;
    } else {
        AstModule *m2 = ts_parse_strict(&a, &d, &src);
        ts_try_end(&d, saved);
        TsBuf d2 = {0};
        ast_dump_module(&d2, m2);
        if (first_bad || strcmp(ts_buf_str(&dm), ts_buf_str(&d2))) ok = 0;
        ts_buf_free(&d2);
    }
    if (!ok)
        fprintf(stderr, "fuzz invariant broken (seed %llu, iteration %d) on:\n%.*s\n",
                (unsigned long long)seed, iter, (int)len, text);
    ts_buf_free(&d.msg);
    ts_buf_free(&dm);
    ts_arena_free(&a);
    return ok;
}

static void test_fuzz(uint64_t seed) {
    static const char interesting[] = "()[]{}:;,.'\"\\#@=+-*/%<>!~\n\n\n\t    x0_1eEjfrb";
    uint64_t s = seed;
    size_t n0 = strlen(kernel_src) + strlen(recovery_src);
    char *base = malloc(n0 + 1);
    strcpy(base, kernel_src);
    strcat(base, recovery_src);
    char *buf = malloc(2 * n0 + 64);
    int broken = 0, iters = 3000;
    long unparsed_total = 0;
    for (int iter = 0; iter < iters; iter++) {
        memcpy(buf, base, n0 + 1);
        size_t n = n0;
        int muts = 1 + rng(&s, 4);
        for (int k = 0; k < muts && n > 0; k++) {
            size_t pos = (size_t)rng(&s, (int)n);
            switch (rng(&s, 7)) {
            case 0: buf[pos] = interesting[rng(&s, (int)sizeof interesting - 1)]; break;
            case 1: /* insert */
                memmove(buf + pos + 1, buf + pos, n - pos + 1);
                buf[pos] = interesting[rng(&s, (int)sizeof interesting - 1)];
                n++;
                break;
            case 2: { /* delete a run */
                size_t len = 1 + (size_t)rng(&s, 20);
                if (pos + len > n) len = n - pos;
                memmove(buf + pos, buf + pos + len, n - pos - len + 1);
                n -= len;
                break;
            }
            case 3: n = pos; buf[n] = 0; break; /* truncate */
            case 4: buf[pos] = (char)rng(&s, 256); break; /* any byte, NUL included */
            case 5: { /* duplicate a chunk (e.g. a line) elsewhere */
                size_t len = 1 + (size_t)rng(&s, 40);
                if (pos + len > n) len = n - pos;
                if (n + len < 2 * n0 + 32) {
                    size_t at = (size_t)rng(&s, (int)n);
                    char tmp[64];
                    memcpy(tmp, buf + pos, len);
                    memmove(buf + at + len, buf + at, n - at + 1);
                    memcpy(buf + at, tmp, len);
                    n += len;
                }
                break;
            }
            case 6: /* change indentation of a line */
                while (pos > 0 && buf[pos - 1] != '\n') pos--;
                if (buf[pos] == ' ') {
                    memmove(buf + pos, buf + pos + 1, n - pos);
                    n--;
                } else {
                    memmove(buf + pos + 1, buf + pos, n - pos + 1);
                    buf[pos] = ' ';
                    n++;
                }
                break;
            }
        }
        if (!fuzz_one(buf, n, seed, iter, &unparsed_total) && ++broken >= 3) break;
    }
    CHECK_EQ_INT(0, broken);
    /* the base text itself: only the recovery part's statements fail */
    long base_unparsed = 0;
    CHECK(fuzz_one(base, n0, seed, -1, &base_unparsed));
    CHECK_EQ_INT(8, base_unparsed); /* those of recovery_src */
    printf("fuzz: %d mutated files, %.2f unparsed statements per file\n", iters,
           (double)unparsed_total / iters);
    free(buf);
    free(base);
}

int main(void) {
    ts_arena_init(&arena);
    uint64_t seed = (uint64_t)time(NULL) * 2654435761u + (uint64_t)clock();
    const char *env = getenv("TS_TEST_SEED");
    if (env) seed = strtoull(env, NULL, 10);
    if (!seed) seed = 1;
    printf("seed %llu\n", (unsigned long long)seed);
    test_precedence();
    test_atoms();
    test_parens_flag();
    test_trailers();
    test_assignments();
    test_compound();
    test_with();
    test_defs();
    test_simple();
    test_locations();
    test_errors();
    test_recovery();
    test_kernel_file();
    test_random_expressions(seed);
    test_fuzz(seed);
    ts_arena_free(&arena);
    return test_done();
}
