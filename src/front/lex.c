/*
 * lex.c — Python tokenization for the TileScale front end.
 *
 * One pass over the text produces the whole token array (see lex.h for why
 * the parser wants it up front).  The lexer follows the layout rules of the
 * Python language reference ("Lexical analysis"): a logical line ends at a
 * newline outside brackets and not after a backslash; the indentation of
 * each logical line is compared with a stack of open indentation levels and
 * produces INDENT or DEDENT tokens; blank and comment-only lines are
 * invisible.  Tabs advance to the next multiple of 8 and a form feed resets
 * the column, as in CPython.
 *
 * Literals are decoded here so the parser never looks at raw text: integers
 * in all four bases with `_` separators, floats, imaginary numbers (only so
 * the parser can reject them by name), and strings with every prefix.
 * Plain and bytes strings have their escapes decoded; raw strings keep
 * their text; f-strings are kept as raw text (they only occur in host code
 * that is never evaluated), but their end is found by following replacement
 * fields and nested strings, so Python 3.12-style `f"{d["k"]}"` lexes too.
 *
 * Nothing here aborts: every problem becomes a TK_ERROR token with a
 * message and the scan continues after the offending text.  All state lives
 * in a Lexer on the stack; tokens and strings go to the caller's arena.
 */
#include "front/lex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEX_MAX_PARENS 200  /* bracket nesting limit, CPython's */
#define LEX_MAX_INDENT 100  /* indentation levels, CPython's */
#define LEX_MAX_FNEST 32    /* f-strings nested inside replacement fields */

typedef struct LexParen {
    char ch;   /* the opening bracket: ( [ { */
    TsLoc loc; /* where it was opened */
} LexParen;

typedef struct Lexer {
    TsArena *a;              /* where tokens and strings go */
    const TsSource *src;     /* the file */
    const char *p;           /* cursor */
    const char *end;         /* one past the last byte */
    const char *line_start;  /* first byte of the current physical line */
    int line;                /* current physical line, 1-based */
    TS_VEC(LexToken) toks;   /* output */
    int indent[LEX_MAX_INDENT]; /* open indentation columns; indent[0] == 0 */
    int nindent;             /* entries used in indent[] */
    LexParen paren[LEX_MAX_PARENS]; /* open brackets, innermost last */
    int nparen;              /* entries used in paren[] */
    int line_has_tokens;     /* a token was emitted on this logical line */
    int next_bol;            /* the next real token starts a top-level line */
} Lexer;

/* ---- character access ---------------------------------------------------- */

/* The byte k ahead of the cursor, or -1 past the end of the text. */
static int at(const Lexer *L, int k) {
    return L->p + k < L->end ? (unsigned char)L->p[k] : -1;
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_hex(int c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static int is_ident_start(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
static int is_ident_char(int c) { return is_ident_start(c) || is_digit(c); }

static TsLoc loc_of(const Lexer *L, const char *q) {
    return (TsLoc){L->src, L->line, (int)(q - L->line_start) + 1};
}
static TsLoc loc_here(const Lexer *L) { return loc_of(L, L->p); }

/* Step over one line break (\n, \r\n or \r) at the cursor. */
static void skip_newline(Lexer *L) {
    if (at(L, 0) == '\r' && at(L, 1) == '\n') L->p += 2;
    else L->p++;
    L->line++;
    L->line_start = L->p;
}

/* ---- emitting tokens ------------------------------------------------------ */

static LexToken *emit(Lexer *L, LexKind kind, TsLoc loc) {
    LexToken t = {0};
    t.kind = kind;
    t.loc = loc;
    if (kind != TK_NEWLINE && kind != TK_INDENT && kind != TK_DEDENT && kind != TK_EOF) {
        t.bol = L->next_bol;
        L->next_bol = 0;
        L->line_has_tokens = 1;
    }
    ts_vec_push(L->a, L->toks, t);
    return &L->toks.v[L->toks.n - 1];
}

static LexToken *emit_error(Lexer *L, TsLoc loc, TsStatus st, const char *fmt, ...)
    TS_PRINTF(4, 5);
static LexToken *emit_error(Lexer *L, TsLoc loc, TsStatus st, const char *fmt, ...) {
    TsBuf msg = {0}; /* no fixed buffer: a message quoting a long name is never cut */
    va_list ap;
    va_start(ap, fmt);
    ts_buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    LexToken *t = emit(L, TK_ERROR, loc);
    t->text = ts_strdup(L->a, ts_buf_str(&msg));
    t->err = st;
    ts_buf_free(&msg);
    return t;
}

static void emit_newline(Lexer *L, TsLoc loc) {
    emit(L, TK_NEWLINE, loc);
    L->line_has_tokens = 0;
}

/* ---- layout ---------------------------------------------------------------- */

/* Keywords that cannot occur inside an expression: a line starting with one
 * at column 1 while brackets are open means a bracket was left unclosed. */
static int starts_statement_keyword(const Lexer *L) {
    static const char *const kws[] = {"def", "class", "import", "from"};
    if (at(L, 0) == '@') return is_ident_start(at(L, 1));
    for (int i = 0; i < TS_COUNTOF(kws); i++) {
        size_t n = strlen(kws[i]);
        if ((size_t)(L->end - L->p) > n && !memcmp(L->p, kws[i], n) &&
            !is_ident_char(at(L, (int)n)))
            return 1;
    }
    return 0;
}

/*
 * Called at the start of each physical line.  Returns 0 if the line was
 * blank or a comment (it has been skipped, newline included), 1 otherwise
 * with the cursor on the line's first token (or at the end of the text).
 */
static int start_line(Lexer *L) {
    if (L->nparen > 0) {
        /* A continuation line inside brackets: indentation is meaningless,
         * unless the line looks like a new top-level statement. */
        if (!starts_statement_keyword(L)) return 1;
        LexParen *op = &L->paren[L->nparen - 1];
        emit_error(L, op->loc, TS_ERR_SYNTAX, "'%c' was never closed", op->ch);
        L->nparen = 0;
        emit_newline(L, loc_here(L));
    }
    int col = 0;
    const char *q = L->p;
    for (; q < L->end; q++) {
        if (*q == ' ') col++;
        else if (*q == '\t') col = (col / 8 + 1) * 8;
        else if (*q == '\f') col = 0;
        else break;
    }
    L->p = q;
    int c = at(L, 0);
    if (c == -1) return 1;
    if (c == '#' || c == '\n' || c == '\r') {
        while (at(L, 0) != -1 && at(L, 0) != '\n' && at(L, 0) != '\r') L->p++;
        if (at(L, 0) != -1) skip_newline(L);
        return 0;
    }
    TsLoc loc = loc_here(L);
    int top = L->indent[L->nindent - 1];
    if (col > top) {
        if (L->nindent == LEX_MAX_INDENT)
            emit_error(L, loc, TS_ERR_UNSUPPORTED, "too many levels of indentation");
        else {
            L->indent[L->nindent++] = col;
            emit(L, TK_INDENT, loc);
        }
    } else if (col < top) {
        int k = 0;
        while (L->nindent - 1 - k > 0 && L->indent[L->nindent - 1 - k] > col) k++;
        if (L->indent[L->nindent - 1 - k] != col)
            emit_error(L, loc, TS_ERR_SYNTAX,
                       "unindent does not match any outer indentation level");
        for (int i = 0; i < k; i++) emit(L, TK_DEDENT, loc);
        L->nindent -= k;
    }
    L->next_bol = col == 0;
    return 1;
}

/* ---- numbers --------------------------------------------------------------- */

/* Digits accepted by pred, with single underscores between digits.  Returns
 * the number of digits consumed. */
static int scan_digits(Lexer *L, int (*pred)(int)) {
    int n = 0;
    for (;;) {
        if (pred(at(L, 0))) {
            L->p++;
            n++;
        } else if (at(L, 0) == '_' && n > 0 && pred(at(L, 1))) {
            L->p++;
        } else {
            return n;
        }
    }
}

static int is_oct(int c) { return c >= '0' && c <= '7'; }
static int is_bin(int c) { return c == '0' || c == '1'; }
static int is_any_digit(int c) { return is_digit(c); }

static int digit_value(int c) {
    if (is_digit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return c - 'A' + 10;
}

/* Fold the digits of [s, e) (underscores skipped) into *out; 0 on overflow
 * past UINT64_MAX. */
static int fold_int(const char *s, const char *e, int base, uint64_t *out) {
    uint64_t v = 0;
    for (; s < e; s++) {
        if (*s == '_') continue;
        uint64_t d = (uint64_t)digit_value((unsigned char)*s);
        if (v > (UINT64_MAX - d) / (uint64_t)base) return 0;
        v = v * (uint64_t)base + d;
    }
    *out = v;
    return 1;
}

/* Skip the rest of a malformed literal so it yields a single error. */
static void skip_ident_chars(Lexer *L) {
    while (is_ident_char(at(L, 0)) || at(L, 0) == '.') L->p++;
}

static void lex_number(Lexer *L) {
    const char *start = L->p;
    TsLoc loc = loc_here(L);
    int c1 = at(L, 1) | 0x20;
    if (at(L, 0) == '0' && (c1 == 'x' || c1 == 'o' || c1 == 'b')) {
        int base = c1 == 'x' ? 16 : c1 == 'o' ? 8 : 2;
        const char *what = base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary";
        L->p += 2;
        if (at(L, 0) == '_') L->p++; /* 0x_ff is allowed */
        const char *ds = L->p;
        int n = scan_digits(L, base == 16 ? is_hex : base == 8 ? is_oct : is_bin);
        const char *de = L->p;
        if (is_ident_char(at(L, 0))) {
            int bad = at(L, 0);
            skip_ident_chars(L);
            if (is_digit(bad))
                emit_error(L, loc, TS_ERR_SYNTAX, "invalid digit '%c' in %s literal", bad, what);
            else
                emit_error(L, loc, TS_ERR_SYNTAX, "invalid %s literal", what);
            return;
        }
        if (n == 0) {
            emit_error(L, loc, TS_ERR_SYNTAX, "invalid %s literal", what);
            return;
        }
        uint64_t v;
        if (!fold_int(ds, de, base, &v)) {
            emit_error(L, loc, TS_ERR_UNSUPPORTED, "integer literal too large for 64 bits");
            return;
        }
        LexToken *t = emit(L, TK_INT, loc);
        t->ival = (int64_t)v;
        t->ival_u64 = v > (uint64_t)INT64_MAX;
        return;
    }

    int is_float = 0;
    scan_digits(L, is_any_digit);
    const char *int_end = L->p;
    if (at(L, 0) == '.') {
        L->p++;
        is_float = 1;
        if (is_digit(at(L, 0))) scan_digits(L, is_any_digit);
    }
    int e = at(L, 0);
    if (e == 'e' || e == 'E') {
        int k = (at(L, 1) == '+' || at(L, 1) == '-') ? 2 : 1;
        if (is_digit(at(L, k))) {
            L->p += k;
            scan_digits(L, is_any_digit);
            is_float = 1;
        }
    }
    int imag = 0;
    if (at(L, 0) == 'j' || at(L, 0) == 'J') {
        L->p++;
        imag = 1;
    }
    if (is_ident_char(at(L, 0))) {
        skip_ident_chars(L);
        emit_error(L, loc, TS_ERR_SYNTAX, "invalid decimal literal");
        return;
    }
    if (is_float || imag) {
        /* strtod wants the digits without underscores. */
        size_t n = (size_t)(L->p - start) - (size_t)imag;
        char *buf = ts_alloc(L->a, n + 1);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (start[i] != '_') buf[k++] = start[i];
        buf[k] = 0;
        LexToken *t = emit(L, imag ? TK_IMAG : TK_FLOAT, loc);
        t->fval = strtod(buf, NULL);
        return;
    }
    /* Decimal integer: "0", "00" are fine, "012" is not (Python 3). */
    if (start[0] == '0') {
        for (const char *s = start; s < int_end; s++)
            if (*s != '0' && *s != '_') {
                emit_error(L, loc, TS_ERR_SYNTAX,
                           "leading zeros in decimal integer literals are not permitted");
                return;
            }
    }
    uint64_t v;
    if (!fold_int(start, int_end, 10, &v)) {
        emit_error(L, loc, TS_ERR_UNSUPPORTED, "integer literal too large for 64 bits");
        return;
    }
    LexToken *t = emit(L, TK_INT, loc);
    t->ival = (int64_t)v;
    t->ival_u64 = v > (uint64_t)INT64_MAX;
}

/* ---- strings --------------------------------------------------------------- */

/* Parse a string prefix spelled by [s, s+n); returns its LEX_STR_* flags or
 * -1 if it is not one (r, u, b, f and the two-letter raw combinations). */
static int string_prefix(const char *s, size_t n) {
    int flags = 0, u = 0;
    if (n == 0 || n > 2) return -1;
    for (size_t i = 0; i < n; i++) {
        int c = s[i] | 0x20;
        int f = c == 'r' ? LEX_STR_RAW : c == 'b' ? LEX_STR_BYTES : c == 'f' ? LEX_STR_F : 0;
        if (c == 'u') u = 1;
        else if (!f || (flags & f)) return -1;
        flags |= f;
    }
    if (u && n != 1) return -1;
    if ((flags & LEX_STR_BYTES) && (flags & LEX_STR_F)) return -1;
    return flags;
}

static const char *scan_string_body(Lexer *L, int flags, int q, int triple, int nest);

/*
 * The expression part of an f-string replacement field: from after `{` to
 * its matching `}`.  Brackets nest; nested string literals are skipped with
 * scan_string_body so their quotes and braces do not count.  A `#` is not a
 * comment here (it is common in format specs: `{x:#x}`).
 */
static const char *scan_fstring_field(Lexer *L, int triple, int nest) {
    int depth = 1;
    for (;;) {
        int c = at(L, 0);
        if (c == -1) return "unterminated f-string";
        if (c == '\n' || c == '\r') {
            if (!triple) return "unterminated f-string";
            skip_newline(L);
            continue;
        }
        /* Any quote here starts a nested string.  Code written before
         * Python 3.12 never reuses the enclosing quote inside a field, so
         * this reading agrees with both language versions. */
        if (c == '\'' || c == '"') {
            /* nested string; its prefix letters were skipped as identifier
             * characters, so look back for them */
            const char *s = L->p;
            while (s > L->line_start && is_ident_char((unsigned char)s[-1])) s--;
            int pf = string_prefix(s, (size_t)(L->p - s));
            if (pf < 0) pf = 0;
            int t = at(L, 1) == c && at(L, 2) == c;
            L->p += t ? 3 : 1;
            if (nest >= LEX_MAX_FNEST) return "f-string: too deeply nested";
            const char *err = scan_string_body(L, pf, c, t, nest + 1);
            if (err) return err;
            continue;
        }
        if (c == '\\') {
            L->p++;
            if (at(L, 0) == '\n' || at(L, 0) == '\r') skip_newline(L);
            else if (at(L, 0) != -1) L->p++;
            continue;
        }
        if (c == '(' || c == '[' || c == '{') depth++;
        if (c == ')' || c == ']' || c == '}') {
            depth--;
            if (depth == 0) {
                L->p++;
                return NULL;
            }
        }
        L->p++;
    }
}

/*
 * Find the end of a string whose opening quote(s) were just consumed.
 * Leaves the cursor after the closing quote(s), or, for an unterminated
 * single-quoted string, on the line break; returns an error message or NULL.
 */
static const char *scan_string_body(Lexer *L, int flags, int q, int triple, int nest) {
    int fstr = flags & LEX_STR_F;
    for (;;) {
        int c = at(L, 0);
        if (c == -1)
            return triple ? "unterminated triple-quoted string literal"
                          : "unterminated string literal";
        if (c == 0) return "source code contains a null byte"; /* raw text stays a C string */
        if (c == '\n' || c == '\r') {
            if (!triple) return "unterminated string literal";
            skip_newline(L);
            continue;
        }
        if (c == '\\') {
            L->p++;
            if (at(L, 0) == '\n' || at(L, 0) == '\r') skip_newline(L);
            else if (at(L, 0) != -1) L->p++;
            continue;
        }
        if (c == q && (!triple || (at(L, 1) == q && at(L, 2) == q))) {
            L->p += triple ? 3 : 1;
            return NULL;
        }
        if (fstr && c == '{') {
            if (at(L, 1) == '{') {
                L->p += 2;
                continue;
            }
            L->p++;
            const char *err = scan_fstring_field(L, triple, nest);
            if (err) return err;
            continue;
        }
        L->p++;
    }
}

/* Append code point cp to out as UTF-8 (bytes strings: the byte itself). */
static size_t put_utf8(char *out, uint32_t cp, int bytes) {
    if (bytes || cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/*
 * Decode the escapes of a plain or bytes literal [s, e) into out (which has
 * room for e - s + 1 bytes: no escape decodes to more bytes than it spells).
 * Returns the decoded length, or -1 with *err set.
 */
static long decode_escapes(const char *s, const char *e, int bytes, char *out,
                           const char **err) {
    size_t n = 0;
    while (s < e) {
        if (*s != '\\' || s + 1 >= e) {
            out[n++] = *s++;
            continue;
        }
        char c = s[1];
        s += 2;
        switch (c) {
        case '\n': break;
        case '\r':
            if (s < e && *s == '\n') s++;
            break;
        case '\\': out[n++] = '\\'; break;
        case '\'': out[n++] = '\''; break;
        case '"': out[n++] = '"'; break;
        case 'a': out[n++] = '\a'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'v': out[n++] = '\v'; break;
        case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
            uint32_t v = (uint32_t)(c - '0');
            for (int i = 0; i < 2 && s < e && is_oct((unsigned char)*s); i++)
                v = v * 8 + (uint32_t)(*s++ - '0');
            if (bytes) v &= 0xFF;
            n += put_utf8(out + n, v, bytes);
            break;
        }
        case 'x': case 'u': case 'U': {
            int digits = c == 'x' ? 2 : c == 'u' ? 4 : 8;
            if (c != 'x' && bytes) { /* not an escape in bytes literals */
                out[n++] = '\\';
                out[n++] = c;
                break;
            }
            uint32_t v = 0;
            for (int i = 0; i < digits; i++) {
                if (s >= e || !is_hex((unsigned char)*s)) {
                    *err = c == 'x' ? "truncated \\xXX escape"
                                    : c == 'u' ? "truncated \\uXXXX escape"
                                               : "truncated \\UXXXXXXXX escape";
                    return -1;
                }
                v = v * 16 + (uint32_t)digit_value((unsigned char)*s++);
            }
            if (v > 0x10FFFF) {
                *err = "illegal Unicode character in \\U escape";
                return -1;
            }
            n += put_utf8(out + n, v, bytes);
            break;
        }
        default: /* unknown escapes (and \N{...}) are kept as written */
            out[n++] = '\\';
            out[n++] = c;
            break;
        }
    }
    out[n] = 0;
    return (long)n;
}

/* A string literal; the cursor is on its opening quote, prefix already
 * consumed (`start` is where the prefix began). */
static void lex_string(Lexer *L, int flags, const char *start) {
    TsLoc loc = loc_of(L, start);
    int q = at(L, 0);
    int triple = at(L, 1) == q && at(L, 2) == q;
    L->p += triple ? 3 : 1;
    const char *body = L->p;
    const char *err = scan_string_body(L, flags, q, triple, 0);
    if (err) {
        LexToken *t = emit_error(L, loc, TS_ERR_SYNTAX, "%s", err);
        /* a string that runs to the end of the file swallowed everything after it */
        t->fatal = at(L, 0) == -1;
        return;
    }
    const char *body_end = L->p - (triple ? 3 : 1);
    size_t rawlen = (size_t)(body_end - body);
    char *raw = ts_strndup(L->a, body, rawlen);
    const char *text = raw;
    long len = (long)rawlen;
    if (!(flags & (LEX_STR_RAW | LEX_STR_F))) {
        char *out = ts_alloc(L->a, rawlen + 1);
        const char *derr = NULL;
        len = decode_escapes(body, body_end, flags & LEX_STR_BYTES, out, &derr);
        if (len < 0) {
            emit_error(L, loc, TS_ERR_SYNTAX, "%s", derr);
            return;
        }
        text = out;
    }
    LexToken *t = emit(L, TK_STR, loc);
    t->text = text;
    t->len = (size_t)len;
    t->raw = raw;
    t->strflags = flags;
}

/* ---- names and operators ----------------------------------------------------- */

/* A spelling with its length, so lookups compare lengths before bytes. */
typedef struct LexWord {
    char s[9]; /* spelling, stored inline so scanning the table stays in cache */
    size_t n;  /* strlen(s) */
} LexWord;
#define W(s) {s, sizeof(s) - 1}

static const LexWord keywords[] = {
    W("False"), W("None"), W("True"), W("and"), W("as"), W("assert"), W("async"),
    W("await"), W("break"), W("class"), W("continue"), W("def"), W("del"), W("elif"),
    W("else"), W("except"), W("finally"), W("for"), W("from"), W("global"), W("if"),
    W("import"), W("in"), W("is"), W("lambda"), W("nonlocal"), W("not"), W("or"),
    W("pass"), W("raise"), W("return"), W("try"), W("while"), W("with"), W("yield")};

/* Longest first, so the first match is the longest. */
static const LexWord operators[] = {
    W("**="), W("//="), W(">>="), W("<<="), W("..."),
    W("**"), W("//"), W(">>"), W("<<"), W("<="), W(">="), W("=="), W("!="), W("->"),
    W(":="), W("+="), W("-="), W("*="), W("/="), W("%="), W("&="), W("|="), W("^="),
    W("@="),
    W("+"), W("-"), W("*"), W("/"), W("%"), W("@"), W("&"), W("|"), W("^"), W("~"),
    W("<"), W(">"), W("("), W(")"), W("["), W("]"), W("{"), W("}"), W(","), W(":"),
    W("."), W(";"), W("=")};
#undef W

static void lex_name(Lexer *L) {
    const char *start = L->p;
    while (is_ident_char(at(L, 0))) L->p++;
    size_t n = (size_t)(L->p - start);
    if (at(L, 0) == '\'' || at(L, 0) == '"') {
        int flags = string_prefix(start, n);
        if (flags >= 0) {
            lex_string(L, flags, start);
            return;
        }
    }
    TsLoc loc = loc_of(L, start);
    int c0 = (unsigned char)start[0];
    int maybe_kw = n >= 2 && n <= 8 && ((c0 >= 'a' && c0 <= 'y') || c0 == 'F' || c0 == 'N' || c0 == 'T');
    for (int i = 0; maybe_kw && i < TS_COUNTOF(keywords); i++) {
        if (keywords[i].n == n && keywords[i].s[0] == start[0] &&
            !memcmp(keywords[i].s, start, n)) {
            emit(L, TK_KEYWORD, loc)->text = keywords[i].s;
            return;
        }
    }
    emit(L, TK_NAME, loc)->text = ts_strndup(L->a, start, n);
}

static char closer_of(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

static void lex_operator(Lexer *L) {
    TsLoc loc = loc_here(L);
    const char *op = NULL;
    size_t left = (size_t)(L->end - L->p);
    int c0 = (unsigned char)L->p[0];
    if (strchr("()[]{},;~", c0) && c0) {
        /* never the start of a longer operator: skip the table */
        for (int i = TS_COUNTOF(operators) - 1; i >= 0; i--)
            if (operators[i].s[0] == c0) {
                op = operators[i].s;
                break;
            }
    } else {
        for (int i = 0; i < TS_COUNTOF(operators); i++) {
            const LexWord *w = &operators[i];
            if (w->s[0] == c0 && left >= w->n && !memcmp(L->p, w->s, w->n)) {
                op = w->s;
                break;
            }
        }
    }
    if (!op) {
        int c = at(L, 0);
        L->p++;
        if (c == 0)
            emit_error(L, loc, TS_ERR_SYNTAX, "source code contains a null byte");
        else if (c > 32 && c < 127)
            emit_error(L, loc, TS_ERR_SYNTAX, "invalid character '%c' (U+%04X)", c, c);
        else
            emit_error(L, loc, TS_ERR_SYNTAX, "invalid non-printable character U+%04X", c);
        return;
    }
    L->p += strlen(op);
    char c = op[0];
    if (op[1] == 0 && (c == '(' || c == '[' || c == '{')) {
        if (L->nparen == LEX_MAX_PARENS) {
            emit_error(L, loc, TS_ERR_UNSUPPORTED, "too many nested parentheses");
            return;
        }
        L->paren[L->nparen++] = (LexParen){c, loc};
    } else if (op[1] == 0 && (c == ')' || c == ']' || c == '}')) {
        if (L->nparen == 0) {
            emit_error(L, loc, TS_ERR_SYNTAX, "unmatched '%c'", c);
            return;
        }
        char open = L->paren[L->nparen - 1].ch;
        if (closer_of(open) != c) {
            emit_error(L, loc, TS_ERR_SYNTAX,
                       "closing parenthesis '%c' does not match opening parenthesis '%c'", c,
                       open);
            /* Resynchronize: close through the nearest matching opener, or
             * just the innermost one if none matches. */
            int k = L->nparen - 1;
            while (k >= 0 && closer_of(L->paren[k].ch) != c) k--;
            L->nparen = k >= 0 ? k : L->nparen - 1;
            return;
        }
        L->nparen--;
    }
    emit(L, TK_OP, loc)->text = op;
}

/* ---- driver ------------------------------------------------------------------ */

LexTokens lex_tokenize(TsArena *a, const TsSource *src) {
    Lexer L0 = {0}, *L = &L0;
    L->a = a;
    L->src = src;
    L->p = src->text;
    L->end = src->text + src->len;
    L->line_start = L->p;
    L->line = 1;
    L->nindent = 1;
    if (L->end - L->p >= 3 && !memcmp(L->p, "\xEF\xBB\xBF", 3)) L->p += 3; /* UTF-8 BOM */

    int bol = 1;
    for (;;) {
        if (bol) {
            bol = 0;
            if (!start_line(L)) {
                bol = 1;
                continue;
            }
        }
        int c = at(L, 0);
        if (c == ' ' || c == '\t' || c == '\f') {
            L->p++;
            continue;
        }
        if (c == -1) break;
        if (c == '#') {
            while (at(L, 0) != -1 && at(L, 0) != '\n' && at(L, 0) != '\r') L->p++;
            continue;
        }
        if (c == '\n' || c == '\r') {
            if (L->nparen == 0 && L->line_has_tokens) emit_newline(L, loc_here(L));
            skip_newline(L);
            bol = 1;
            continue;
        }
        if (c == '\\') {
            if (at(L, 1) == '\n' || at(L, 1) == '\r') {
                L->p++;
                skip_newline(L);
                continue;
            }
            TsLoc loc = loc_here(L);
            L->p++;
            emit_error(L, loc, TS_ERR_SYNTAX,
                       at(L, 0) == -1 ? "unexpected end of file after line continuation character"
                                      : "unexpected character after line continuation character");
            continue;
        }
        if (is_digit(c) || (c == '.' && is_digit(at(L, 1)))) {
            lex_number(L);
            continue;
        }
        if (is_ident_start(c)) {
            lex_name(L);
            continue;
        }
        if (c == '\'' || c == '"') {
            lex_string(L, 0, L->p);
            continue;
        }
        lex_operator(L);
    }

    TsLoc eof = loc_here(L);
    if (L->nparen > 0) {
        LexParen *op = &L->paren[L->nparen - 1];
        emit_error(L, op->loc, TS_ERR_SYNTAX, "'%c' was never closed", op->ch);
    }
    if (L->line_has_tokens) emit_newline(L, eof);
    for (; L->nindent > 1; L->nindent--) emit(L, TK_DEDENT, eof);
    emit(L, TK_EOF, eof);
    return (LexTokens){L->toks.v, L->toks.n};
}

const char *lex_kind_name(LexKind k) {
    static const char *const names[] = {"NAME",    "KEYWORD", "INT",    "FLOAT",
                                        "IMAG",    "STR",     "OP",     "NEWLINE",
                                        "INDENT",  "DEDENT",  "ERROR",  "EOF"};
    return (int)k >= 0 && (int)k < TS_COUNTOF(names) ? names[k] : "?";
}

/* Quote s[0..n) with C escapes. */

void lex_dump(TsBuf *b, const LexTokens *t) {
    for (int i = 0; i < t->n; i++) {
        const LexToken *k = &t->v[i];
        if (i) ts_buf_puts(b, " ");
        ts_buf_puts(b, lex_kind_name(k->kind));
        switch (k->kind) {
        case TK_NAME: case TK_KEYWORD: case TK_OP: case TK_ERROR:
            ts_buf_printf(b, "(%s)", k->text);
            break;
        case TK_INT:
            if (k->ival_u64) ts_buf_printf(b, "(%llu)", (unsigned long long)k->ival);
            else ts_buf_printf(b, "(%lld)", (long long)k->ival);
            break;
        case TK_FLOAT: case TK_IMAG: ts_buf_printf(b, "(%.17g)", k->fval); break;
        case TK_STR:
            ts_buf_puts(b, "(");
            if (k->strflags & LEX_STR_F) ts_buf_puts(b, "f");
            if (k->strflags & LEX_STR_BYTES) ts_buf_puts(b, "b");
            if (k->strflags & LEX_STR_RAW) ts_buf_puts(b, "r");
            ts_buf_put_quoted(b, k->text, k->len);
            ts_buf_puts(b, ")");
            break;
        default: break;
        }
    }
}
