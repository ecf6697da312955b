/*
 * fuzz.c — the fuzzer of the whole tool chain (issue 9 G).  A tool, also
 * run briefly by ctest (unit.fuzz, fixed seed) and for an hour by
 * tests/tools/fuzz_campaign.sh.  Build it with -fsanitize=address,undefined
 * (TS_SANITIZE=ON): a sanitizer report is a crash like any other.
 *
 *   fuzz [--corpus DIR] [--modes M=W,...] [--cli PATH] [--seconds S]
 *        [--timeout S] [--from N] SEED ITERATIONS FILE:ENTRY:NAME=VAL,NAME=VAL ...
 *   fuzz --replay [--cli PATH] [--timeout S] DIR-OR-FILE.txt ...
 *
 * What one mutant is, by mode (each mutant draws its mode by weight):
 *   c      a mutated kernel file through parse, elaboration, passes and
 *          C code generation (no cc), bounds checks drawn on or off;
 *   cuda   the same to CUDA source (no GPU, no NVRTC), with the CUDA
 *          target's compile-time limits;
 *   cc     like c, then the generated C compiled by cc and loaded;
 *   nvrtc  like cuda, then NVRTC compiles the source (libnvrtc, no GPU);
 *   npy    a mutated .npy file (header text, sizes, truncation, trailing
 *          bytes) read by ts_npy_load;
 *   cli    the `tilescale` program (--cli) started on a random command
 *          line: options from its vocabulary with hostile values, kernel
 *          files that may be mutants, .npy files that may be broken, and
 *          output paths that are symlinks, directories or missing folders
 *          (always inside the scratch folder: the fuzzer runs as root in CI
 *          and must never aim --out at a device node).
 * A finding is a crash (signal, sanitizer report), a hang (no progress for
 * --timeout seconds), TS_ERR_INTERNAL or an empty diagnostic, generated
 * code that cc or NVRTC rejects (TS_ERR_BUILD in modes cc/nvrtc), or for the
 * CLI an exit status other than 0, 1, 2, or "internal error" in its output.
 *
 * Why fork: a crash must not end the campaign, and the crashing input must
 * be kept.  The parent forks a worker that runs mutants in turn, writing the
 * number of the one it is on into shared memory; the parent watches it.  On
 * a crash or a hang the parent rebuilds that mutant (every mutant is a pure
 * function of SEED and its number) and saves it to the corpus folder as
 * F-N.{py,npy,args} with F-N.txt beside it (mode, entry, defines, seed,
 * the way it failed, the end of stderr), then forks a new worker that goes
 * on after it.  `--replay` runs saved reproducers again; tests/fuzz_corpus/
 * holds those of fixed bugs, replayed by ctest (unit.fuzz_replay).
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tilescale.h"

extern char **environ;

/* The most memory one CLI run may take (MB). */
#define FUZZ_CLI_MEM_MB 2048

enum { M_C, M_CUDA, M_CC, M_NVRTC, M_NPY, M_CLI, M_COUNT };
static const char *const mode_names[M_COUNT] = {"c", "cuda", "cc", "nvrtc", "npy", "cli"};

/* A kernel file to mutate: path, entry and its -D values. */
typedef struct Spec {
    char path[1024];  /* the file */
    char entry[128];  /* the kernel factory */
    char defs[512];   /* NAME=VAL,NAME=VAL */
    char *text;       /* its contents */
    size_t len;       /* their length */
} Spec;

/* The campaign's settings and state (one per process; passed around). */
typedef struct Fz {
    uint64_t seed;            /* the campaign's seed */
    long iters;               /* mutants to run (0: until --seconds) */
    long from;                /* the first mutant's number (--from: rerun one) */
    double seconds;           /* stop after this long (0: no limit) */
    double timeout;           /* seconds without progress that make a hang */
    int weight[M_COUNT];      /* how often each mode is drawn */
    int wsum;                 /* their sum */
    const char *corpus;       /* where findings go (NULL: nowhere) */
    const char *cli;          /* the tilescale program (mode cli) */
    char scratch[1024];       /* the scratch folder (npy seeds, CLI work) */
    Spec *specs;              /* the kernel files */
    int nspecs;               /* how many */
    int nnpy;                 /* seed .npy files in scratch (npy-N.npy) */
    volatile long *beat;      /* shared: [0] mutant in progress, [1] done count, [2] findings,
                                 [3 + 2m] accepted and [4 + 2m] rejected mutants of mode m */
    int accepted;             /* set by run_mutant: the last mutant was accepted (compiled, loaded, ran) */
} Fz;

/* ---- deterministic mutants --------------------------------------------------------------- */

typedef struct Rng {
    uint64_t s; /* splitmix64 state */
} Rng;

static uint64_t rnext(Rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t rbelow(Rng *r, uint64_t n) { return n ? rnext(r) % n : 0; }

/* Mutant number `it` of the campaign: its own generator. */
static Rng mutant_rng(const Fz *f, long it) {
    Rng r = {f->seed * 0xD1B54A32D192ED03ull ^ (uint64_t)it * 0x9E3779B97F4A7C15ull};
    rnext(&r);
    return r;
}

static int pick_mode(const Fz *f, Rng *r) {
    int x = (int)rbelow(r, (uint64_t)f->wsum);
    for (int m = 0; m < M_COUNT; m++) {
        if (x < f->weight[m]) return m;
        x -= f->weight[m];
    }
    return M_C;
}

static const char *src_tokens[] = {
    "T.copy(", "T.gemm(", ")", "(", "[", "]", ":", ",", "\n    ", "for ", " in T.Parallel(", "if ", "else:",
    "0", "-1", "1e9", "None", "True", "T.Kernel(", "T.alloc_fragment((", "\"float16\"", "**", "//", "lambda",
    "@T.macro\n", "while ", "break", "return ", "T.reduce_sum(", "dim=", "A[", "*", "'", "T.Pipelined(",
    "num_stages=", "T.alloc_shared((", "\"float8_e4m3\"", "\"bfloat16\"", "T.use_swizzle(", "T.ceildiv(",
    "T.infinity(\"float32\")", "~", "<< 63", "9223372036854775807", "-9223372036854775808", "threads=",
    "T.serial(", "T.alloc_var(", "T.exp2(", "T.max(", "T.if_then_else(", "T.clear(", "transpose_B=True",
    "T.atomic_add(", "T.reduce_max(", "\"\"\"", "#", "\\", "\t", "65536", "4294967296", "0.5", "T.fill("};

/* Byte flips, deletions, duplications and token splices: 1 to 4 of them. */
static char *mutate_text(Rng *r, const char *text, size_t len, size_t *out_len) {
    size_t cap = len * 2 + 512;
    char *buf = malloc(cap);
    if (!buf) exit(3);
    memcpy(buf, text, len + 1);
    int muts = 1 + (int)rbelow(r, 4);
    for (int m = 0; m < muts; m++) {
        size_t n = strlen(buf);
        if (!n) break;
        size_t pos = rbelow(r, n);
        switch (rbelow(r, 5)) {
        case 0: buf[pos] = (char)(32 + rbelow(r, 95)); break;
        case 1: {
            size_t l = 1 + rbelow(r, 8);
            if (pos + l > n) l = n - pos;
            memmove(buf + pos, buf + pos + l, n - pos - l + 1);
            break;
        }
        case 2: {
            size_t l = 1 + rbelow(r, 24);
            if (pos + l > n) l = n - pos;
            if (n + l + 1 < cap) memmove(buf + pos + l, buf + pos, n - pos + 1);
            break;
        }
        case 3: { /* a digit run becomes another number */
            while (pos < n && (buf[pos] < '0' || buf[pos] > '9')) pos++;
            if (pos == n) break;
            static const char *nums[] = {"0", "1", "3", "-1", "7", "1023", "65537", "4294967297",
                                         "9223372036854775807", "100000"};
            const char *t = nums[rbelow(r, sizeof nums / sizeof *nums)];
            size_t e = pos;
            while (e < n && buf[e] >= '0' && buf[e] <= '9') e++;
            size_t l = strlen(t);
            if (n - (e - pos) + l + 1 >= cap) break;
            memmove(buf + pos + l, buf + e, n - e + 1);
            memcpy(buf + pos, t, l);
            break;
        }
        default: {
            const char *t = src_tokens[rbelow(r, sizeof src_tokens / sizeof *src_tokens)];
            size_t l = strlen(t);
            if (n + l + 1 < cap) {
                memmove(buf + pos + l, buf + pos, n - pos + 1);
                memcpy(buf + pos, t, l);
            }
        }
        }
    }
    *out_len = strlen(buf);
    return buf;
}

/* .npy mutations: mostly in the header (the first 128 bytes or so). */
static const char *npy_tokens[] = {"'shape': (", "-1", "99999999999999999999", "'<f2'", "'<V2'", "True",
                                   "'fortran_order': True", ")", "(", ",", "0", "9223372036854775807",
                                   "'descr': ", "{", "}", "'>f4'", "'|b1'", "'<c8'", "4611686018427387904",
                                   "\n", " ", "'", "1,", "2**3", "'<u8'", "'O'"};

static unsigned char *mutate_npy(Rng *r, const unsigned char *in, size_t len, size_t *out_len) {
    size_t cap = len * 2 + 4096, n = len;
    unsigned char *b = malloc(cap);
    if (!b) exit(3);
    memcpy(b, in, len);
    int muts = 1 + (int)rbelow(r, 3);
    for (int m = 0; m < muts; m++) {
        size_t hdr = n < 160 ? n : 160;
        size_t pos = rbelow(r, 4) ? rbelow(r, hdr ? hdr : 1) : rbelow(r, n ? n : 1);
        switch (rbelow(r, 7)) {
        case 0: if (n) b[pos] = (unsigned char)rnext(r); break;
        case 1: if (n) b[pos] = (unsigned char)(32 + rbelow(r, 95)); break;
        case 2: n = rbelow(r, n + 1); break; /* truncate */
        case 3: { /* trailing bytes */
            size_t l = 1 + rbelow(r, 64);
            if (n + l < cap) { memset(b + n, (int)rbelow(r, 256), l); n += l; }
            break;
        }
        case 4: if (n > 9) { b[8] = (unsigned char)rnext(r); if (rbelow(r, 2)) b[9] = (unsigned char)rnext(r); } break;
        case 5: if (n > 7) b[6] = (unsigned char)rbelow(r, 5); break; /* version */
        default: {
            const char *t = npy_tokens[rbelow(r, sizeof npy_tokens / sizeof *npy_tokens)];
            size_t l = strlen(t);
            if (pos > n) pos = n;
            if (n + l < cap) {
                memmove(b + pos + l, b + pos, n - pos);
                memcpy(b + pos, t, l);
                n += l;
            }
        }
        }
    }
    *out_len = n;
    return b;
}

/* ---- one mutant -------------------------------------------------------------------------- */

/* A mutant, as bytes to save and the words to describe it. */
typedef struct Mutant {
    int mode;              /* M_* */
    int spec;              /* index into f->specs (kernel modes, cli) */
    int check_bounds;      /* -1, 0, 1 (kernel modes) */
    unsigned char *data;   /* the mutated file (kernel text, .npy bytes; cli: a kernel file or NULL) */
    size_t len;            /* its length */
    char *argv[64];        /* cli: the command line (malloc'ed words) */
    int argc;              /* their count */
} Mutant;

static char *xstrdup(const char *s) {
    char *p = strdup(s);
    if (!p) exit(3);
    return p;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0) exit(3);
    va_end(ap);
    return s;
}

static const char *hostile[] = {"",  "-1", "0", "1", "abc", "1e999", "nan", "99999999999999999999", "010",
                                "0x10", "1_000", "-0", "2.5", "4611686018427387904", "-9223372036854775808",
                                "True", "maybe", "=", "4294967297", "64", " 8", "8 ", "inf"};

static const char *pick(Rng *r, const char *const *a, size_t n) { return a[rbelow(r, n)]; }
#define PICK(r, a) pick((r), (a), sizeof(a) / sizeof *(a))

/* A -D value for parameter `name`: mostly the spec's own, sometimes hostile. */
static void cli_defines(Rng *r, const Spec *s, Mutant *m, int calm) {
    char defs[512];
    snprintf(defs, sizeof defs, "%s", s->defs);
    char *save = NULL;
    for (char *t = strtok_r(defs, ",", &save); t && m->argc < 50; t = strtok_r(NULL, ",", &save)) {
        if (!calm && rbelow(r, 10) == 0) continue; /* leave one out */
        m->argv[m->argc++] = xstrdup("-D");
        char *eq = strchr(t, '=');
        if (eq && !calm && rbelow(r, 5) == 0) {
            *eq = 0;
            m->argv[m->argc++] = fmt("%s=%s", t, PICK(r, hostile));
        } else
            m->argv[m->argc++] = xstrdup(t);
    }
}

/* The command line of a cli mutant (words are malloc'ed).  Paths are the
 * spec files (read only) and names inside the scratch folder, which is the
 * program's working directory. */
static void cli_mutant(const Fz *f, Rng *r, Mutant *m) {
    const Spec *s = &f->specs[m->spec];
    static const char *cmds[] = {"run", "run", "run", "run", "compile", "compile", "compile", "bogus", "", "--version", "list"};
    static const char *passes[] = {"simplify", "layout_inference", "lower_tile_ops", "inject_pipeline", "nope", ""};
    static const char *outs[] = {"out.npy", "link.npy", "dir", "missing/x.npy", "sub/out.npy", "", "dangling.npy",
                                 "ro/out.npy", "in-f32.npy"};
    static const char *ins[] = {"npy-0.npy", "npy-1.npy", "npy-2.npy", "npy-3.npy", "bad.npy", "dir", "nothing.npy",
                                "empty.npy", "mut.npy", ""};
    /* half of the command lines are calm (every word one the program takes,
     * so that the run gets deep), half hostile */
    int calm = rbelow(r, 2) == 0;
    m->argv[m->argc++] = xstrdup(f->cli);
    const char *cmd = calm ? (rbelow(r, 2) ? "run" : "compile") : PICK(r, cmds);
    m->argv[m->argc++] = xstrdup(cmd);
    int file_kind = calm ? (int)rbelow(r, 8) : (int)rbelow(r, 10);
    if (file_kind < 6) m->argv[m->argc++] = xstrdup(s->path);
    else if (file_kind < 8) {
        m->data = (unsigned char *)mutate_text(r, s->text, s->len, &m->len);
        m->argv[m->argc++] = xstrdup("mut.py");
    } else if (file_kind == 8) m->argv[m->argc++] = xstrdup(rbelow(r, 2) ? "dir" : "nothing.py");
    if (calm || rbelow(r, 8)) {
        m->argv[m->argc++] = xstrdup("--entry");
        m->argv[m->argc++] = xstrdup(calm || rbelow(r, 8) ? s->entry : PICK(r, hostile));
    }
    cli_defines(r, s, m, calm);
    int extra = (int)rbelow(r, 5);
    /* option values: mostly ones the program takes, a quarter hostile */
#define VAL(...) (calm || rbelow(r, 4) ? PICK(r, ((const char *[]){__VA_ARGS__})) : PICK(r, hostile))
    for (int e = 0; e < extra && m->argc < 58; e++) {
        const char *o = NULL, *v = NULL;
        int what = (int)rbelow(r, 17);
        int is_run = !strcmp(cmd, "run");
        if (calm && (what == 13 || what == 15 || what == 16 || what == 14 ||
                     (is_run && (what == 1 || what == 11 || what == 12)) ||
                     (!is_run && (what >= 2 && what <= 9))))
            continue;
        switch (what) {
        case 0: o = "--target"; v = VAL("c", "cuda", "auto"); break;
        case 1: o = "--emit"; v = VAL("ir", "c", "cuda", "ptx", "sass"); break;
        case 2: o = "--seed"; v = VAL("1", "42", "18446744073709551615"); break;
        case 3: o = "--threads"; v = VAL("1", "2", "4096", "4097"); break;
        case 4: o = PICK(r, ((const char *[]){"--atol", "--rtol", "--ulp"})); v = VAL("0", "1e-3", "0.5", "4"); break;
        case 5: o = "--shape"; v = rbelow(r, 2) ? "M=64" : "n=abc"; break;
        case 6:
            m->argv[m->argc++] = xstrdup("--out");
            m->argv[m->argc++] = fmt("%s=%s", rbelow(r, 4) ? "C" : "Y", PICK(r, outs));
            break;
        case 7:
            m->argv[m->argc++] = xstrdup("--in");
            m->argv[m->argc++] = fmt("%s=%s", rbelow(r, 2) ? "A" : "X", PICK(r, ins));
            break;
        case 8: o = "--check-against"; v = calm || rbelow(r, 4) ? s->entry : "nope"; break;
        case 9: o = "--check-target"; v = VAL("c", "cuda"); break;
        case 10: o = PICK(r, ((const char *[]){"--time", "--check-bounds", "--no-check-bounds", "-h"})); break;
        case 11: o = "--dump-after"; v = PICK(r, passes); break;
        case 12: o = "--plot-layouts"; v = rbelow(r, 2) ? "plots" : "link.npy"; break;
        case 13: o = PICK(r, ((const char *[]){"--bogus", "-D", "--entry", "--in", "-", "--"})); break;
        case 14:
            m->argv[m->argc++] = xstrdup("--ranks");
            m->argv[m->argc++] = xstrdup(VAL("1", "2", "3"));
            m->argv[m->argc++] = xstrdup("--timeout");
            m->argv[m->argc++] = xstrdup("5");
            break;
        case 15: m->argv[m->argc++] = fmt("-D%s", PICK(r, hostile)); break;
        default: o = "--heap"; v = VAL("1048576", "4096", "1"); break;
        }
        if (o) m->argv[m->argc++] = xstrdup(o);
        if (v) m->argv[m->argc++] = xstrdup(v);
    }
#undef VAL
    if (!calm && rbelow(r, 6) == 0 && m->argc > 3) { /* drop one word */
        int k = 2 + (int)rbelow(r, (uint64_t)(m->argc - 2));
        free(m->argv[k]);
        memmove(&m->argv[k], &m->argv[k + 1], sizeof(char *) * (size_t)(m->argc - k - 1));
        m->argc--;
    }
    m->argv[m->argc] = NULL;
}

static unsigned char *read_all(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    size_t cap = 4096, n = 0;
    unsigned char *b = malloc(cap);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n, fp)) > 0) {
        n += got;
        if (n == cap) b = realloc(b, cap *= 2);
    }
    fclose(fp);
    if (b) *len = n;
    return b;
}

static int write_all(const char *path, const void *data, size_t len) {
    FILE *fp = fopen(path, "wb");
    if (!fp) return 0;
    int ok = fwrite(data, 1, len, fp) == len;
    return fclose(fp) == 0 && ok;
}

/* Mutant `it` (a pure function of the seed, `it` and the specs). */
static Mutant make_mutant(const Fz *f, long it) {
    Rng r = mutant_rng(f, it);
    Mutant m;
    memset(&m, 0, sizeof m);
    m.mode = pick_mode(f, &r);
    m.spec = (int)rbelow(&r, (uint64_t)f->nspecs);
    m.check_bounds = (int)rbelow(&r, 3) - 1;
    const Spec *s = &f->specs[m.spec];
    if (m.mode == M_NPY) {
        char p[1200];
        snprintf(p, sizeof p, "%s/npy-%d.npy", f->scratch, (int)rbelow(&r, (uint64_t)f->nnpy));
        size_t len = 0;
        unsigned char *seed = read_all(p, &len);
        if (!seed) exit(3);
        m.data = mutate_npy(&r, seed, len, &m.len);
        free(seed);
    } else if (m.mode == M_CLI) {
        cli_mutant(f, &r, &m);
    } else {
        m.data = (unsigned char *)mutate_text(&r, s->text, s->len, &m.len);
    }
    return m;
}

static void free_mutant(Mutant *m) {
    free(m->data);
    for (int i = 0; i < m->argc; i++) free(m->argv[i]);
    memset(m, 0, sizeof *m);
}

/* ---- running one ------------------------------------------------------------------------- */

static void split_defs(const char *defstr, char *copy, size_t cap, TsDefine *defs, int *nd) {
    snprintf(copy, cap, "%s", defstr);
    *nd = 0;
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && *nd < 16; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!eq) continue;
        *eq = 0;
        defs[*nd].name = t;
        defs[(*nd)++].value = eq + 1;
    }
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU seconds process pid has used (user + system), from /proc; -1 if
 * unknown.  Hangs are judged by CPU time: on a loaded machine at nice 19 a
 * slow NVRTC compile can take minutes of wall time, an endless loop burns
 * CPU; a process blocked forever is caught by a wall limit ten times as
 * long. */
static double cpu_s(pid_t pid) {
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *fp = fopen(p, "r");
    if (!fp) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = 0;
    char *q = strrchr(buf, ')'); /* after the command name, which may hold spaces */
    unsigned long ut = 0, st = 0;
    if (!q || sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Has a process that started (wall t0, CPU c0) run too long? */
static int too_long(const Fz *f, pid_t pid, double t0, double c0) {
    double wall = now_s() - t0, cpu = cpu_s(pid);
    return wall > 10 * f->timeout || (cpu >= 0 && cpu - c0 > f->timeout) || (cpu < 0 && wall > f->timeout);
}

/* Runs the CLI on m's command line in the scratch folder; NULL if fine,
 * else what went wrong (malloc'ed).  Its output goes to scratch/cli.log. */
static char *run_cli(Fz *f, const Mutant *m) {
    char log[1200], mut[1200];
    snprintf(log, sizeof log, "%s/cli.log", f->scratch);
    snprintf(mut, sizeof mut, "%s/mut.py", f->scratch);
    if (m->data && !write_all(mut, m->data, m->len)) return xstrdup("cannot write mut.py");
    /* the program runs in the scratch folder (every relative path is
     * there), with its memory bounded: a -D that makes a legal but huge
     * tensor (16 GB) must not take a shared machine's memory.  Under ASan
     * (which reserves terabytes of address space) the bound is ASan's
     * largest allocation, else the address-space limit. */
    pid_t pid = fork();
    if (pid < 0) return fmt("cannot fork: %s", strerror(errno));
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY), out = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 || chdir(f->scratch)) _exit(120);
#if defined(__SANITIZE_ADDRESS__)
        const char *ao = getenv("ASAN_OPTIONS");
        char *opts = fmt("%s%smax_allocation_size_mb=%d:allocator_may_return_null=1", ao ? ao : "", ao && *ao ? ":" : "",
                         FUZZ_CLI_MEM_MB);
        setenv("ASAN_OPTIONS", opts, 1);
#else
        struct rlimit rl = {(rlim_t)FUZZ_CLI_MEM_MB << 20, (rlim_t)FUZZ_CLI_MEM_MB << 20};
        setrlimit(RLIMIT_AS, &rl);
#endif
        execv(f->cli, m->argv);
        _exit(121);
    }
    int st = 0;
    double t0 = now_s();
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        if (too_long(f, pid, t0, 0)) {
            double cpu = cpu_s(pid);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return fmt("hang: still running after %.0f s (%.0f s of CPU)", now_s() - t0, cpu);
        }
        usleep(2000);
    }
    size_t len = 0;
    unsigned char *out = read_all(log, &len);
    char *text = out ? realloc(out, len + 1) : NULL;
    if (text) text[len] = 0;
    char *why = NULL;
    f->accepted = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (WIFSIGNALED(st)) why = fmt("killed by signal %d", WTERMSIG(st));
    else if (WEXITSTATUS(st) > 2) why = fmt("exit status %d", WEXITSTATUS(st));
    else if (text && ((strstr(text, "ERROR: ") && strstr(text, "Sanitizer")) || strstr(text, "runtime error:")))
        why = xstrdup("sanitizer report");
    else if (text && strstr(text, "internal error")) why = xstrdup("internal error");
    else if (text && WEXITSTATUS(st) != 0 && !strstr(text, "error")) why = xstrdup("failed without an error message");
    if (why && text) {
        size_t l = strlen(text);
        char *w2 = fmt("%s\n--- output (end):\n%s", why, text + (l > 3000 ? l - 3000 : 0));
        free(why);
        why = w2;
    }
    if (getenv("FUZZ_VERBOSE") && text) printf("[%d] %.200s\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1, text);
    free(text);
    return why;
}

/* Runs mutant m in this process; NULL if fine, else the finding (malloc'ed).
 * A crash or hang never returns: the parent sees it. */
static char *run_mutant(Fz *f, TsContext *ctx, const Mutant *m) {
    const Spec *s = &f->specs[m->spec];
    f->accepted = 0;
    if (m->mode == M_CLI) return run_cli(f, m);
    if (m->mode == M_NPY) {
        char p[1200];
        snprintf(p, sizeof p, "%s/mut-%ld.npy", f->scratch, (long)getpid());
        if (!write_all(p, m->data, m->len)) return xstrdup("cannot write the mutant");
        TsTensor t;
        TsStatus st = ts_npy_load(ctx, p, &t);
        char *why = NULL;
        if (st == TS_OK) {
            f->accepted = 1;
            int64_t n = ts_tensor_numel(&t);
            if (n < 0 || (uint64_t)n * (uint64_t)(ts_dtype_bits(t.dtype) / 8 ? ts_dtype_bits(t.dtype) / 8 : 1) > m->len)
                why = fmt("accepted: %lld elements of %s in a file of %zu bytes", (long long)n,
                          ts_dtype_name(t.dtype), m->len);
            else
                for (int64_t i = 0; i < n; i += 1 + n / 64) (void)ts_tensor_get(&t, i);
            ts_tensor_free(&t);
        } else if (st == TS_ERR_INTERNAL || !*ts_last_error(ctx))
            why = fmt("status %s: %s", ts_status_name(st), ts_last_error(ctx));
        unlink(p);
        return why;
    }
    char dcopy[512];
    TsDefine defs[16];
    int nd;
    split_defs(s->defs, dcopy, sizeof dcopy, defs, &nd);
    char cache[1200];
    snprintf(cache, sizeof cache, "%s/kcache", f->scratch);
    TsCompileOptions o;
    memset(&o, 0, sizeof o);
    o.target = m->mode == M_CUDA || m->mode == M_NVRTC ? TS_TARGET_CUDA : TS_TARGET_C;
    o.skip_build = m->mode == M_C || m->mode == M_CUDA;
    o.check_bounds = m->check_bounds;
    o.cache_dir = cache;
    o.num_threads = 1;
    TsKernel *k = NULL;
    TsStatus st = ts_compile_source(ctx, s->path, (const char *)m->data, s->entry, defs, nd, &o, &k);
    char *why = NULL;
    f->accepted = st == TS_OK;
    if (st == TS_ERR_INTERNAL || (st != TS_OK && !*ts_last_error(ctx)) || (st == TS_OK && !k))
        why = fmt("status %s: %s", ts_status_name(st), ts_last_error(ctx));
    else if (st == TS_ERR_BUILD && !strstr(ts_last_error(ctx), "NVRTC not found")) /* CI has none */
        why = fmt("generated code rejected (%s): %s", mode_names[m->mode], ts_last_error(ctx));
    else if (st == TS_OK && !*ts_kernel_source(k))
        why = xstrdup("compiled, but no generated source");
    ts_kernel_destroy(k);
    return why;
}

/* ---- findings ---------------------------------------------------------------------------- */

/* Every finding is saved; `quiet` leaves out its line in the log (a
 * repeat of a kind this worker has reported). */
static void save_finding(Fz *f, long it, const Mutant *m, const char *how, const char *stderr_path, int quiet) {
    if (f->beat) __atomic_add_fetch(&f->beat[2], 1, __ATOMIC_SEQ_CST);
    const Spec *s = &f->specs[m->spec];
    if (!quiet) printf("FINDING mutant %ld (%s, %s): %.300s\n", it, mode_names[m->mode], s->entry, how);
    fflush(stdout);
    if (!f->corpus) return;
    char base[1300], p[1400];
    snprintf(base, sizeof base, "%s/%s-%llu-%ld", f->corpus, mode_names[m->mode], (unsigned long long)f->seed, it);
    if (m->mode == M_CLI) {
        snprintf(p, sizeof p, "%s.args", base);
        FILE *fp = fopen(p, "w");
        if (fp) {
            for (int i = 1; i < m->argc; i++) fprintf(fp, "%s\n", m->argv[i]);
            fclose(fp);
        }
        if (m->data) {
            snprintf(p, sizeof p, "%s.mut.py", base);
            write_all(p, m->data, m->len);
        }
    } else {
        snprintf(p, sizeof p, "%s.%s", base, m->mode == M_NPY ? "npy" : "py");
        write_all(p, m->data, m->len);
    }
    snprintf(p, sizeof p, "%s.txt", base);
    FILE *fp = fopen(p, "w");
    if (!fp) return;
    fprintf(fp, "mode %s\nfile %s\nentry %s\ndefines %s\ncheck_bounds %d\nseed %llu\nmutant %ld\n",
            mode_names[m->mode], s->path, s->entry, s->defs, m->check_bounds, (unsigned long long)f->seed, it);
    fprintf(fp, "--- finding:\n%s\n", how);
    if (stderr_path) {
        size_t len = 0;
        unsigned char *e = read_all(stderr_path, &len);
        if (e) {
            fprintf(fp, "--- stderr (end):\n");
            fwrite(e + (len > 6000 ? len - 6000 : 0), 1, len > 6000 ? 6000 : len, fp);
            free(e);
        }
    }
    fclose(fp);
}

/* ---- scratch folder ---------------------------------------------------------------------- */

static void make_scratch(Fz *f) {
    if (!mkdtemp(f->scratch)) {
        perror("fuzz: mkdtemp");
        exit(2);
    }
    TsContext *ctx;
    if (ts_context_create(&ctx)) exit(2);
    static const struct { TsDType dt; int nd; int64_t shape[3]; } seeds[] = {
        {TS_FLOAT32, 2, {5, 7}}, {TS_FLOAT16, 1, {9}}, {TS_INT64, 3, {2, 3, 4}}, {TS_BFLOAT16, 2, {3, 2}},
        {TS_BOOL, 1, {4}}, {TS_FLOAT64, 0, {0}}, {TS_UINT8, 2, {0, 3}}};
    f->nnpy = (int)(sizeof seeds / sizeof *seeds);
    char p[1300];
    for (int i = 0; i < f->nnpy; i++) {
        TsTensor t;
        if (ts_tensor_alloc(&t, seeds[i].dt, seeds[i].nd, seeds[i].shape)) exit(2);
        for (int64_t j = 0; j < ts_tensor_numel(&t); j++) ts_tensor_set(&t, j, (double)(j % 5) - 1.5);
        snprintf(p, sizeof p, "%s/npy-%d.npy", f->scratch, i);
        if (ts_npy_save(ctx, p, &t)) {
            fprintf(stderr, "fuzz: %s\n", ts_last_error(ctx));
            exit(2);
        }
        ts_tensor_free(&t);
    }
    ts_context_destroy(ctx);
    /* the CLI's paths: a symlink to a file, a dangling one, folders, broken inputs */
    const char *dirs[] = {"dir", "sub", "plots", "ro"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        snprintf(p, sizeof p, "%s/%s", f->scratch, dirs[i]);
        mkdir(p, 0755);
    }
    snprintf(p, sizeof p, "%s/ro", f->scratch);
    chmod(p, 0555);
    snprintf(p, sizeof p, "%s/link.npy", f->scratch);
    if (symlink("sub/target.npy", p)) perror("symlink");
    snprintf(p, sizeof p, "%s/dangling.npy", f->scratch);
    if (symlink("missing/none.npy", p)) perror("symlink");
    snprintf(p, sizeof p, "%s/bad.npy", f->scratch);
    write_all(p, "\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'}", 26);
    snprintf(p, sizeof p, "%s/empty.npy", f->scratch);
    write_all(p, "", 0);
    snprintf(p, sizeof p, "%s/mut.npy", f->scratch);
    write_all(p, "\x93NUMPY\x01\x00\x46\x00{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }\n", 80);
}

static void remove_tree(const char *dir) {
    pid_t pid;
    char *argv[] = {"rm", "-rf", (char *)dir, NULL};
    char p[1200];
    snprintf(p, sizeof p, "%s/ro", dir);
    chmod(p, 0755);
    if (posix_spawnp(&pid, "rm", NULL, NULL, argv, environ) == 0) waitpid(pid, NULL, 0);
}

/* ---- the worker and the watcher ---------------------------------------------------------- */

/* The first line of a finding with its digits dropped: findings with the
 * same key are one bug (line numbers, sizes and names of mutants differ). */
static uint64_t finding_key(const char *why) {
    uint64_t h = 1469598103934665603ull;
    for (const char *p = why; *p && *p != '\n'; p++)
        if (*p < '0' || *p > '9') h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h;
}

/* Runs mutants from `start` until the end of the campaign; exits.  Each
 * finding is saved; the log names each kind once per worker. */
static void worker(Fz *f, long start, double deadline) {
    TsContext *ctx;
    if (ts_context_create(&ctx)) _exit(3);
    uint64_t seen[256];
    int nseen = 0;
    /* the fuzzer's own test (tests/run/fuzz_saves.sh): crash or hang on
     * purpose at one mutant, to check the parent saves it */
    const char *st_crash = getenv("FUZZ_SELFTEST_CRASH"), *st_hang = getenv("FUZZ_SELFTEST_HANG");
    long crash_at = st_crash ? atol(st_crash) : -1, hang_at = st_hang ? atol(st_hang) : -1;
    for (long it = start; f->iters ? it < f->iters : 1; it++) {
        if (f->seconds > 0 && now_s() > deadline) break;
        f->beat[0] = it;
        if (it == crash_at) raise(SIGSEGV);
        while (it == hang_at) { /* spins: burns CPU like an endless loop */
        }
        Mutant m = make_mutant(f, it);
        char *why = run_mutant(f, ctx, &m);
        if (why) {
            uint64_t key = finding_key(why);
            int dup = 0;
            for (int i = 0; i < nseen; i++) dup |= seen[i] == key;
            if (!dup && nseen < 256) seen[nseen++] = key;
            save_finding(f, it, &m, why, NULL, dup);
        }
        __atomic_add_fetch(&f->beat[f->accepted ? 3 + 2 * m.mode : 4 + 2 * m.mode], 1, __ATOMIC_SEQ_CST);
        free(why);
        free_mutant(&m);
        __atomic_add_fetch(&f->beat[1], 1, __ATOMIC_SEQ_CST);
    }
    ts_context_destroy(ctx);
    fflush(stdout);
    _exit(0);
}

static int campaign(Fz *f) {
    f->beat = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (f->beat == MAP_FAILED) return 2;
    f->beat[0] = -1;
    double t0 = now_s(), deadline = t0 + f->seconds;
    long next = f->from, crashes = 0, hangs = 0;
    char errpath[1300];
    snprintf(errpath, sizeof errpath, "%s/worker.stderr", f->scratch);
    for (;;) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) return 2;
        if (pid == 0) {
            int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) dup2(fd, 2);
            worker(f, next, deadline);
        }
        long seen = -2;
        double since = now_s(), since_cpu = 0;
        static double last_report;
        if (last_report == 0) last_report = t0;
        int st = 0;
        int hung = 0;
        for (;;) {
            if (waitpid(pid, &st, WNOHANG) == pid) break;
            long cur = f->beat[0] * 1000003 + f->beat[1];
            if (cur != seen) {
                seen = cur;
                since = now_s();
                since_cpu = cpu_s(pid);
            } else if (f->beat[0] >= 0 && too_long(f, pid, since, since_cpu) &&
                       now_s() - since > f->timeout * (f->weight[M_CLI] ? 2 : 1) + 5) {
                kill(pid, SIGKILL);
                waitpid(pid, &st, 0);
                hung = 1;
                break;
            }
            usleep(20000);
            if (f->seconds >= 600 && now_s() - last_report >= 300) { /* long campaigns: progress */
                last_report = now_s();
                printf("fuzz: %.0f s: %ld mutants, %ld findings\n", last_report - t0, f->beat[1], f->beat[2]);
                fflush(stdout);
            }
        }
        if (!hung && WIFEXITED(st) && WEXITSTATUS(st) == 0) break; /* campaign over */
        long it = f->beat[0];
        if (it < 0) {
            fprintf(stderr, "fuzz: the worker failed before its first mutant\n");
            return 2;
        }
        Mutant m = make_mutant(f, it);
        char *how = hung ? fmt("hang: mutant %ld made no progress for %.0f s of CPU (or %.0f s)", it, f->timeout, 10 * f->timeout)
                         : WIFSIGNALED(st) ? fmt("crash: signal %d", WTERMSIG(st))
                                           : fmt("crash: exit status %d (a sanitizer report?)", WEXITSTATUS(st));
        save_finding(f, it, &m, how, errpath, 0);
        free(how);
        free_mutant(&m);
        if (hung) hangs++;
        else crashes++;
        next = it + 1;
        __atomic_add_fetch(&f->beat[1], 1, __ATOMIC_SEQ_CST);
        if ((f->iters && next >= f->iters) || (f->seconds > 0 && now_s() > deadline)) break;
    }
    long done = f->beat[1], findings = f->beat[2];
    printf("fuzz: seed %llu: %ld mutants in %.0f s: %ld findings (%ld crashes, %ld hangs, %ld other)\n",
           (unsigned long long)f->seed, done, now_s() - t0, findings, crashes, hangs, findings - crashes - hangs);
    for (int m = 0; m < M_COUNT; m++)
        if (f->weight[m])
            printf("  %-6s %ld accepted, %ld rejected\n", mode_names[m], f->beat[3 + 2 * m], f->beat[4 + 2 * m]);
    return findings ? 1 : 0;
}

/* ---- replay ------------------------------------------------------------------------------- */

/* One saved reproducer, run in this process (the CLI in a child). */
static int replay_one(Fz *f, TsContext *ctx, const char *txt) {
    size_t len = 0;
    char *meta = (char *)read_all(txt, &len);
    if (!meta) {
        fprintf(stderr, "fuzz: cannot read %s\n", txt);
        return 1;
    }
    meta = realloc(meta, len + 1);
    meta[len] = 0;
    char mode[32] = "", file[1024] = "", entry[128] = "", defs[512] = "";
    int cb = 0;
    for (char *line = strtok(meta, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strncmp(line, "---", 3)) break;
        sscanf(line, "mode %31s", mode);
        sscanf(line, "file %1023s", file);
        sscanf(line, "entry %127s", entry);
        sscanf(line, "defines %511s", defs);
        sscanf(line, "check_bounds %d", &cb);
    }
    free(meta);
    Spec s;
    memset(&s, 0, sizeof s);
    snprintf(s.path, sizeof s.path, "%s", file);
    snprintf(s.entry, sizeof s.entry, "%s", entry);
    snprintf(s.defs, sizeof s.defs, "%s", defs);
    f->specs = &s;
    f->nspecs = 1;
    Mutant m;
    memset(&m, 0, sizeof m);
    m.check_bounds = cb;
    for (int i = 0; i < M_COUNT; i++)
        if (!strcmp(mode, mode_names[i])) m.mode = i;
    char base[1100], p[1200];
    snprintf(base, sizeof base, "%.*s", (int)(strlen(txt) - 4), txt);
    if (m.mode == M_CLI) {
        if (!f->cli) {
            printf("%s: skipped (no --cli)\n", txt);
            return 0;
        }
        snprintf(p, sizeof p, "%s.args", base);
        FILE *fp = fopen(p, "r");
        char line[4096];
        m.argv[m.argc++] = xstrdup(f->cli);
        while (fp && m.argc < 63 && fgets(line, sizeof line, fp)) {
            line[strcspn(line, "\n")] = 0;
            /* a saved command line names the kernel file by its absolute path
             * (the CLI runs in the scratch folder); a corpus reproducer names
             * it from the repository root, made absolute here */
            char *abs = line[0] != '/' && strchr(line, '/') && access(line, R_OK) == 0 ? realpath(line, NULL) : NULL;
            m.argv[m.argc++] = abs ? abs : xstrdup(line);
        }
        if (fp) fclose(fp);
        snprintf(p, sizeof p, "%s.mut.py", base);
        m.data = read_all(p, &m.len);
    } else {
        snprintf(p, sizeof p, "%s.%s", base, m.mode == M_NPY ? "npy" : "py");
        m.data = read_all(p, &m.len);
        if (!m.data) {
            fprintf(stderr, "fuzz: cannot read %s\n", p);
            return 1;
        }
        if (m.mode != M_NPY) {
            m.data = realloc(m.data, m.len + 1);
            m.data[m.len] = 0;
        }
    }
    printf("%s: ", txt);
    fflush(stdout);
    alarm((unsigned)f->timeout + 1); /* a hang ends the replay (SIGALRM), a failure */
    char *why = run_mutant(f, ctx, &m);
    alarm(0);
    printf("%s\n", why ? why : "ok");
    free(why);
    free_mutant(&m);
    return why != NULL;
}

/* ---- main --------------------------------------------------------------------------------- */

static int parse_modes(Fz *f, const char *s) {
    memset(f->weight, 0, sizeof f->weight);
    char copy[256], *save = NULL;
    snprintf(copy, sizeof copy, "%s", s);
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        int w = eq ? atoi(eq + 1) : 1;
        if (eq) *eq = 0;
        int found = 0;
        for (int m = 0; m < M_COUNT; m++)
            if (!strcmp(t, mode_names[m])) f->weight[m] = w, found = 1;
        if (!found || w < 0) return 0;
    }
    f->wsum = 0;
    for (int m = 0; m < M_COUNT; m++) f->wsum += f->weight[m];
    return f->wsum > 0;
}

int main(int argc, char **argv) {
    Fz f;
    memset(&f, 0, sizeof f);
    f.timeout = 20;
    parse_modes(&f, "c=4,cuda=4,npy=2");
    int replay = 0, i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--replay")) replay = 1;
        else if (!strcmp(a, "--corpus") && v) f.corpus = argv[++i];
        else if (!strcmp(a, "--cli") && v) f.cli = argv[++i];
        else if (!strcmp(a, "--seconds") && v) f.seconds = atof(argv[++i]);
        else if (!strcmp(a, "--timeout") && v) f.timeout = atof(argv[++i]);
        else if (!strcmp(a, "--from") && v) f.from = atol(argv[++i]);
        else if (!strcmp(a, "--modes") && v) {
            if (!parse_modes(&f, argv[++i])) {
                fprintf(stderr, "fuzz: bad --modes '%s'\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "fuzz: unknown option %s\n", a);
            return 2;
        }
    }
    const char *cli_arg = f.cli;
    if (f.cli && f.cli[0] != '/') { /* the CLI runs from the scratch folder */
        char *abs = realpath(f.cli, NULL);
        if (!abs) {
            fprintf(stderr, "fuzz: no program %s\n", f.cli);
            return 2;
        }
        f.cli = abs;
    }
    if (f.weight[M_CLI] && !f.cli) {
        fprintf(stderr, "fuzz: mode cli needs --cli PATH\n");
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(f.scratch, sizeof f.scratch, "%s/ts-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    make_scratch(&f);
    int rc = 0;
    if (replay) {
        TsContext *ctx;
        if (ts_context_create(&ctx)) return 2;
        int n = 0;
        for (; i < argc; i++) {
            struct stat st;
            if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
                char cmd[1200];
                snprintf(cmd, sizeof cmd, "ls '%s'/*.txt 2>/dev/null", argv[i]);
                FILE *ls = popen(cmd, "r");
                char line[1200];
                while (ls && fgets(line, sizeof line, ls)) {
                    line[strcspn(line, "\n")] = 0;
                    rc |= replay_one(&f, ctx, line);
                    n++;
                }
                if (ls) pclose(ls);
            } else {
                rc |= replay_one(&f, ctx, argv[i]);
                n++;
            }
        }
        printf("fuzz: replayed %d reproducers: %s\n", n, rc ? "FAILED" : "all fine");
        if (f.cli != cli_arg) free((char *)f.cli);
        ts_context_destroy(ctx);
        remove_tree(f.scratch);
        return rc;
    }
    if (argc - i < 3) {
        fprintf(stderr, "usage: fuzz [options] SEED ITERATIONS FILE:ENTRY:DEFS...\n"
                        "       fuzz --replay [--cli PATH] DIR-OR-FILE.txt...\n");
        return 2;
    }
    f.seed = strtoull(argv[i], NULL, 0);
    if (!f.seed) { /* 0: a fresh seed, printed for reproduction */
        FILE *ur = fopen("/dev/urandom", "rb");
        if (!ur || fread(&f.seed, sizeof f.seed, 1, ur) != 1) f.seed = (uint64_t)time(NULL);
        if (ur) fclose(ur);
        f.seed >>= 1;
    }
    f.iters = atol(argv[i + 1]);
    printf("fuzz: seed %llu (rerun: fuzz ... %llu %ld ...); scratch %s\n", (unsigned long long)f.seed,
           (unsigned long long)f.seed, f.iters, f.scratch);
    f.nspecs = argc - i - 2;
    f.specs = calloc((size_t)f.nspecs, sizeof(Spec));
    for (int s = 0; s < f.nspecs; s++) {
        Spec *sp = &f.specs[s];
        if (sscanf(argv[i + 2 + s], "%1023[^:]:%127[^:]:%511s", sp->path, sp->entry, sp->defs) < 2) return 2;
        unsigned char *t = read_all(sp->path, &sp->len);
        if (!t) {
            fprintf(stderr, "fuzz: cannot read %s\n", sp->path);
            return 2;
        }
        sp->text = realloc(t, sp->len + 1);
        sp->text[sp->len] = 0;
        if (sp->path[0] != '/') { /* the CLI runs elsewhere */
            char *abs = realpath(sp->path, NULL);
            if (abs) snprintf(sp->path, sizeof sp->path, "%s", abs);
            free(abs);
        }
    }
    rc = campaign(&f);
    if (f.cli && f.cli != cli_arg) free((char *)f.cli);
    for (int s = 0; s < f.nspecs; s++) free(f.specs[s].text);
    free(f.specs);
    remove_tree(f.scratch);
    return rc;
}
