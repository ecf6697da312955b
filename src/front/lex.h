/*
 * lex.h — the tokenizer of the Python subset that TileLang kernel files use.
 *
 * The lexer turns a whole source file into an array of tokens in one pass,
 * before the parser starts.  Doing it up front (rather than on demand) lets
 * the parser look ahead freely and, more importantly, lets it recover from
 * a broken top-level statement by jumping forward to the next token that
 * begins a line at indentation 0 (the `bol` flag below) without having to
 * re-synchronize a lexer.
 *
 * Python's layout rules are resolved here: the parser sees NEWLINE at the
 * end of each logical line, INDENT/DEDENT when the indentation changes,
 * and nothing at all for blank lines, comments, line joins inside
 * brackets or backslash continuations.
 *
 * Lexing never fails.  A character or literal that cannot be tokenized
 * becomes a TK_ERROR token carrying the message; the parser reports it
 * when it reaches that token, so only the statement containing it fails.
 * Two heuristics keep one bad line from swallowing the rest of a file:
 * an unmatched closing bracket pops the bracket it most likely meant to
 * close, and a line that starts at column 1 with `def`, `class`, `import`,
 * `from` or `@name` while brackets are still open ends the open brackets
 * there (with an error token naming the unclosed one).
 */
#ifndef TS_LEX_H
#define TS_LEX_H

#include "base/base.h"

typedef enum LexKind {
    TK_NAME,    /* identifier (soft keywords such as `match` included) */
    TK_KEYWORD, /* a reserved word, True/False/None included */
    TK_INT,     /* integer literal: ival */
    TK_FLOAT,   /* float literal: fval */
    TK_IMAG,    /* imaginary literal (1j): fval; the parser rejects it */
    TK_STR,     /* one string literal: text (decoded) and raw */
    TK_OP,      /* operator or delimiter: text is its spelling */
    TK_NEWLINE, /* end of a logical line */
    TK_INDENT,  /* indentation increased */
    TK_DEDENT,  /* indentation decreased by one level */
    TK_ERROR,   /* something that does not tokenize: text is the message */
    TK_EOF
} LexKind;

/* String literal prefix flags (LexToken.strflags). */
enum { LEX_STR_RAW = 1, LEX_STR_BYTES = 2, LEX_STR_F = 4 };

typedef struct LexToken {
    LexKind kind;     /* what it is */
    TsLoc loc;        /* where it starts (ERROR: where the problem is) */
    const char *text; /* NAME/KEYWORD/OP: spelling; STR: decoded value (f-strings:
                       * the raw text); ERROR: message; others: NULL */
    size_t len;       /* STR: length of text (a decoded "\0" may sit inside) */
    const char *raw;  /* STR: the text between the quotes, undecoded */
    int64_t ival;     /* INT: value (literals in (INT64_MAX, UINT64_MAX] wrap) */
    int ival_u64;     /* INT: 1 if the literal is above INT64_MAX (ival wrapped) */
    double fval;      /* FLOAT, IMAG: value */
    int strflags;     /* STR: LEX_STR_* prefix flags */
    int bol;          /* 1: first token of a logical line at indentation 0, i.e.
                       * where a top-level statement may begin */
    TsStatus err;     /* ERROR: TS_ERR_SYNTAX or TS_ERR_UNSUPPORTED */
    int fatal;        /* ERROR: it ends the file (an unterminated triple-quoted
                       * string): the whole file is unusable, as in Python */
} LexToken;

/* The token array; v[n-1] is always TK_EOF. */
typedef struct LexTokens {
    LexToken *v; /* tokens, in the arena */
    int n;       /* count, EOF included */
} LexTokens;

/* Tokenize the whole source.  Never fails; tokens live in a. */
LexTokens lex_tokenize(TsArena *a, const TsSource *src);

/* "NAME", "OP", ... */
const char *lex_kind_name(LexKind k);

/* Compact dump for tests, tokens separated by one space:
 * `NAME(x) OP(=) INT(1) NEWLINE EOF`; STR shows the decoded value quoted
 * with C escapes and an f/b prefix; ERROR shows its message. */
void lex_dump(TsBuf *b, const LexTokens *t);

#endif
