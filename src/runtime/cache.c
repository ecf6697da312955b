/*
 * cache.c — the kernel cache's directory and atomic file writes, shared by
 * the C target (target/c/build_c.c) and the CUDA target (target/cuda/nvrtc.c).
 * Keys and file names are each target's business.
 */
#include "runtime/cache.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
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

TsStatus ts_cache_dir(TsDiag *d, const TsCompileOptions *opt, TsBuf *out) {
    const char *dir = opt && opt->cache_dir && *opt->cache_dir ? opt->cache_dir : NULL;
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
    if (ts_make_dirs(out->s) != 0) {
        ts_diag_add(d, (TsLoc){0}, "error", "cannot create the kernel cache directory '%s': %s", out->s,
                    strerror(errno));
        return TS_ERR_IO;
    }
    return TS_OK;
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
