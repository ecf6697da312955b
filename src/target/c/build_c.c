/*
 * build_c.c — generated C -> shared object, through a disk cache -> loaded
 * module.
 *
 * Compiling a kernel with the system C compiler costs a few hundred
 * milliseconds; loading a cached shared object costs well under one.  So
 * every build goes through a content-addressed cache:
 *
 *   key   = hash of (generated source, compiler command, the compiler's
 *           identity: path, size and mtime of its binary, or its
 *           `--version` text; flags).  The source contains the ABI version,
 *           so a library with a different ABI never finds old entries.
 *   files = <dir>/tsk-<key>.c, the exact text compiled (source plus a
 *           trailing comment naming compiler, version and flags), and
 *           <dir>/tsk-<key>.so.
 *   dir   = opt->cache_dir, else $TILESCALE_CACHE_DIR, else
 *           ~/.cache/tilescale; created (mkdir -p) when missing.
 *
 * A hit needs both files and the .c file's text equal to what we would
 * write, which guards against hash collisions and half-written or foreign
 * files.  Writers never expose partial files: the .c file is written to a
 * temporary name and renamed, and the compiler writes to a temporary .so
 * that is renamed into place, so any number of threads or processes may
 * build the same kernel at once (they write identical bytes; the last
 * rename wins harmlessly).  A .so that fails to load is rebuilt once.
 *
 * The compiler is `opt->cc`, else $CC, else "cc", and extra flags come
 * from opt->cflags, else $TILESCALE_CFLAGS (e.g. -march=native); both are
 * part of the key.  They are split into words (blanks separate, '...' and
 * "..." quote, backslash escapes) so that a CC of "ccache gcc" works, and
 * the compiler is started directly with that argv (posix_spawnp), never
 * through a shell: no file name or flag is ever interpreted as shell
 * syntax.  Its combined stdout/stderr goes into the TS_ERR_BUILD
 * diagnostic when it fails.
 */
#include "target/c/c_target.h"
#include "runtime/cache.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define BASE_FLAGS "-O2 -std=c11 -fPIC -shared -fvisibility=hidden"

/* Everything a build owns, freed on every exit path. */
typedef struct Build {
    TsBuf dir;      /* cache directory */
    TsBuf text;     /* exact text of the .c file */
    TsBuf version;  /* compiler --version output */
    TsBuf flags;    /* compiler flags */
    TsBuf cpath;    /* <dir>/tsk-<key>.c */
    TsBuf sopath;   /* <dir>/tsk-<key>.so */
    TsBuf cmd;      /* the command line, for messages */
    TsBuf output;   /* compiler output */
    TsBuf tmp;      /* temporary file being written (empty when none) */
    char **argv;    /* the compiler's argv (malloc'ed words, NULL-terminated) */
    int argc;       /* words in argv */
    int cap;        /* capacity of argv */
} Build;

static void argv_free(Build *b) {
    for (int i = 0; i < b->argc; i++) free(b->argv[i]);
    free(b->argv);
    b->argv = NULL;
    b->argc = b->cap = 0;
}

static void build_free(Build *b) {
    if (b->tmp.n) unlink(b->tmp.s);
    ts_buf_free(&b->tmp);
    argv_free(b);
    ts_buf_free(&b->dir);
    ts_buf_free(&b->text);
    ts_buf_free(&b->version);
    ts_buf_free(&b->flags);
    ts_buf_free(&b->cpath);
    ts_buf_free(&b->sopath);
    ts_buf_free(&b->cmd);
    ts_buf_free(&b->output);
}

/* Free the build and fail with the message formatted so far. */
TS_NORETURN TS_PRINTF(4, 5) static void build_fail(TsDiag *d, Build *b, TsStatus st,
                                                    const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ts_diag_vadd(d, (TsLoc){0}, "error", fmt, ap);
    va_end(ap);
    build_free(b);
    ts_rethrow(d, st);
}

/* Append one word to the argv (and to the printable command line). */
static int argv_push(Build *b, const char *w, size_t n) {
    if (b->argc + 2 > b->cap) {
        int nc = b->cap ? b->cap * 2 : 16;
        char **nv = realloc(b->argv, sizeof *nv * (size_t)nc);
        if (!nv) return -1;
        b->argv = nv;
        b->cap = nc;
    }
    char *c = malloc(n + 1);
    if (!c) return -1;
    memcpy(c, w, n);
    c[n] = 0;
    b->argv[b->argc++] = c;
    b->argv[b->argc] = NULL;
    if (b->cmd.n) ts_buf_puts(&b->cmd, " ");
    ts_buf_puts(&b->cmd, c);
    return 0;
}

/* Split s into words as a POSIX shell would without expansions: blanks
 * separate, '...' quotes literally, "..." quotes with \" and \\, a
 * backslash outside quotes escapes the next character.  Returns -1 for
 * an unterminated quote (or no memory). */
int ts_c_split_words(const char *s, int (*emit)(void *ctx, const char *w, size_t n), void *ctx) {
    TsBuf w = {0};
    int rc = 0;
    while (*s && !rc) {
        while (*s == ' ' || *s == '\t' || *s == '\n') s++;
        if (!*s) break;
        w.n = 0;
        ts_buf_puts(&w, "");
        while (*s && *s != ' ' && *s != '\t' && *s != '\n') {
            if (*s == '\'') {
                const char *e = strchr(s + 1, '\'');
                if (!e) { rc = -1; break; }
                ts_buf_putn(&w, s + 1, (size_t)(e - s - 1));
                s = e + 1;
            } else if (*s == '"') {
                s++;
                while (*s && *s != '"') {
                    if (*s == '\\' && (s[1] == '"' || s[1] == '\\')) s++;
                    ts_buf_putn(&w, s++, 1);
                }
                if (*s != '"') { rc = -1; break; }
                s++;
            } else {
                if (*s == '\\' && s[1]) s++;
                ts_buf_putn(&w, s++, 1);
            }
        }
        if (!rc) rc = w.oom ? -1 : emit(ctx, ts_buf_str(&w), w.n);
    }
    ts_buf_free(&w);
    return rc;
}

static int push_word(void *ctx, const char *w, size_t n) { return argv_push(ctx, w, n); }
static int count_word(void *ctx, const char *w, size_t n) {
    (void)w;
    (void)n;
    ++*(int *)ctx;
    return 0;
}

/* b->argv = the words of cc, then those of the flags (if any), then more. */
static int set_argv(Build *b, const char *cc, const char *flags) {
    argv_free(b);
    b->cmd.n = 0;
    if (b->cmd.s) b->cmd.s[0] = 0;
    if (ts_c_split_words(cc, push_word, b) != 0 || b->argc == 0) return -1;
    if (flags && ts_c_split_words(flags, push_word, b) != 0) return -1;
    return 0;
}




/* The .c file on disk has exactly the expected text. */
static int source_matches(const Build *b) {
    size_t len;
    char *s = ts_read_file(b->cpath.s, &len);
    if (!s) return 0;
    int ok = len == b->text.n && memcmp(s, b->text.s, len) == 0;
    free(s);
    return ok;
}

/* dlsym into a function pointer without a data/function pointer cast. */
static void sym(void *dl, const char *name, void *fnptr) {
    void *p = dlsym(dl, name);
    memcpy(fnptr, &p, sizeof p);
}

/* dlopen and check; returns NULL with a reason in why (no longjmp). */
static TsModuleC *load(const char *path, TsBuf *why) {
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        ts_buf_printf(why, "cannot load '%s': %s", path, e ? e : "unknown error");
        return NULL;
    }
    TsCAbiFn abi;
    TsCInfoFn info;
    TsModuleC *m = calloc(1, sizeof *m);
    sym(dl, TS_C_SYM_ABI, &abi);
    sym(dl, TS_C_SYM_INFO, &info);
    if (m) {
        sym(dl, TS_C_SYM_GRID, &m->grid);
        sym(dl, TS_C_SYM_BLOCK, &m->block);
    }
    if (!m || !abi || !info || !m->grid || !m->block) {
        ts_buf_printf(why, "'%s' is not a TileScale kernel module (missing symbols)", path);
        goto bad;
    }
    if (abi() != TS_C_ABI_VERSION) {
        ts_buf_printf(why, "'%s' was built for kernel ABI %u, this library uses %u", path, abi(),
                      TS_C_ABI_VERSION);
        goto bad;
    }
    info(&m->info);
    if (m->info.abi_version != TS_C_ABI_VERSION || m->info.scratch_bytes < 0 || m->info.nparams < 0 ||
        m->info.nshape_vars < 0) {
        ts_buf_printf(why, "'%s' reports inconsistent module facts", path);
        goto bad;
    }
    m->dl = dl;
    m->path = strdup(path);
    if (!m->path) {
        ts_buf_puts(why, "out of memory");
        goto bad;
    }
    return m;
bad:
    free(m);
    dlclose(dl);
    return NULL;
}

/* "path size mtime" of the executable `cc` names (searched on PATH when it
 * has no slash) into out; 0 if cc is not a single executable found so. */
static int compiler_stamp(const char *cc, TsBuf *out) {
    if (strpbrk(cc, " \t\"'")) return 0;
    TsBuf path = {0};
    struct stat st;
    int found = 0;
    if (strchr(cc, '/')) {
        ts_buf_puts(&path, cc);
        found = stat(path.s, &st) == 0 && S_ISREG(st.st_mode) && access(path.s, X_OK) == 0;
    } else {
        const char *p = getenv("PATH");
        while (p && *p && !found) {
            const char *e = strchr(p, ':');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            path.n = 0;
            if (path.s) path.s[0] = 0;
            ts_buf_putn(&path, n ? p : ".", n ? n : 1);
            ts_buf_printf(&path, "/%s", cc);
            found = stat(path.s, &st) == 0 && S_ISREG(st.st_mode) && access(path.s, X_OK) == 0;
            p = e ? e + 1 : NULL;
        }
    }
    if (found)
        ts_buf_printf(out, "%s %lld %lld.%09ld", path.s, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                      (long)st.st_mtim.tv_nsec);
    ts_buf_free(&path);
    return found;
}

TsModuleC *ts_c_build(TsDiag *d, const char *code, const TsCompileOptions *opt, TsBuf *timing) {
    Build b;
    memset(&b, 0, sizeof b);
    double t0 = ts_now_ms();

    /* Compiler identity (the API boundary resolved $CC and $TILESCALE_CFLAGS). */
    const char *cc = opt && opt->cc && *opt->cc ? opt->cc : "cc";
    const char *extra = opt && opt->cflags ? opt->cflags : "";
    /* The compiler binary's path, size and modification time identify it
     * without starting it (starting `cc --version` was most of a warm
     * compile); a compiler given as a command line, or not found on PATH,
     * is identified by running --version, which also reports one that does
     * not run. */
    if (set_argv(&b, cc, NULL) != 0)
        build_fail(d, &b, TS_ERR_BUILD, "the C compiler '%s' is not a valid command (an unterminated quote?)", cc);
    int nwords = 0;
    if (ts_c_split_words(extra, count_word, &nwords) != 0)
        build_fail(d, &b, TS_ERR_BUILD, "the C compiler flags '%s' do not split into words (an unterminated quote?)",
                   extra);
    if (!compiler_stamp(cc, &b.version)) {
        set_argv(&b, cc, "--version");
        errno = 0;
        if (ts_run_capture(b.argv, &b.version) != 0) {
            int e = errno;
            build_fail(d, &b, TS_ERR_BUILD, "the C compiler '%s' does not run (`%s`)%s%s%s", cc, b.cmd.s,
                       e ? ": " : ":", e ? strerror(e) : "\n", ts_buf_str(&b.version));
        }
    }
    ts_buf_puts(&b.flags, BASE_FLAGS);
    if (*extra) ts_buf_printf(&b.flags, " %s", extra);

    if (b.flags.oom) build_fail(d, &b, TS_ERR_NOMEM, "out of memory");
    /* Exact file text and key. */
    ts_buf_puts(&b.text, code);
    ts_buf_puts(&b.text, "\n/* compiler: ");
    ts_buf_puts(&b.text, cc);
    ts_buf_puts(&b.text, "\n   flags: ");
    ts_buf_puts(&b.text, b.flags.s);
    ts_buf_puts(&b.text, "\n   version: ");
    for (const char *p = ts_buf_str(&b.version); *p; p++) /* keep the comment closed */
        ts_buf_putn(&b.text, p[0] == '*' && p[1] == '/' ? "+" : p, 1);
    ts_buf_puts(&b.text, "\n*/\n");
    if (b.text.oom || b.version.oom) build_fail(d, &b, TS_ERR_NOMEM, "out of memory for the kernel's source");
    uint64_t h1 = ts_hash64(b.text.s, b.text.n, 0);
    uint64_t h2 = ts_hash64(b.text.s, b.text.n, 0x9e3779b97f4a7c15ull);

    if (ts_cache_dir(d, opt, &b.dir) != TS_OK) {
        build_free(&b);
        ts_rethrow(d, TS_ERR_IO);
    }
    ts_buf_printf(&b.cpath, "%s/tsk-%016llx%016llx.c", b.dir.s, (unsigned long long)h1,
                  (unsigned long long)h2);
    ts_buf_printf(&b.sopath, "%s/tsk-%016llx%016llx.so", b.dir.s, (unsigned long long)h1,
                  (unsigned long long)h2);

    TsModuleC *m = NULL;
    TsBuf why = {0};
    if (access(b.sopath.s, R_OK) == 0 && source_matches(&b)) {
        double t1 = ts_now_ms();
        m = load(b.sopath.s, &why);
        if (m) {
            ts_cache_touch(b.sopath.s); /* its last use, for the size limit's LRU order */
            if (timing) {
                ts_buf_printf(timing, "cache hit %.3f\n", t1 - t0);
                ts_buf_printf(timing, "load %.3f\n", ts_now_ms() - t1);
            }
            ts_buf_free(&why);
            build_free(&b);
            return m;
        }
        ts_buf_free(&why); /* stale or broken: rebuild below */
    }

    /* Miss: write the source, compile to a temporary .so, rename. */
    if (ts_write_atomic(b.cpath.s, b.text.s, b.text.n, 0644) != 0)
        build_fail(d, &b, TS_ERR_IO, "cannot write '%s': %s", b.cpath.s, strerror(errno));
    if (b.cpath.oom || b.sopath.oom) build_fail(d, &b, TS_ERR_NOMEM, "out of memory");
    ts_buf_printf(&b.tmp, "%s.tmp-XXXXXX", b.sopath.s);
    if (b.tmp.oom) {
        b.tmp.n = 0;
        build_fail(d, &b, TS_ERR_NOMEM, "out of memory");
    }
    int fd = mkstemp(b.tmp.s);
    if (fd < 0) {
        int e = errno;
        b.tmp.n = 0;
        build_fail(d, &b, TS_ERR_IO, "cannot create a file in '%s': %s", b.dir.s, strerror(e));
    }
    close(fd);
    set_argv(&b, cc, b.flags.s); /* both split before */
    if (argv_push(&b, "-o", 2) || argv_push(&b, b.tmp.s, b.tmp.n) || argv_push(&b, b.cpath.s, b.cpath.n) ||
        argv_push(&b, "-lm", 3))
        build_fail(d, &b, TS_ERR_NOMEM, "out of memory starting the C compiler");
    errno = 0;
    int st = ts_run_capture(b.argv, &b.output);
    if (st != 0) {
        int e = errno;
        char num[24];
        snprintf(num, sizeof num, "%d", st);
        build_fail(d, &b, TS_ERR_BUILD,
                   "the generated C code did not compile (%s%s%s):\n  %s\n%s"
                   "(generated source: %s)",
                   st < 0 ? "the compiler could not be started or was killed" : "exit status ",
                   st < 0 && e ? ": " : "", st < 0 ? (e ? strerror(e) : "") : num, b.cmd.s,
                   ts_buf_str(&b.output), b.cpath.s);
    }
    if (chmod(b.tmp.s, 0755) != 0 || rename(b.tmp.s, b.sopath.s) != 0)
        build_fail(d, &b, TS_ERR_IO, "cannot move the compiled kernel to '%s': %s", b.sopath.s,
                   strerror(errno));
    b.tmp.n = 0;
    double t1 = ts_now_ms();
    m = load(b.sopath.s, &why);
    ts_cache_trim(b.dir.s); /* keep the cache within $TILESCALE_CACHE_MAX (never this new kernel) */
    if (!m) {
        ts_diag_add(d, (TsLoc){0}, "error", "%s", ts_buf_str(&why));
        ts_buf_free(&why);
        build_free(&b);
        ts_rethrow(d, TS_ERR_BUILD);
    }
    if (timing) {
        ts_buf_printf(timing, "cc %.3f\n", t1 - t0);
        ts_buf_printf(timing, "load %.3f\n", ts_now_ms() - t1);
    }
    build_free(&b);
    return m;
}

void ts_c_module_free(TsModuleC *m) {
    if (!m) return;
    if (m->dl) dlclose(m->dl);
    free(m->path);
    free(m);
}
