/*
 * nvrtc.c — generated CUDA C++ -> cubin with NVRTC, through a disk cache.
 *
 * NVRTC is opened with dlopen at run time, never linked: libtilescale must
 * build and run where there is no CUDA at all.  The library is found as a
 * file first (nvrtc_locate): $TILESCALE_NVRTC (a path), else libnvrtc.so,
 * .so.13, .so.12, .so.11.2 in each $LD_LIBRARY_PATH directory, else
 * lib64/libnvrtc.so under $CUDA_HOME, $CUDA_PATH and /usr/local/cuda;
 * only when none of those exists are the bare names left to the dynamic
 * loader's own search (ld.so.cache, rpath).  The library is opened
 * RTLD_NODELETE, so opening it again for the next kernel costs little and
 * no handle needs to live in a global.  Only the C entry points are used, declared here with plain
 * types (nvrtcResult is an int, nvrtcProgram a pointer), so no CUDA
 * header is needed to build either.
 *
 * Architecture.  $TILESCALE_CUDA_ARCH if set ("sm_80", "sm_90a", ...),
 * else the device's compute capability read through the driver (sm_XY),
 * else sm_80 (a machine without a GPU: the kernel compiles, the launch
 * then reports that there is no driver).  If this NVRTC does not know the
 * device's architecture (a GPU newer than the toolkit), the build asks
 * for PTX of the newest architecture it does know and lets the driver
 * compile that.  A device of compute capability 9.0 (H100, H200) gets
 * sm_90a, whose arch-specific instructions the passes may then choose
 * (setmaxnreg in ws_role_regs; wgmma): an sm_90a image runs on exactly
 * that capability, which is the device's.  On the H200 (session 9,
 * bench/ws_regs_gpu_check.sh) that made the warp-specialised GEMMs 2.2x
 * (ws_matmul 0.778 -> 0.360 ms) and 1.4x (the ring, 0.472 -> 0.332 ms)
 * faster.  $TILESCALE_CUDA_ARCH=sm_90 keeps the portable form.
 *
 * Cache.  Like the C target's: key = 128-bit hash of the exact text kept
 * on disk, which is the generated source plus a trailing comment naming
 * the NVRTC version, the architecture and the options; files
 * <dir>/tsk-<key>.cu and .cubin (.ptx for PTX); a hit needs both and the
 * .cu text equal, so collisions and half-written files never load.
 * Writers go through a temporary file and rename.  The directory is
 * opt->cache_dir, $TILESCALE_CACHE_DIR or ~/.cache/tilescale.
 *
 * A cache hit does not open NVRTC.  Opening it (dlopen of a 100 MB
 * library: 6 ms on the CI machine, more on the H200's) was most of a hit's
 * time, and the key needs only NVRTC's version and architecture list.
 * Those are kept beside the kernels in nvrtc-<id>.txt, where <id> hashes
 * the located library file's real path, inode, size and modification time:
 * another NVRTC, or the same path replaced, is another id, so the key
 * never names a version other than the library a miss would compile with
 * (nvrtc_open opens exactly the located file).  Where the library is left
 * to the loader's search it has no id, and every build opens it.
 * (The directory logic mirrors build_c.c's static helpers; fold both into
 * one shared helper when somebody owns a place for it.)
 *
 * A source that includes NCCL's device API (TS_CUDA_NCCL_MARK: kernels
 * compiled for several nodes) is not NVRTC's: ts_cuda_image and
 * ts_nvrtc_emit hand it to nvcc (nvcc.c says why), through the same cache.
 */
#include "target/cuda/cuda_target.h"
#include "runtime/cache.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* The NVRTC entry points we use. */
typedef struct Nvrtc {
    void *dl;                                                  /* dlopen handle */
    TsBuf path;                                                /* what was opened (no length limit) */
    int (*version)(int *major, int *minor);                    /* nvrtcVersion */
    const char *(*error_string)(int result);                   /* nvrtcGetErrorString */
    int (*create)(void **prog, const char *src, const char *name, int nheaders,
                  const char *const *headers, const char *const *include_names); /* nvrtcCreateProgram */
    int (*destroy)(void **prog);                               /* nvrtcDestroyProgram */
    int (*compile)(void *prog, int nopts, const char *const *opts); /* nvrtcCompileProgram */
    int (*log_size)(void *prog, size_t *n);                    /* nvrtcGetProgramLogSize */
    int (*log)(void *prog, char *log);                         /* nvrtcGetProgramLog */
    int (*cubin_size)(void *prog, size_t *n);                  /* nvrtcGetCUBINSize */
    int (*cubin)(void *prog, char *cubin);                     /* nvrtcGetCUBIN */
    int (*ptx_size)(void *prog, size_t *n);                    /* nvrtcGetPTXSize */
    int (*ptx)(void *prog, char *ptx);                         /* nvrtcGetPTX */
    int (*num_archs)(int *n);                                  /* nvrtcGetNumSupportedArchs (optional) */
    int (*archs)(int *archs);                                  /* nvrtcGetSupportedArchs (optional) */
} Nvrtc;

/* The options every compile gets after --gpu-architecture. */
static const char *const base_opts[] = {"-default-device", "--std=c++17"};

/* And from NVRTC 13.0 on (documented in its nvrtc.h; older versions are
 * not assumed to know them).  -minimal leaves texture/surface functions,
 * the device runtime's cuda* functions and device-side launches out of
 * NVRTC's built-in header, none of which the generated code uses: the
 * cubins of every bench example are byte-identical with and without it,
 * and the front end is 2-3 ms shorter (bench/RESULTS.md, "NVRTC cold"). */
static const char *const opts_13[] = {"-minimal"};

/* ptxas's --register-usage-level (0..10, default 5; a beta option of the
 * ptxas of CUDA 13, so from NVRTC 13.0 on, and only for cubins: sm_XY).
 * A kernel asks for a level with TS_CUDA_PTXAS_LEVEL at the start of its
 * second line (the code generator writes it for tensor-core loops: see
 * codegen_cuda.c).  The option is in the source, so --emit ptx|sass, the
 * build and the cache key (which hashes the source) all agree. */
static const char *const reg_levels[] = {
    "--register-usage-level=0", "--register-usage-level=1", "--register-usage-level=2", "--register-usage-level=3",
    "--register-usage-level=4", "--register-usage-level=5", "--register-usage-level=6", "--register-usage-level=7",
    "--register-usage-level=8", "--register-usage-level=9", "--register-usage-level=10"};

/* ptxas's fast-compile level, asked for after the register-usage level
 * (TS_CUDA_PTXAS_FAST: inject_pipeline's decision, an opt-in trade of
 * kernel time for compile time, off by default; ptxas of CUDA 13 documents
 * --Ofast-compile 0|min|mid|max). */
static const char ptxas_fast_opt[] = "--Ofast-compile=min";

/* The level the code asks for, or -1; *fast: whether it asks for the
 * fast-compile level too (only with a valid level). */
static int asked_reg_level(const char *code, int *fast) {
    const char *nl = code ? strchr(code, '\n') : NULL;
    size_t n = strlen(TS_CUDA_PTXAS_LEVEL);
    *fast = 0;
    if (!nl || strncmp(nl + 1, TS_CUDA_PTXAS_LEVEL, n)) return -1;
    const char *p = nl + 1 + n;
    if (p[0] < '0' || p[0] > '9') return -1;
    int v = p[0] - '0';
    if (p[1] >= '0' && p[1] <= '9') v = v * 10 + (p[1] - '0');
    p += v >= 10 ? 2 : 1;
    if (v > 10) return -1;
    *fast = !strncmp(p, TS_CUDA_PTXAS_FAST, strlen(TS_CUDA_PTXAS_FAST));
    return v;
}

/* NVRTC's own fast-compile level (NVVM and ptxas; NVRTC 13 documents
 * --Ofast-compile 0|min|mid|max): a kernel's quick tier asks for it on a
 * line of its own, TS_CUDA_NVRTC_FAST, second or third (pass tier_plan,
 * IrKernel.nvrtc_fast_compile).  min keeps the unroll pragmas (mid and max
 * unroll nothing: register arrays go to local memory). */
static const char nvrtc_fast_opt[] = "--Ofast-compile=min";

static int asked_nvrtc_fast(const char *code) {
    const char *p = code;
    for (int line = 0; p && line < 3; line++) {
        if (line > 0 && !strncmp(p, TS_CUDA_NVRTC_FAST, strlen(TS_CUDA_NVRTC_FAST))) return 1;
        p = strchr(p, '\n');
        if (p) p++;
    }
    return 0;
}

int ts_cuda_asked_opts(const char *code, const char *arch, const char *opts[TS_CUDA_ASKED_MAX]) {
    int n = 0, fast = 0;
    int lv = asked_reg_level(code, &fast);
    if (lv >= 0 && !strncmp(arch, "sm_", 3)) {
        opts[n++] = "-Xptxas";
        opts[n++] = reg_levels[lv];
        if (fast) {
            opts[n++] = "-Xptxas";
            opts[n++] = ptxas_fast_opt;
        }
    }
    if (asked_nvrtc_fast(code)) opts[n++] = nvrtc_fast_opt;
    return n;
}

/* The options for NVRTC version vmaj compiling code for arch: base_opts,
 * then opts_13 and what the kernel asks for (ts_cuda_asked_opts) where
 * known; into opts (room for NVRTC_MAX_OPTS).  Returns their number. */
#define NVRTC_MAX_OPTS (TS_COUNTOF(base_opts) + TS_COUNTOF(opts_13) + TS_CUDA_ASKED_MAX)
static int version_opts(int vmaj, const char *code, const char *arch, const char **opts) {
    int n = 0;
    for (int i = 0; i < TS_COUNTOF(base_opts); i++) opts[n++] = base_opts[i];
    for (int i = 0; vmaj >= 13 && i < TS_COUNTOF(opts_13); i++) opts[n++] = opts_13[i];
    if (vmaj >= 13) n += ts_cuda_asked_opts(code, arch, opts + n);
    return n;
}

static void sym(void *dl, const char *name, void *fnptr) {
    void *p = dlsym(dl, name);
    memcpy(fnptr, &p, sizeof p);
}

static const char *const nvrtc_names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"};

/* The NVRTC library file (see the essay), into path (emptied first; any
 * length: a fixed buffer cut a long TILESCALE_NVRTC or CUDA_HOME, and the
 * open then failed on a name nobody gave); 1 if one exists, 0 if only the
 * loader's search is left (or $TILESCALE_NVRTC names a file that is not
 * there: then the open fails and says so). */
static int nvrtc_locate(TsBuf *path) {
    struct stat st;
    const char *env = getenv("TILESCALE_NVRTC");
    ts_buf_free(path);
    if (env && *env) {
        ts_buf_puts(path, env);
        return !path->oom && strchr(env, '/') && stat(ts_buf_str(path), &st) == 0;
    }
    const char *lp = getenv("LD_LIBRARY_PATH");
    while (lp && *lp) {
        const char *e = strchr(lp, ':');
        int len = e ? (int)(e - lp) : (int)strlen(lp);
        for (int i = 0; len > 0 && i < TS_COUNTOF(nvrtc_names); i++) {
            ts_buf_free(path);
            ts_buf_printf(path, "%.*s/%s", len, lp, nvrtc_names[i]);
            if (!path->oom && stat(ts_buf_str(path), &st) == 0 && S_ISREG(st.st_mode)) return 1;
        }
        lp = e ? e + 1 : NULL;
    }
    const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    for (int i = 0; i < 3; i++) {
        if (!homes[i] || !*homes[i]) continue;
        ts_buf_free(path);
        ts_buf_printf(path, "%s/lib64/libnvrtc.so", homes[i]);
        if (!path->oom && stat(ts_buf_str(path), &st) == 0 && S_ISREG(st.st_mode)) return 1;
    }
    ts_buf_free(path);
    return 0;
}

/* Open NVRTC into n; 0 on success, else -1 with the reason in why. */
static int nvrtc_open(Nvrtc *n, TsBuf *why) {
    memset(n, 0, sizeof *n);
    const char *cand[8];
    int nc = 0;
    const char *env = getenv("TILESCALE_NVRTC");
    TsBuf found = {0};
    if (nvrtc_locate(&found) || (env && *env)) cand[nc++] = ts_buf_str(&found);
    else
        for (int i = 0; i < TS_COUNTOF(nvrtc_names); i++) cand[nc++] = nvrtc_names[i];
    const char *last = "";
    for (int i = 0; i < nc && !n->dl; i++) {
        n->dl = dlopen(cand[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (n->dl) ts_buf_puts(&n->path, cand[i]);
        else {
            const char *e = dlerror();
            last = e ? e : "";
        }
    }
    if (!n->dl) {
        if (why) ts_buf_printf(why, "NVRTC not found (tried %s%s; last error: %s); set TILESCALE_NVRTC or CUDA_HOME",
                               cand[0], nc > 1 ? " and others" : "", last);
        ts_buf_free(&found);
        return -1;
    }
    ts_buf_free(&found);
    sym(n->dl, "nvrtcVersion", &n->version);
    sym(n->dl, "nvrtcGetErrorString", &n->error_string);
    sym(n->dl, "nvrtcCreateProgram", &n->create);
    sym(n->dl, "nvrtcDestroyProgram", &n->destroy);
    sym(n->dl, "nvrtcCompileProgram", &n->compile);
    sym(n->dl, "nvrtcGetProgramLogSize", &n->log_size);
    sym(n->dl, "nvrtcGetProgramLog", &n->log);
    sym(n->dl, "nvrtcGetCUBINSize", &n->cubin_size);
    sym(n->dl, "nvrtcGetCUBIN", &n->cubin);
    sym(n->dl, "nvrtcGetPTXSize", &n->ptx_size);
    sym(n->dl, "nvrtcGetPTX", &n->ptx);
    sym(n->dl, "nvrtcGetNumSupportedArchs", &n->num_archs);
    sym(n->dl, "nvrtcGetSupportedArchs", &n->archs);
    if (!n->version || !n->error_string || !n->create || !n->destroy || !n->compile || !n->log_size ||
        !n->log || !n->cubin_size || !n->cubin || !n->ptx_size || !n->ptx) {
        if (why) ts_buf_printf(why, "'%s' lacks NVRTC entry points (nvrtcGetCUBIN needs CUDA 11.1 or later)",
                               ts_buf_str(&n->path));
        dlclose(n->dl);
        n->dl = NULL;
        ts_buf_free(&n->path);
        return -1;
    }
    return 0;
}

static void nvrtc_close(Nvrtc *n) {
    if (n->dl) dlclose(n->dl);
    n->dl = NULL;
    ts_buf_free(&n->path);
}

int ts_nvrtc_available(TsBuf *why) {
    Nvrtc n;
    if (nvrtc_open(&n, why) != 0) return 0;
    nvrtc_close(&n);
    return 1;
}

int ts_nvrtc_version(int *major, int *minor) {
    Nvrtc n;
    *major = *minor = 0;
    if (nvrtc_open(&n, NULL) != 0) return 0;
    int ok = n.version(major, minor) == 0;
    nvrtc_close(&n);
    return ok;
}

/* The number in "sm_90a" / "compute_80" (0 if none). */
static int arch_number(const char *arch) {
    const char *p = strchr(arch, '_');
    return p ? atoi(p + 1) : 0;
}

/* NVRTC's supported architectures (sm numbers) into list; their number,
 * 0 if this NVRTC cannot say. */
static int nvrtc_archs(Nvrtc *n, int list[256]) {
    int na = 0;
    if (!n->num_archs || !n->archs || n->num_archs(&na) != 0 || na <= 0 || na > 256) return 0;
    return n->archs(list) == 0 ? na : 0;
}

/* If an NVRTC supporting list[0..na) (na 0: unknown) cannot target
 * `arch`, replace it by compute_<newest> (PTX the driver compiles) when
 * the device is newer than the toolkit. */
static void fit_arch_list(const int *list, int na, char *arch, size_t cap) {
    int want = arch_number(arch), newest = 0;
    for (int i = 0; i < na; i++) {
        if (list[i] == want) return;
        if (list[i] > newest) newest = list[i];
    }
    if (want > newest && newest > 0) snprintf(arch, cap, "compute_%d", newest);
}

static void fit_arch(Nvrtc *n, char *arch, size_t cap) {
    int list[256];
    fit_arch_list(list, nvrtc_archs(n, list), arch, cap);
}

/* What compile_with returns: the image a build loads (cubin for sm_XY,
 * PTX for compute_XY), or PTX / cubin explicitly (`tilescale compile
 * --emit ptx|sass`: NVRTC keeps the PTX of an sm_XY compile too). */
enum { IMG_BUILD, IMG_PTX, IMG_CUBIN };

/* The CPU time of the calling thread, ms (NVRTC compiles on the caller's
 * thread: wall time well above it means a busy machine or page faults). */
static double thread_cpu_ms(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* NVRTC's own phase table (--time=-: "file, phase, N, ms" lines at the
 * end of the log) as timing lines "nvrtc front end N", "nvrtc nvvm N",
 * "nvrtc ptxas N" (other phase names lower-cased); the table is cut off
 * the log.  NVRTC 13.0 names its phases "CUDA C++ Frontend", "NVVM
 * Optimizer" (optimization and PTX generation) and "PTX Translation"
 * (ptxas, absent for PTX-only builds). */
static void take_phases(char *log, TsBuf *timing) {
    char *table = strstr(log, "File name, phase name");
    if (!table) return;
    for (char *line = table; *line;) {
        char *eol = strchr(line, '\n');
        if (eol) *eol = 0;
        char *f2 = strstr(line, ", "), *f3 = f2 ? strstr(f2 + 2, ", ") : NULL;
        if (f2 && f3 && line != table) {
            char name[64];
            int len = (int)(f3 - (f2 + 2));
            snprintf(name, sizeof name, "%.*s", len < 63 ? len : 63, f2 + 2);
            for (char *c = name; *c; c++) *c = (*c >= 'A' && *c <= 'Z') ? (char)(*c - 'A' + 'a') : *c == ',' ? ' ' : *c;
            const char *shown = !strcmp(name, "cuda c++ frontend") ? "front end"
                                : !strcmp(name, "nvvm optimizer")  ? "nvvm"
                                : !strcmp(name, "ptx translation") ? "ptxas"
                                                                   : name;
            if (timing) ts_buf_printf(timing, "nvrtc %s %.3f\n", shown, strtod(f3 + 2, NULL));
        }
        if (!eol) break;
        line = eol + 1;
    }
    *table = 0;
}

/* Compile with an open NVRTC; malloc'ed image or NULL with the error
 * added to d, naming the kernel kname (the caller's; NULL: a source of no
 * known kernel).  With timing, NVRTC's phases (--time=-, NVRTC 13.0 on) and
 * the thread's CPU time are added to it. */
static unsigned char *compile_with(TsDiag *d, Nvrtc *n, const char *code, const char *arch, const char *kname,
                                   int what, size_t *size, TsBuf *timing) {
    void *prog = NULL;
    int r = n->create(&prog, code, "tilescale_kernel.cu", 0, NULL, NULL);
    if (r != 0) {
        ts_diag_add(d, (TsLoc){0}, "error", "nvrtcCreateProgram failed: %s", n->error_string(r));
        d->status = TS_ERR_BUILD;
        return NULL;
    }
    int vmaj = 0, vmin = 0;
    n->version(&vmaj, &vmin);
    char archopt[64];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    const char *opts[2 + NVRTC_MAX_OPTS];
    opts[0] = archopt;
    int nopts = 1 + version_opts(vmaj, code, arch, opts + 1);
    int phases = timing && vmaj >= 13;
    if (phases) opts[nopts++] = "--time=-"; /* NVRTC's phase table into the log; no effect on the image */
    double cpu0 = thread_cpu_ms();
    r = n->compile(prog, nopts, opts);
    double cpu = thread_cpu_ms() - cpu0;
    size_t ln = 0;
    char *log = NULL;
    if ((r != 0 || phases) && n->log_size(prog, &ln) == 0 && ln > 0 && (log = malloc(ln + 1)) != NULL) {
        if (n->log(prog, log) != 0) log[0] = 0;
        log[ln] = 0;
    }
    if (log && phases) take_phases(log, r == 0 ? timing : NULL);
    if (r != 0) {
        ts_diag_add(d, (TsLoc){0}, "error", "NVRTC could not compile the generated CUDA code%s%s%s for %s (%s):\n%s",
                    kname ? " of kernel '" : "", kname ? kname : "", kname ? "'" : "", arch, n->error_string(r),
                    log ? log : "(no log)");
        d->status = TS_ERR_BUILD;
        free(log);
        n->destroy(&prog);
        return NULL;
    }
    free(log);
    if (timing) ts_buf_printf(timing, "nvrtc cpu %.3f\n", cpu);
    int ptx = what == IMG_PTX || (what == IMG_BUILD && !strncmp(arch, "compute_", 8));
    size_t sz = 0;
    unsigned char *img = NULL;
    r = ptx ? n->ptx_size(prog, &sz) : n->cubin_size(prog, &sz);
    if (r == 0 && sz > 0 && (img = malloc(sz + 1)) != NULL) {
        r = ptx ? n->ptx(prog, (char *)img) : n->cubin(prog, (char *)img);
        img[sz] = 0;
    }
    n->destroy(&prog);
    if (r != 0 || !img) {
        free(img);
        ts_diag_add(d, (TsLoc){0}, "error", "NVRTC produced no %s for %s", ptx ? "PTX" : "cubin", arch);
        d->status = TS_ERR_BUILD;
        return NULL;
    }
    *size = ptx ? strlen((char *)img) + 1 : sz;
    return img;
}

unsigned char *ts_nvrtc_compile(TsDiag *d, const char *code, const char *arch, size_t *size) {
    Nvrtc n;
    TsBuf why = {0};
    if (nvrtc_open(&n, &why) != 0) {
        ts_diag_add(d, (TsLoc){0}, "error", "%s", ts_buf_str(&why));
        d->status = TS_ERR_BUILD;
        ts_buf_free(&why);
        return NULL;
    }
    unsigned char *img = compile_with(d, &n, code, arch, NULL, IMG_BUILD, size, NULL);
    nvrtc_close(&n);
    return img;
}

/* ts_nvrtc_emit for a source with NCCL's device API: nvcc, temporaries in
 * the cache directory, nothing kept. */
static unsigned char *nvcc_emit(TsDiag *d, const char *code, const char *arch, int ptx, const TsCompileOptions *opt,
                                size_t *size) {
    TsNvcc nv;
    if (arch_number(arch) <= 0 || strlen(arch) >= 24) {
        ts_diag_add(d, (TsLoc){0}, "error", "'%s' is not a CUDA architecture (expected sm_XY, sm_XYa or compute_XY)",
                    arch);
        d->status = TS_ERR_BUILD;
        return NULL;
    }
    if (ts_nvcc_find(d, opt, &nv) != 0) return NULL;
    TsBuf dir = {0};
    unsigned char *img = NULL;
    if (ts_cache_dir(d, opt, &dir) == TS_OK) {
        TsBuf base = {0}; /* a kernel's name, so that an abandoned temporary is the cache's to trim */
        ts_buf_printf(&base, "%s/tsk-%016llx%016llx", ts_buf_str(&dir), (unsigned long long)ts_hash64(code, strlen(code), 0),
                      (unsigned long long)ts_hash64(code, strlen(code), 1));
        img = ts_nvcc_compile(d, &nv, code, arch, ptx || !strncmp(arch, "compute_", 8), ts_buf_str(&base), size);
        ts_buf_free(&base);
    }
    ts_buf_free(&dir);
    ts_nvcc_free(&nv);
    return img;
}

unsigned char *ts_nvrtc_emit(TsDiag *d, const char *code, const char *kname, const char *want_arch, int ptx,
                             const TsCompileOptions *opt, size_t *size) {
    if (strstr(code, TS_CUDA_NCCL_MARK)) return nvcc_emit(d, code, want_arch, ptx, opt, size);
    Nvrtc n;
    TsBuf why = {0};
    if (nvrtc_open(&n, &why) != 0) {
        ts_diag_add(d, (TsLoc){0}, "error", "%s", ts_buf_str(&why));
        d->status = TS_ERR_BUILD;
        ts_buf_free(&why);
        return NULL;
    }
    char arch[24];
    snprintf(arch, sizeof arch, "%s", want_arch);
    unsigned char *img = NULL;
    if (strlen(want_arch) >= sizeof arch || arch_number(arch) <= 0) {
        ts_diag_add(d, (TsLoc){0}, "error", "'%s' is not a CUDA architecture (expected sm_XY, sm_XYa or compute_XY)",
                    want_arch); /* the name as given, never the cut copy */
        d->status = TS_ERR_BUILD;
    } else {
        fit_arch(&n, arch, sizeof arch);
        if (!ptx && !strncmp(arch, "compute_", 8)) {
            ts_diag_add(d, (TsLoc){0}, "error",
                        "NVRTC %s makes no machine code for %s (only PTX for %s, which the driver compiles); "
                        "--emit ptx works", ts_buf_str(&n.path), want_arch, arch);
            d->status = TS_ERR_BUILD;
        } else {
            img = compile_with(d, &n, code, arch, kname, ptx ? IMG_PTX : IMG_CUBIN, size, NULL);
        }
    }
    nvrtc_close(&n);
    return img;
}

void ts_cuda_pick_arch(const char *want, char *arch, size_t n) {
    if (want && *want) {
        /* a name that does not fit is no architecture: say so rather than build for a cut copy */
        snprintf(arch, n, "%s", strlen(want) < n ? want : "(a name too long)");
        return;
    }
    if (ts_cuda_device_arch(arch, n, NULL)) {
        /* compute capability 9.0: its arch-specific features too (an
         * sm_90a image loads on exactly that capability, the device's) */
        if (!strcmp(arch, "sm_90") && n > 6) snprintf(arch, n, "sm_90a");
        return;
    }
    snprintf(arch, n, "sm_80");
}

/* ---- the disk cache ----------------------------------------------------------- */

typedef struct Build {
    Nvrtc nv;        /* open NVRTC */
    TsBuf dir;       /* cache directory */
    TsBuf text;      /* exact .cu text */
    TsBuf cupath;    /* <dir>/tsk-<key>.cu */
    TsBuf imgpath;   /* <dir>/tsk-<key>.cubin / .ptx */
} Build;

static void build_free(Build *b) {
    nvrtc_close(&b->nv);
    ts_buf_free(&b->dir);
    ts_buf_free(&b->text);
    ts_buf_free(&b->cupath);
    ts_buf_free(&b->imgpath);
}

TS_NORETURN TS_PRINTF(4, 5) static void build_fail(TsDiag *d, Build *b, TsStatus st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ts_diag_vadd(d, (TsLoc){0}, "error", fmt, ap);
    va_end(ap);
    build_free(b);
    ts_rethrow(d, st);
}




/* The cached image, if the .cu text matches exactly; else NULL. */
static unsigned char *cache_lookup(const Build *b, size_t *size) {
    size_t len;
    char *s = ts_read_file(b->cupath.s, &len);
    if (!s) return NULL;
    int ok = len == b->text.n && memcmp(s, b->text.s, len) == 0;
    free(s);
    if (!ok) return NULL;
    char *img = ts_read_file(b->imgpath.s, &len);
    if (!img || len == 0) {
        free(img);
        return NULL;
    }
    *size = len;
    return (unsigned char *)img;
}

/* What the cache key needs from NVRTC (see the essay). */
typedef struct NvrtcId {
    int vmaj, vmin;  /* nvrtcVersion */
    int na;          /* number of supported architectures (0: NVRTC cannot say) */
    int archs[256];  /* their sm numbers */
} NvrtcId;

/* <dir>/nvrtc-<id>.txt for the library file lib into out; 0 if lib
 * cannot be stat'ed. */
static int memo_path(TsBuf *out, const char *dir, const char *lib) {
    struct stat st;
    if (stat(lib, &st) != 0) return 0;
    TsBuf ident = {0};
    ts_buf_printf(&ident, "%s|%llu|%llu|%lld|%lld.%09ld", lib, (unsigned long long)st.st_dev,
                  (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                  (long)st.st_mtim.tv_nsec);
    int ok = !ident.oom;
    if (ok) ts_buf_printf(out, "%s/nvrtc-%016llx.txt", dir, (unsigned long long)ts_hash64(ident.s, ident.n, 0));
    ts_buf_free(&ident);
    return ok && !out->oom;
}

/* The memo's text for id (and back: 1 if the file is whole). */
static void memo_format(TsBuf *out, const char *lib, const NvrtcId *id) {
    ts_buf_printf(out, "library %s\nversion %d %d\narchs %d", lib, id->vmaj, id->vmin, id->na);
    for (int i = 0; i < id->na; i++) ts_buf_printf(out, " %d", id->archs[i]);
    ts_buf_puts(out, "\nend\n");
}

static int memo_read(const char *path, NvrtcId *id) {
    size_t len;
    char *s = ts_read_file(path, &len);
    if (!s) return 0;
    int ok = 0, used = 0;
    const char *p = strstr(s, "\nversion ");
    if (p && sscanf(p, "\nversion %d %d\narchs %d%n", &id->vmaj, &id->vmin, &id->na, &used) == 3 && id->na >= 0 &&
        id->na <= 256) {
        p += used;
        ok = 1;
        for (int i = 0; ok && i < id->na; i++) {
            ok = sscanf(p, " %d%n", &id->archs[i], &used) == 1;
            p += used;
        }
        ok = ok && !strcmp(p, "\nend\n");
    }
    free(s);
    return ok;
}

/* <dir>/tsk-<key> for b->text into base (the key: two hashes of the text). */
static void key_base(TsBuf *base, const Build *b) {
    uint64_t h1 = ts_hash64(b->text.s, b->text.n, 0);
    uint64_t h2 = ts_hash64(b->text.s, b->text.n, 0x9e3779b97f4a7c15ull);
    ts_buf_printf(base, "%s/tsk-%016llx%016llx", b->dir.s, (unsigned long long)h1, (unsigned long long)h2);
}

/* ts_cuda_image for a source that includes NCCL's device API: nvcc (nvcc.c)
 * instead of NVRTC, through the same cache; the key's comment names nvcc
 * and the NCCL headers (TsNvcc.ident).  The architecture is used as asked
 * (nvcc knows its own list and says when it does not know one).  Frees b;
 * fails via ts_fail_at. */
static unsigned char *nvcc_image(TsDiag *d, Build *b, const char *arch, const char *code, const TsCompileOptions *opt,
                                 int lookup_only, TsBuf *timing, double t0, size_t *size_out, int *ptx_out) {
    TsNvcc nv;
    if (ts_nvcc_find(d, opt, &nv) != 0) {
        build_free(b);
        ts_rethrow(d, d->status ? d->status : TS_ERR_BUILD);
    }
    int ptx = !strncmp(arch, "compute_", 8);
    ts_buf_puts(&b->text, code);
    ts_buf_printf(&b->text, "\n/* %s, -arch=%s */\n", ts_buf_str(&nv.ident), arch);
    TsBuf base = {0};
    key_base(&base, b);
    ts_buf_printf(&b->cupath, "%s.cu", ts_buf_str(&base));
    ts_buf_printf(&b->imgpath, "%s.%s", ts_buf_str(&base), ptx ? "ptx" : "cubin");
    size_t size = 0;
    unsigned char *img = cache_lookup(b, &size);
    int hit = img != NULL;
    if (!img && !lookup_only) {
        img = ts_nvcc_compile(d, &nv, b->text.s, arch, ptx, ts_buf_str(&base), &size);
        if (img && (ts_write_atomic(b->imgpath.s, img, size, 0644) != 0 ||
                    ts_write_atomic(b->cupath.s, b->text.s, b->text.n, 0644) != 0)) {
            free(img);
            ts_buf_free(&base);
            ts_nvcc_free(&nv);
            build_fail(d, b, TS_ERR_IO, "cannot write the kernel cache in '%s': %s", b->dir.s, strerror(errno));
        }
        if (img) ts_cache_trim(b->dir.s);
    } else if (img) {
        ts_cache_touch(b->imgpath.s);
    }
    ts_buf_free(&base);
    ts_nvcc_free(&nv);
    if (!img && !lookup_only) {
        build_free(b);
        ts_rethrow(d, d->status ? d->status : TS_ERR_BUILD);
    }
    if (img && timing) ts_buf_printf(timing, "%s %.3f\n", hit ? "cache hit" : "nvcc", ts_now_ms() - t0);
    build_free(b);
    *size_out = size;
    *ptx_out = ptx;
    return img;
}

unsigned char *ts_cuda_image(TsDiag *d, const char *want_arch, const char *code, const char *kname,
                             const TsCompileOptions *opt, int lookup_only, TsBuf *timing, size_t *size_out,
                             char arch_out[24], int *ptx_out) {
    Build b;
    memset(&b, 0, sizeof b);
    double t0 = ts_now_ms();
    char arch[24];
    snprintf(arch, sizeof arch, "%s", want_arch);
    if (strlen(want_arch) >= sizeof arch || arch_number(arch) <= 0) /* no real name is cut by the copy */
        build_fail(d, &b, TS_ERR_BUILD, "'%s' is not a CUDA architecture (expected sm_XY, sm_XYa or compute_XY)",
                   want_arch);
    if (ts_cache_dir(d, opt, &b.dir) != TS_OK) {
        build_free(&b);
        ts_rethrow(d, TS_ERR_IO);
    }
    if (strstr(code, TS_CUDA_NCCL_MARK)) { /* NCCL's device API: nvcc (nvcc.c says why) */
        unsigned char *img = nvcc_image(d, &b, arch, code, opt, lookup_only, timing, t0, size_out, ptx_out);
        snprintf(arch_out, 24, "%s", arch);
        return img;
    }
    /* NVRTC's version and architectures: from the memo, else from NVRTC */
    NvrtcId id;
    memset(&id, 0, sizeof id);
    TsBuf lib = {0}, memo = {0};
    int have_memo = nvrtc_locate(&lib) && memo_path(&memo, b.dir.s, ts_buf_str(&lib));
    double open_ms = 0; /* time spent opening NVRTC (dlopen and symbols) */
    if (!have_memo || !memo_read(memo.s, &id)) {
        TsBuf why = {0};
        double t1 = ts_now_ms();
        int bad = nvrtc_open(&b.nv, &why) != 0;
        open_ms += ts_now_ms() - t1;
        if (bad) {
            ts_diag_add(d, (TsLoc){0}, "error", "%s", ts_buf_str(&why));
            ts_buf_free(&why);
            ts_buf_free(&memo);
            ts_buf_free(&lib);
            build_free(&b);
            ts_rethrow(d, TS_ERR_BUILD);
        }
        b.nv.version(&id.vmaj, &id.vmin);
        id.na = nvrtc_archs(&b.nv, id.archs);
        if (have_memo && !strcmp(ts_buf_str(&b.nv.path), ts_buf_str(&lib))) {
            TsBuf t = {0};
            memo_format(&t, ts_buf_str(&lib), &id);
            (void)ts_write_atomic(memo.s, t.s, t.n, 0644); /* only a shortcut: a failure costs the next build time */
            ts_buf_free(&t);
        }
    }
    ts_buf_free(&memo);
    ts_buf_free(&lib);
    fit_arch_list(id.archs, id.na, arch, sizeof arch);
    int ptx = !strncmp(arch, "compute_", 8);

    ts_buf_puts(&b.text, code);
    ts_buf_printf(&b.text, "\n/* nvrtc %d.%d, --gpu-architecture=%s", id.vmaj, id.vmin, arch);
    const char *vopts[NVRTC_MAX_OPTS];
    for (int i = 0, nv = version_opts(id.vmaj, code, arch, vopts); i < nv; i++) ts_buf_printf(&b.text, " %s", vopts[i]);
    ts_buf_puts(&b.text, " */\n");
    TsBuf base = {0};
    key_base(&base, &b);
    ts_buf_printf(&b.cupath, "%s.cu", ts_buf_str(&base));
    ts_buf_printf(&b.imgpath, "%s.%s", ts_buf_str(&base), ptx ? "ptx" : "cubin");
    ts_buf_free(&base);

    size_t size = 0;
    unsigned char *img = cache_lookup(&b, &size);
    int hit = img != NULL;
    TsBuf sub = {0}; /* a miss's own phases, printed after its total */
    if (!img && lookup_only) {
        build_free(&b);
        return NULL;
    }
    if (!img) {
        TsBuf why = {0};
        double t1 = ts_now_ms();
        int bad = !b.nv.dl && nvrtc_open(&b.nv, &why) != 0;
        open_ms += ts_now_ms() - t1;
        if (bad) {
            ts_buf_free(&sub);
            ts_diag_add(d, (TsLoc){0}, "error", "%s", ts_buf_str(&why));
            ts_buf_free(&why);
            build_free(&b);
            ts_rethrow(d, TS_ERR_BUILD);
        }
        if (timing) ts_buf_printf(&sub, "nvrtc open %.3f\n", open_ms);
        img = compile_with(d, &b.nv, b.text.s, arch, kname, IMG_BUILD, &size, timing ? &sub : NULL);
        if (!img) {
            ts_buf_free(&sub);
            build_free(&b);
            ts_rethrow(d, TS_ERR_BUILD);
        }
        /* the image first, then the .cu that makes it findable */
        if (ts_write_atomic(b.imgpath.s, img, size, 0644) != 0 || ts_write_atomic(b.cupath.s, b.text.s, b.text.n, 0644) != 0) {
            free(img);
            ts_buf_free(&sub);
            build_fail(d, &b, TS_ERR_IO, "cannot write the kernel cache in '%s': %s", b.dir.s, strerror(errno));
        }
        ts_cache_trim(b.dir.s); /* within $TILESCALE_CACHE_MAX (runtime/cache.c) */
    } else {
        ts_cache_touch(b.imgpath.s); /* its last use, for the LRU order */
    }
    if (timing) {
        ts_buf_printf(timing, "%s %.3f\n", hit ? "cache hit" : "nvrtc", ts_now_ms() - t0);
        ts_buf_puts(timing, ts_buf_str(&sub));
    }
    ts_buf_free(&sub);
    build_free(&b);
    *size_out = size;
    snprintf(arch_out, 24, "%s", arch);
    *ptx_out = ptx;
    return img;
}

TsModuleCuda *ts_cuda_module_new(TsDiag *d, const char *name, const TsCudaCodeInfo *ci, unsigned char *img,
                                 size_t size, const char *arch, int ptx, TsStatus load_err, TsBuf *timing) {
    TsModuleCuda *m = calloc(1, sizeof *m);
    pthread_mutex_t *mu = malloc(sizeof *mu);
    char *kname = strdup(name ? name : "kernel");
    if (!m || !mu || !kname || pthread_mutex_init(mu, NULL) != 0) {
        free(m);
        free(mu);
        free(kname);
        free(img);
        ts_diag_add(d, (TsLoc){0}, "error", "out of memory");
        d->status = TS_ERR_NOMEM;
        return NULL;
    }
    m->image = img;
    m->image_size = size;
    m->is_ptx = ptx;
    snprintf(m->arch, sizeof m->arch, "%s", arch);
    m->info = *ci;
    m->kname = kname;
    m->lock = mu;
    m->lock_init = 1;
    /* Load now when there is a device, so that a rejected image or too
     * much shared memory is an error now; otherwise at the first launch. */
    char dev[24];
    if (ts_cuda_device_arch(dev, sizeof dev, NULL)) {
        TsStatus st = ts_cuda_module_load(d, m, load_err, timing);
        if (st) {
            ts_cuda_module_free(m);
            d->status = st;
            return NULL;
        }
    }
    return m;
}

TsModuleCuda *ts_cuda_build(TsDiag *d, const IrKernel *k, const TsCudaCodeInfo *ci, const char *want_arch,
                            const char *code,
                            const TsCompileOptions *opt, TsBuf *timing) {
    size_t size = 0;
    char arch[24];
    int ptx = 0;
    unsigned char *img = ts_cuda_image(d, want_arch, code, k->name, opt, 0, timing, &size, arch, &ptx);
    TsModuleCuda *m = ts_cuda_module_new(d, k->name, ci, img, size, arch, ptx, TS_ERR_BUILD, timing);
    if (!m) ts_rethrow(d, d->status ? d->status : TS_ERR_BUILD);
    return m;
}
