/*
 * nvcc.c — the run-time build of CUDA kernels that NVRTC cannot compile:
 * those using NCCL's device API (nccl_device.h: a kernel compiled for
 * several nodes reaches ranks of other nodes through NCCL's GIN).
 *
 * Why not NVRTC.  NCCL 2.28's device headers are written for nvcc with a
 * GNU host compiler.  Under NVRTC (13.0, tried with -I the CUDA and CCCL
 * include directories and stand-in libc headers) they fail in layers:
 * libc headers NVRTC does not have (stdint.h, stdbool.h, stdio.h,
 * limits.h, math.h, errno.h, linux/types.h, cstdint, ...: stand-ins get
 * past them), host-only declarations (`__host__` functions of nccl.h and
 * nccl_device/core.h: "not allowed in JIT mode"; a macro gets past them),
 * GNU `typeof` in DOCA's ACCESS_ONCE, zero-length arrays in
 * nccl_device/utility.h's loadConst unions, and finally GNU attributes
 * written after a struct's body (`struct {...} __attribute__((packed))
 * member;`), which NVRTC ignores with warning 1866 ("attribute does not
 * apply to any entity") where gcc packs the struct: the GIN proxy's
 * 64-byte descriptors (static_asserts fail) and DOCA's WQE segments
 * (no assert: a different layout from what the NIC reads).  Nothing short
 * of rewriting NCCL's headers fixes the last one, so those kernels are
 * built by nvcc, started at run time like the C target's cc.
 *
 * Which kernels.  The generated source says it: nvrtc.c's ts_cuda_image
 * and ts_nvrtc_emit send a source containing TS_CUDA_NCCL_MARK (the
 * include comm_cuda.c's GIN prelude prints) here; all else stays NVRTC.
 *
 * Finding the tools (ts_nvcc_find).  nvcc: TsCompileOptions.nvcc (the
 * driver fills it from $TILESCALE_NVCC), else bin/nvcc under $CUDA_HOME,
 * $CUDA_PATH and /usr/local/cuda, else nvcc in a $PATH directory.  The
 * NCCL headers: TsCompileOptions.nccl_include ($TILESCALE_NCCL_INCLUDE),
 * else $NCCL_HOME/include, nvcc's own ../include, /usr/local/include,
 * /usr/include: the first directory holding nccl_device.h of NCCL 2.28.7
 * or later (NCCL_VERSION_CODE in its nccl.h; older 2.28 headers have no
 * ncclGin).  Where none is found the error lists every place tried, with
 * the version of the headers that were too old.
 *
 * The build.  `nvcc -cubin -arch=sm_XY -std=c++17 -w -x cu -I<nccl>` plus
 * what the kernel asks ptxas for (ts_cuda_asked_opts, for nvcc 13 on),
 * PTX (-ptx) for compute_XY; the source and the output go through
 * temporary files named like the cache's own temporaries (<path>.tmp-
 * XXXXXX, so an abandoned one is trimmed), never through a shell.  The
 * cache (nvrtc.c) keys the result by the source plus a trailing comment
 * naming nvcc and the NCCL headers by path, size and modification time
 * (ts_nvcc_find's `ident`), so a hit runs nothing; the image is loaded
 * with the driver API like NVRTC's.
 */
#include "target/cuda/cuda_target.h"

/* NCCL_VERSION_CODE of the first release with GIN's device API (ncclGin;
 * NCCL's device API documentation: "GIN is supported since NCCL 2.28.7").
 * Headers of 2.28.0-2.28.6 have nccl_device.h without it. */
#define TS_NCCL_GIN_MIN 22807

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ts_nvcc_free(TsNvcc *n) {
    ts_buf_free(&n->path);
    ts_buf_free(&n->inc);
    ts_buf_free(&n->ident);
}

/* An executable regular file at path. */
static int is_exe(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Try the candidate dir/name (name alone where dir is NULL); 1 and into
 * out if it is an executable, else the candidate goes to the list tried. */
static int try_exe(TsBuf *out, TsBuf *tried, const char *dir, int dirlen, const char *name) {
    ts_buf_free(out);
    if (dir) ts_buf_printf(out, "%.*s/%s", dirlen, dir, name);
    else ts_buf_puts(out, name);
    if (!out->oom && is_exe(ts_buf_str(out))) return 1;
    ts_buf_printf(tried, "%s%s", tried->n ? ", " : "", ts_buf_str(out));
    return 0;
}

/* path's identity for the cache key: real path, size, mtime (or "" when it
 * cannot be stat'ed). */
static void ident_of(TsBuf *out, const char *what, const char *path) {
    struct stat st;
    char *real = realpath(path, NULL);
    if (stat(path, &st) == 0)
        ts_buf_printf(out, "%s %s (%lld bytes, %lld.%09ld)", what, real ? real : path, (long long)st.st_size,
                      (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
    free(real);
}

/* NCCL_VERSION_CODE in dir/nccl.h, or 0. */
static long nccl_version(const char *dir) {
    TsBuf p = {0};
    ts_buf_printf(&p, "%s/nccl.h", dir);
    size_t len = 0;
    char *s = p.oom ? NULL : ts_read_file(ts_buf_str(&p), &len);
    ts_buf_free(&p);
    if (!s) return 0;
    const char *v = strstr(s, "#define NCCL_VERSION_CODE");
    long code = v ? strtol(v + strlen("#define NCCL_VERSION_CODE"), NULL, 10) : 0;
    free(s);
    return code;
}

int ts_nvcc_find(TsDiag *d, const TsCompileOptions *opt, TsNvcc *n) {
    memset(n, 0, sizeof *n);
    TsBuf tried = {0};
    int found = 0;
    const char *given = opt && opt->nvcc && *opt->nvcc ? opt->nvcc : NULL;
    if (given && strchr(given, '/')) {
        found = try_exe(&n->path, &tried, NULL, 0, given);
    } else if (!given) {
        const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
        for (int i = 0; !found && i < 3; i++)
            if (homes[i] && *homes[i]) found = try_exe(&n->path, &tried, homes[i], (int)strlen(homes[i]), "bin/nvcc");
    }
    /* a bare name (given, or nvcc after the homes) is searched on $PATH */
    const char *name = given ? given : "nvcc";
    for (const char *lp = getenv("PATH"); !found && !strchr(name, '/') && lp && *lp;) {
        const char *e = strchr(lp, ':');
        int len = e ? (int)(e - lp) : (int)strlen(lp);
        if (len > 0) found = try_exe(&n->path, &tried, lp, len, name);
        lp = e ? e + 1 : NULL;
    }
    if (!found) {
        ts_diag_add(d, (TsLoc){0}, "error",
                    "this kernel uses NCCL's device API (several nodes: GIN), which NVRTC cannot compile, and "
                    "no nvcc was found to build it (tried %s); set TsCompileOptions.nvcc, $TILESCALE_NVCC or "
                    "$CUDA_HOME",
                    tried.n ? ts_buf_str(&tried) : "nothing: $PATH is empty");
        d->status = TS_ERR_BUILD;
        ts_buf_free(&tried);
        ts_nvcc_free(n);
        return -1;
    }
    /* the NCCL headers */
    ts_buf_free(&tried);
    TsBuf nvcc_inc = {0};
    const char *slash = strrchr(ts_buf_str(&n->path), '/');
    if (slash) ts_buf_printf(&nvcc_inc, "%.*s/../include", (int)(slash - n->path.s), n->path.s);
    TsBuf nccl_home = {0};
    const char *nh = getenv("NCCL_HOME");
    if (nh && *nh) ts_buf_printf(&nccl_home, "%s/include", nh);
    const char *given_inc = opt && opt->nccl_include && *opt->nccl_include ? opt->nccl_include : NULL;
    const char *dirs[] = {given_inc, nccl_home.n ? ts_buf_str(&nccl_home) : NULL,
                          nvcc_inc.n ? ts_buf_str(&nvcc_inc) : NULL, "/usr/local/include", "/usr/include"};
    found = 0;
    for (int i = 0; !found && i < (given_inc ? 1 : 5); i++) {
        if (!dirs[i]) continue;
        TsBuf h = {0};
        struct stat st;
        ts_buf_printf(&h, "%s/nccl_device.h", dirs[i]);
        long v = 0;
        if (!h.oom && stat(ts_buf_str(&h), &st) == 0 && S_ISREG(st.st_mode) &&
            (v = nccl_version(dirs[i])) >= TS_NCCL_GIN_MIN) {
            char *real = realpath(dirs[i], NULL);
            ts_buf_puts(&n->inc, real ? real : dirs[i]);
            free(real);
            found = 1;
        } else if (v > 0) { /* headers without GIN's device API (ncclGin): an older NCCL 2.28 */
            ts_buf_printf(&tried, "%s%s (NCCL %ld.%ld.%ld: no GIN device API)", tried.n ? ", " : "", dirs[i],
                          v / 10000, v / 100 % 100, v % 100);
        } else {
            ts_buf_printf(&tried, "%s%s", tried.n ? ", " : "", dirs[i]);
        }
        ts_buf_free(&h);
    }
    ts_buf_free(&nvcc_inc);
    ts_buf_free(&nccl_home);
    if (!found) {
        ts_diag_add(d, (TsLoc){0}, "error",
                    "this kernel uses NCCL's device API (several nodes: GIN) and no nccl_device.h with it was "
                    "found (NCCL 2.28.7 or later, where GIN starts; looked in %s); set "
                    "TsCompileOptions.nccl_include, $TILESCALE_NCCL_INCLUDE or $NCCL_HOME",
                    ts_buf_str(&tried));
        d->status = TS_ERR_BUILD;
        ts_buf_free(&tried);
        ts_nvcc_free(n);
        return -1;
    }
    ts_buf_free(&tried);
    ident_of(&n->ident, "nvcc", ts_buf_str(&n->path));
    TsBuf h = {0};
    ts_buf_printf(&h, "%s/nccl.h", ts_buf_str(&n->inc));
    ts_buf_printf(&n->ident, ", NCCL %ld: ", nccl_version(ts_buf_str(&n->inc)));
    ident_of(&n->ident, "nccl.h", ts_buf_str(&h));
    ts_buf_free(&h);
    if (n->path.oom || n->inc.oom || n->ident.oom) {
        ts_diag_add(d, (TsLoc){0}, "error", "out of memory");
        d->status = TS_ERR_NOMEM;
        ts_nvcc_free(n);
        return -1;
    }
    return 0;
}

/* nvcc's major version (`nvcc --version`: "release 13.0"), 0 if unknown. */
static int nvcc_major(const TsNvcc *n) {
    char *argv[] = {(char *)ts_buf_str((TsBuf *)&n->path), (char *)"--version", NULL};
    TsBuf out = {0};
    int major = 0;
    if (ts_run_capture(argv, &out) == 0) {
        const char *r = strstr(ts_buf_str(&out), "release ");
        if (r) major = atoi(r + 8);
    }
    ts_buf_free(&out);
    return major;
}

/* A new temporary file "<base>.tmp-XXXXXX" (the cache's temporary form),
 * its name into name; 0 on success. */
static int temp_file(TsBuf *name, const char *base) {
    ts_buf_free(name);
    ts_buf_printf(name, "%s.tmp-XXXXXX", base);
    if (name->oom) return -1;
    int fd = mkstemp(name->s);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

unsigned char *ts_nvcc_compile(TsDiag *d, const TsNvcc *n, const char *text, const char *arch, int ptx,
                               const char *base, size_t *size) {
    TsBuf src = {0}, out = {0}, incopt = {0}, archopt = {0}, log = {0}, srcbase = {0}, outbase = {0};
    unsigned char *img = NULL;
    ts_buf_printf(&srcbase, "%s.cu", base);
    ts_buf_printf(&outbase, "%s.%s", base, ptx ? "ptx" : "cubin");
    if (temp_file(&src, ts_buf_str(&srcbase)) != 0 || temp_file(&out, ts_buf_str(&outbase)) != 0) {
        ts_diag_add(d, (TsLoc){0}, "error", "cannot create a temporary file beside '%s' for nvcc: %s",
                    ts_buf_str(&srcbase), strerror(errno));
        d->status = TS_ERR_IO;
        goto done;
    }
    FILE *f = fopen(ts_buf_str(&src), "w");
    int wrote = f && fputs(text, f) >= 0;
    if (f && fclose(f) != 0) wrote = 0;
    if (!wrote) {
        ts_diag_add(d, (TsLoc){0}, "error", "cannot write '%s' for nvcc: %s", ts_buf_str(&src), strerror(errno));
        d->status = TS_ERR_IO;
        goto done;
    }
    ts_buf_printf(&incopt, "-I%s", ts_buf_str((TsBuf *)&n->inc));
    ts_buf_printf(&archopt, "-arch=%s", arch);
    const char *argv[24 + TS_CUDA_ASKED_MAX];
    int na = 0;
    argv[na++] = ts_buf_str((TsBuf *)&n->path);
    argv[na++] = ptx ? "-ptx" : "-cubin";
    argv[na++] = ts_buf_str(&archopt);
    argv[na++] = "-std=c++17";
    argv[na++] = "-w";
    argv[na++] = "-x";
    argv[na++] = "cu";
    argv[na++] = ts_buf_str(&incopt);
    if (nvcc_major(n) >= 13) na += ts_cuda_asked_opts(text, arch, argv + na);
    argv[na++] = "-o";
    argv[na++] = ts_buf_str(&out);
    argv[na++] = ts_buf_str(&src);
    argv[na] = NULL;
    int st = ts_run_capture((char *const *)argv, &log);
    if (st != 0) {
        TsBuf cmd = {0};
        for (int i = 0; i < na; i++) ts_buf_printf(&cmd, "%s%s", i ? " " : "", argv[i]);
        if (st < 0)
            ts_diag_add(d, (TsLoc){0}, "error", "cannot run nvcc (%s): %s", ts_buf_str(&cmd), strerror(errno));
        else
            ts_diag_add(d, (TsLoc){0}, "error", "nvcc could not compile the generated CUDA code for %s (exit %d; %s):\n%s",
                        arch, st, ts_buf_str(&cmd), ts_buf_str(&log));
        ts_buf_free(&cmd);
        d->status = TS_ERR_BUILD;
        goto done;
    }
    size_t len = 0;
    img = (unsigned char *)ts_read_file(ts_buf_str(&out), &len);
    if (!img || len == 0) {
        free(img);
        img = NULL;
        ts_diag_add(d, (TsLoc){0}, "error", "nvcc produced no %s for %s", ptx ? "PTX" : "cubin", arch);
        d->status = TS_ERR_BUILD;
        goto done;
    }
    *size = ptx ? strlen((char *)img) + 1 : len; /* ts_read_file NUL-terminates */
done:
    if (src.n) unlink(ts_buf_str(&src));
    if (out.n) unlink(ts_buf_str(&out));
    ts_buf_free(&src);
    ts_buf_free(&out);
    ts_buf_free(&incopt);
    ts_buf_free(&archopt);
    ts_buf_free(&log);
    ts_buf_free(&srcbase);
    ts_buf_free(&outbase);
    return img;
}
