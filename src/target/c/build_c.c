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
 * The compiler is `opt->cc`, else $CC, else "cc", run through /bin/sh so
 * that a CC of "ccache gcc" works; its combined stdout/stderr goes into
 * the TS_ERR_BUILD diagnostic when it fails.  Extra flags may come from
 * $TILESCALE_CFLAGS (e.g. -march=native); they are part of the key.
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
#include <sys/wait.h>
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
    TsBuf cmd;      /* shell command */
    TsBuf output;   /* compiler output */
    char tmp[4096]; /* temporary file being written ("" when none) */
} Build;

static void build_free(Build *b) {
    if (b->tmp[0]) unlink(b->tmp);
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

/* Append s to the command, quoted for /bin/sh. */
static void shell_quote(TsBuf *o, const char *s) {
    ts_buf_puts(o, "'");
    for (; *s; s++) {
        if (*s == '\'') ts_buf_puts(o, "'\\''");
        else ts_buf_putn(o, s, 1);
    }
    ts_buf_puts(o, "'");
}

/* Run a shell command, collecting stdout+stderr; returns the exit status
 * (-1 if it could not be started or was killed). */
static int run_capture(const char *cmd, TsBuf *output) {
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, p)) > 0)
        if (output->n < (1u << 20)) ts_buf_putn(output, tmp, n);
    int st = pclose(p);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
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

    /* Compiler identity. */
    const char *cc = opt && opt->cc && *opt->cc ? opt->cc : NULL;
    if (!cc) {
        const char *env = getenv("CC");
        cc = env && *env ? env : "cc";
    }
    /* The compiler binary's path, size and modification time identify it
     * without starting it (starting `cc --version` was most of a warm
     * compile); a compiler given as a command line, or not found on PATH,
     * is identified by running --version, which also reports one that does
     * not run. */
    if (!compiler_stamp(cc, &b.version)) {
        ts_buf_printf(&b.cmd, "%s --version 2>&1", cc);
        if (run_capture(b.cmd.s, &b.version) != 0)
            build_fail(d, &b, TS_ERR_BUILD, "the C compiler '%s' does not run (`%s`):\n%s", cc, b.cmd.s,
                       ts_buf_str(&b.version));
    }
    ts_buf_puts(&b.flags, BASE_FLAGS);
    const char *extra = getenv("TILESCALE_CFLAGS");
    if (extra && *extra) ts_buf_printf(&b.flags, " %s", extra);

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
    snprintf(b.tmp, sizeof b.tmp, "%s.tmp-XXXXXX", b.sopath.s);
    int fd = mkstemp(b.tmp);
    if (fd < 0) {
        b.tmp[0] = 0;
        build_fail(d, &b, TS_ERR_IO, "cannot create a file in '%s': %s", b.dir.s, strerror(errno));
    }
    close(fd);
    b.cmd.n = 0;
    ts_buf_printf(&b.cmd, "%s %s -o ", cc, b.flags.s);
    shell_quote(&b.cmd, b.tmp);
    ts_buf_puts(&b.cmd, " ");
    shell_quote(&b.cmd, b.cpath.s);
    ts_buf_puts(&b.cmd, " -lm 2>&1");
    int st = run_capture(b.cmd.s, &b.output);
    if (st != 0)
        build_fail(d, &b, TS_ERR_BUILD,
                   "the generated C code did not compile (exit status %d):\n  %s\n%s"
                   "(generated source: %s)",
                   st, b.cmd.s, ts_buf_str(&b.output), b.cpath.s);
    if (chmod(b.tmp, 0755) != 0 || rename(b.tmp, b.sopath.s) != 0)
        build_fail(d, &b, TS_ERR_IO, "cannot move the compiled kernel to '%s': %s", b.sopath.s,
                   strerror(errno));
    b.tmp[0] = 0;
    double t1 = ts_now_ms();
    m = load(b.sopath.s, &why);
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
