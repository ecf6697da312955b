/*
 * main.c — the `tilescale` command line tool.
 *
 *   tilescale run FILE --entry NAME [-D name=value]... [--target c|cuda|auto]
 *                 [--in NAME=file.npy]... [--out NAME=file.npy]...
 *                 [--shape VAR=N]... [--check-against ENTRY] [--check-target c|cuda] [--seed S]
 *                 [--atol X] [--rtol X] [--ulp N] [--threads N] [--time] [--check-bounds | --no-check-bounds]
 *   tilescale compile FILE --entry NAME [-D name=value]... [--target c|cuda]
 *                 [--emit ir|c|cuda|ptx|sass] [--dump-after PASS] [--plot-layouts DIR] [--time] [--check-bounds | --no-check-bounds]
 *   tilescale launch -n N [--rdzv DIR] [--timeout SEC] [--] PROG [ARGS...]   (launch.c)
 *   tilescale list FILE
 *   tilescale cache info | clean [--max-size SIZE]
 *   tilescale --version | --help
 *
 * The command line is parsed in opts.c (one table of options for every
 * command), the --check-against report is check.c's, `run --ranks N` is
 * dist.c's, `--emit ptx|sass` emit.c's.
 * `run` makes the kernel's tensors (read from .npy files, or random from
 * the seed; outputs named in out_idx are poisoned with NaN first), runs
 * the kernel, optionally runs a second entry of the same file on copies
 * of the same inputs and compares every tensor; --check-target runs the
 * same entry compiled for another target instead (e.g. CUDA against C),
 * or with --check-against that entry on that target (a GPU kernel against
 * a naive one run on the CPU).
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

#include "cli/check.h"
#include "cli/opts.h"

typedef CliOpts Opts;

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

static int copy_tensor(TsContext *ctx, TsTensor *dst, const TsTensor *src, const char *name) {
    if (ts_tensor_alloc_ctx(ctx, dst, src->dtype, src->ndim, src->shape, name)) {
        fprintf(stderr, "%s", ts_last_error(ctx));
        return 0;
    }
    int64_t n = ts_tensor_numel(src);
    for (int64_t i = 0; i < n; i++) ts_tensor_set(dst, i, ts_tensor_get(src, i));
    return 1;
}

static void print_shape(FILE *f, const TsTensor *t) {
    fprintf(f, "%s[", ts_dtype_name(t->dtype));
    for (int d = 0; d < t->ndim; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    fputs("]", f);
}

/* The value of run-time shape variable `name`: --shape, else the extent of
 * a tensor read from an --in file where the kernel has that variable; 0 if
 * neither gives one. */
static int shape_var(TsKernel *k, const Opts *o, const TsTensor *args, const char *name, int64_t *out) {
    const char *v = cli_find(&o->shapes, name);
    if (v) {
        *out = strtoll(v, NULL, 10); /* validated when parsed */
        return 1;
    }
    for (int p = 0; p < ts_kernel_num_params(k); p++) {
        TsParamInfo info;
        ts_kernel_param(k, p, &info);
        if (!info.is_tensor || !args[p].data || !cli_find(&o->ins, info.name)) continue;
        for (int d = 0; d < info.ndim && d < args[p].ndim; d++)
            if (info.shape[d] < 0 && info.shape_names[d] && !strcmp(info.shape_names[d], name)) {
                *out = args[p].shape[d];
                return 1;
            }
    }
    return 0;
}

/* Make the kernel's arguments: from --in files, --in scalars, or random. */
static int make_args(TsContext *ctx, TsKernel *k, const Opts *o, TsTensor *args, uint64_t seed) {
    int np = ts_kernel_num_params(k);
    for (int p = 0; p < np; p++) { /* tensors from files first: their extents bind shape variables */
        TsParamInfo info;
        ts_kernel_param(k, p, &info);
        const char *in = cli_find(&o->ins, info.name);
        if (info.is_tensor && in && ts_npy_load(ctx, in, &args[p])) {
            fprintf(stderr, "%s", ts_last_error(ctx));
            return 0;
        }
    }
    for (int p = 0; p < np; p++) {
        TsParamInfo info;
        ts_kernel_param(k, p, &info);
        if (args[p].data) continue;
        const char *in = cli_find(&o->ins, info.name);
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
                if (!shape_var(k, o, args, info.shape_names[d], &shape[d])) {
                    fprintf(stderr,
                            "tilescale: error: extent %d of '%s' is the run-time variable '%s': "
                            "give --shape %s=N or --in %s=FILE.npy\n",
                            d, info.name, info.shape_names[d], info.shape_names[d], info.name);
                    return 0;
                }
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

/* Which build the launch ran (a tiered CUDA build: api.c). */
static void cli_print_tier(const TsKernel *k) {
    if (ts_kernel_target(k) != TS_TARGET_CUDA) return;
    int t = ts_kernel_tier(k);
    printf("tier: %s\n", t == TS_TIER_FULL    ? "full"
                         : t == TS_TIER_QUICK ? "quick (the full tier is built in the background and cached)"
                                              : "quick only");
}

TsStatus cli_compile_file(TsContext *ctx, const char *path, const char *entry, const TsDefine *defs, int ndefs,
                          const TsCompileOptions *opt, TsKernel **out) {
    TsStatus st = ts_compile_file(ctx, path, entry, defs, ndefs, opt, out);
    fputs(ts_last_warnings(ctx), stderr);
    return st;
}

static int cmd_compile(TsContext *ctx, const Opts *o) {
    TsCompileOptions co = {0};
    co.target = o->target;
    co.dump_after = o->dump_after;
    co.timing = o->time;
    co.tiered = o->tiered;
    co.multinode = o->multinode;
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
    if (cli_compile_file(ctx, o->file, o->entry, o->defs, o->ndefs, &co, &k)) {
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
    co.tiered = o->tiered;
    co.num_threads = o->threads;
    co.check_bounds = o->check_bounds;
    TsKernel *k = NULL, *ref = NULL;
    int rc = 1;
    TsTensor *args = NULL, *rargs = NULL; /* the kernel's and the reference's, np each */
    int np = 0;
    if (cli_compile_file(ctx, o->file, o->entry, o->defs, o->ndefs, &co, &k)) {
        fprintf(stderr, "%s", ts_last_error(ctx));
        return 1;
    }
    /* a tiered build launches its quick tier, unless the run is timed (TILESCALE_CUDA_BENCH,
     * cuda_drv.c's benchmark mode): then the full tier, built in the background meanwhile */
    if (ts_kernel_tier(k) == TS_TIER_QUICK && getenv("TILESCALE_CUDA_BENCH") && ts_kernel_wait_full(k))
        fprintf(stderr, "%s", ts_last_error(ctx));
    np = ts_kernel_num_params(k);
    args = calloc((size_t)np + 1, sizeof *args);
    rargs = calloc((size_t)np + 1, sizeof *rargs);
    if (!args || !rargs) {
        fprintf(stderr, "tilescale: error: out of memory\n");
        goto done;
    }
    for (int i = 0; i < o->ins.n + o->outs.n; i++) {
        const char *nm = i < o->ins.n ? o->ins.v[i].name : o->outs.v[i - o->ins.n].name;
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
        if (cli_compile_file(ctx, o->file, o->check ? o->check : o->entry, o->defs, o->ndefs, &rco, &ref)) {
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
    for (int i = 0; i < o->outs.n; i++)
        if (ts_npy_check_writable(ctx, o->outs.v[i].value)) {
            fprintf(stderr, "%s", ts_last_error(ctx));
            goto done;
        }
    uint64_t seed = o->have_seed ? o->seed : cli_entropy_seed();
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
    for (int i = 0; i < o->outs.n; i++)
        for (int p = 0; p < np; p++) {
            TsParamInfo info;
            ts_kernel_param(k, p, &info);
            if (strcmp(info.name, o->outs.v[i].name)) continue;
            if (ts_npy_save(ctx, o->outs.v[i].value, &args[p])) {
                fprintf(stderr, "%s", ts_last_error(ctx));
                goto done;
            }
        }
    rc = 0;
    if (ref) {
        if (o->check && o->check_target)
            printf("check against %s on target %s:\n", o->check, o->check_target - 1 == TS_TARGET_C ? "c" : "cuda");
        else if (o->check) printf("check against %s:\n", o->check);
        else printf("check against target %s:\n", o->check_target - 1 == TS_TARGET_C ? "c" : "cuda");
        cli_print_rule();
        int uses_ulp = o->ulp >= 0;
        for (int p = 0; p < np; p++) {
            TsParamInfo info;
            ts_kernel_param(k, p, &info);
            uses_ulp |= info.is_tensor && o->rtol < 0 && cli_default_ulp(info.dtype) >= 0;
        }
        if (uses_ulp) cli_print_ulp_rule(o->ulp);
        int ok = 1;
        for (int p = 0; p < np; p++) {
            TsParamInfo info;
            ts_kernel_param(k, p, &info);
            if (!info.is_tensor) continue;
            ok &= cli_compare_ulp(info.name, &args[p], &rargs[p], 0, info.is_output && info.dtype >= TS_FLOAT16,
                                  o->atol, o->rtol, o->ulp);
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
        cli_print_tier(k);
        print_timing(o->entry, k);
        if (ref) print_timing(o->check ? o->check : o->check_target - 1 == TS_TARGET_C ? "check target c" : "check target cuda", ref);
    }
done:
    for (int p = 0; p < np && args && rargs; p++) {
        ts_tensor_free(&args[p]);
        ts_tensor_free(&rargs[p]);
    }
    free(args);
    free(rargs);
    ts_kernel_destroy(ref);
    ts_kernel_destroy(k);
    return rc;
}

/* `tilescale list FILE`: each entry, what it is, and its parameters. */
static int cmd_list(TsContext *ctx, const Opts *o) {
    const TsEntryInfo *e;
    int n;
    if (ts_list_entries(ctx, o->file, &e, &n)) {
        fprintf(stderr, "%s", ts_last_error(ctx));
        return 1;
    }
    static const char *const kinds[] = {"kernel factory", "eager kernel", "prim_func", "does not parse"};
    if (!n) printf("%s: no kernel entries (a def returning a @T.prim_func, an eager kernel or a @T.prim_func)\n",
                   o->file);
    for (int i = 0; i < n; i++) {
        printf("%s%s:%d: %s  (%s", i ? "\n" : "", o->file, e[i].line, e[i].name, kinds[e[i].kind]);
        if (e[i].out_idx) printf(", out_idx=%s", e[i].out_idx);
        printf(")\n");
        if (e[i].doc) printf("    %s\n", e[i].doc);
        if (e[i].kind == TS_ENTRY_BROKEN) {
            const char *m = e[i].error;
            while (*m) { /* the parser's diagnostic, indented */
                const char *nl = strchr(m, '\n');
                size_t len = nl ? (size_t)(nl - m) : strlen(m);
                printf("    %.*s\n", (int)len, m);
                m += len + (nl != NULL);
            }
            continue;
        }
        int need = 0;
        for (int j = 0; j < e[i].nparams; j++) {
            const TsEntryParam *p = &e[i].params[j];
            switch (p->kind) {
            case TS_PARAM_DEFINE:
                if (p->default_text) printf("    -D %s=%s", p->name, p->default_text);
                else printf("    -D %s=...  (required)", p->name), need++;
                if (p->annotation) printf("  [%s]", p->annotation);
                if (p->inner) printf("  (a parameter of the function %s returns)", e[i].name);
                printf("\n");
                break;
            case TS_PARAM_CONST:
                printf("    -D %s=...  (T.const: else taken from the tensors at launch)\n", p->name);
                break;
            case TS_PARAM_TENSOR:
                printf("    tensor %s%s%s\n", p->name, p->annotation ? ": " : "", p->annotation ? p->annotation : "");
                break;
            case TS_PARAM_SCALAR:
                printf("    scalar %s%s%s  (--in %s=VALUE)\n", p->name, p->annotation ? ": " : "",
                       p->annotation ? p->annotation : "", p->name);
                break;
            case TS_PARAM_WORKSPACE:
                printf("    workspace %s%s%s  (hidden: the launch allocates it)\n", p->name, p->annotation ? ": " : "",
                       p->annotation ? p->annotation : "");
                break;
            }
        }
        if (!e[i].nparams) printf("    (no parameters)\n");
        if (need) {
            printf("    run: tilescale run %s --entry %s", o->file, e[i].name);
            for (int j = 0; j < e[i].nparams; j++)
                if (e[i].params[j].kind == TS_PARAM_DEFINE && !e[i].params[j].default_text)
                    printf(" -D %s=...", e[i].params[j].name);
            printf("\n");
        }
    }
    return 0;
}

static void print_bytes(int64_t b) {
    if (b < 1024) printf("%lld bytes", (long long)b);
    else if (b < (1 << 20)) printf("%.1f KiB", (double)b / 1024);
    else if (b < (1 << 30)) printf("%.1f MiB", (double)b / (1 << 20));
    else printf("%.2f GiB", (double)b / (1 << 30));
}

/* `tilescale cache info` and `tilescale cache clean [--max-size SIZE]`. */
static int cmd_cache(TsContext *ctx, const Opts *o) {
    TsCacheInfo ci;
    int clean = !strcmp(o->sub, "clean");
    if (clean ? ts_cache_clean(ctx, NULL, o->max_size > 0 ? o->max_size : 0, &ci) : ts_cache_info(ctx, NULL, &ci)) {
        fprintf(stderr, "%s", ts_last_error(ctx));
        return 1;
    }
    if (clean) {
        printf("removed %lld kernel%s (", (long long)ci.removed, ci.removed == 1 ? "" : "s");
        print_bytes(ci.removed_bytes);
        printf(") from %s\n", ci.dir);
    }
    printf("cache: %s\n", ci.dir);
    printf("  kernels: %lld (%lld files, ", (long long)ci.kernels, (long long)ci.files);
    print_bytes(ci.bytes);
    printf(")\n  limit:   ");
    if (ci.limit) {
        print_bytes(ci.limit);
        printf(" ($TILESCALE_CACHE_MAX; least recently used kernels are removed beyond it)\n");
    } else {
        printf("none ($TILESCALE_CACHE_MAX=0)\n");
    }
    if (ci.foreign) printf("  other files: %lld (not made by the cache; never removed)\n", (long long)ci.foreign);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "launch")) return ts_cli_launch(argc, argv); /* cli/launch.c */
    Opts o;
    int rc = cli_parse(argc, argv, &o);
    if (rc >= 0) {
        cli_opts_free(&o);
        return rc;
    }
    if (o.cmd == CLI_DIST) {
        rc = ts_cli_run_dist(&o); /* cli/dist.c */
        cli_opts_free(&o);
        return rc;
    }
    TsContext *ctx;
    if (ts_context_create(&ctx)) {
        fprintf(stderr, "tilescale: error: out of memory\n");
        cli_opts_free(&o);
        return 1;
    }
    switch (o.cmd) {
    case CLI_RUN: rc = cmd_run(ctx, &o); break;
    case CLI_COMPILE: rc = cmd_compile(ctx, &o); break;
    case CLI_LIST: rc = cmd_list(ctx, &o); break;
    default: rc = cmd_cache(ctx, &o); break;
    }
    ts_context_destroy(ctx);
    cli_opts_free(&o);
    return rc;
}
