/*
 * main.c — the `tilescale` command line tool.
 *
 *   tilescale run FILE --entry NAME [-D name=value]... [--target c|cuda|auto]
 *                 [--in NAME=file.npy]... [--out NAME=file.npy]...
 *                 [--shape VAR=N]... [--check-against ENTRY] [--check-target c|cuda] [--seed S]
 *                 [--atol X] [--rtol X] [--threads N] [--time] [--check-bounds | --no-check-bounds]
 *   tilescale compile FILE --entry NAME [-D name=value]... [--target c|cuda]
 *                 [--emit ir|c|cuda|ptx|sass] [--dump-after PASS] [--plot-layouts DIR] [--time] [--check-bounds | --no-check-bounds]
 *
 * `run` makes the kernel's tensors (read from .npy files, or random from
 * the seed; outputs named in out_idx are poisoned with NaN first), runs
 * the kernel, optionally runs a second entry of the same file on copies
 * of the same inputs and compares every tensor; --check-target runs the
 * same entry compiled for another target instead (e.g. CUDA against C).
 * It uses only the public
 * API (tilescale.h), as any host program would.  `compile --emit` prints
 * the IR, the generated C or CUDA (c and cuda are the same text: that of
 * the target), or the CUDA target's PTX or SASS (emit.c; cuda, ptx and
 * sass choose the CUDA target unless --target says otherwise).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/dist.h"

#define MAX_ITEMS 64

typedef struct NameVal {
    const char *name;
    const char *value;
} NameVal;

typedef struct Opts {
    const char *cmd, *file, *entry, *check, *emit, *dump_after;
    const char *plot_dir;  /* --plot-layouts DIR, or NULL */
    int check_target;      /* --check-target: 1 + the target to compare with; 0: none */
    TsDefine defs[MAX_ITEMS];
    int ndefs;
    NameVal ins[MAX_ITEMS], outs[MAX_ITEMS], shapes[MAX_ITEMS];
    int nins, nouts, nshapes;
    TsTarget target;
    int target_set;        /* --target was given */
    uint64_t seed;
    int have_seed, time, threads;
    int check_bounds;      /* --check-bounds: 1, --no-check-bounds: -1, else 0 (the target's default) */
    double atol, rtol;
} Opts;

static void usage(FILE *f) {
    fputs("usage:\n"
          "  tilescale run FILE --entry NAME [-D name=value]... [--target c|cuda|auto]\n"
          "                [--in NAME=file.npy]... [--out NAME=file.npy]... [--shape VAR=N]...\n"
          "                [--check-against ENTRY] [--check-target c|cuda] [--seed S] [--atol X] [--rtol X]\n"
          "                [--threads N] [--time] [--check-bounds | --no-check-bounds]\n"
          "  tilescale run FILE --entry NAME --ranks N [--target c] [-D ...] [--in NAME=a{rank}.npy]...\n"
          "                [--out NAME=b{rank}.npy]... [--check-against REF] [--seed S] [--heap BYTES] [--timeout SEC]\n"
          "  tilescale launch -n N [--rdzv DIR] [--timeout SEC] [--] PROG [ARGS...]   (a process per rank;\n"
          "                e.g. PROG = tilescale run FILE --entry NAME [--target c|cuda] ...)\n"
          "  tilescale compile FILE --entry NAME [-D name=value]... [--target c|cuda]\n"
          "                [--emit ir|c|cuda|ptx|sass] [--dump-after PASS] [--plot-layouts DIR] [--time] [--check-bounds | --no-check-bounds]\n"
          "\n"
          "Every buffer access of a kernel is checked against the buffer's extents on the C target\n"
          "(--no-check-bounds: not), on the CUDA target with --check-bounds; an access outside is an\n"
          "error naming the kernel, the buffer, the index and the source line.\n",
          f);
}

/* NAME=VALUE, split in place (argv's strings are ours to modify): no copies
 * to free, no length limit. */
static int split_nv(char *s, NameVal *nv, const char *what) {
    char *eq = strchr(s, '=');
    if (!eq || eq == s) {
        fprintf(stderr, "tilescale: error: %s expects NAME=VALUE, got '%s'\n", what, s);
        return 0;
    }
    *eq = 0;
    nv->name = s;
    nv->value = eq + 1;
    return 1;
}

/* Strict numbers for options: the whole text, in range, or an error naming
 * the option (atoi's "abc" -> 0 and "-1" threads are gone). */
static int parse_int_opt(const char *opt, const char *text, int64_t lo, int64_t hi, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!*text || *end || errno == ERANGE || v < lo || v > hi) {
        fprintf(stderr, "tilescale: error: %s expects an integer from %lld to %lld, got '%s'\n", opt,
                (long long)lo, (long long)hi, text);
        return 0;
    }
    *out = v;
    return 1;
}

static int parse_double_opt(const char *opt, const char *text, double lo, double *out) {
    char *end;
    double v = strtod(text, &end);
    if (!*text || *end || !isfinite(v) || v < lo) {
        fprintf(stderr, "tilescale: error: %s expects a finite number >= %g, got '%s'\n", opt, lo, text);
        return 0;
    }
    *out = v;
    return 1;
}

static int parse_args(int argc, char **argv, Opts *o) {
    memset(o, 0, sizeof *o);
    o->atol = o->rtol = -1;
    if (argc < 2) return 0;
    o->cmd = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED()                                                                      \
    do {                                                                            \
        if (!next) {                                                                \
            fprintf(stderr, "tilescale: error: %s needs a value\n", a);             \
            return 0;                                                               \
        }                                                                           \
        i++;                                                                        \
    } while (0)
        if (!strcmp(a, "--entry")) { NEED(); o->entry = next; }
        else if (!strncmp(a, "-D", 2)) {
            char *d = a[2] ? argv[i] + 2 : argv[i + 1];
            if (!a[2]) NEED();
            NameVal nv;
            if (o->ndefs == MAX_ITEMS) {
                fprintf(stderr, "tilescale: error: more than %d -D options\n", MAX_ITEMS);
                return 0;
            }
            if (!split_nv(d, &nv, "-D")) return 0;
            o->defs[o->ndefs].name = nv.name;
            o->defs[o->ndefs++].value = nv.value;
        } else if (!strcmp(a, "--in") || !strcmp(a, "--out") || !strcmp(a, "--shape")) {
            NEED();
            NameVal *arr = a[2] == 'i' ? o->ins : a[2] == 'o' ? o->outs : o->shapes;
            int *n = a[2] == 'i' ? &o->nins : a[2] == 'o' ? &o->nouts : &o->nshapes;
            if (*n == MAX_ITEMS) {
                fprintf(stderr, "tilescale: error: more than %d %s options\n", MAX_ITEMS, a);
                return 0;
            }
            if (!split_nv(argv[i], &arr[*n], a)) return 0;
            if (arr == o->shapes) {
                int64_t v;
                if (!parse_int_opt("--shape", arr[*n].value, 0, INT64_MAX, &v)) return 0;
            }
            (*n)++;
        } else if (!strcmp(a, "--target")) {
            NEED();
            o->target_set = 1;
            if (!strcmp(next, "c")) o->target = TS_TARGET_C;
            else if (!strcmp(next, "cuda")) o->target = TS_TARGET_CUDA;
            else if (!strcmp(next, "auto"))
                o->target = ts_target_available(TS_TARGET_CUDA) ? TS_TARGET_CUDA : TS_TARGET_C;
            else {
                fprintf(stderr, "tilescale: error: unknown target '%s' (c, cuda or auto)\n", next);
                return 0;
            }
        } else if (!strcmp(a, "--check-target")) {
            NEED();
            if (!strcmp(next, "c")) o->check_target = 1 + TS_TARGET_C;
            else if (!strcmp(next, "cuda")) o->check_target = 1 + TS_TARGET_CUDA;
            else {
                fprintf(stderr, "tilescale: error: unknown target '%s' for --check-target (c or cuda)\n", next);
                return 0;
            }
        } else if (!strcmp(a, "--check-against")) { NEED(); o->check = next; }
        else if (!strcmp(a, "--emit")) { NEED(); o->emit = next; }
        else if (!strcmp(a, "--plot-layouts")) { NEED(); o->plot_dir = next; }
        else if (!strcmp(a, "--dump-after")) { NEED(); o->dump_after = next; }
        else if (!strcmp(a, "--seed")) {
            NEED();
            char *end;
            errno = 0;
            o->seed = strtoull(next, &end, 10);
            if (!*next || *end || errno == ERANGE || next[0] == '-') {
                fprintf(stderr, "tilescale: error: --seed expects an integer from 0 to %llu, got '%s'\n",
                        (unsigned long long)UINT64_MAX, next);
                return 0;
            }
            o->have_seed = 1;
        }
        else if (!strcmp(a, "--atol")) { NEED(); if (!parse_double_opt(a, next, 0, &o->atol)) return 0; }
        else if (!strcmp(a, "--rtol")) { NEED(); if (!parse_double_opt(a, next, 0, &o->rtol)) return 0; }
        else if (!strcmp(a, "--threads")) {
            NEED();
            int64_t v;
            if (!parse_int_opt(a, next, 1, 4096, &v)) return 0;
            o->threads = (int)v;
        }
        else if (!strcmp(a, "--time")) o->time = 1;
        else if (!strcmp(a, "--check-bounds")) o->check_bounds = 1;
        else if (!strcmp(a, "--no-check-bounds")) o->check_bounds = -1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
        else if (a[0] == '-') {
            fprintf(stderr, "tilescale: error: unknown option '%s'\n", a);
            return 0;
        } else if (!o->file) o->file = a;
        else {
            fprintf(stderr, "tilescale: error: unexpected argument '%s'\n", a);
            return 0;
        }
#undef NEED
    }
    if (o->check && o->check_target) {
        fprintf(stderr, "tilescale: error: --check-against and --check-target cannot be combined\n");
        return 0;
    }
    if (!o->file || !o->entry) {
        fprintf(stderr, "tilescale: error: a FILE and --entry NAME are required\n");
        return 0;
    }
    return 1;
}

/* ---- random data ------------------------------------------------------------ */

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void fill_random(TsTensor *t, uint64_t seed) {
    int64_t n = ts_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = splitmix(&seed);
        double u = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
        double v;
        switch (t->dtype) {
        case TS_BOOL: v = (double)(r & 1); break;
        case TS_UINT8: case TS_UINT16: case TS_UINT32: case TS_UINT64: v = (double)(r % 17); break;
        case TS_INT8: case TS_INT16: case TS_INT32: case TS_INT64: v = (double)(int)(r % 17) - 8; break;
        default: v = 2 * u - 1; break;
        }
        ts_tensor_set(t, i, v);
    }
}

static void fill_poison(TsTensor *t) {
    int64_t n = ts_tensor_numel(t);
    int fl = t->dtype >= TS_FLOAT16;
    for (int64_t i = 0; i < n; i++) ts_tensor_set(t, i, fl ? NAN : 123);
}

static const char *find_nv(const NameVal *a, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (!strcmp(a[i].name, name)) return a[i].value;
    return NULL;
}

static int copy_tensor(TsContext *ctx, TsTensor *dst, const TsTensor *src, const char *name) {
    if (ts_tensor_alloc_ctx(ctx, dst, src->dtype, src->ndim, src->shape, name)) {
        fprintf(stderr, "%s", ts_last_error(ctx));
        return 0;
    }
    int64_t n = ts_tensor_numel(src);
    for (int64_t i = 0; i < n; i++) ts_tensor_set(dst, i, ts_tensor_get(src, i));
    return 1;
}

/* The default seed: from the OS's entropy (two runs in the same second
 * differ), the clock only where /dev/urandom cannot be read. */
static uint64_t entropy_seed(void) {
    uint64_t s = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        if (fread(&s, sizeof s, 1, f) != 1) s = 0;
        fclose(f);
    }
    if (!s) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        s = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec;
    }
    return s & ((1ull << 53) - 1); /* small enough to retype exactly */
}

static void print_shape(FILE *f, const TsTensor *t) {
    fprintf(f, "%s[", ts_dtype_name(t->dtype));
    for (int d = 0; d < t->ndim; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    fputs("]", f);
}

/* Make the kernel's arguments: from --in files, --in scalars, or random. */
static int make_args(TsContext *ctx, TsKernel *k, const Opts *o, TsTensor *args, uint64_t seed) {
    int np = ts_kernel_num_params(k);
    /* run-time shape variables: --shape, then extents of --in tensors */
    NameVal vars[MAX_ITEMS];
    char numbuf[MAX_ITEMS][24]; /* decimal text of extents taken from --in files (int64 fits) */
    int nvars = 0;
    for (int i = 0; i < o->nshapes && nvars < MAX_ITEMS; i++) vars[nvars++] = o->shapes[i];
    for (int p = 0; p < np; p++) {
        TsParamInfo info;
        ts_kernel_param(k, p, &info);
        const char *in = find_nv(o->ins, o->nins, info.name);
        if (info.is_tensor && in) {
            if (ts_npy_load(ctx, in, &args[p])) {
                fprintf(stderr, "%s", ts_last_error(ctx));
                return 0;
            }
            for (int d = 0; d < info.ndim && d < args[p].ndim; d++)
                if (info.shape[d] < 0 && info.shape_names[d] && !find_nv(vars, nvars, info.shape_names[d]) &&
                    nvars < MAX_ITEMS) {
                    snprintf(numbuf[nvars], sizeof numbuf[nvars], "%lld", (long long)args[p].shape[d]);
                    vars[nvars].name = info.shape_names[d];
                    vars[nvars].value = numbuf[nvars];
                    nvars++;
                }
        }
    }
    for (int p = 0; p < np; p++) {
        TsParamInfo info;
        ts_kernel_param(k, p, &info);
        if (args[p].data) continue;
        const char *in = find_nv(o->ins, o->nins, info.name);
        if (!info.is_tensor) {
            if (!in) {
                fprintf(stderr, "tilescale: error: scalar parameter '%s' needs a value: --in %s=VALUE\n",
                        info.name, info.name);
                return 0;
            }
            char *end;
            double v = strtod(in, &end);
            if (!*in || *end) {
                fprintf(stderr, "tilescale: error: --in %s=%s: a scalar parameter needs a number\n", info.name, in);
                return 0;
            }
            if (ts_tensor_alloc_ctx(ctx, &args[p], info.dtype, 0, NULL, info.name)) {
                fprintf(stderr, "%s", ts_last_error(ctx));
                return 0;
            }
            ts_tensor_set(&args[p], 0, v);
            continue;
        }
        int64_t shape[8];
        for (int d = 0; d < info.ndim; d++) {
            shape[d] = info.shape[d];
            if (shape[d] < 0) {
                if (!info.shape_names[d]) { /* never print '(null)' */
                    fprintf(stderr, "tilescale: error: extent %d of '%s' is a run-time expression: give --in %s=FILE.npy\n",
                            d, info.name, info.name);
                    return 0;
                }
                const char *v = find_nv(vars, nvars, info.shape_names[d]);
                if (!v) {
                    fprintf(stderr,
                            "tilescale: error: extent %d of '%s' is the run-time variable '%s': "
                            "give --shape %s=N or --in %s=FILE.npy\n",
                            d, info.name, info.shape_names[d], info.shape_names[d], info.name);
                    return 0;
                }
                shape[d] = strtoll(v, NULL, 10); /* validated when parsed */
            }
        }
        if (ts_tensor_alloc_ctx(ctx, &args[p], info.dtype, info.ndim, shape, info.name)) {
            fprintf(stderr, "%s", ts_last_error(ctx));
            return 0;
        }
        if (info.is_output) fill_poison(&args[p]);
        else fill_random(&args[p], seed + 0x1000193ull * (uint64_t)(p + 1));
    }
    return 1;
}

static void default_tol(TsDType dt, double *atol, double *rtol) {
    switch (dt) {
    case TS_FLOAT16: *atol = *rtol = 1e-2; break;
    case TS_BFLOAT16: *atol = *rtol = 2e-2; break;
    case TS_FLOAT8_E4M3: case TS_FLOAT8_E5M2: *atol = *rtol = 1.3e-1; break;
    case TS_FLOAT32: *atol = *rtol = 1e-4; break;
    case TS_FLOAT64: *atol = *rtol = 1e-10; break;
    default: *atol = *rtol = 0; break;
    }
}

/* Compare got against want; prints one line; returns 1 if within tolerance. */
static int compare(const char *name, const TsTensor *got, const TsTensor *want, const Opts *o) {
    double atol, rtol;
    default_tol(got->dtype, &atol, &rtol);
    if (o->atol >= 0) atol = o->atol;
    if (o->rtol >= 0) rtol = o->rtol;
    int64_t n = ts_tensor_numel(got), bad = 0, first_bad = -1;
    double max_abs = 0, max_rel = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = ts_tensor_get(got, i), b = ts_tensor_get(want, i);
        /* NaN in the result fails even where the reference has NaN too:
         * outputs start as NaN (the poison), so a NaN there is most often
         * an element neither kernel wrote (issue 9 H). */
        double err = fabs(a - b);
        if (isnan(err)) err = INFINITY;
        if (isinf(a) && isinf(b) && (a > 0) == (b > 0)) err = 0;
        double rel = err / (fabs(b) > 1e-30 ? fabs(b) : 1e-30);
        if (err > max_abs) max_abs = err;
        if (rel > max_rel && fabs(b) > 1e-30) max_rel = rel;
        if (!(err <= atol + rtol * fabs(b))) {
            if (first_bad < 0) first_bad = i;
            bad++;
        }
    }
    printf("  %-12s ", name);
    print_shape(stdout, got);
    printf("  max abs err %.3g  max rel err %.3g  %s\n", max_abs, max_rel, bad ? "MISMATCH" : "ok");
    if (bad)
        printf("    %lld of %lld elements differ (atol %g, rtol %g); first at flat index %lld: %g vs %g\n",
               (long long)bad, (long long)n, atol, rtol, (long long)first_bad,
               ts_tensor_get(got, first_bad), ts_tensor_get(want, first_bad));
    return bad == 0;
}

static void print_timing(const char *label, TsKernel *k) {
    const char *t = ts_kernel_timing(k);
    if (!*t) return;
    printf("time (%s, ms):\n", label);
    const char *p = t;
    while (*p) {
        const char *e = strchr(p, '\n');
        if (!e) e = p + strlen(p);
        printf("  %.*s\n", (int)(e - p), p);
        p = *e ? e + 1 : e;
    }
}

static int cmd_compile(TsContext *ctx, const Opts *o) {
    TsCompileOptions co = {0};
    co.target = o->target;
    co.dump_after = o->dump_after;
    co.timing = o->time;
    co.skip_build = 1;
    co.check_bounds = o->check_bounds;
    const char *emit = o->emit ? o->emit : "ir";
    int dev = !strcmp(emit, "ptx") || !strcmp(emit, "sass");
    if (strcmp(emit, "ir") && strcmp(emit, "c") && strcmp(emit, "cuda") && !dev) {
        fprintf(stderr, "tilescale: error: --emit takes ir, c, cuda, ptx or sass, not '%s'\n", emit);
        return 2;
    }
    if ((dev || !strcmp(emit, "cuda")) && !o->target_set) co.target = TS_TARGET_CUDA;
    if ((dev || !strcmp(emit, "cuda")) && co.target != TS_TARGET_CUDA) {
        fprintf(stderr, "tilescale: error: --emit %s needs --target cuda\n", emit);
        return 2;
    }
    TsKernel *k;
    if (ts_compile_file(ctx, o->file, o->entry, o->defs, o->ndefs, &co, &k)) {
        fprintf(stderr, "%s", ts_last_error(ctx));
        return 1;
    }
    int rc = 0;
    if (!strcmp(emit, "ir")) {
        fputs(ts_kernel_ir(k), stdout);
    } else if (dev) {
        rc = cli_emit_device(ctx, k, emit);
    } else {
        for (const TsKernel *p = k; p; p = ts_kernel_next(p)) {
            if (p != k) fputs("\n/* ---- the next kernel of the chain, launched after the one above ---- */\n\n", stdout);
            fputs(ts_kernel_source(p), stdout);
        }
    }
    if (o->plot_dir) { /* SVG pictures of the fragment layouts and shared swizzles (src/driver/plot.c) */
        int n = 0;
        if (ts_kernel_plot_layouts(k, o->plot_dir, &n)) {
            fprintf(stderr, "%s", ts_last_error(ctx));
            rc = 1;
        } else {
            fprintf(stderr, "tilescale: wrote %d layout picture%s to %s\n", n, n == 1 ? "" : "s", o->plot_dir);
        }
    }
    if (o->time) print_timing(o->entry, k);
    ts_kernel_destroy(k);
    return rc;
}

static int cmd_run(TsContext *ctx, const Opts *o) {
    TsCompileOptions co = {0};
    co.target = o->target;
    co.timing = o->time;
    co.num_threads = o->threads;
    co.check_bounds = o->check_bounds;
    TsKernel *k = NULL, *ref = NULL;
    int rc = 1;
    TsTensor args[MAX_ITEMS] = {{0}}, rargs[MAX_ITEMS] = {{0}};
    int np = 0;
    if (ts_compile_file(ctx, o->file, o->entry, o->defs, o->ndefs, &co, &k)) {
        fprintf(stderr, "%s", ts_last_error(ctx));
        return 1;
    }
    np = ts_kernel_num_params(k);
    if (np > MAX_ITEMS) {
        fprintf(stderr, "tilescale: error: too many parameters\n");
        goto done;
    }
    for (int i = 0; i < o->nins + o->nouts; i++) {
        const char *nm = i < o->nins ? o->ins[i].name : o->outs[i - o->nins].name;
        int found = 0;
        for (int p = 0; p < np; p++) {
            TsParamInfo info;
            ts_kernel_param(k, p, &info);
            found |= !strcmp(info.name, nm);
        }
        if (!found) {
            fprintf(stderr, "tilescale: error: '%s' has no parameter named '%s'\n", ts_kernel_name(k), nm);
            goto done;
        }
    }
    if (o->check || o->check_target) {
        TsCompileOptions rco = co;
        rco.lenient_defines = 1;
        if (o->check_target) rco.target = (TsTarget)(o->check_target - 1);
        if (ts_compile_file(ctx, o->file, o->check ? o->check : o->entry, o->defs, o->ndefs, &rco, &ref)) {
            fprintf(stderr, "%s", ts_last_error(ctx));
            goto done;
        }
        if (ts_kernel_num_params(ref) != np) {
            fprintf(stderr, "tilescale: error: %s takes %d parameters but %s takes %d; --check-against needs the same parameters\n",
                    o->entry, np, o->check, ts_kernel_num_params(ref));
            goto done;
        }
    }
    /* every --out file must be writable before the kernel runs (and its inputs are made) */
    for (int i = 0; i < o->nouts; i++)
        if (ts_npy_check_writable(ctx, o->outs[i].value)) {
            fprintf(stderr, "%s", ts_last_error(ctx));
            goto done;
        }
    uint64_t seed = o->have_seed ? o->seed : entropy_seed();
    if (!make_args(ctx, k, o, args, seed)) goto done;
    for (int p = 0; p < np && ref; p++) {
        TsParamInfo info;
        ts_kernel_param(k, p, &info);
        if (!copy_tensor(ctx, &rargs[p], &args[p], info.name)) goto done;
    }

    int64_t grid[3];
    int threads;
    ts_kernel_grid(k, grid, &threads);
    printf("%s: %s, seed %llu\n", ts_kernel_name(k), o->target == TS_TARGET_C ? "target c" : "target cuda",
           (unsigned long long)seed);
    if (ts_kernel_launch(k, args, np)) {
        fprintf(stderr, "%s", ts_last_error(ctx));
        goto done;
    }
    if (ref && ts_kernel_launch(ref, rargs, np)) {
        fprintf(stderr, "%s", ts_last_error(ctx));
        goto done;
    }
    for (int i = 0; i < o->nouts; i++)
        for (int p = 0; p < np; p++) {
            TsParamInfo info;
            ts_kernel_param(k, p, &info);
            if (strcmp(info.name, o->outs[i].name)) continue;
            if (ts_npy_save(ctx, o->outs[i].value, &args[p])) {
                fprintf(stderr, "%s", ts_last_error(ctx));
                goto done;
            }
        }
    rc = 0;
    if (ref) {
        if (o->check) printf("check against %s:\n", o->check);
        else printf("check against target %s:\n", o->check_target - 1 == TS_TARGET_C ? "c" : "cuda");
        int ok = 1;
        for (int p = 0; p < np; p++) {
            TsParamInfo info;
            ts_kernel_param(k, p, &info);
            if (!info.is_tensor) continue;
            ok &= compare(info.name, &args[p], &rargs[p], o);
        }
        printf("%s\n", ok ? "PASS" : "FAIL");
        rc = ok ? 0 : 1;
    } else {
        for (int p = 0; p < np; p++) {
            TsParamInfo info;
            ts_kernel_param(k, p, &info);
            if (!info.is_tensor) continue;
            double sum = 0;
            int64_t n = ts_tensor_numel(&args[p]);
            for (int64_t i = 0; i < n; i++) sum += ts_tensor_get(&args[p], i);
            printf("  %-12s ", info.name);
            print_shape(stdout, &args[p]);
            printf("  sum %.6g\n", sum);
        }
    }
    if (o->time) {
        print_timing(o->entry, k);
        if (ref) print_timing(o->check ? o->check : o->check_target - 1 == TS_TARGET_C ? "check target c" : "check target cuda", ref);
    }
done:
    for (int p = 0; p < np && p < MAX_ITEMS; p++) {
        ts_tensor_free(&args[p]);
        ts_tensor_free(&rargs[p]);
    }
    ts_kernel_destroy(ref);
    ts_kernel_destroy(k);
    return rc;
}

int main(int argc, char **argv) {
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "launch")) return ts_cli_launch(argc, argv); /* cli/launch.c */
    for (int i = 2; argc >= 2 && !strcmp(argv[1], "run") && i < argc; i++)
        if (!strcmp(argv[i], "--ranks") || getenv("TILESCALE_WORLD_SIZE"))
            return ts_cli_run_dist(argc, argv); /* cli/dist.c */
    Opts o;
    if (!parse_args(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    TsContext *ctx;
    if (ts_context_create(&ctx)) return 1;
    int rc;
    if (!strcmp(o.cmd, "run")) rc = cmd_run(ctx, &o);
    else if (!strcmp(o.cmd, "compile")) rc = cmd_compile(ctx, &o);
    else {
        fprintf(stderr, "tilescale: error: unknown command '%s' (run or compile)\n", o.cmd);
        usage(stderr);
        rc = 2;
    }
    ts_context_destroy(ctx);
    return rc;
}
