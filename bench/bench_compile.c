/*
 * bench_compile.c — how long does it take to turn a kernel file into
 * something runnable?  A benchmark program (not a test, not in ctest).
 *
 * Every example of examples/ at the configuration bench/gpu_bench.py runs,
 * on both targets (C and CUDA), three numbers each, measured separately
 * because they answer different questions:
 *
 *   front end  parse + elaborate + every pass + code generation, i.e.
 *              ts_compile_file with skip_build=1 (the CUDA target needs no
 *              NVRTC or GPU for it).  This is the part we own; the target
 *              is <= 10 ms.  Many runs (default 200): median and min, plus
 *              the very first call of the process (what a one-shot CLI run
 *              pays), and the median split into parse, elaborate, passes
 *              (every "pass *" phase) and codegen.
 *   cold       the whole ts_compile_file with an empty cache directory (a
 *              fresh mkdtemp per run): the system C compiler, or NVRTC.
 *              Few runs (default 5): median and min.
 *   warm       the whole ts_compile_file with a cache that already holds
 *              the kernel (same directory every run): a cache hit, plus,
 *              on a machine with a GPU, loading the module (CUDA context
 *              and module load are their own phases).  Default 50 runs.
 *   warm, new process
 *              the same, as the first build of a fresh process (this
 *              program re-run with --one-build, 10 times): what a one-shot
 *              `tilescale run` pays.  Libraries a first build opens
 *              (NVRTC, the driver) are not yet loaded there, unlike in the
 *              warm series above, so this is where their cost shows.
 *
 * The CUDA target's builds need NVRTC: where it is missing (the first
 * cold build fails with TS_ERR_BUILD) those columns say so and the front
 * end is still measured.  Every figure is our own monotonic clock around
 * the API call; the library's own phase times (TsCompileOptions.timing,
 * "phase ms" lines of ts_kernel_timing) are collected for every run, and
 * --phases prints every phase's median/min for every series, so a
 * regression can be pinned on one pass.  One more figure explains the C
 * target's warm path: spawning `cc --version`, which it runs on every
 * build (cache hit or not) to key the cache on the compiler's identity.
 *
 * The output is Markdown tables, so bench/run.sh's output can be pasted
 * into bench/RESULTS.md as it is.
 *
 * Cold means compiled: NVRTC 13's own cache (kept in the driver's compute
 * cache where a driver is present, so a second compile of the same code
 * skips NVVM and ptxas) is switched off with CUDA_CACHE_DISABLE=1 unless
 * the environment sets CUDA_CACHE_DISABLE (=0 measures its hits).
 * For the CUDA target a table splits the cold build's NVRTC time into
 * NVRTC's own phases (front end, NVVM, ptxas: its --time table, which
 * the library adds to the timing lines from NVRTC 13.0 on), the dlopen,
 * and the compiling thread's CPU time; wall time well above the CPU time
 * means the machine was busy or the library was being read from disk.
 *
 * Usage: bench_compile [--root DIR] [--fe N] [--cold N] [--warm N] [--phases] [--target c|cuda]
 *   DIR is the repository root (examples/ is read from there; default ".");
 *   --target measures one target only.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tilescale.h"

#define MAX_PHASES 32

/* One benchmarked kernel: a file, an entry, its -D values. */
typedef struct Case {
    const char *label;     /* short name for the tables */
    const char *file;      /* path relative to the repository root */
    const char *entry;     /* factory name in the file */
    const TsDefine *defs;  /* -D values */
    int ndefs;             /* number of defs */
} Case;

/* Samples of one phase across runs (ms), in the order of runs. */
typedef struct Phase {
    char name[128]; /* as written by ts_kernel_timing, e.g. "pass simplify" */
    double *v;      /* samples (malloc'ed, capacity = runs of the series) */
    int n;          /* samples so far */
} Phase;

/* A series of runs of one kind: own-clock totals plus the phase split. */
typedef struct Series {
    double *total;             /* own clock around ts_compile_file, ms */
    int n;                     /* runs so far */
    int cap;                   /* capacity of total and of each phase */
    Phase phase[MAX_PHASES];   /* per-phase samples */
    int nphase;                /* phases seen */
} Series;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "bench_compile: out of memory\n");
        exit(2);
    }
    return p;
}

static void series_init(Series *s, int cap) {
    memset(s, 0, sizeof *s);
    s->cap = cap;
    s->total = xmalloc(sizeof(double) * (size_t)cap);
}

static void series_free(Series *s) {
    free(s->total);
    for (int i = 0; i < s->nphase; i++) free(s->phase[i].v);
}

static Phase *series_phase(Series *s, const char *name) {
    for (int i = 0; i < s->nphase; i++)
        if (!strcmp(s->phase[i].name, name)) return &s->phase[i];
    if (s->nphase == MAX_PHASES) return NULL;
    Phase *p = &s->phase[s->nphase++];
    snprintf(p->name, sizeof p->name, "%s", name);
    p->v = xmalloc(sizeof(double) * (size_t)s->cap);
    p->n = 0;
    return p;
}

/* Adds one run: the own-clock total and the "phase ms" lines of text. */
static void series_add(Series *s, double total, const char *text) {
    if (s->n < s->cap) s->total[s->n++] = total;
    while (text && *text) {
        const char *eol = strchr(text, '\n');
        size_t len = eol ? (size_t)(eol - text) : strlen(text);
        char line[128];
        if (len < sizeof line) {
            memcpy(line, text, len);
            line[len] = 0;
            char *sp = strrchr(line, ' '); /* the name may contain spaces */
            if (sp) {
                *sp = 0;
                Phase *p = series_phase(s, line);
                if (p && p->n < s->cap) p->v[p->n++] = strtod(sp + 1, NULL);
            }
        }
        text = eol ? eol + 1 : text + len;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median and min of v[0..n) (sorts a copy). */
static void stats(const double *v, int n, double *median, double *min) {
    if (n <= 0) {
        *median = *min = 0;
        return;
    }
    double *c = xmalloc(sizeof(double) * (size_t)n);
    memcpy(c, v, sizeof(double) * (size_t)n);
    qsort(c, (size_t)n, sizeof(double), cmp_double);
    *median = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    *min = c[0];
    free(c);
}

/* rm -r of a cache directory we created (flat: tsk-* files only). */
static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4096];
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* One ts_compile_file, timed; -1 on failure, with the first line of the
 * error in why (size 256; may be NULL). */
static double compile_once(TsContext *ctx, const char *root, const Case *c,
                           const TsCompileOptions *opt, Series *s, char *why) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, c->file);
    TsKernel *k = NULL;
    double t0 = now_ms();
    TsStatus st = ts_compile_file(ctx, path, c->entry, c->defs, c->ndefs, opt, &k);
    double t = now_ms() - t0;
    if (st != TS_OK) {
        if (why) {
            const char *e = ts_last_error(ctx), *p = strstr(e, "error: ");
            p = p ? p + 7 : e;
            snprintf(why, 256, "%.*s", (int)strcspn(p, "\n"), p);
        }
        return -1;
    }
    if (s) series_add(s, t, ts_kernel_timing(k));
    ts_kernel_destroy(k);
    return t;
}

/* Median/min of the phase called name in s, or -1 if absent. */
static void phase_stats(const Series *s, const char *name, double *med, double *min) {
    *med = *min = -1;
    for (int i = 0; i < s->nphase; i++)
        if (!strcmp(s->phase[i].name, name)) stats(s->phase[i].v, s->phase[i].n, med, min);
}

/* Time of popen("cc --version"): what every build pays to identify cc. */
static double cc_version_ms(const char *cc) {
    char cmd[512], buf[512];
    snprintf(cmd, sizeof cmd, "%s --version 2>&1", cc);
    double t0 = now_ms();
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    while (fread(buf, 1, sizeof buf, p) > 0) {}
    pclose(p);
    return now_ms() - t0;
}

static const TsDefine gemm_defs[] = {
    {"M", "4096"}, {"N", "4096"}, {"K", "4096"}, {"block_M", "128"}, {"block_N", "128"}, {"block_K", "32"},
};
static const TsDefine gemm8k_defs[] = {
    {"M", "8192"}, {"N", "8192"}, {"K", "8192"}, {"block_M", "128"}, {"block_N", "256"}, {"block_K", "64"},
    {"threads", "256"},
};
static const TsDefine fa_defs[] = {
    {"batch", "1"}, {"heads", "8"}, {"seq_len", "2048"}, {"dim", "64"}, {"is_causal", "False"},
};
static const TsDefine fa128_defs[] = {
    {"batch", "4"}, {"heads", "32"}, {"seq_len", "4096"}, {"dim", "128"}, {"is_causal", "True"},
    {"block_M", "128"}, {"block_N", "128"}, {"num_stages", "2"}, {"threads", "256"},
};
static const TsDefine add_defs[] = {{"M", "8192"}, {"N", "8192"}};
static const TsDefine softmax_defs[] = {{"M", "32768"}, {"N", "1024"}};
static const TsDefine rms_defs[] = {{"M", "8192"}, {"N", "8192"}};
static const TsDefine splitk_defs[] = {{"M", "96"}, {"N", "80"}, {"K", "256"}, {"splits", "4"}};
#define DEFS(a) a, (int)(sizeof a / sizeof a[0])
static const Case cases[] = {
    {"gemm 4096 (128,128,32)", "examples/gemm.py", "matmul", DEFS(gemm_defs)},
    {"gemm 8192 (128,256,64) 256 thr", "examples/gemm.py", "matmul", DEFS(gemm8k_defs)},
    {"flashattn d64 (64,64)", "examples/flash_attention.py", "flashattn", DEFS(fa_defs)},
    {"flashattn d128 causal (128,128) 2 stages", "examples/flash_attention.py", "flashattn", DEFS(fa128_defs)},
    {"elementwise_add", "examples/elementwise_add.py", "elementwise_add", DEFS(add_defs)},
    {"softmax", "examples/softmax.py", "softmax", DEFS(softmax_defs)},
    {"rms_norm", "examples/rms_norm.py", "rms_norm", DEFS(rms_defs)},
    {"splitk_gemm (2 kernels)", "examples/splitk_gemm.py", "splitk_gemm", DEFS(splitk_defs)},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static int arg_int(const char *s, const char *what) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 1 || v > 1000000) {
        fprintf(stderr, "bench_compile: bad %s '%s'\n", what, s);
        exit(2);
    }
    return (int)v;
}

/* The measurements of one (case, target). */
typedef struct Result {
    Series fe, cold, warm; /* front end, cold builds, warm builds */
    Series fresh;          /* warm builds, each the first of a new process */
    double first;          /* first front-end call of the process, ms */
    int built;             /* 1: cold and warm were measured (else the target cannot build here) */
    char fail[256];        /* why this kernel does not compile for this target ("": it does) */
} Result;

/* Sum of the medians of the phases whose name starts with prefix (or
 * equals it, when exact). */
static double phase_sum(const Series *s, const char *prefix, int exact) {
    double sum = 0;
    for (int i = 0; i < s->nphase; i++) {
        int match = exact ? !strcmp(s->phase[i].name, prefix) : !strncmp(s->phase[i].name, prefix, strlen(prefix));
        if (!match) continue;
        double m, n;
        stats(s->phase[i].v, s->phase[i].n, &m, &n);
        sum += m;
    }
    return sum;
}

/* "%.1f" of the named phase's median, or "—" where absent. */
static const char *phase_cell(const Series *s, const char *name, char *buf, size_t n) {
    double m, mn;
    phase_stats(s, name, &m, &mn);
    if (m < 0) snprintf(buf, n, "—");
    else snprintf(buf, n, "%.3f", m);
    return buf;
}

static void print_phases(const Series *s, const char *title) {
    double tm, tn;
    stats(s->total, s->n, &tm, &tn);
    printf("\n#### %s: phases from ts_kernel_timing (ms)\n\n", title);
    printf("| phase | median | min | share of median total |\n|---|---:|---:|---:|\n");
    double sum = 0;
    for (int pi = 0; pi < s->nphase; pi++) {
        double m, n;
        stats(s->phase[pi].v, s->phase[pi].n, &m, &n);
        if (strncmp(s->phase[pi].name, "nvrtc ", 6)) sum += m; /* "nvrtc *" lines are parts of "nvrtc" */
        printf("| %s | %.3f | %.3f | %.1f%% |\n", s->phase[pi].name, m, n, tm > 0 ? 100.0 * m / tm : 0.0);
    }
    printf("| (sum of phase medians) | %.3f | | %.1f%% |\n", sum, tm > 0 ? 100.0 * sum / tm : 0.0);
    printf("| (own clock, whole call) | %.3f | %.3f | 100%% |\n", tm, tn);
}

#define N_FRESH 10

/* --one-build CASE TARGET DIR: one build in this (new) process, printed
 * as "total <ms>" and the timing lines. */
static int one_build(const char *root, int ci, int ti, const char *dir) {
    TsContext *ctx;
    if (ci < 0 || ci >= NCASES || ts_context_create(&ctx)) return 2;
    TsCompileOptions opt;
    memset(&opt, 0, sizeof opt);
    opt.target = ti ? TS_TARGET_CUDA : TS_TARGET_C;
    opt.timing = 1;
    opt.cache_dir = dir;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, cases[ci].file);
    TsKernel *k = NULL;
    double t0 = now_ms();
    TsStatus st = ts_compile_file(ctx, path, cases[ci].entry, cases[ci].defs, cases[ci].ndefs, &opt, &k);
    double t = now_ms() - t0;
    if (st == TS_OK) printf("total %.3f\n%s", t, ts_kernel_timing(k));
    else fprintf(stderr, "%s", ts_last_error(ctx));
    ts_kernel_destroy(k);
    ts_context_destroy(ctx);
    return st == TS_OK ? 0 : 1;
}

/* Runs this program with --one-build and adds its figures to s. */
static void fresh_build(const char *root, int ci, int ti, const char *dir, Series *s) {
    char cmd[8192], buf[4096], self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1); /* in popen's shell it would be the shell */
    if (len <= 0) return;
    self[len] = 0;
    snprintf(cmd, sizeof cmd, "'%s' --root '%s' --one-build %d %d '%s'", self, root, ci, ti, dir);
    FILE *p = popen(cmd, "r");
    if (!p) return;
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = 0;
    if (pclose(p) != 0) return;
    const char *tl = strstr(buf, "total ");
    if (!tl) return;
    series_add(s, strtod(tl + 6, NULL), buf);
}

int main(int argc, char **argv) {
    const char *root = ".";
    int n_fe = 200, n_cold = 5, n_warm = 50, phases = 0, only = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--root") && i + 1 < argc) root = argv[++i];
        else if (!strcmp(argv[i], "--fe") && i + 1 < argc) n_fe = arg_int(argv[++i], "--fe");
        else if (!strcmp(argv[i], "--cold") && i + 1 < argc) n_cold = arg_int(argv[++i], "--cold");
        else if (!strcmp(argv[i], "--warm") && i + 1 < argc) n_warm = arg_int(argv[++i], "--warm");
        else if (!strcmp(argv[i], "--phases")) phases = 1;
        else if (!strcmp(argv[i], "--target") && i + 1 < argc && (!strcmp(argv[i + 1], "c") || !strcmp(argv[i + 1], "cuda")))
            only = !strcmp(argv[++i], "cuda");
        else if (!strcmp(argv[i], "--one-build") && i + 3 < argc)
            return one_build(root, atoi(argv[i + 1]), atoi(argv[i + 2]), argv[i + 3]);
        else {
            fprintf(stderr, "usage: bench_compile [--root DIR] [--fe N] [--cold N] [--warm N] [--phases] [--target c|cuda]\n");
            return 2;
        }
    }
    const char *cc = getenv("CC");
    if (!cc || !*cc) cc = "cc";
    /* NVRTC 13, where a driver is present, keeps compiled PTX and cubins in
     * the driver's compute cache (~/.nv/ComputeCache) and then skips NVVM
     * and ptxas for IR it has seen (a "cold" GEMM build of 15 ms on the
     * H200): cold builds here compile for real unless the caller says
     * otherwise (NVRTC reads the variable once, at its first compile). */
    const char *ccd = getenv("CUDA_CACHE_DISABLE");
    int driver_cache = ccd && *ccd && strcmp(ccd, "1") != 0;
    if (!ccd || !*ccd) setenv("CUDA_CACHE_DISABLE", "1", 1);

    TsContext *ctx;
    if (ts_context_create(&ctx)) return 2;

    static Result res[NCASES][2];
    const TsTarget targets[2] = {TS_TARGET_C, TS_TARGET_CUDA};
    const char *tname[2] = {"c", "cuda"};
    char why_cuda[512] = "";
    for (int ci = 0; ci < NCASES; ci++)
        for (int ti = 0; ti < 2; ti++) {
            const Case *c = &cases[ci];
            Result *r = &res[ci][ti];
            TsCompileOptions opt;
            if (only >= 0 && ti != only) {
                snprintf(r->fail, sizeof r->fail, "not measured (--target)");
                continue;
            }

            /* (a) front end + passes + codegen; the first call is kept apart. */
            memset(&opt, 0, sizeof opt);
            opt.target = targets[ti];
            opt.timing = 1;
            opt.skip_build = 1;
            series_init(&r->fe, n_fe);
            r->first = compile_once(ctx, root, c, &opt, NULL, r->fail);
            if (r->first < 0) { /* e.g. more shared memory than the default sm_80 has: reported, not fatal */
                series_init(&r->cold, 1);
                series_init(&r->warm, 1);
                continue;
            }
            for (int k = 0; k < n_fe; k++) compile_once(ctx, root, c, &opt, &r->fe, NULL);

            /* (b) cold: a fresh, empty cache directory per run. */
            series_init(&r->cold, n_cold);
            series_init(&r->warm, n_warm);
            if (ti == 1 && why_cuda[0]) continue;
            r->built = 1;
            for (int k = 0; k < n_cold && r->built; k++) {
                char dir[] = "/tmp/tsbench-cold-XXXXXX";
                if (!mkdtemp(dir)) {
                    perror("bench_compile: mkdtemp");
                    return 2;
                }
                memset(&opt, 0, sizeof opt);
                opt.target = targets[ti];
                opt.timing = 1;
                opt.cache_dir = dir;
                if (ti == 1 && k == 0) { /* NVRTC may be missing here */
                    char path[4096];
                    snprintf(path, sizeof path, "%s/%s", root, c->file);
                    TsKernel *kk = NULL;
                    double t0 = now_ms();
                    TsStatus st = ts_compile_file(ctx, path, c->entry, c->defs, c->ndefs, &opt, &kk);
                    double t = now_ms() - t0;
                    if (st == TS_ERR_BUILD && strstr(ts_last_error(ctx), "NVRTC not found")) {
                        snprintf(why_cuda, sizeof why_cuda, "%s", ts_last_error(ctx));
                        r->built = 0;
                    } else if (st != TS_OK) { /* e.g. the device's shared memory: reported, not fatal */
                        const char *e = ts_last_error(ctx), *p = strstr(e, "error: ");
                        p = p ? p + 7 : e;
                        snprintf(r->fail, sizeof r->fail, "build: %.*s", (int)strcspn(p, "\n"), p);
                        r->built = 0;
                    } else {
                        series_add(&r->cold, t, ts_kernel_timing(kk));
                        ts_kernel_destroy(kk);
                    }
                } else {
                    compile_once(ctx, root, c, &opt, &r->cold, NULL);
                }
                remove_dir(dir);
            }
            if (!r->built) continue;

            /* (c) warm: one directory, filled once, then cache hits. */
            char wdir[] = "/tmp/tsbench-warm-XXXXXX";
            if (!mkdtemp(wdir)) {
                perror("bench_compile: mkdtemp");
                return 2;
            }
            memset(&opt, 0, sizeof opt);
            opt.target = targets[ti];
            opt.timing = 1;
            opt.cache_dir = wdir;
            compile_once(ctx, root, c, &opt, NULL, NULL);
            for (int k = 0; k < n_warm; k++) compile_once(ctx, root, c, &opt, &r->warm, NULL);
            /* (d) the same cache hit as the first build of a new process */
            series_init(&r->fresh, N_FRESH);
            for (int k = 0; k < N_FRESH; k++) fresh_build(root, ci, ti, wdir, &r->fresh);
            remove_dir(wdir);
        }

    double ccv[21];
    for (int i = 0; i < 21; i++) ccv[i] = cc_version_ms(cc);

    printf("### Front end: parse + elaborate + passes + code generation (ms, skip_build; own clock around "
           "ts_compile_file, medians of %d runs)\n\n", n_fe);
    printf("| kernel | target | median | min | 1st call | parse | elaborate | passes | codegen | vs 10 ms |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (int ci = 0; ci < NCASES; ci++)
        for (int ti = 0; ti < 2; ti++) {
            const Result *r = &res[ci][ti];
            double fm, fn;
            if (r->fe.n == 0 && r->fail[0]) {
                printf("| %s | %s | fails: %s | | | | | | | |\n", cases[ci].label, tname[ti], r->fail);
                continue;
            }
            stats(r->fe.total, r->fe.n, &fm, &fn);
            printf("| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %s |\n", cases[ci].label, tname[ti], fm,
                   fn, r->first, phase_sum(&r->fe, "parse", 1), phase_sum(&r->fe, "elaborate", 1),
                   phase_sum(&r->fe, "pass ", 0), phase_sum(&r->fe, "codegen", 1), fm <= 10.0 ? "meets" : "MISSES");
        }

    printf("\n### Builds (ms, own clock around ts_compile_file; cold: empty cache, %d runs; warm: cache hit, %d runs)\n\n",
           n_cold, n_warm);
    printf("| kernel | target | cold median | cold min | cc / nvrtc | warm median | warm min | cache hit "
           "| new process: warm | cache hit | cuda device | cuda context | module load |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int ci = 0; ci < NCASES; ci++)
        for (int ti = 0; ti < 2; ti++) {
            const Result *r = &res[ci][ti];
            if (!r->built) {
                printf("| %s | %s | %s%s | | | | | | | | | | |\n", cases[ci].label, tname[ti],
                       r->fail[0] ? "fails: " : "no NVRTC", r->fail);
                continue;
            }
            double cm, cn, wm, wn, fm, fn;
            char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
            stats(r->cold.total, r->cold.n, &cm, &cn);
            stats(r->warm.total, r->warm.n, &wm, &wn);
            stats(r->fresh.total, r->fresh.n, &fm, &fn);
            printf("| %s | %s | %.1f | %.1f | %s | %.3f | %.3f | %s | %.3f | %s | %s | %s | %s |\n", cases[ci].label,
                   tname[ti], cm, cn, phase_cell(&r->cold, ti ? "nvrtc" : "cc", b1, sizeof b1), wm, wn,
                   phase_cell(&r->warm, "cache hit", b2, sizeof b2), fm,
                   phase_cell(&r->fresh, "cache hit", b6, sizeof b6),
                   phase_cell(&r->fresh, "cuda device", b3, sizeof b3),
                   phase_cell(&r->fresh, "cuda context", b4, sizeof b4),
                   phase_cell(&r->fresh, "module load", b5, sizeof b5));
        }
    if (why_cuda[0]) printf("\nCUDA builds not measured: %s", why_cuda);

    /* Where a cold CUDA build's time goes: NVRTC's own phases (its
     * --time table, NVRTC 13.0 on) and the compiling thread's CPU time;
     * "nvrtc - cpu" is time the thread did not run (a busy machine, page
     * faults on the 100 MB library). */
    printf("\n### NVRTC cold builds, phases (ms, medians of %d runs; front end / nvvm / ptxas from NVRTC's --time; "
           "NVRTC's own cache in the driver's compute cache %s)\n\n",
           n_cold, driver_cache ? "ON (CUDA_CACHE_DISABLE=0: nvvm and ptxas near 0 are its hits)" : "off (CUDA_CACHE_DISABLE=1)");
    printf("| kernel | cold | nvrtc | open | front end | nvvm | ptxas | cpu | nvrtc - cpu |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int ci = 0; ci < NCASES; ci++) {
        const Result *r = &res[ci][1];
        if (!r->built) continue;
        double cm, cn, nv, nvn, cpu, cpun;
        char b[5][32];
        stats(r->cold.total, r->cold.n, &cm, &cn);
        phase_stats(&r->cold, "nvrtc", &nv, &nvn);
        phase_stats(&r->cold, "nvrtc cpu", &cpu, &cpun);
        printf("| %s | %.1f | %.1f | %s | %s | %s | %s | %s | %.1f |\n", cases[ci].label, cm, nv,
               phase_cell(&r->cold, "nvrtc open", b[0], sizeof b[0]), phase_cell(&r->cold, "nvrtc front end", b[1], sizeof b[1]),
               phase_cell(&r->cold, "nvrtc nvvm", b[2], sizeof b[2]), phase_cell(&r->cold, "nvrtc ptxas", b[3], sizeof b[3]),
               phase_cell(&r->cold, "nvrtc cpu", b[4], sizeof b[4]), cpu >= 0 ? nv - cpu : 0.0);
    }
    printf("\nTargets: front end <= 10 ms; CUDA cache hit <= 2 ms; NVRTC cold <= 0.3 s. 'cuda device' is the "
           "driver's start (cuInit, device query), 'cuda context' the primary context, 'module load' "
           "cuModuleLoadData and the function's attributes (only where a GPU is present), each as the first "
           "build of a new process.\n");

    if (phases) {
        const char *kinds[4] = {"front end (skip_build)", "cold", "warm", "warm, new process"};
        for (int ci = 0; ci < NCASES; ci++)
            for (int ti = 0; ti < 2; ti++) {
                Result *r = &res[ci][ti];
                Series *ss[4] = {&r->fe, &r->cold, &r->warm, &r->fresh};
                for (int si = 0; si < 4; si++) {
                    if (si && !r->built) continue;
                    char title[256];
                    snprintf(title, sizeof title, "%s, %s target, %s", cases[ci].label, tname[ti], kinds[si]);
                    print_phases(ss[si], title);
                }
            }
    }

    double m, n;
    stats(ccv, 21, &m, &n);
    printf("\n### Spawning `%s --version` (popen, 21 runs; the C target does this on every build, "
           "cache hit included)\n\nmedian %.3f ms, min %.3f ms\n",
           cc, m, n);

    for (int ci = 0; ci < NCASES; ci++)
        for (int ti = 0; ti < 2; ti++) {
            series_free(&res[ci][ti].fe);
            series_free(&res[ci][ti].cold);
            series_free(&res[ci][ti].warm);
            series_free(&res[ci][ti].fresh);
        }
    ts_context_destroy(ctx);
    return 0;
}
