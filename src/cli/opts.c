/*
 * opts.c — parsing `tilescale`'s command line.
 *
 * One table lists every option: its spelling, whether it takes a value,
 * and which commands take it.  Parsing is two steps.  The first reads
 * every argument into CliOpts, validating values as it goes (numbers are
 * the whole text and in range: "abc", "-1" threads, "nan" tolerances are
 * errors naming the option, never atoi's silent 0).  The second checks
 * that each option given belongs to the command; whether `run` is
 * distributed is only known once --ranks has been seen, which is why the
 * check comes after.  Mistakes are named as what they are: an unknown
 * command, an unknown option (with the nearest spelling when one is close:
 * Levenshtein distance at most 2, or a third of the word), an option of
 * another command.  Every message is `tilescale: error: ...` and a usage
 * error exits with status 2, a short hint pointing at --help rather than
 * the whole usage text burying the message.
 *
 * Lists (-D, --in, --out, --shape) grow as needed: no limit on how many
 * are given, and NAME=VALUE is split in place in argv's strings (which a
 * C program may modify), so nothing is copied or cut.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "cli/opts.h"

typedef struct Opt {
    const char *name; /* "--entry"; "-D" also matches -DNAME=VALUE */
    int value;        /* 1: takes a value (the next argument) */
    int cmds;         /* CLI_* bits of the commands taking it */
} Opt;

#define RUNS (CLI_RUN | CLI_DIST)
static const Opt opt_table[] = {
    {"--entry", 1, RUNS | CLI_COMPILE},
    {"-D", 1, RUNS | CLI_COMPILE},
    {"--target", 1, RUNS | CLI_COMPILE},
    {"--in", 1, RUNS},
    {"--out", 1, RUNS},
    {"--shape", 1, RUNS},
    {"--check-against", 1, RUNS},
    {"--check-target", 1, CLI_RUN},
    {"--seed", 1, RUNS},
    {"--atol", 1, RUNS},
    {"--rtol", 1, RUNS},
    {"--ulp", 1, CLI_RUN},
    {"--threads", 1, RUNS},
    {"--time", 0, CLI_RUN | CLI_COMPILE},
    {"--check-bounds", 0, CLI_RUN | CLI_COMPILE},
    {"--no-check-bounds", 0, CLI_RUN | CLI_COMPILE},
    {"--ranks", 1, RUNS},
    {"--heap", 1, CLI_DIST},
    {"--timeout", 1, CLI_DIST},
    {"--ranks-per-node", 1, CLI_DIST},
    {"--multinode", 0, CLI_COMPILE | CLI_DIST},
    {"--bench", 1, CLI_DIST},
    {"--tiered", 1, RUNS | CLI_COMPILE},
    {"--emit", 1, CLI_COMPILE},
    {"--dump-after", 1, CLI_COMPILE},
    {"--plot-layouts", 1, CLI_COMPILE},
    {"--max-size", 1, CLI_CACHE},
    {"--help", 0, RUNS | CLI_COMPILE | CLI_LIST | CLI_CACHE},
    {"-h", 0, RUNS | CLI_COMPILE | CLI_LIST | CLI_CACHE},
    {"--version", 0, RUNS | CLI_COMPILE | CLI_LIST | CLI_CACHE},
};
#define TS_COUNTOF_OPTS ((int)(sizeof opt_table / sizeof opt_table[0]))

static const struct {
    const char *name; /* as typed */
    int cmd;          /* its CLI_* bit */
} cmd_table[] = {{"run", CLI_RUN}, {"compile", CLI_COMPILE}, {"list", CLI_LIST}, {"cache", CLI_CACHE}, {"launch", CLI_LAUNCH}};
#define TS_COUNTOF_CMDS ((int)(sizeof cmd_table / sizeof cmd_table[0]))

void cli_usage(FILE *f) {
    fputs("usage:\n"
          "  tilescale run FILE --entry NAME [-D name=value]... [--target c|cuda|auto]\n"
          "                [--in NAME=file.npy]... [--out NAME=file.npy]... [--shape VAR=N]...\n"
          "                [--check-against ENTRY] [--check-target c|cuda] [--seed S] [--atol X] [--rtol X]\n"
          "                [--ulp N] [--threads N] [--time] [--check-bounds | --no-check-bounds]\n"
          "                [--tiered 0|1|quick|auto]\n"
          "  tilescale run FILE --entry NAME --ranks N [--target c|cuda] [-D ...] [--in NAME=a{rank}.npy]...\n"
          "                [--out NAME=b{rank}.npy]... [--check-against REF] [--seed S] [--heap BYTES]\n"
          "                [--timeout SEC] [--bench N] [--ranks-per-node N] [--multinode]\n"
          "  tilescale launch -n N [--rdzv DIR] [--timeout SEC] [--] PROG [ARGS...]   (a process per rank;\n"
          "                e.g. PROG = tilescale run FILE --entry NAME [--target c|cuda] ...)\n"
          "  tilescale compile FILE --entry NAME [-D name=value]... [--target c|cuda]\n"
          "                [--emit ir|c|cuda|ptx|sass] [--dump-after PASS] [--plot-layouts DIR] [--time]\n"
          "                [--check-bounds | --no-check-bounds] [--tiered 0|1|quick|auto] [--multinode]\n"
          "  tilescale list FILE          the kernel entries of FILE with their parameters and defaults\n"
          "  tilescale cache info         the kernel cache: where, how many kernels, size, limit\n"
          "  tilescale cache clean [--max-size SIZE]\n"
          "                               remove the cache's kernels (all, or the least recently used\n"
          "                               until SIZE is left, sparing those used in the last minute);\n"
          "                               files it did not create are left alone\n"
          "  tilescale --version | --help\n"
          "\n"
          "Every buffer access of a kernel is checked against the buffer's extents on the C target\n"
          "(--no-check-bounds: not), on the CUDA target with --check-bounds; an access outside is an\n"
          "error naming the kernel, the buffer, the index and the source line.\n"
          "--check-against passes where every element satisfies |got - ref| <= atol + rtol * |ref|\n"
          "(numpy.allclose's rule; NaN only against NaN, and never in an output poisoned before the\n"
          "run); the report names the worst element.  float16 tensors pass by default where got and ref\n"
          "are at most 4 ulps apart or |got - ref| <= atol (1e-3); --ulp N: that rule with N ulps for any\n"
          "float dtype; --rtol X: numpy.allclose's rule for float16 too.\n"
          "The kernel cache ($TILESCALE_CACHE_DIR, else ~/.cache/tilescale) keeps at most\n"
          "$TILESCALE_CACHE_MAX bytes (default 1G; 0: no limit), dropping the least recently used.\n"
          "CUDA kernels whose cold build is long (>= 16 mma.sync per warp unrolled: the tensor-core GEMMs and\n"
          "FlashAttentions) build in two tiers where the cache has no full build: a quick tier (gemm\n"
          "k-loops rolled, NVRTC's fast-compile level) that runs first, and the full tier on a background\n"
          "thread, cached and swapped in.  --tiered 0: one full build; 1: every kernel; quick: the quick\n"
          "tier alone; auto: the default ($TILESCALE_TIERED the same).  `run` launches the quick tier and\n"
          "waits for the full one only before exiting (so that the next run finds it in the cache);\n"
          "--bench waits for it before timing; --time says which tier ran.\n",
          f);
}

/* Levenshtein distance, for suggestions (short words only). */
static int edit_distance(const char *a, const char *b) {
    size_t na = strlen(a), nb = strlen(b);
    if (na > 64 || nb > 64) return 1000;
    int row[65];
    for (size_t j = 0; j <= nb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

/* The candidate nearest to word if close enough to suggest, else NULL. */
static const char *nearest(const char *word, const char *const *cands, int n) {
    const char *best = NULL;
    int bd = 1000;
    for (int i = 0; i < n; i++) {
        int dist = edit_distance(word, cands[i]);
        if (dist < bd) bd = dist, best = cands[i];
    }
    int len = (int)strlen(word);
    return best && (bd <= 2 || bd * 3 <= len) && bd < len ? best : NULL;
}

static const char *cmd_names(int cmds) {
    switch (cmds) {
    case CLI_COMPILE: return "'compile'";
    case CLI_DIST: return "a distributed 'run' (--ranks N)";
    case CLI_RUN: return "a single-rank 'run' (without --ranks)";
    case CLI_CACHE: return "'cache'";
    case RUNS: return "'run'";
    case RUNS | CLI_COMPILE: return "'run' and 'compile'";
    case CLI_RUN | CLI_COMPILE: return "'compile' and a single-rank 'run'";
    default: return "other commands";
    }
}

/* A usage error: the message, a pointer to --help, exit status 2. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static int usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("tilescale: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n(see `tilescale --help`)\n", stderr);
    return 2;
}

static int grow_list(CliList *l) {
    if (l->n < l->cap) return 1;
    int cap = l->cap ? 2 * l->cap : 8;
    CliNameVal *v = realloc(l->v, (size_t)cap * sizeof *v);
    if (!v) return 0;
    l->v = v;
    l->cap = cap;
    return 1;
}

/* NAME=VALUE, split in place (argv's strings are ours to modify). */
static int split_nv(char *s, CliNameVal *nv, const char *what) {
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
 * the option. */
int cli_parse_int(const char *opt, const char *text, int64_t lo, int64_t hi, int64_t *out) {
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

int cli_parse_double(const char *opt, const char *text, double lo, double *out) {
    char *end;
    double v = strtod(text, &end);
    if (!*text || *end || !isfinite(v) || v < lo) {
        fprintf(stderr, "tilescale: error: %s expects a finite number >= %g, got '%s'\n", opt, lo, text);
        return 0;
    }
    *out = v;
    return 1;
}

int cli_parse_size(const char *text, int64_t *out) {
    char *end;
    errno = 0;
    if (!*text || *text == '-' || *text == '+') return 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text || errno == ERANGE) return 0;
    int shift = 0;
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
        if (*end == 'i') end++; /* 64KiB */
        if (*end == 'B' || *end == 'b') end++;
    }
    if (*end || v > (unsigned long long)(INT64_MAX >> shift)) return 0;
    *out = (int64_t)(v << shift);
    return 1;
}

const char *cli_find(const CliList *l, const char *name) {
    for (int i = l->n - 1; i >= 0; i--)
        if (!strcmp(l->v[i].name, name)) return l->v[i].value;
    return NULL;
}

void cli_opts_free(CliOpts *o) {
    free(o->defs);
    free(o->ins.v);
    free(o->outs.v);
    free(o->shapes.v);
    memset(o, 0, sizeof *o);
}

static const Opt *lookup(const char *a) {
    for (int i = 0; i < TS_COUNTOF_OPTS; i++)
        if (!strcmp(a, opt_table[i].name) || (!strcmp(opt_table[i].name, "-D") && !strncmp(a, "-D", 2)))
            return &opt_table[i];
    return NULL;
}

static int unknown_option(const char *a) {
    const char *names[TS_COUNTOF_OPTS];
    for (int i = 0; i < TS_COUNTOF_OPTS; i++) names[i] = opt_table[i].name;
    const char *eq = strchr(a, '='); /* --entry=x: say how to spell it */
    if (eq && a[1] == '-') {
        size_t n = (size_t)(eq - a);
        for (int i = 0; i < TS_COUNTOF_OPTS; i++)
            if (strlen(names[i]) == n && !strncmp(a, names[i], n))
                return usage_error("unknown option '%s': write the value as the next argument (%s VALUE)", a,
                                   names[i]);
    }
    const char *s = nearest(a, names, TS_COUNTOF_OPTS);
    if (s) return usage_error("unknown option '%s'; did you mean '%s'?", a, s);
    return usage_error("unknown option '%s'", a);
}

/* The first step: arguments after the command into o; -1 if good. */
static int read_args(int argc, char **argv, CliOpts *o, const Opt **seen) {
    for (int i = 2; i < argc; i++) {
        char *a = argv[i];
        if (a[0] != '-' || !a[1]) { /* positional ("-" alone is a file name) */
            if (o->cmd == CLI_CACHE && !o->sub) o->sub = a;
            else if (o->cmd != CLI_CACHE && !o->file) o->file = a;
            else return usage_error("unexpected argument '%s'%s", a, o->cmd == CLI_CACHE ? "" : " (one FILE only)");
            continue;
        }
        const Opt *op = lookup(a);
        if (!op) return unknown_option(a);
        seen[i] = op;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            cli_usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--version")) {
            printf("tilescale %s\n", ts_version());
            return 0;
        }
        char *v = NULL;
        if (op->value) {
            if (!strcmp(op->name, "-D") && a[2]) v = a + 2;
            else if (i + 1 < argc) v = argv[++i];
            else {
                fprintf(stderr, "tilescale: error: %s needs a value\n", a);
                return 2;
            }
        }
        const char *n = op->name;
        if (!strcmp(n, "--entry")) o->entry = v;
        else if (!strcmp(n, "-D")) {
            if (o->ndefs + 2 > o->defs_cap) { /* + 1: dist.c's spare slot for P */
                int cap = o->defs_cap ? 2 * o->defs_cap : 8;
                TsDefine *d = realloc(o->defs, (size_t)cap * sizeof *d);
                if (!d) return usage_error("out of memory");
                o->defs = d;
                o->defs_cap = cap;
            }
            CliNameVal nv;
            if (!split_nv(v, &nv, "-D")) return 2;
            o->defs[o->ndefs].name = nv.name;
            o->defs[o->ndefs++].value = nv.value;
        } else if (!strcmp(n, "--in") || !strcmp(n, "--out") || !strcmp(n, "--shape")) {
            CliList *l = n[2] == 'i' ? &o->ins : n[2] == 'o' ? &o->outs : &o->shapes;
            if (!grow_list(l)) return usage_error("out of memory");
            if (!split_nv(v, &l->v[l->n], n)) return 2;
            if (l == &o->shapes) {
                int64_t x;
                if (!cli_parse_int("--shape", l->v[l->n].value, 0, INT64_MAX, &x)) return 2;
            }
            l->n++;
        } else if (!strcmp(n, "--target")) {
            o->target_set = 1;
            if (!strcmp(v, "c")) o->target = TS_TARGET_C;
            else if (!strcmp(v, "cuda")) o->target = TS_TARGET_CUDA;
            else if (!strcmp(v, "auto"))
                o->target = ts_target_available(TS_TARGET_CUDA) ? TS_TARGET_CUDA : TS_TARGET_C;
            else return usage_error("unknown target '%s' (c, cuda or auto)", v);
        } else if (!strcmp(n, "--check-target")) {
            if (!strcmp(v, "c")) o->check_target = 1 + TS_TARGET_C;
            else if (!strcmp(v, "cuda")) o->check_target = 1 + TS_TARGET_CUDA;
            else return usage_error("unknown target '%s' for --check-target (c or cuda)", v);
        } else if (!strcmp(n, "--check-against")) o->check = v;
        else if (!strcmp(n, "--tiered")) {
            o->tiered = !strcmp(v, "0") ? TS_TIERED_OFF : !strcmp(v, "1") ? TS_TIERED_ON
                        : !strcmp(v, "quick") ? TS_TIERED_QUICK : !strcmp(v, "auto") ? TS_TIERED_AUTO : -1;
            if (o->tiered < 0) return usage_error("--tiered expects 0, 1, quick or auto, got '%s'", v);
        }
        else if (!strcmp(n, "--emit")) o->emit = v;
        else if (!strcmp(n, "--plot-layouts")) o->plot_dir = v;
        else if (!strcmp(n, "--dump-after")) o->dump_after = v;
        else if (!strcmp(n, "--seed")) {
            char *end;
            errno = 0;
            o->seed = strtoull(v, &end, 10);
            if (!*v || *end || errno == ERANGE || v[0] == '-' || v[0] == '+' || v[0] == ' ') {
                fprintf(stderr, "tilescale: error: --seed expects an integer from 0 to %llu, got '%s'\n",
                        (unsigned long long)UINT64_MAX, v);
                return 2;
            }
            o->have_seed = 1;
        } else if (!strcmp(n, "--atol")) {
            if (!cli_parse_double(n, v, 0, &o->atol)) return 2;
        } else if (!strcmp(n, "--rtol")) {
            if (!cli_parse_double(n, v, 0, &o->rtol)) return 2;
        } else if (!strcmp(n, "--ulp")) {
            if (!cli_parse_int(n, v, 0, 1000000, &o->ulp)) return 2;
        } else if (!strcmp(n, "--timeout")) {
            if (!cli_parse_double(n, v, 0, &o->timeout)) return 2;
            if (o->timeout > 1e7) return usage_error("--timeout expects at most 10000000 seconds, got '%s'", v);
        } else {
            int64_t x = 0, lo = 1, hi = 4096;
            if (!strcmp(n, "--ranks")) hi = 1 << 20; /* the world's own limit is checked where it is known */
            else if (!strcmp(n, "--heap")) hi = INT64_MAX;
            else if (!strcmp(n, "--bench")) hi = 1000000;
            else if (!strcmp(n, "--max-size")) {
                if (!cli_parse_size(v, &o->max_size))
                    return usage_error("--max-size expects a size such as 500M or 2G, got '%s'", v);
                continue;
            }
            if (op->value && !cli_parse_int(n, v, lo, hi, &x)) return 2;
            if (!strcmp(n, "--threads")) o->threads = (int)x;
            else if (!strcmp(n, "--ranks")) o->ranks = (int)x;
            else if (!strcmp(n, "--ranks-per-node")) o->ranks_per_node = (int)x;
            else if (!strcmp(n, "--multinode")) o->multinode = 1;
            else if (!strcmp(n, "--heap")) o->heap = x;
            else if (!strcmp(n, "--bench")) o->bench = (int)x;
            else if (!strcmp(n, "--time")) o->time = 1;
            else if (!strcmp(n, "--check-bounds")) o->check_bounds = 1;
            else if (!strcmp(n, "--no-check-bounds")) o->check_bounds = -1;
        }
    }
    return -1;
}

int cli_parse(int argc, char **argv, CliOpts *o) {
    memset(o, 0, sizeof *o);
    o->atol = o->rtol = -1;
    o->ulp = -1;
    o->max_size = -1;
    if (argc < 2) {
        cli_usage(stderr);
        return 2;
    }
    const char *c = argv[1];
    if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) {
        cli_usage(stdout);
        return 0;
    }
    if (!strcmp(c, "--version") || !strcmp(c, "-V") || !strcmp(c, "version")) {
        printf("tilescale %s\n", ts_version());
        return 0;
    }
    const char *names[TS_COUNTOF_CMDS];
    for (int i = 0; i < TS_COUNTOF_CMDS; i++) {
        names[i] = cmd_table[i].name;
        if (!strcmp(c, cmd_table[i].name)) o->cmd = cmd_table[i].cmd;
    }
    o->cmd_name = c;
    if (!o->cmd) {
        const char *s = c[0] == '-' ? NULL : nearest(c, names, TS_COUNTOF_CMDS);
        if (s) return usage_error("unknown command '%s'; did you mean '%s'?", c, s);
        if (c[0] == '-' && lookup(c))
            return usage_error("'%s' comes after a command: tilescale run|compile FILE %s ...", c, c);
        size_t len = strlen(c);
        if (len > 3 && !strcmp(c + len - 3, ".py"))
            return usage_error("unknown command '%s': the command comes first (tilescale run %s --entry NAME)", c, c);
        return usage_error("unknown command '%s' (the commands are run, compile, list, cache and launch)", c);
    }
    const Opt **seen = calloc((size_t)argc, sizeof *seen);
    if (!seen) return usage_error("out of memory");
    int rc = read_args(argc, argv, o, seen);
    /* distributed: --ranks, or a process a launcher started (dist.c) */
    if (rc == -1 && o->cmd == CLI_RUN && (o->ranks || getenv("TILESCALE_WORLD_SIZE"))) o->cmd = CLI_DIST;
    for (int i = 2; rc == -1 && i < argc; i++)
        if (seen[i] && !(seen[i]->cmds & o->cmd)) {
            fprintf(stderr, "tilescale: error: %s is an option of %s, not of %s\n(see `tilescale --help`)\n",
                    seen[i]->name, cmd_names(seen[i]->cmds),
                    cmd_names((o->cmd & RUNS) && !(seen[i]->cmds & RUNS) ? RUNS : o->cmd));
            rc = 2;
        }
    free(seen);
    if (rc != -1) return rc;
    if (o->cmd & (CLI_RUN | CLI_DIST | CLI_COMPILE)) {
        if (o->ulp >= 0 && o->rtol >= 0)
            return usage_error("--ulp and --rtol cannot be combined (--ulp N: at most N ulps apart, or within --atol)");
        if (!o->file) return usage_error("'%s' needs a FILE", c);
        if (!o->entry) return usage_error("'%s' needs --entry NAME (`tilescale list %s` lists them)", c, o->file);
    } else if (o->cmd == CLI_LIST) {
        if (!o->file) return usage_error("'list' needs a FILE");
    } else if (o->cmd == CLI_CACHE) {
        static const char *const subs[] = {"info", "clean"};
        if (!o->sub) return usage_error("'cache' needs 'info' or 'clean'");
        if (strcmp(o->sub, "info") && strcmp(o->sub, "clean")) {
            const char *s = nearest(o->sub, subs, 2);
            if (s) return usage_error("unknown cache command '%s'; did you mean '%s'?", o->sub, s);
            return usage_error("unknown cache command '%s' (info or clean)", o->sub);
        }
        if (o->max_size >= 0 && strcmp(o->sub, "clean"))
            return usage_error("--max-size goes with 'cache clean'");
    }
    return -1;
}

/* The default seed: from the OS's entropy (two runs in the same second
 * differ), the clock only where /dev/urandom cannot be read. */
uint64_t cli_entropy_seed(void) {
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


int cli_env_seed(uint64_t *out) {
    const char *es = getenv("TILESCALE_SEED");
    if (!es || !*es) return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(es, &end, 10);
    if (*end || errno == ERANGE || es[0] < '0' || es[0] > '9') {
        fprintf(stderr, "tilescale: error: TILESCALE_SEED='%s' is not a seed (an integer from 0 to %llu)\n", es,
                (unsigned long long)UINT64_MAX);
        return -1;
    }
    *out = v;
    return 1;
}
