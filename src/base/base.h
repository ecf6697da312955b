/*
 * base.h — the small things every module uses: arenas, growable arrays,
 * string buffers, source locations and diagnostics.
 *
 * Memory.  IR, AST and strings live in arenas (TsArena) that are freed in
 * one go when the compilation or kernel that owns them goes away; nothing
 * in the compiler frees individual nodes.
 *
 * Errors.  A user error (bad syntax, unknown name, wrong -D value) is
 * reported with ts_fail_at(): it formats `file:line:col: error: message`,
 * the source line and a caret into the context's diagnostic buffer and
 * longjmps to the innermost ts_try() — set up at the API boundary — the way
 * Lua unwinds to lua_pcall.  The library never exits the process.
 */
#ifndef TS_BASE_H
#define TS_BASE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tilescale.h"

#if defined(__GNUC__)
#define TS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TS_NORETURN __attribute__((noreturn))
#else
#define TS_PRINTF(a, b)
#define TS_NORETURN
#endif

#define TS_COUNTOF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- arena ------------------------------------------------------------ */

typedef struct TsArenaBlock TsArenaBlock;
typedef struct TsArena {
    TsArenaBlock *head; /* newest block first */
    size_t used;        /* bytes used in head */
    size_t cap;         /* bytes in head */
    jmp_buf *oom;       /* where to jump when malloc fails (may be NULL) */
} TsArena;

void ts_arena_init(TsArena *a);
void ts_arena_free(TsArena *a);
/* Zeroed, 16-byte aligned memory; never NULL (longjmps to a->oom or aborts
 * only if no handler exists, which is an internal error). */
void *ts_alloc(TsArena *a, size_t n);
char *ts_strdup(TsArena *a, const char *s);
char *ts_strndup(TsArena *a, const char *s, size_t n);
char *ts_sprintf(TsArena *a, const char *fmt, ...) TS_PRINTF(2, 3);
#define TS_NEW(a, T) ((T *)ts_alloc((a), sizeof(T)))
#define TS_NEWN(a, T, n) ((T *)ts_alloc((a), sizeof(T) * (size_t)(n)))

/* ---- growable arrays in an arena --------------------------------------
 * TS_VEC(T) is a struct {T *v; int n, cap;}.  ts_vec_push grows it by
 * doubling inside the arena (the old storage is simply abandoned). */
#define TS_VEC(T) struct { T *v; int n, cap; }
void ts_vec_grow_(TsArena *a, void **v, int *cap, size_t elem, int need);
#define ts_vec_push(a, vec, x)                                                     \
    do {                                                                           \
        if ((vec).n >= (vec).cap)                                                  \
            ts_vec_grow_((a), (void **)&(vec).v, &(vec).cap, sizeof(*(vec).v),     \
                         (vec).n + 1);                                             \
        (vec).v[(vec).n++] = (x);                                                  \
    } while (0)

/* ---- string buffer (heap, for generated code and messages) ------------ */

typedef struct TsBuf {
    char *s;   /* NUL-terminated contents (NULL until the first append) */
    size_t n;  /* length */
    size_t cap; /* bytes allocated at s */
    int oom;   /* an append failed for lack of memory and was dropped: the text is
                * incomplete (checked where it matters: generated code, build files) */
} TsBuf;

void ts_buf_puts(TsBuf *b, const char *s);
void ts_buf_putn(TsBuf *b, const char *s, size_t n);
void ts_buf_printf(TsBuf *b, const char *fmt, ...) TS_PRINTF(2, 3);
void ts_buf_vprintf(TsBuf *b, const char *fmt, va_list ap);
void ts_buf_indent(TsBuf *b, int level); /* 4 spaces per level */
/* s[0..n) as a double-quoted literal with \\ \" \n \t and \xNN escapes. */
void ts_buf_put_quoted(TsBuf *b, const char *s, size_t n);
const char *ts_buf_str(TsBuf *b);         /* "" if empty */
void ts_buf_free(TsBuf *b);

/* ---- sources and locations -------------------------------------------- */

typedef struct TsSource {
    const char *name; /* file name as given */
    const char *text; /* whole text, NUL-terminated */
    size_t len;
} TsSource;

typedef struct TsLoc {
    const TsSource *src; /* NULL: no position (e.g. a -D value) */
    int line;            /* 1-based */
    int col;             /* 1-based, in bytes */
} TsLoc;

/* ---- diagnostics ------------------------------------------------------- */

/* Where errors go.  One per context; ts_try() points `jb` at a local
 * jmp_buf and ts_fail*() longjmp there after filling `msg`. */
typedef struct TsDiag {
    TsBuf msg;          /* text of the last failure */
    TsStatus status;    /* its code */
    jmp_buf *jb;        /* innermost handler, NULL outside ts_try */
    TsBuf warn;         /* warnings of the current compile (file:line:col: warning: ...,
                           source line, caret; one after another); the API hands them out */
} TsDiag;

/* Format a diagnostic into d->msg (appending) without jumping. */
void ts_diag_add(TsDiag *d, TsLoc loc, const char *kind, const char *fmt, ...)
    TS_PRINTF(4, 5);
void ts_diag_vadd(TsDiag *d, TsLoc loc, const char *kind, const char *fmt, va_list ap);
/* The source line of loc and a caret under its column, as diagnostics show
 * them ("    text\n    ^\n"); nothing without a location. */
void ts_diag_source(TsBuf *b, TsLoc loc);
/* Record a warning at loc in d->warn (same form as an error, kind
 * "warning"); compilation goes on. */
void ts_warn_at(TsDiag *d, TsLoc loc, const char *fmt, ...) TS_PRINTF(3, 4);
/* Report a user error at loc and unwind to the handler. */
TS_NORETURN void ts_fail_at(TsDiag *d, TsStatus st, TsLoc loc, const char *fmt, ...)
    TS_PRINTF(4, 5);
TS_NORETURN void ts_vfail_at(TsDiag *d, TsStatus st, TsLoc loc, const char *fmt, va_list ap);
/* Unwind with the message already in d->msg. */
TS_NORETURN void ts_rethrow(TsDiag *d, TsStatus st);
/* Internal errors: a bug in the library, not in the user's input. */
#define ts_internal(d, ...) ts_fail_at((d), TS_ERR_INTERNAL, (TsLoc){0}, __VA_ARGS__)

/*
 * ts_try: run the code after it with d as the error target.
 *
 *   jmp_buf jb; jmp_buf *saved;
 *   if (ts_try(d, &jb, &saved)) { ts_try_end(d, saved); return d->status; }
 *   ... work that may call ts_fail_at ...
 *   ts_try_end(d, saved);
 */
#define ts_try(d, jbp, savedp) (*(savedp) = (d)->jb, (d)->jb = (jbp), setjmp(*(jbp)) != 0)
#define ts_try_end(d, saved) ((d)->jb = (saved))

/* ---- misc -------------------------------------------------------------- */

/* The source line containing loc (without newline), copied into a. */
const char *ts_source_line(TsArena *a, TsLoc loc);
/* Read a whole regular file; NULL on failure with errno set: the real
 * error, EISDIR, TS_ENOTREG (a device, FIFO or socket), EFBIG (larger than
 * the memory available).  Caller frees. */
char *ts_read_file(const char *path, size_t *len);
#define TS_ENOTREG 0x7452 /* errno-like code of ts_read_file: not a regular file */
/* strerror(err), knowing TS_ENOTREG. */
const char *ts_file_error(int err);
/* Run argv[0] (a path, or a name searched on $PATH) with argv, stdin from
 * /dev/null, never through a shell; its stdout and stderr together are
 * appended to output (at most 1 MiB).  Returns its exit status, or -1 if
 * it could not be started (errno set) or did not exit normally.  The
 * compilers of both targets run this way (cc, nvcc). */
int ts_run_capture(char *const argv[], TsBuf *output);
/* Bytes of memory a host allocation can still get: available RAM plus free
 * swap, capped by the cgroup's limit; UINT64_MAX when unknown. */
uint64_t ts_host_mem_available(void);
double ts_now_ms(void); /* monotonic clock */
uint64_t ts_hash64(const void *p, size_t n, uint64_t seed); /* FNV-1a 64 */

/* dtype facts (X-macro table in dtype.c). */
typedef struct TsDTypeInfo {
    const char *name;  /* "float16" */
    const char *ctype; /* storage type in generated C: "uint16_t" */
    int bits;
    char kind;         /* 'b' bool, 'i' signed, 'u' unsigned, 'f' float */
} TsDTypeInfo;
const TsDTypeInfo *ts_dtype_info(TsDType dt);
bool ts_dtype_is_float(TsDType dt);
bool ts_dtype_is_int(TsDType dt); /* signed or unsigned integer, not bool */
/* float4_e2m1fn (OCP MX v1.0 FP4 E2M1) on the host: the value of code c
 * (0..15: sign bit 8, then 2 exponent bits and 1 mantissa bit), and the
 * code of v (nearest, ties to the even code, saturating at +-6, -0 is 8;
 * NaN, which FP4 cannot encode, gives +6, code 7). */
double ts_fp4_e2m1_value(unsigned c);
unsigned ts_fp4_e2m1_code(double v);

#endif
