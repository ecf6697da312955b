/*
 * test_lex.c — unit tests of the tokenizer (src/front/lex.c).
 *
 * Most checks compare lex_dump() of a small source with the expected token
 * stream written out by hand from the Python language reference; a few
 * look at token fields (locations, flags, values) directly.  Lexer errors
 * must become TK_ERROR tokens, never aborts.
 */
#include "front/lex.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static TsArena arena;

static LexTokens lex(const char *text) {
    TsSource *src = TS_NEW(&arena, TsSource);
    src->name = "t.py";
    src->text = text;
    src->len = strlen(text);
    return lex_tokenize(&arena, src);
}

/* The dump of text's tokens, kept in the arena. */
static const char *toks(const char *text) {
    LexTokens t = lex(text);
    TsBuf b = {0};
    lex_dump(&b, &t);
    const char *s = ts_strdup(&arena, ts_buf_str(&b));
    ts_buf_free(&b);
    return s;
}

/* The first error token's message, or NULL. */
static const char *first_error(const char *text) {
    LexTokens t = lex(text);
    for (int i = 0; i < t.n; i++)
        if (t.v[i].kind == TK_ERROR) return t.v[i].text;
    return NULL;
}

static void test_basic(void) {
    CHECK_EQ_STR("NAME(x) OP(=) INT(1) NEWLINE EOF", toks("x = 1\n"));
    /* no newline at the end of the file: NEWLINE is still produced */
    CHECK_EQ_STR("NAME(x) OP(=) INT(1) NEWLINE EOF", toks("x = 1"));
    CHECK_EQ_STR("EOF", toks(""));
    CHECK_EQ_STR("EOF", toks("\n\n   \n# only a comment\n"));
    CHECK_EQ_STR("KEYWORD(if) NAME(match) KEYWORD(is) KEYWORD(not) KEYWORD(None) NEWLINE EOF",
                 toks("if match is not None"));
    CHECK_EQ_STR("KEYWORD(True) KEYWORD(False) NAME(true) NAME(_x1) NAME(print) NEWLINE EOF",
                 toks("True False true _x1 print"));
    /* CRLF and a UTF-8 byte order mark */
    CHECK_EQ_STR("NAME(a) NEWLINE NAME(b) NEWLINE EOF", toks("\xEF\xBB\xBF" "a\r\nb\r\n"));
    /* non-ASCII identifiers */
    CHECK_EQ_STR("NAME(\xCE\xB1) OP(=) INT(1) NEWLINE EOF", toks("\xCE\xB1 = 1"));
}

static void test_indent(void) {
    CHECK_EQ_STR("KEYWORD(if) NAME(a) OP(:) NEWLINE INDENT NAME(b) NEWLINE KEYWORD(if) NAME(c) "
                 "OP(:) NEWLINE INDENT NAME(d) NEWLINE DEDENT DEDENT NAME(e) NEWLINE EOF",
                 toks("if a:\n    b\n    if c:\n        d\ne\n"));
    /* blank lines and comment lines (at any indentation) do not count */
    CHECK_EQ_STR("KEYWORD(if) NAME(a) OP(:) NEWLINE INDENT NAME(b) NEWLINE NAME(c) NEWLINE "
                 "DEDENT EOF",
                 toks("if a:\n\n    b\n# x\n          # y\n    c\n"));
    /* dedents at end of file */
    CHECK_EQ_STR("KEYWORD(def) NAME(f) OP(() OP()) OP(:) NEWLINE INDENT KEYWORD(if) NAME(x) "
                 "OP(:) NEWLINE INDENT KEYWORD(pass) NEWLINE DEDENT DEDENT EOF",
                 toks("def f():\n  if x:\n    pass"));
    /* a tab counts to the next multiple of 8 */
    CHECK_EQ_STR("KEYWORD(if) NAME(a) OP(:) NEWLINE INDENT NAME(b) NEWLINE NAME(c) NEWLINE "
                 "DEDENT EOF",
                 toks("if a:\n\tb\n        c\n"));
    /* dedent to a level that was never opened */
    CHECK_EQ_STR("unindent does not match any outer indentation level",
                 first_error("if a:\n    b\n  c\n"));
    {
        /* the error comes before the DEDENT so the enclosing block fails */
        LexTokens t = lex("if a:\n    b\n  c\n");
        int err = -1, ded = -1;
        for (int i = 0; i < t.n; i++) {
            if (t.v[i].kind == TK_ERROR && err < 0) err = i;
            if (t.v[i].kind == TK_DEDENT && ded < 0) ded = i;
        }
        CHECK(err >= 0 && ded > err);
    }
    /* an indented first line is an INDENT (the parser reports it) */
    CHECK_EQ_STR("INDENT NAME(x) NEWLINE DEDENT EOF", toks("  x\n"));
}

static void test_joining(void) {
    /* implicit joining inside brackets: no NEWLINE/INDENT inside */
    CHECK_EQ_STR("NAME(f) OP(() NAME(a) OP(,) NAME(b) OP(,) NAME(c) OP()) NEWLINE NAME(d) NEWLINE EOF",
                 toks("f(a,\n      b,   # comment\n\n  c)\nd\n"));
    CHECK_EQ_STR("NAME(x) OP(=) OP([) INT(1) OP(,) OP({) INT(2) OP(:) INT(3) OP(}) OP(]) NEWLINE EOF",
                 toks("x = [1,\n{2:\n3}]\n"));
    /* backslash continuation */
    CHECK_EQ_STR("NAME(x) OP(=) INT(1) OP(+) INT(2) NEWLINE NAME(y) NEWLINE EOF",
                 toks("x = 1 + \\\n        2\ny\n"));
    CHECK_EQ_STR("unexpected character after line continuation character",
                 first_error("x = 1 \\ 2\n"));
    CHECK_EQ_STR("unexpected end of file after line continuation character",
                 first_error("x = 1 \\"));
}

static void test_strings(void) {
    CHECK_EQ_STR("STR(\"a\") STR(\"b\") STR(\"c\") STR(\"d\") NEWLINE EOF",
                 toks("'a' \"b\" '''c''' \"\"\"d\"\"\""));
    /* prefixes in any case */
    CHECK_EQ_STR("STR(r\"\\\\n\") STR(b\"x\") STR(f\"{x}\") STR(br\"\\\\d\") STR(fr\"{a}\\\\n\") "
                 "STR(\"u\") STR(br\"B\") STR(fr\"y\") NEWLINE EOF",
                 toks("r'\\n' b'x' f'{x}' rb'\\d' Fr'{a}\\n' U'u' BR'B' rF'y'"));
    /* a name that is not a prefix followed by a string is two tokens */
    CHECK_EQ_STR("NAME(x) STR(\"a\") NEWLINE EOF", toks("x'a'"));
    /* escapes decoded in plain strings */
    {
        LexTokens t = lex("'\\n\\t\\x41\\101\\u00e9\\\\\\'\\q\\\nZ'");
        CHECK_EQ_INT(TK_STR, t.v[0].kind);
        CHECK_EQ_STR("\n\tAA\xC3\xA9\\'\\qZ", t.v[0].text);
        LexTokens u = lex("b'\\xff\\u0041'");
        CHECK_EQ_INT(7, (long long)u.v[0].len); /* \xff is one byte; \u is no escape in bytes */
        CHECK_EQ_INT(0xff, (unsigned char)u.v[0].text[0]);
        LexTokens z = lex("'a\\0b'");
        CHECK_EQ_INT(3, (long long)z.v[0].len); /* embedded NUL kept in len */
    }
    /* triple-quoted strings span lines; locations after them are right */
    {
        LexTokens t = lex("x = '''a\n'b'\n\"c\"'''\ny = 2\n");
        CHECK_EQ_INT(TK_STR, t.v[2].kind);
        CHECK_EQ_STR("a\n'b'\n\"c\"", t.v[2].text);
        CHECK_EQ_INT(4, t.v[4].loc.line);
        CHECK_EQ_INT(1, t.v[4].loc.col);
        CHECK_EQ_STR("y", t.v[4].text);
    }
    /* f-strings: raw text kept; nested quotes (3.12), format specs, {{ }} */
    {
        LexTokens t = lex("f\"{d[\"k\"]:>{w}} {{x}} {y!r:#x}\" + 1");
        CHECK_EQ_INT(TK_STR, t.v[0].kind);
        CHECK_EQ_INT(LEX_STR_F, t.v[0].strflags);
        CHECK_EQ_STR("{d[\"k\"]:>{w}} {{x}} {y!r:#x}", t.v[0].text);
        CHECK(t.v[1].kind == TK_OP && !strcmp(t.v[1].text, "+"));
        LexTokens u = lex("f'''{a\n+ b}''' z");
        CHECK_EQ_INT(TK_STR, u.v[0].kind);
        CHECK_EQ_STR("z", u.v[1].text);
        LexTokens w = lex("f'{x}' f\"{'a' + \"b\"}\"");
        CHECK_EQ_INT(TK_STR, w.v[1].kind);
        CHECK_EQ_INT(TK_NEWLINE, w.v[2].kind);
    }
    CHECK_EQ_STR("unterminated string literal", first_error("x = 'abc\ny = 1\n"));
    CHECK_EQ_STR("unterminated string literal", first_error("x = \"abc"));
    CHECK_EQ_STR("unterminated triple-quoted string literal", first_error("x = '''abc\n\n"));
    CHECK_EQ_STR("unterminated f-string", first_error("x = f'{abc\n"));
    CHECK_EQ_STR("truncated \\xXX escape", first_error("'\\x4'"));
    {
        static const char nul[] = "x = 'a\0b'\n";
        TsSource src = {"t.py", nul, sizeof nul - 1};
        LexTokens t = lex_tokenize(&arena, &src);
        CHECK(t.v[2].kind == TK_ERROR && !strcmp(t.v[2].text, "source code contains a null byte"));
    }
    /* after an unterminated single-quoted string the next line lexes */
    CHECK_EQ_STR("NAME(x) OP(=) ERROR(unterminated string literal) NEWLINE NAME(y) NEWLINE EOF",
                 toks("x = 'abc\ny\n"));
}

static void test_numbers(void) {
    CHECK_EQ_STR("INT(31) INT(15) INT(5) INT(1000000) INT(0) INT(0) INT(255) NEWLINE EOF",
                 toks("0x1F 0o17 0b101 1_000_000 0 00 0X_FF"));
    CHECK_EQ_STR("FLOAT(1) FLOAT(0.5) FLOAT(0.001) FLOAT(1000) FLOAT(100000) FLOAT(2.5) "
                 "IMAG(2) NEWLINE EOF",
                 toks("1. .5 1e-3 1_000.0 1E+5 2_5e-1 2j"));
    {
        LexTokens t = lex("9223372036854775807 18446744073709551615 1.5e300");
        CHECK_EQ_INT(INT64_MAX, t.v[0].ival);
        CHECK_EQ_INT(-1, t.v[1].ival); /* wraps to the 64-bit pattern... */
        CHECK_EQ_INT(1, t.v[1].ival_u64); /* ...and says so */
        CHECK_EQ_INT(0, t.v[0].ival_u64);
        CHECK(t.v[2].kind == TK_FLOAT && t.v[2].fval == 1.5e300);
    }
    CHECK_EQ_STR("integer literal too large for 64 bits", first_error("18446744073709551616"));
    CHECK_EQ_STR("INT(18446744073709551615) NEWLINE EOF", toks("0xFFFF_FFFF_FFFF_FFFF"));
    CHECK_EQ_STR("invalid digit '2' in binary literal", first_error("0b102"));
    CHECK_EQ_STR("invalid digit '8' in octal literal", first_error("0o8"));
    CHECK_EQ_STR("invalid hexadecimal literal", first_error("0x"));
    CHECK_EQ_STR("invalid decimal literal", first_error("1abc"));
    CHECK_EQ_STR("invalid decimal literal", first_error("1__0"));
    CHECK_EQ_STR("invalid decimal literal", first_error("1_"));
    CHECK_EQ_STR("leading zeros in decimal integer literals are not permitted", first_error("012"));
    /* a method call on an int and an attribute after a float */
    CHECK_EQ_STR("INT(1) OP(.) NAME(bit_length) NEWLINE EOF", toks("1 .bit_length"));
    /* x[1:] and ranges with dots */
    CHECK_EQ_STR("NAME(x) OP([) INT(1) OP(:) OP(]) OP(...) NEWLINE EOF", toks("x[1:]..."));
}

static void test_operators(void) {
    CHECK_EQ_STR("OP(//=) OP(**=) OP(->) OP(:=) OP(@) OP(...) OP(!=) OP(<<) OP(>>) OP(<<=) "
                 "OP(>>=) OP(**) OP(//) OP(@=) OP(<=) OP(>=) OP(==) OP(+=) OP(-=) OP(*=) OP(/=) "
                 "OP(%=) OP(&=) OP(|=) OP(^=) OP(~) OP(;) OP(.) NEWLINE EOF",
                 toks("//= **= -> := @ ... != << >> <<= >>= ** // @= <= >= == += -= *= /= %= &= "
                      "|= ^= ~ ; ."));
    CHECK_EQ_STR("NAME(a) OP(**) OP(-) NAME(b) OP(//) NAME(c) NEWLINE EOF", toks("a**-b//c"));
    CHECK_EQ_STR("invalid character '$' (U+0024)", first_error("x = $y"));
    CHECK_EQ_STR("invalid character '?' (U+003F)", first_error("x?"));
    CHECK_EQ_STR("invalid character '!' (U+0021)", first_error("!x"));
    CHECK_EQ_STR("invalid non-printable character U+0001", first_error("x\x01"));
    /* the rest of the line still lexes */
    CHECK_EQ_STR("NAME(x) OP(=) ERROR(invalid character '$' (U+0024)) NAME(y) NEWLINE EOF",
                 toks("x = $y"));
}

static void test_brackets(void) {
    CHECK_EQ_STR("unmatched ')'", first_error("x)\n"));
    CHECK_EQ_STR("closing parenthesis ']' does not match opening parenthesis '('",
                 first_error("f(a]\ny\n"));
    /* a mismatched closer still closes the bracket so the next line is separate */
    CHECK_EQ_STR("NAME(f) OP(() NAME(a) ERROR(closing parenthesis ']' does not match opening "
                 "parenthesis '(') NEWLINE NAME(y) NEWLINE EOF",
                 toks("f(a]\ny\n"));
    /* an unclosed bracket ends at a line starting with def/class/@/import */
    {
        LexTokens t = lex("x = f(a,\n  b\ndef g():\n    pass\n");
        TsBuf b = {0};
        lex_dump(&b, &t);
        CHECK_EQ_STR("NAME(x) OP(=) NAME(f) OP(() NAME(a) OP(,) NAME(b) ERROR('(' was never "
                     "closed) NEWLINE KEYWORD(def) NAME(g) OP(() OP()) OP(:) NEWLINE INDENT "
                     "KEYWORD(pass) NEWLINE DEDENT EOF",
                     ts_buf_str(&b));
        ts_buf_free(&b);
        CHECK_EQ_INT(TK_ERROR, t.v[7].kind);
        CHECK_EQ_INT(1, t.v[7].loc.line); /* error points at the '(' */
        CHECK_EQ_INT(6, t.v[7].loc.col);
        CHECK_EQ_INT(1, t.v[9].bol);      /* def starts a top-level line */
    }
    CHECK_EQ_STR("'[' was never closed", first_error("x = [1, 2"));
    /* nesting deeper than the limit is an error token, not a crash */
    {
        char buf[1000];
        memset(buf, '(', 500);
        buf[500] = 0;
        CHECK_EQ_STR("too many nested parentheses", first_error(buf));
    }
}

static void test_locations(void) {
    LexTokens t = lex("def f(a):\n\treturn a  +  1\n");
    /* def f ( a ) : NEWLINE INDENT return a + 1 */
    CHECK_EQ_INT(1, t.v[0].loc.line);
    CHECK_EQ_INT(1, t.v[0].loc.col);
    CHECK_EQ_INT(5, t.v[1].loc.col);
    CHECK_EQ_INT(7, t.v[3].loc.col);
    CHECK_EQ_INT(TK_INDENT, t.v[7].kind);
    CHECK_EQ_INT(2, t.v[8].loc.line);
    CHECK_EQ_INT(2, t.v[8].loc.col); /* columns are bytes: the tab is one */
    CHECK_EQ_INT(12, t.v[10].loc.col);
    CHECK_EQ_INT(15, t.v[11].loc.col);
    CHECK_EQ_INT(1, t.v[0].bol);
    CHECK_EQ_INT(0, t.v[8].bol);
    /* bol only on logical-line starts at column 1 outside brackets */
    LexTokens u = lex("x = (1,\n2)\ny\n  # c\nz \\\n= 3\n");
    for (int i = 0; i < u.n; i++) {
        int want = (i == 0) || (u.v[i].kind == TK_NAME && (!strcmp(u.v[i].text, "y") ||
                                                          !strcmp(u.v[i].text, "z")));
        CHECK_EQ_INT(want, u.v[i].bol);
    }
}

int main(void) {
    ts_arena_init(&arena);
    test_basic();
    test_indent();
    test_joining();
    test_strings();
    test_numbers();
    test_operators();
    test_brackets();
    test_locations();
    ts_arena_free(&arena);
    return test_done();
}
