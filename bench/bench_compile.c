/*
 * bench_compile.c — how long does it take to turn a kernel file into
 * something runnable?  A benchmark program (not a test, not in ctest).
 *
 * The issue asks for three numbers per kernel, and they answer different
 * questions, so each is measured separately:
 *
 *   front end  parse + elaborate + every pass + C code generation, i.e.
 *              ts_compile_file with skip_build=1.  This is the part we own
 *              and can make fast; the target is <= 10 ms.  Many runs
 *              (default 200): median and min, plus the very first call of
 *              the process, which is what a one-shot CLI run pays.
 *   cold       the whole ts_compile_file with an empty cache directory
 *              (a fresh mkdtemp per run), so the system C compiler runs.
 *              Few runs (default 5): median and min.
 *   warm       the whole ts_compile_file with a cache that already holds
 *              the kernel (same directory every run): what a second run
 *              of a program pays.  Default 50 runs: median and min.
 *
 * Every figure is our own monotonic clock around the API call.  On top of
 * that the library's own phase times (TsCompileOptions.timing, text from
 * ts_kernel_timing, "phase ms" per line) are collected for every run and
 * reported per phase (median/min), so a regression can be pinned on one
 * pass.  Phase names are taken from the text as they come, in the order
 * they first appear, so a new pass shows up here without editing this
 * file.  One more figure explains the warm path: the cost of spawning
 * `cc --version`, which the C target runs on every build (cache hit or not)
 * to key the cache on the compiler's identity.
 *
 * The output is Markdown tables, so bench/run.sh's output can be pasted
 * into bench/RESULTS.md as it is.
 *
 * Usage: bench_compile [--root DIR] [--fe N] [--cold N] [--warm N]
 *   DIR is the repository root (examples/ is read from there; default ".").
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

/* One ts_compile_file, timed; exits on failure (a benchmark of a broken
 * compiler is meaningless). */
static double compile_once(TsContext *ctx, const char *root, const Case *c,
                           const TsCompileOptions *opt, Series *s) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, c->file);
    TsKernel *k = NULL;
    double t0 = now_ms();
    TsStatus st = ts_compile_file(ctx, path, c->entry, c->defs, c->ndefs, opt, &k);
    double t = now_ms() - t0;
    if (st != TS_OK) {
        fprintf(stderr, "bench_compile: %s: %s\n%s", c->label, ts_status_name(st), ts_last_error(ctx));
        exit(1);
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
    {"M", "1024"}, {"N", "1024"}, {"K", "1024"}, {"block_M", "128"}, {"block_N", "128"}, {"block_K", "32"},
};
static const TsDefine fa_defs[] = {
    {"batch", "1"}, {"heads", "8"}, {"seq_len", "1024"}, {"dim", "128"}, {"is_causal", "False"},
};
static const Case cases[] = {
    {"gemm", "examples/gemm.py", "matmul", gemm_defs, 6},
    {"flashattn", "examples/flash_attention.py", "flashattn", fa_defs, 5},
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

int main(int argc, char **argv) {
    const char *root = ".";
    int n_fe = 200, n_cold = 5, n_warm = 50;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--root") && i + 1 < argc) root = argv[++i];
        else if (!strcmp(argv[i], "--fe") && i + 1 < argc) n_fe = arg_int(argv[++i], "--fe");
        else if (!strcmp(argv[i], "--cold") && i + 1 < argc) n_cold = arg_int(argv[++i], "--cold");
        else if (!strcmp(argv[i], "--warm") && i + 1 < argc) n_warm = arg_int(argv[++i], "--warm");
        else {
            fprintf(stderr, "usage: bench_compile [--root DIR] [--fe N] [--cold N] [--warm N]\n");
            return 2;
        }
    }
    const char *cc = getenv("CC");
    if (!cc || !*cc) cc = "cc";

    TsContext *ctx;
    if (ts_context_create(&ctx)) return 2;

    Series fe[NCASES], cold[NCASES], warm[NCASES];
    double first[NCASES];
    for (int ci = 0; ci < NCASES; ci++) {
        const Case *c = &cases[ci];
        TsCompileOptions opt;

        /* (a) front end + passes + codegen; the first call is kept apart. */
        memset(&opt, 0, sizeof opt);
        opt.timing = 1;
        opt.skip_build = 1;
        series_init(&fe[ci], n_fe);
        first[ci] = compile_once(ctx, root, c, &opt, NULL);
        for (int r = 0; r < n_fe; r++) compile_once(ctx, root, c, &opt, &fe[ci]);

        /* (b) cold: a fresh, empty cache directory per run. */
        series_init(&cold[ci], n_cold);
        for (int r = 0; r < n_cold; r++) {
            char dir[] = "/tmp/tsbench-cold-XXXXXX";
            if (!mkdtemp(dir)) {
                perror("bench_compile: mkdtemp");
                return 2;
            }
            memset(&opt, 0, sizeof opt);
            opt.timing = 1;
            opt.cache_dir = dir;
            compile_once(ctx, root, c, &opt, &cold[ci]);
            remove_dir(dir);
        }

        /* (c) warm: one directory, filled once, then cache hits. */
        char wdir[] = "/tmp/tsbench-warm-XXXXXX";
        if (!mkdtemp(wdir)) {
            perror("bench_compile: mkdtemp");
            return 2;
        }
        memset(&opt, 0, sizeof opt);
        opt.timing = 1;
        opt.cache_dir = wdir;
        compile_once(ctx, root, c, &opt, NULL);
        series_init(&warm[ci], n_warm);
        for (int r = 0; r < n_warm; r++) compile_once(ctx, root, c, &opt, &warm[ci]);
        remove_dir(wdir);
    }

    double ccv[21];
    for (int i = 0; i < 21; i++) ccv[i] = cc_version_ms(cc);

    printf("### Compile time (ms, own clock around ts_compile_file; CPU, C target)\n\n");
    printf("| kernel | front end median | front end min | front end 1st call | cold median | cold min "
           "| of which cc (median) | warm median | warm min |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int ci = 0; ci < NCASES; ci++) {
        double fm, fn, cm, cn, wm, wn, ccm, ccn;
        stats(fe[ci].total, fe[ci].n, &fm, &fn);
        stats(cold[ci].total, cold[ci].n, &cm, &cn);
        stats(warm[ci].total, warm[ci].n, &wm, &wn);
        phase_stats(&cold[ci], "cc", &ccm, &ccn);
        printf("| %s | %.3f | %.3f | %.3f | %.1f | %.1f | %.1f | %.3f | %.3f |\n", cases[ci].label, fm, fn,
               first[ci], cm, cn, ccm, wm, wn);
    }
    printf("\nRuns: front end %d (+1 first call), cold %d, warm %d per kernel. "
           "Target for the front end: <= 10 ms.\n",
           n_fe, n_cold, n_warm);
    for (int ci = 0; ci < NCASES; ci++) {
        double fm, fn;
        stats(fe[ci].total, fe[ci].n, &fm, &fn);
        printf("%s front end: %s (median %.3f ms vs 10 ms)\n", cases[ci].label,
               fm <= 10.0 ? "MEETS the target" : "MISSES the target", fm);
    }

    const char *kinds[3] = {"front end (skip_build)", "cold", "warm"};
    for (int ci = 0; ci < NCASES; ci++) {
        Series *ss[3] = {&fe[ci], &cold[ci], &warm[ci]};
        for (int si = 0; si < 3; si++) {
            Series *s = ss[si];
            double tm, tn;
            stats(s->total, s->n, &tm, &tn);
            printf("\n#### %s, %s: phases from ts_kernel_timing (ms)\n\n", cases[ci].label, kinds[si]);
            printf("| phase | median | min | share of median total |\n|---|---:|---:|---:|\n");
            double sum = 0;
            for (int pi = 0; pi < s->nphase; pi++) {
                double m, n;
                stats(s->phase[pi].v, s->phase[pi].n, &m, &n);
                sum += m;
                printf("| %s | %.3f | %.3f | %.1f%% |\n", s->phase[pi].name, m, n,
                       tm > 0 ? 100.0 * m / tm : 0.0);
            }
            printf("| (sum of phase medians) | %.3f | | %.1f%% |\n", sum, tm > 0 ? 100.0 * sum / tm : 0.0);
            printf("| (own clock, whole call) | %.3f | %.3f | 100%% |\n", tm, tn);
        }
    }

    double m, n;
    stats(ccv, 21, &m, &n);
    printf("\n### Spawning `%s --version` (popen, 21 runs; the C target does this on every build, "
           "cache hit included)\n\nmedian %.3f ms, min %.3f ms\n",
           cc, m, n);

    for (int ci = 0; ci < NCASES; ci++) {
        series_free(&fe[ci]);
        series_free(&cold[ci]);
        series_free(&warm[ci]);
    }
    ts_context_destroy(ctx);
    return 0;
}
