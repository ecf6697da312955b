/*
 * base.c — arenas, growable arrays, string buffers, diagnostics, and the
 * dtype table.  See base.h for the why.
 */
#define _POSIX_C_SOURCE 200809L
#include "base.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- arena ------------------------------------------------------------ */

struct TsArenaBlock {
    TsArenaBlock *next;
    size_t cap;
    _Alignas(16) unsigned char data[];
};

void ts_arena_init(TsArena *a) { memset(a, 0, sizeof *a); }

void ts_arena_free(TsArena *a) {
    TsArenaBlock *b = a->head;
    while (b) {
        TsArenaBlock *n = b->next;
        free(b);
        b = n;
    }
    a->head = NULL;
    a->used = a->cap = 0;
}

void *ts_alloc(TsArena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->used + n > a->cap) {
        size_t cap = n > 65536 - 64 ? n : 65536 - 64;
        TsArenaBlock *b = malloc(sizeof *b + cap);
        if (!b) {
            if (a->oom) longjmp(*a->oom, 1);
            fputs("tilescale: out of memory with no handler\n", stderr);
            abort(); /* internal: every arena in the library has a handler */
        }
        b->cap = cap;
        b->next = a->head;
        a->head = b;
        a->used = 0;
        a->cap = cap;
    }
    void *p = a->head->data + a->used;
    a->used += n;
    memset(p, 0, n);
    return p;
}

char *ts_strndup(TsArena *a, const char *s, size_t n) {
    char *p = ts_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *ts_strdup(TsArena *a, const char *s) { return ts_strndup(a, s, strlen(s)); }

char *ts_sprintf(TsArena *a, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = ts_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

void ts_vec_grow_(TsArena *a, void **v, int *cap, size_t elem, int need) {
    int ncap = *cap ? *cap * 2 : 4;
    while (ncap < need) ncap *= 2;
    void *nv = ts_alloc(a, elem * (size_t)ncap);
    if (*v) memcpy(nv, *v, elem * (size_t)*cap);
    *v = nv;
    *cap = ncap;
}

/* ---- string buffer ----------------------------------------------------- */

/* Room for extra more bytes; 0 if memory ran out (b->oom is set, the
 * caller drops its append: no abort, the owner sees oom and reports
 * TS_ERR_NOMEM). */
static int buf_reserve(TsBuf *b, size_t extra) {
    if (b->n + extra + 1 <= b->cap && b->s) return 1;
    if (extra > SIZE_MAX / 4 - b->n) {
        b->oom = 1;
        return 0;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra + 1) cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = 1;
        return 0;
    }
    b->s = s;
    b->cap = cap;
    return 1;
}

void ts_buf_putn(TsBuf *b, const char *s, size_t n) {
    if (!buf_reserve(b, n)) return;
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

void ts_buf_puts(TsBuf *b, const char *s) { ts_buf_putn(b, s, strlen(s)); }

void ts_buf_vprintf(TsBuf *b, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n < 0 || !buf_reserve(b, (size_t)n)) {
        if (n < 0) b->oom = 1;
        va_end(ap2);
        return;
    }
    vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    b->n += (size_t)n;
}

void ts_buf_printf(TsBuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ts_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void ts_buf_indent(TsBuf *b, int level) {
    for (int i = 0; i < level; i++) ts_buf_puts(b, "    ");
}

void ts_buf_put_quoted(TsBuf *b, const char *s, size_t n) {
    ts_buf_puts(b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') ts_buf_printf(b, "\\%c", c);
        else if (c == '\n') ts_buf_puts(b, "\\n");
        else if (c == '\t') ts_buf_puts(b, "\\t");
        else if (c < 32 || c == 127) ts_buf_printf(b, "\\x%02x", c);
        else ts_buf_putn(b, (const char *)&c, 1);
    }
    ts_buf_puts(b, "\"");
}

const char *ts_buf_str(TsBuf *b) { return b->s ? b->s : ""; }

void ts_buf_free(TsBuf *b) {
    free(b->s);
    memset(b, 0, sizeof *b);
}

/* ---- diagnostics -------------------------------------------------------- */

void ts_diag_source(TsBuf *b, TsLoc loc) {
    if (!loc.src || loc.line <= 0) return;
    const char *t = loc.src->text, *end = t + loc.src->len;
    int line = 1;
    while (t < end && line < loc.line) {
        if (*t++ == '\n') line++;
    }
    const char *e = t;
    while (e < end && *e != '\n' && *e != '\r') e++;
    ts_buf_puts(b, "    ");
    ts_buf_putn(b, t, (size_t)(e - t));
    ts_buf_puts(b, "\n    ");
    for (int i = 1; i < loc.col && t + i - 1 < e; i++)
        ts_buf_putn(b, t[i - 1] == '\t' ? "\t" : " ", 1);
    ts_buf_puts(b, "^\n");
}

static void diag_put(TsBuf *b, TsLoc loc, const char *kind, const char *fmt, va_list ap) {
    /* one format everywhere: file:line:col: error: ..., or tilescale: error: ... */
    if (loc.src) ts_buf_printf(b, "%s:%d:%d: ", loc.src->name, loc.line, loc.col);
    else ts_buf_puts(b, "tilescale: ");
    ts_buf_printf(b, "%s: ", kind);
    ts_buf_vprintf(b, fmt, ap);
    ts_buf_puts(b, "\n");
    ts_diag_source(b, loc);
}

void ts_diag_vadd(TsDiag *d, TsLoc loc, const char *kind, const char *fmt, va_list ap) {
    diag_put(&d->msg, loc, kind, fmt, ap);
}

void ts_warn_at(TsDiag *d, TsLoc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    diag_put(&d->warn, loc, "warning", fmt, ap);
    va_end(ap);
}

void ts_diag_add(TsDiag *d, TsLoc loc, const char *kind, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ts_diag_vadd(d, loc, kind, fmt, ap);
    va_end(ap);
}

void ts_rethrow(TsDiag *d, TsStatus st) {
    d->status = st;
    if (!d->jb) {
        fprintf(stderr, "tilescale: internal error: no error handler for:\n%s",
                ts_buf_str(&d->msg));
        abort(); /* a library bug: every entry point sets a handler */
    }
    longjmp(*d->jb, 1);
}

void ts_vfail_at(TsDiag *d, TsStatus st, TsLoc loc, const char *fmt, va_list ap) {
    ts_diag_vadd(d, loc, st == TS_ERR_INTERNAL ? "internal error" : "error", fmt, ap);
    ts_rethrow(d, st);
}

void ts_fail_at(TsDiag *d, TsStatus st, TsLoc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ts_vfail_at(d, st, loc, fmt, ap);
}

/* ---- misc ---------------------------------------------------------------- */

const char *ts_source_line(TsArena *a, TsLoc loc) {
    if (!loc.src) return "";
    const char *t = loc.src->text, *end = t + loc.src->len;
    int line = 1;
    while (t < end && line < loc.line)
        if (*t++ == '\n') line++;
    const char *e = t;
    while (e < end && *e != '\n') e++;
    return ts_strndup(a, t, (size_t)(e - t));
}

/* Only regular files: a device (/dev/zero), FIFO or directory would read
 * forever, block, or fail with a confusing error.  O_NONBLOCK keeps open()
 * of a FIFO from waiting for a writer before fstat can refuse it. */
int ts_run_capture(char *const argv[], TsBuf *output) {
    int fds[2];
    if (pipe(fds) != 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    extern char **environ;
    pid_t pid;
    int err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (err != 0) {
        close(fds[0]);
        errno = err;
        return -1;
    }
    char tmp[4096];
    for (;;) {
        ssize_t n = read(fds[0], tmp, sizeof tmp);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (output->n < (1u << 20)) ts_buf_putn(output, tmp, (size_t)n);
    }
    close(fds[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    if (!WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

char *ts_read_file(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        errno = S_ISDIR(st.st_mode) ? EISDIR : TS_ENOTREG;
        return NULL;
    }
    if ((uint64_t)st.st_size >= ts_host_mem_available() || (uint64_t)st.st_size >= SIZE_MAX / 2) {
        close(fd);
        errno = EFBIG;
        return NULL;
    }
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        errno = ENOMEM;
        return NULL;
    }
    for (;;) {
        if (n + 1 >= cap) { /* the file grew while we read it */
            char *nb = cap < SIZE_MAX / 4 ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                close(fd);
                errno = ENOMEM;
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            errno = e;
            return NULL;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

const char *ts_file_error(int err) {
    return err == TS_ENOTREG ? "not a regular file" : strerror(err);
}

/* One "Key:   N kB" line of /proc/meminfo in bytes, or -1. */
static int64_t meminfo_bytes(const char *text, const char *key) {
    const char *p = strstr(text, key);
    if (!p) return -1;
    p += strlen(key);
    while (*p == ' ' || *p == '\t') p++;
    long long kb = strtoll(p, NULL, 10);
    return kb >= 0 && kb < INT64_MAX / 1024 ? (int64_t)kb * 1024 : -1;
}

/* One integer from a small file (cgroup limits), or -1 ("max", missing). */
static int64_t file_int(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long long v = -1;
    if (fscanf(f, "%lld", &v) != 1) v = -1;
    fclose(f);
    return v;
}

uint64_t ts_host_mem_available(void) {
    uint64_t avail = UINT64_MAX;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char text[4096];
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = 0;
        fclose(f);
        int64_t mem = meminfo_bytes(text, "MemAvailable:"), swap = meminfo_bytes(text, "SwapFree:");
        if (mem >= 0) avail = (uint64_t)mem + (uint64_t)(swap > 0 ? swap : 0);
    } else {
        long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0) avail = (uint64_t)pages * (uint64_t)page;
    }
    /* a container's limit (cgroup v2) is what the OOM killer enforces */
    int64_t max = file_int("/sys/fs/cgroup/memory.max"), cur = file_int("/sys/fs/cgroup/memory.current");
    if (max > 0 && cur >= 0 && max > cur && (uint64_t)(max - cur) < avail) avail = (uint64_t)(max - cur);
    return avail;
}

double ts_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

uint64_t ts_hash64(const void *p, size_t n, uint64_t seed) {
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull ^ seed;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* ---- dtypes --------------------------------------------------------------- */

/* X(enum, name, C storage type, bits, kind) */
#define TS_DTYPES(X)                                   \
    X(TS_BOOL, "bool", "uint8_t", 8, 'b')             \
    X(TS_INT8, "int8", "int8_t", 8, 'i')              \
    X(TS_UINT8, "uint8", "uint8_t", 8, 'u')           \
    X(TS_INT16, "int16", "int16_t", 16, 'i')          \
    X(TS_UINT16, "uint16", "uint16_t", 16, 'u')       \
    X(TS_INT32, "int32", "int32_t", 32, 'i')          \
    X(TS_UINT32, "uint32", "uint32_t", 32, 'u')       \
    X(TS_INT64, "int64", "int64_t", 64, 'i')          \
    X(TS_UINT64, "uint64", "uint64_t", 64, 'u')       \
    X(TS_FLOAT16, "float16", "uint16_t", 16, 'f')     \
    X(TS_BFLOAT16, "bfloat16", "uint16_t", 16, 'f')   \
    X(TS_FLOAT32, "float32", "float", 32, 'f')        \
    X(TS_FLOAT64, "float64", "double", 64, 'f')       \
    X(TS_FLOAT8_E4M3, "float8_e4m3", "uint8_t", 8, 'f') \
    X(TS_FLOAT8_E5M2, "float8_e5m2", "uint8_t", 8, 'f') \
    X(TS_INT4, "int4", "int8_t", 4, 'i')             \
    X(TS_FLOAT4_E2M1, "float4_e2m1fn", "uint8_t", 4, 'f')

static const TsDTypeInfo dtype_table[] = {
#define X(e, n, c, b, k) [e] = {n, c, b, k},
    TS_DTYPES(X)
#undef X
};

const TsDTypeInfo *ts_dtype_info(TsDType dt) {
    if ((int)dt < 0 || dt >= TS_DTYPE_COUNT) return NULL;
    return &dtype_table[dt];
}

const char *ts_dtype_name(TsDType dt) {
    const TsDTypeInfo *i = ts_dtype_info(dt);
    return i ? i->name : "none";
}

int ts_dtype_bits(TsDType dt) {
    const TsDTypeInfo *i = ts_dtype_info(dt);
    return i ? i->bits : 0;
}

bool ts_dtype_is_float(TsDType dt) {
    const TsDTypeInfo *i = ts_dtype_info(dt);
    return i && i->kind == 'f';
}

bool ts_dtype_is_int(TsDType dt) {
    const TsDTypeInfo *i = ts_dtype_info(dt);
    return i && (i->kind == 'i' || i->kind == 'u');
}

TsDType ts_dtype_from_name(const char *name) {
    static const struct { const char *alias; TsDType dt; } aliases[] = {
        {"half", TS_FLOAT16}, {"float", TS_FLOAT32}, {"double", TS_FLOAT64},
        {"int", TS_INT32}, {"bf16", TS_BFLOAT16}, {"fp16", TS_FLOAT16},
        {"fp32", TS_FLOAT32}, {"float8_e4m3fn", TS_FLOAT8_E4M3},
        {"float8_e5m2fn", TS_FLOAT8_E5M2}, {"uint1", TS_BOOL},
        /* TileLang's C-style names (tilelang/language/dtypes.py: T.short, T.int,
         * T.uint, T.long; T.dtype("uint") is uint32 there too) */
        {"short", TS_INT16}, {"uint", TS_UINT32}, {"long", TS_INT64}, {"ulong", TS_UINT64},
        /* TileLang's tfloat32 is float32 storage whose gemm operands tensor cores
         * round to 10 mantissa bits; here it is float32 (gemm in full float32) */
        {"tfloat32", TS_FLOAT32},
        {"float4_e2m1", TS_FLOAT4_E2M1},
    };
    for (int i = 0; i < TS_DTYPE_COUNT; i++)
        if (!strcmp(name, dtype_table[i].name)) return (TsDType)i;
    for (int i = 0; i < TS_COUNTOF(aliases); i++)
        if (!strcmp(name, aliases[i].alias)) return aliases[i].dt;
    return TS_DTYPE_NONE;
}

TsDType ts_dtype_from_dlpack(int code, int bits, int lanes) {
    if (lanes != 1) return TS_DTYPE_NONE;
    for (int i = 0; i < TS_DTYPE_COUNT; i++) {
        const TsDTypeInfo *t = &dtype_table[i];
        if (t->bits != bits) continue;
        if ((code == 0 && t->kind == 'i') || (code == 1 && t->kind == 'u') ||
            (code == 6 && t->kind == 'b'))
            return (TsDType)i;
        if (code == 2 && t->kind == 'f' && i != TS_BFLOAT16 && bits >= 16) return (TsDType)i;
        if (code == 4 && i == TS_BFLOAT16) return (TsDType)i;
    }
    return TS_DTYPE_NONE;
}

/* A search over the 8 magnitudes (ties: the code whose mantissa bit is 0),
 * not resolve_views' midpoint counting, so that the two check each other. */
static const double fp4_magnitudes[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};

double ts_fp4_e2m1_value(unsigned c) { return (c & 8 ? -1.0 : 1.0) * fp4_magnitudes[c & 7]; }

unsigned ts_fp4_e2m1_code(double v) {
    if (isnan(v)) return 7;
    double m = fabs(v) > 6 ? 6 : fabs(v); /* saturating (infinity too) */
    unsigned best = 0;
    for (unsigned c = 1; c < 8; c++) {
        double d = fabs(fp4_magnitudes[c] - m), bd = fabs(fp4_magnitudes[best] - m);
        if (d < bd || (d == bd && !(c & 1))) best = c;
    }
    return best | (signbit(v) ? 8u : 0u);
}

const char *ts_status_name(TsStatus s) {
    static const char *names[] = {
        "ok", "syntax error", "unsupported construct", "unknown name", "type error",
        "bad compile-time parameter", "shape mismatch", "dtype mismatch",
        "wrong argument count", "I/O error", "build error", "runtime error",
        "out of memory", "invalid argument", "internal error"};
    if ((int)s < 0 || (int)s >= TS_COUNTOF(names)) return "unknown status";
    return names[s];
}
