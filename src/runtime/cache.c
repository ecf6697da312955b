/*
 * cache.c — the kernel cache's directory, atomic file writes, its size
 * limit and the public ts_cache_info/ts_cache_clean; shared by the C
 * target (target/c/build_c.c) and the CUDA target (target/cuda/nvrtc.c).
 * Keys are each target's business; the file names are fixed here, because
 * trimming must know exactly which files are the cache's own.
 *
 * Ours are (K = 32 hex digits, I = 16): tsk-K.c with tsk-K.so (C target),
 * tsk-K.cu with tsk-K.cubin or tsk-K.ptx (CUDA), nvrtc-I.txt (NVRTC
 * memos), any of those followed by .tmp-XXXXXX (a writer's temporary), and
 * tilescale-cache.lock.  A kernel is the files sharing one tsk-K.  Anything
 * else in the directory (and anything that is not a regular file, even
 * with our name: a symlink, a directory) is foreign and never touched.
 *
 * Size limit.  $TILESCALE_CACHE_MAX (4096, 64K, 500M, 2G; default 1G; 0:
 * none).  After a build stores a kernel, ts_cache_trim adds up the
 * cache's own files and, beyond the limit, removes whole kernels in order
 * of last use: a hit touches the kernel's binary (ts_cache_touch), so its
 * modification time is its last use (atime is unreliable under relatime
 * and noatime).  Concurrency: trimmers take an flock on
 * tilescale-cache.lock, a second one skips its trim rather than wait;
 * a kernel used or written in the last minute is never removed (a build
 * in progress may have written its source and be compiling it), and each
 * file's time is checked again just before it is unlinked.  Removing a
 * kernel another process is about to load is harmless: a process that
 * has it loaded keeps its mapping, one that finds it half gone rebuilds
 * (a hit needs the source text equal and the binary present).
 * Temporaries are removed only when an hour old (their writer died).
 */
#include "runtime/cache.h"
#include "core.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

int ts_make_dirs(const char *path) {
    size_t n = strlen(path);
    if (n == 0) {
        errno = ENOENT;
        return -1;
    }
    char *buf = malloc(n + 1); /* no fixed buffer: any path the OS accepts */
    if (!buf) return -1;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != 0) continue;
        char c = buf[i];
        buf[i] = 0;
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
            int e = errno;
            free(buf);
            errno = e;
            return -1;
        }
        buf[i] = c;
    }
    free(buf);
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

#define CACHE_DEFAULT_MAX (1ll << 30)
#define CACHE_GRACE_S 60     /* a kernel used this recently is never removed */
#define CACHE_TMP_STALE_S 3600 /* a temporary this old belongs to a dead writer */

/* $TILESCALE_CACHE_MAX in bytes into *out (0: no limit); 0 if malformed. */
static int cache_limit(int64_t *out) {
    const char *e = getenv("TILESCALE_CACHE_MAX");
    *out = CACHE_DEFAULT_MAX;
    if (!e || !*e) return 1;
    const char *p = e;
    if (*p < '0' || *p > '9') return 0;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    int shift = 0;
    if (errno == ERANGE) return 0;
    switch (*end) {
    case 0: break;
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    default: return 0;
    }
    if (*end) {
        end++;
        if (*end == 'i') end++;
        if (*end == 'B' || *end == 'b') end++;
    }
    if (*end || v > (unsigned long long)(INT64_MAX >> shift)) return 0;
    *out = (int64_t)(v << shift);
    return 1;
}

/* The directory's path (without creating it) into out; TS_OK or TS_ERR_IO
 * with a message in d. */
static TsStatus cache_path(TsDiag *d, const char *dir, TsBuf *out) {
    if (!dir) {
        const char *env = getenv("TILESCALE_CACHE_DIR");
        if (env && *env) dir = env;
    }
    if (dir) {
        ts_buf_puts(out, dir);
    } else {
        const char *home = getenv("HOME");
        if (!home || !*home) {
            struct passwd *pw = getpwuid(getuid());
            home = pw ? pw->pw_dir : NULL;
        }
        if (!home) {
            ts_diag_add(d, (TsLoc){0}, "error",
                        "cannot find a home directory for the kernel cache; set TILESCALE_CACHE_DIR");
            return TS_ERR_IO;
        }
        ts_buf_printf(out, "%s/.cache/tilescale", home);
    }
    while (out->n > 1 && out->s[out->n - 1] == '/') out->s[--out->n] = 0;
    if (out->oom) {
        ts_diag_add(d, (TsLoc){0}, "error", "out of memory");
        return TS_ERR_NOMEM;
    }
    return TS_OK;
}

static TsStatus check_limit(TsDiag *d) {
    int64_t lim;
    if (cache_limit(&lim)) return TS_OK;
    ts_diag_add(d, (TsLoc){0}, "error",
                "TILESCALE_CACHE_MAX='%s' is not a size (bytes, or a number with K, M, G or T; 0: no limit)",
                getenv("TILESCALE_CACHE_MAX"));
    return TS_ERR_INVALID;
}

TsStatus ts_cache_dir(TsDiag *d, const TsCompileOptions *opt, TsBuf *out) {
    TsStatus st = check_limit(d);
    if (st) return st;
    st = cache_path(d, opt && opt->cache_dir && *opt->cache_dir ? opt->cache_dir : NULL, out);
    if (st) return st;
    if (ts_make_dirs(out->s) != 0) {
        ts_diag_add(d, (TsLoc){0}, "error", "cannot create the kernel cache directory '%s': %s", out->s,
                    strerror(errno));
        return TS_ERR_IO;
    }
    return TS_OK;
}

void ts_cache_touch(const char *path) { (void)utimensat(AT_FDCWD, path, NULL, 0); }

/* ---- what is ours, and trimming ---------------------------------------- */

static int hexes(const char *p, int n) {
    for (int i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) return 0;
    return 1;
}

enum { CF_FOREIGN, CF_KERNEL, CF_MEMO, CF_TEMP, CF_LOCK };

/* What the file name is (see the essay). */
static int classify(const char *name) {
    if (!strcmp(name, "tilescale-cache.lock")) return CF_LOCK;
    const char *rest;
    int kernel;
    if (!strncmp(name, "tsk-", 4) && hexes(name + 4, 32)) {
        rest = name + 36;
        kernel = 1;
        if (!strncmp(rest, ".cubin", 6)) rest += 6;
        else if (!strncmp(rest, ".ptx", 4) || !strncmp(rest, ".cu", 3) || !strncmp(rest, ".so", 3)) rest += rest[1] == 'p' ? 4 : 3;
        else if (!strncmp(rest, ".c", 2)) rest += 2;
        else return CF_FOREIGN;
    } else if (!strncmp(name, "nvrtc-", 6) && hexes(name + 6, 16) && !strncmp(name + 22, ".txt", 4)) {
        rest = name + 26;
        kernel = 0;
    } else {
        return CF_FOREIGN;
    }
    if (!*rest) return kernel ? CF_KERNEL : CF_MEMO;
    if (!strncmp(rest, ".tmp-", 5) && strlen(rest + 5) == 6) return CF_TEMP;
    return CF_FOREIGN;
}

typedef struct CFile {
    char *name;     /* file name in the directory (malloc'ed) */
    int kind;       /* CF_* */
    int64_t bytes;  /* its size */
    double mtime;   /* its modification time, seconds */
} CFile;

typedef struct CScan {
    CFile *f;        /* the cache's own files, sorted by name */
    int n, cap;      /* count, allocated */
    int64_t foreign; /* files that are not ours */
    int64_t bytes;   /* bytes of ours */
} CScan;

static void scan_free(CScan *s) {
    for (int i = 0; i < s->n; i++) free(s->f[i].name);
    free(s->f);
    memset(s, 0, sizeof *s);
}

static int by_name(const void *a, const void *b) { return strcmp(((const CFile *)a)->name, ((const CFile *)b)->name); }

static double st_mtime_s(const struct stat *st) { return (double)st->st_mtim.tv_sec + 1e-9 * (double)st->st_mtim.tv_nsec; }

/* Read the directory; 0 on success, -1 (errno) if it cannot be opened. */
static int scan_dir(const char *dir, CScan *s) {
    memset(s, 0, sizeof *s);
    DIR *dp = opendir(dir);
    if (!dp) return -1;
    int dfd = dirfd(dp);
    struct dirent *de;
    while ((de = readdir(dp))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        struct stat st;
        int kind = classify(de->d_name);
        if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (kind == CF_LOCK && S_ISREG(st.st_mode)) continue; /* the lock: ours, kept, not counted */
        if (kind == CF_FOREIGN || !S_ISREG(st.st_mode)) {
            s->foreign++;
            continue;
        }
        if (s->n == s->cap) {
            int cap = s->cap ? 2 * s->cap : 64;
            CFile *f = realloc(s->f, (size_t)cap * sizeof *f);
            if (!f) break;
            s->f = f;
            s->cap = cap;
        }
        char *nm = strdup(de->d_name);
        if (!nm) break;
        s->f[s->n++] = (CFile){nm, kind, (int64_t)st.st_size, st_mtime_s(&st)};
        s->bytes += (int64_t)st.st_size;
    }
    closedir(dp);
    if (s->n) qsort(s->f, (size_t)s->n, sizeof *s->f, by_name);
    return 0;
}

/* A kernel: the run of files [first, first + n) of the scan sharing tsk-K. */
typedef struct CKernel {
    int first, n;     /* its files in the scan */
    int64_t bytes;    /* their bytes */
    double last_use;  /* the newest modification time among them */
} CKernel;

static int by_use(const void *a, const void *b) {
    double x = ((const CKernel *)a)->last_use, y = ((const CKernel *)b)->last_use;
    return x < y ? -1 : x > y;
}

/* The kernels of a scan (malloc'ed, *n of them), oldest use first. */
static CKernel *group(const CScan *s, int *n) {
    CKernel *k = calloc((size_t)s->n + 1, sizeof *k);
    *n = 0;
    if (!k) return NULL;
    for (int i = 0; i < s->n; i++) {
        if (s->f[i].kind != CF_KERNEL) continue;
        if (*n && !strncmp(s->f[k[*n - 1].first].name, s->f[i].name, 36) && k[*n - 1].first + k[*n - 1].n == i) {
            CKernel *c = &k[*n - 1];
            c->n++;
            c->bytes += s->f[i].bytes;
            if (s->f[i].mtime > c->last_use) c->last_use = s->f[i].mtime;
        } else {
            k[(*n)++] = (CKernel){i, 1, s->f[i].bytes, s->f[i].mtime};
        }
    }
    qsort(k, (size_t)*n, sizeof *k, by_use);
    return k;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Unlink one of our files if it is still a regular file not modified
 * after `before` (another process may have rewritten it since the scan);
 * its bytes, or 0. */
static int64_t remove_file(int dfd, const char *name, double before) {
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) || st_mtime_s(&st) > before)
        return 0;
    return unlinkat(dfd, name, 0) == 0 ? (int64_t)st.st_size : 0;
}

/* Remove kernels (oldest use first) until the cache's bytes are at most
 * keep, sparing those used after `spare_after`; stale temporaries too, and
 * (all) memos when keep is 0.  Adds what it removed to *removed and *rbytes;
 * s->bytes is updated. */
static void trim_scan(const char *dir, CScan *s, int64_t keep, double spare_after, int64_t *removed,
                      int64_t *rbytes) {
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return;
    double now = now_s();
    for (int i = 0; i < s->n; i++) /* dead writers' temporaries */
        if (s->f[i].kind == CF_TEMP && s->f[i].mtime < now - CACHE_TMP_STALE_S) {
            int64_t b = remove_file(dfd, s->f[i].name, now - CACHE_TMP_STALE_S);
            s->bytes -= b;
            *rbytes += b;
        }
    int nk;
    CKernel *k = group(s, &nk);
    for (int i = 0; k && i < nk && s->bytes > keep; i++) {
        if (k[i].last_use > spare_after) break; /* the rest are newer still */
        int64_t b = 0;
        /* the source first: without it no reader takes the binary for a hit */
        for (int pass = 0; pass < 2; pass++)
            for (int j = k[i].first; j < k[i].first + k[i].n; j++) {
                const char *nm = s->f[j].name;
                size_t len = strlen(nm);
                int src = !strcmp(nm + len - 2, ".c") || !strcmp(nm + len - 3, ".cu");
                if (src == (pass == 0)) b += remove_file(dfd, nm, spare_after);
            }
        s->bytes -= b;
        *rbytes += b;
        *removed += 1;
    }
    free(k);
    if (keep == 0)
        for (int i = 0; i < s->n; i++)
            if (s->f[i].kind == CF_MEMO) {
                int64_t b = remove_file(dfd, s->f[i].name, spare_after);
                s->bytes -= b;
                *rbytes += b;
            }
    close(dfd);
}

/* The lock file's descriptor, locked (blocking or not); -1 if not. */
static int lock_cache(const char *dir, int wait) {
    TsBuf p = {0};
    ts_buf_printf(&p, "%s/tilescale-cache.lock", dir);
    int fd = p.oom ? -1 : open(p.s, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    ts_buf_free(&p);
    if (fd < 0) return -1;
    while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
        if (errno == EINTR) continue;
        close(fd);
        return -1;
    }
    return fd;
}

void ts_cache_trim(const char *dir) {
    int64_t limit;
    if (!cache_limit(&limit) || limit == 0) return;
    int fd = lock_cache(dir, 0);
    if (fd < 0) return; /* another process is trimming */
    CScan s;
    if (scan_dir(dir, &s) == 0 && s.bytes > limit) {
        int64_t removed = 0, rbytes = 0;
        trim_scan(dir, &s, limit, now_s() - CACHE_GRACE_S, &removed, &rbytes);
    }
    scan_free(&s);
    close(fd);
}

/* ---- the public API ------------------------------------------------------ */

static TsStatus cache_report(TsContext *ctx, const char *dir, int64_t keep, int clean, TsCacheInfo *out) {
    if (!ctx) return TS_ERR_INVALID;
    ts_buf_free(&ctx->diag.msg);
    ctx->diag.status = TS_OK;
    TsCacheInfo ci;
    memset(&ci, 0, sizeof ci);
    TsStatus st = check_limit(&ctx->diag);
    TsBuf path = {0};
    if (!st) st = cache_path(&ctx->diag, dir, &path);
    if (st) {
        ts_buf_free(&path);
        return ctx->diag.status = st;
    }
    cache_limit(&ci.limit);
    ts_arena_free(&ctx->scratch);
    ts_arena_init(&ctx->scratch);
    ci.dir = ts_strdup(&ctx->scratch, path.s); /* no oom handler: ts_alloc's internal-error path */
    CScan s;
    if (scan_dir(path.s, &s) != 0) {
        int e = errno;
        if (e != ENOENT) {
            ts_diag_add(&ctx->diag, (TsLoc){0}, "error", "cannot read the kernel cache directory '%s': %s", path.s,
                        strerror(e));
            ts_buf_free(&path);
            return ctx->diag.status = TS_ERR_IO;
        }
    } else if (clean) {
        int fd = lock_cache(path.s, 1);
        trim_scan(path.s, &s, keep, keep ? now_s() - CACHE_GRACE_S : now_s() + 1, &ci.removed, &ci.removed_bytes);
        if (fd >= 0) close(fd);
        scan_free(&s);
        scan_dir(path.s, &s); /* what is left */
    }
    int nk;
    CKernel *k = group(&s, &nk);
    ci.kernels = nk;
    free(k);
    ci.files = s.n;
    ci.bytes = s.bytes;
    ci.foreign = s.foreign;
    scan_free(&s);
    ts_buf_free(&path);
    if (out) *out = ci;
    return TS_OK;
}

TsStatus ts_cache_info(TsContext *ctx, const char *dir, TsCacheInfo *out) {
    return cache_report(ctx, dir, 0, 0, out);
}

TsStatus ts_cache_clean(TsContext *ctx, const char *dir, int64_t keep_bytes, TsCacheInfo *out) {
    if (keep_bytes < 0) return TS_ERR_INVALID;
    return cache_report(ctx, dir, keep_bytes, 1, out);
}

int ts_write_atomic(const char *path, const void *data, size_t n, int mode) {
    TsBuf tb = {0}; /* no fixed buffer: any path the OS accepts */
    ts_buf_printf(&tb, "%s.tmp-XXXXXX", path);
    char *tmp = tb.s;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        ts_buf_free(&tb);
        errno = e;
        return -1;
    }
    const char *p = data;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, p + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            ts_buf_free(&tb);
            errno = e ? e : EIO;
            return -1;
        }
        done += (size_t)w;
    }
    if (close(fd) != 0 || chmod(tmp, (mode_t)mode) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        ts_buf_free(&tb);
        errno = e;
        return -1;
    }
    ts_buf_free(&tb);
    return 0;
}
