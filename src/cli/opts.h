/*
 * opts.h — the command line of `tilescale`, parsed once for every command
 * (opts.c).  One table of options serves `run` (on one rank or, with
 * --ranks, on several: dist.c), `compile`, `list` and `cache`, so every
 * option is spelled, validated and suggested the same way everywhere.
 */
#ifndef TS_CLI_OPTS_H
#define TS_CLI_OPTS_H

#include <stdint.h>
#include <stdio.h>

#include "tilescale.h"

/* The commands (bits, so that an option can name the ones taking it). */
enum {
    CLI_RUN = 1,      /* tilescale run (one rank) */
    CLI_DIST = 2,     /* tilescale run --ranks N */
    CLI_COMPILE = 4,  /* tilescale compile */
    CLI_LIST = 8,     /* tilescale list */
    CLI_CACHE = 16,   /* tilescale cache info|clean */
    CLI_LAUNCH = 32   /* tilescale launch (launch.c parses its own arguments) */
};

/* NAME=VALUE, split in place in argv's string. */
typedef struct CliNameVal {
    const char *name;  /* the text before the first '=' */
    const char *value; /* the text after it */
} CliNameVal;

/* A growable list of NAME=VALUE pairs (no limit on how many are given). */
typedef struct CliList {
    CliNameVal *v; /* the pairs, in the order given */
    int n;         /* how many */
    int cap;       /* allocated */
} CliList;

typedef struct CliOpts {
    int cmd;                  /* one CLI_* bit */
    const char *cmd_name;     /* as typed ("run") */
    const char *file;         /* FILE */
    const char *sub;          /* cache: "info" or "clean" */
    const char *entry;        /* --entry */
    const char *check;        /* --check-against ENTRY */
    const char *emit;         /* --emit */
    const char *dump_after;   /* --dump-after PASS */
    const char *plot_dir;     /* --plot-layouts DIR */
    int check_target;         /* --check-target: 1 + the target to compare with; 0: none */
    TsDefine *defs;           /* -D values (ndefs of them; one spare slot at the end for dist.c's P) */
    int ndefs;                /* how many -D values */
    int defs_cap;             /* allocated entries of defs */
    CliList ins, outs, shapes; /* --in, --out, --shape */
    TsTarget target;          /* --target (auto resolved) */
    int target_set;           /* --target was given */
    uint64_t seed;            /* --seed */
    int have_seed;            /* --seed was given */
    int time;                 /* --time */
    int threads;              /* --threads N (0: all cores) */
    int check_bounds;         /* --check-bounds: 1, --no-check-bounds: -1, else 0 (the target's default) */
    double atol, rtol;        /* --atol, --rtol (-1: the dtype's default) */
    int64_t ulp;              /* --ulp N: the ulp rule (check.c) for every float tensor (-1: float16's default) */
    int ranks;                /* --ranks N (0: a single-rank run) */
    int ranks_per_node;       /* --ranks-per-node N (0: $TILESCALE_RANKS_PER_NODE, else one node) */
    int multinode;            /* --multinode: TsCompileOptions.multinode (compile; run --ranks: forced in any world) */
    int64_t heap;             /* --heap BYTES (0: what the tensors need) */
    double timeout;           /* --timeout SECONDS for distributed waits (0: the default) */
    int bench;                /* --bench N: time N more launches */
    int tiered;               /* --tiered 0|1|quick|auto: TsCompileOptions.tiered (TS_TIERED_*; 0: auto) */
    int64_t max_size;         /* cache clean --max-size BYTES: trim to this instead of emptying (-1: not given) */
} CliOpts;

/* Parse argv into o.  Returns -1 when the command line is good; else the
 * exit status to return (0 after --help or --version, 2 after a usage
 * error, whose message went to stderr). */
int cli_parse(int argc, char **argv, CliOpts *o);
void cli_opts_free(CliOpts *o);
/* The value of the last pair named name, or NULL. */
const char *cli_find(const CliList *l, const char *name);
/* The usage text, for `help` and after a usage error. */
void cli_usage(FILE *f);
/* Strict numbers for options: the whole text, in range, else a
 * `tilescale: error:` naming the option and 0. */
int cli_parse_int(const char *opt, const char *text, int64_t lo, int64_t hi, int64_t *out);
int cli_parse_double(const char *opt, const char *text, double lo, double *out);
/* A size such as 4096, 64K, 500M, 2G, 1T (powers of 1024) into *out; 0 if
 * text is not one. */
int cli_parse_size(const char *text, int64_t *out);
/* The default --seed: from the OS's entropy (two runs in the same second
 * differ), below 2^53 so that it can be typed back exactly. */
uint64_t cli_entropy_seed(void);
/* $TILESCALE_SEED (a launcher's seed for all ranks) into *out: 1 if set, 0
 * if not, -1 (after a `tilescale: error:`) if it is not a decimal integer. */
int cli_env_seed(uint64_t *out);

#endif
