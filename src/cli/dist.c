/*
 * dist.c — `tilescale run ... --ranks N`: a distributed kernel on N ranks.
 *
 *   tilescale run FILE --entry NAME --ranks N [--target c|cuda] [-D name=value]...
 *       [--in NAME=file{rank}.npy | NAME=VALUE]... [--out NAME=file{rank}.npy]...
 *       [--shape VAR=N]... [--check-against REF] [--seed S] [--atol X] [--rtol X]
 *       [--heap BYTES] [--timeout SECONDS] [--bench N]
 *
 * --bench N times N more launches after the checked one; a scalar
 * parameter named `round` is increased by one for each (kernels whose
 * flags only grow wait for `round`, so every timed launch waits for its
 * own data).
 *
 * Every tensor parameter lives on the world's symmetric heap, one copy per
 * rank at the same offset (what TileScale's allocator gives its kernels):
 * `sim` ranks (threads, C target) for --target c, `local` ranks (GPU 0, a
 * stream each) for --target cuda.  Tensors are made on the host and
 * written to the heaps before the launch, read back after.
 * `{rank}` in an --in/--out file name is replaced by the rank, and a scalar
 * given as --in NAME={rank} is each rank's number.  Tensors not
 * read from files: float ones random (a different stream per rank, from
 * the seed), outputs of out_idx poisoned with NaN, integer ones zero (they
 * are signals, counters and barriers in distributed kernels).
 *
 * --check-against REF runs REF, a plain single-rank entry of the same
 * file or, written FILE:ENTRY, of another (given -D P=N besides the run's
 * -D values), on all ranks' tensors stacked along a new leading axis of extent N
 * (parameter `A` of shape S becomes [N, *S]), as they were before the
 * launch, and compares slice r of its float tensors afterwards with rank
 * r's.  References are thus ordinary naive tile kernels that see the whole
 * world at once, independent of the communication under test.
 *
 * In a process started by `tilescale launch -n N` (or another launcher:
 * the environment names a world), the run is one rank of a world of
 * processes: `proc` ranks (shared-memory heaps, C target) for --target c,
 * `ipc` ranks (CUDA IPC heaps) for --target cuda; --ranks may be left out
 * and must match the world size if given.  Every process builds every
 * rank's inputs (the same seed: TILESCALE_SEED from the launcher, else 1),
 * writes and reads back only its own rank's, runs the reference on all of
 * them and checks its own slice, so each rank prints its own PASS/FAIL.
 *
 * Kept apart from main.c (main only forwards `run ... --ranks N` here) so
 * the single-rank tool stays as it is; the command line is opts.c's, the
 * check report check.c's.  Besides the public API it uses the library's
 * growable string (TsBuf, base/base.h) for file names: no fixed buffer.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h" /* TsBuf, the library's growable string */
#include "cli/check.h"
#include "cli/cli.h"
#include "cli/dist.h"
#include "tilescale.h"
#include "tilescale_comm.h"

/* pattern with every {rank} replaced by r, into out (emptied first). */
static void subst_rank(TsBuf *out, const char *pat, int r) {
    out->n = 0;
    if (out->s) out->s[0] = 0;
    for (const char *p = pat; *p;) {
        if (!strncmp(p, "{rank}", 6)) {
            ts_buf_printf(out, "%d", r);
            p += 6;
        } else {
            const char *q = strstr(p, "{rank}");
            size_t len = q ? (size_t)(q - p) : strlen(p);
            ts_buf_putn(out, p, len);
            p += len;
        }
    }
    if (!out->s) ts_buf_puts(out, ""); /* an empty name is "" (an error naming it), never NULL */
}

static uint64_t mix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int is_float(TsDType dt) {
    return dt == TS_FLOAT16 || dt == TS_BFLOAT16 || dt == TS_FLOAT32 || dt == TS_FLOAT64 ||
           dt == TS_FLOAT8_E4M3 || dt == TS_FLOAT8_E5M2;
}

static size_t nbytes(const TsTensor *t) {
    return (size_t)ts_tensor_numel(t) * (size_t)((ts_dtype_bits(t->dtype) + 7) / 8);
}

int ts_cli_run_dist(CliOpts *op) {
    CliOpts o = *op;
    int ln = 0, launched = ts_world_launched(&ln); /* started by a launcher: one rank of a world of processes */
    if (launched) {
        if (o.ranks && ln && o.ranks != ln) {
            fprintf(stderr, "tilescale: error: --ranks %d, but the launcher started a world of %d processes\n",
                    o.ranks, ln);
            return 2;
        }
        if (!o.ranks) o.ranks = ln ? ln : 1; /* a bad environment is reported by the world */
    }
    uint64_t env_seed = 1; /* a launched rank's seed: $TILESCALE_SEED (the launcher's), else 1 */
    if (launched && !o.have_seed && cli_env_seed(&env_seed) < 0) return 2;
    if (o.ranks > TS_WORLD_MAX_RANKS) {
        fprintf(stderr, "tilescale: error: --ranks expects an integer from 1 to %d, got %d\n", TS_WORLD_MAX_RANKS,
                o.ranks);
        return 2;
    }
    TsContext *ctx;
    if (ts_context_create(&ctx)) {
        fprintf(stderr, "tilescale: error: out of memory\n");
        return 1;
    }
    int rc = 1, P = o.ranks, np = 0;
    TsBuf path = {0}; /* a file name with {rank} replaced */
    TsKernel *k = NULL, *ref = NULL;
    TsWorld *w = NULL;
    TsTensor *args = NULL, *host = NULL, *stacked = NULL; /* args: on the heaps; host: their host copies */
    int64_t (*shapes)[8] = NULL, (*sshapes)[9] = NULL;
    /* nodes: --ranks-per-node, else $TILESCALE_RANKS_PER_NODE (sim ranks emulate them); kernels
     * of a world of several nodes are compiled for it (their accesses to other nodes go through
     * the transport) */
    int rpn = o.ranks_per_node;
    const char *rpn_env = getenv("TILESCALE_RANKS_PER_NODE");
    if (!rpn && rpn_env && *rpn_env && !launched) {
        char *end;
        long v = strtol(rpn_env, &end, 10);
        if (*end || v < 1) {
            fprintf(stderr, "tilescale: error: TILESCALE_RANKS_PER_NODE=%s is not a positive integer\n", rpn_env);
            rc = 2;
            goto done;
        }
        rpn = v > o.ranks ? o.ranks : (int)v;
    }
    if (rpn > o.ranks || (rpn && launched)) {
        fprintf(stderr, rpn > o.ranks ? "tilescale: error: --ranks-per-node %d is more than --ranks %d\n"
                                      : "tilescale: error: --ranks-per-node %d: a launcher's processes take their nodes "
                                        "from the launcher (--nnodes)\n",
                rpn, o.ranks);
        rc = 2;
        goto done;
    }
    TsCompileOptions co = {0};
    co.target = o.target;
    co.multinode = (rpn > 0 && rpn < o.ranks) || o.multinode; /* --multinode: also in a world of one node */
    co.num_threads = o.threads;
    /* one full build unless asked: a local world copies the module to its GPUs at the first launch */
    co.tiered = o.tiered ? o.tiered : TS_TIERED_OFF;
    if (cli_compile_file(ctx, o.file, o.entry, o.defs, o.ndefs, &co, &k)) {
        fprintf(stderr, "%s", ts_last_error(ctx));
        goto done;
    }
    np = ts_kernel_num_params(k);
    if (o.check) {
        TsCompileOptions rco = {0};
        rco.lenient_defines = 1;
        rco.num_threads = o.threads;
        /* the reference also gets P = the number of ranks */
        char pval[24];
        snprintf(pval, sizeof pval, "%d", P); /* an int's digits: always fits */
        int have_p = 0;
        for (int i = 0; i < o.ndefs; i++) have_p |= !strcmp(o.defs[i].name, "P");
        TsDefine *rdefs = calloc((size_t)o.ndefs + 1, sizeof *rdefs);
        if (!rdefs) {
            fprintf(stderr, "tilescale: error: out of memory\n");
            goto done;
        }
        for (int i = 0; i < o.ndefs; i++) rdefs[i] = o.defs[i];
        rdefs[o.ndefs].name = "P";
        rdefs[o.ndefs].value = pval;
        /* REF may be FILE:ENTRY, a reference kept in another file (for
         * kernels whose files are not ours to change, TileScale's own) */
        const char *colon = strrchr(o.check, ':');
        char *rfile = colon ? strndup(o.check, (size_t)(colon - o.check)) : NULL;
        int bad = colon && !rfile;
        if (!bad)
            bad = cli_compile_file(ctx, rfile ? rfile : o.file, colon ? colon + 1 : o.check, rdefs,
                                  o.ndefs + !have_p, &rco, &ref);
        free(rfile);
        free(rdefs);
        if (bad) {
            fprintf(stderr, "%s", ts_last_error(ctx));
            goto done;
        }
        if (ts_kernel_num_params(ref) != np) {
            fprintf(stderr, "tilescale: error: %s takes %d parameters but %s takes %d\n", o.entry, np, o.check,
                    ts_kernel_num_params(ref));
            goto done;
        }
    }
    args = calloc((size_t)(P * np + 1), sizeof *args);
    host = calloc((size_t)(P * np + 1), sizeof *host);
    stacked = calloc((size_t)np + 1, sizeof *stacked);
    shapes = calloc((size_t)np + 1, sizeof *shapes);
    sshapes = calloc((size_t)np + 1, sizeof *sshapes);
    /* shapes, and the heap they need */
    int64_t heap = 1 << 16;
    for (int p = 0; p < np; p++) {
        TsParamInfo info;
        ts_kernel_param(k, p, &info);
        for (int d = 0; d < info.ndim; d++) {
            shapes[p][d] = info.shape[d];
            if (shapes[p][d] < 0) {
                const char *v = info.shape_names[d] ? cli_find(&o.shapes, info.shape_names[d]) : NULL;
                if (!v) {
                    if (!info.shape_names[d]) {
                        fprintf(stderr, "tilescale: error: extent %d of '%s' is a run-time expression, which a distributed run cannot bind\n",
                                d, info.name);
                        goto done;
                    }
                    fprintf(stderr, "tilescale: error: extent %d of '%s' is the run-time variable '%s': give --shape %s=N\n",
                            d, info.name, info.shape_names[d], info.shape_names[d]);
                    goto done;
                }
                shapes[p][d] = strtoll(v, NULL, 10); /* validated when parsed */
            }
        }
        if (info.is_tensor) { /* its bytes, in checked arithmetic (extents near 2^62 overflowed here) */
            int64_t n = 1, bytes;
            int over = 0;
            for (int d = 0; d < info.ndim; d++) over |= __builtin_mul_overflow(n, shapes[p][d], &n);
            over |= __builtin_mul_overflow(n, (int64_t)((ts_dtype_bits(info.dtype) + 7) / 8), &bytes);
            over = over || bytes > INT64_MAX - heap - 512;
            if (over) {
                fprintf(stderr, "tilescale: error: '%s' %s[", info.name, ts_dtype_name(info.dtype));
                for (int d = 0; d < info.ndim; d++) fprintf(stderr, "%s%lld", d ? ", " : "", (long long)shapes[p][d]);
                fprintf(stderr, "] has more bytes than fit in 64 bits\n");
                goto done;
            }
            heap += (bytes + 511) / 256 * 256;
        }
    }
    int cuda = o.target == TS_TARGET_CUDA;
    TsWorldOptions wo = {launched ? (cuda ? TS_WORLD_IPC : TS_WORLD_PROC) : (cuda ? TS_WORLD_LOCAL : TS_WORLD_SIM), P,
                         o.heap ? o.heap : heap, (int64_t)(o.timeout * 1000), rpn};
    if (ts_world_create(ctx, &wo, &w)) {
        fprintf(stderr, "%s", ts_last_error(ctx));
        goto done;
    }
    int me = ts_world_rank(w); /* -1: this process runs every rank */
    for (const char *s = ts_world_warnings(w); *s;) { /* topology checks */
        const char *e = strchr(s, '\n');
        int len = e ? (int)(e - s) : (int)strlen(s);
        fprintf(stderr, "tilescale: warning: %.*s\n", len, s);
        s += len + (e != NULL);
    }
    /* every rank's --out file must be writable before the kernel runs (as a single-rank run checks) */
    for (int i = 0; i < o.outs.n; i++)
        for (int r = 0; r < P; r++) {
            if (me >= 0 && r != me) continue;
            subst_rank(&path, o.outs.v[i].value, r);
            if (path.oom || ts_npy_check_writable(ctx, path.s)) {
                fprintf(stderr, "%s", path.oom ? "tilescale: error: out of memory\n" : ts_last_error(ctx));
                goto done;
            }
        }
    uint64_t seed = o.have_seed ? o.seed : launched ? env_seed : cli_entropy_seed();
    for (int p = 0; p < np; p++) {
        TsParamInfo info;
        ts_kernel_param(k, p, &info);
        const char *in = cli_find(&o.ins, info.name);
        if (!info.is_tensor) {
            if (!in) {
                fprintf(stderr, "tilescale: error: scalar parameter '%s' needs a value: --in %s=VALUE\n", info.name,
                        info.name);
                goto done;
            }
            for (int r = 0; r < P; r++) {
                char *end;
                double v = strtod(in, &end);
                if (!strcmp(in, "{rank}")) v = r, end = (char *)in + 6; /* each rank's own number (DeepEP's `rank`) */
                if (!*in || *end) {
                    fprintf(stderr, "tilescale: error: --in %s=%s: a scalar parameter needs a number\n", info.name, in);
                    goto done;
                }
                if (ts_tensor_alloc(&host[r * np + p], info.dtype, 0, NULL)) goto done;
                ts_tensor_set(&host[r * np + p], 0, v);
                args[r * np + p] = host[r * np + p];
            }
            continue;
        }
        TsTensor per[TS_WORLD_MAX_RANKS];
        if (ts_world_tensor(w, info.dtype, info.ndim, shapes[p], per)) {
            fprintf(stderr, "%s", ts_last_error(ctx));
            goto done;
        }
        for (int r = 0; r < P; r++) {
            TsTensor *t = &host[r * np + p];
            args[r * np + p] = per[r];
            if (ts_tensor_alloc(t, info.dtype, info.ndim, shapes[p])) goto done; /* zero-filled */
            int64_t n = ts_tensor_numel(t);
            if (in) {
                subst_rank(&path, in, r);
                TsTensor f;
                if (path.oom || ts_npy_load(ctx, path.s, &f)) {
                    fprintf(stderr, "%s", path.oom ? "tilescale: error: out of memory\n" : ts_last_error(ctx));
                    goto done;
                }
                if (ts_tensor_numel(&f) != n || f.dtype != t->dtype) {
                    fprintf(stderr, "tilescale: error: %s holds %lld %s elements, %s needs %lld %s\n", path.s,
                            (long long)ts_tensor_numel(&f), ts_dtype_name(f.dtype), info.name, (long long)n,
                            ts_dtype_name(t->dtype));
                    ts_tensor_free(&f);
                    goto done;
                }
                memcpy(t->data, f.data, nbytes(t));
                ts_tensor_free(&f);
            } else if (is_float(info.dtype)) {
                uint64_t s = seed * 0x100000001b3ull + (uint64_t)(r * 131 + p + 1);
                for (int64_t i = 0; i < n; i++)
                    ts_tensor_set(t, i, info.is_output ? NAN : (double)(mix(&s) >> 11) * 0x1p-53 * 2.0 - 1.0);
            }
        }
    }
    /* the reference's inputs: every rank's tensors before the launch, stacked */
    if (ref) {
        for (int p = 0; p < np; p++) {
            TsParamInfo info, rinfo;
            ts_kernel_param(k, p, &info);
            ts_kernel_param(ref, p, &rinfo);
            if (!info.is_tensor) {
                stacked[p] = host[p];
                continue;
            }
            sshapes[p][0] = P;
            for (int d = 0; d < info.ndim; d++) sshapes[p][d + 1] = shapes[p][d];
            if (!rinfo.is_tensor || rinfo.ndim != info.ndim + 1 || strcmp(rinfo.name, info.name)) {
                fprintf(stderr, "tilescale: error: %s's parameter %d must be '%s' with the ranks as a leading axis (%d dims)\n",
                        o.check, p, info.name, info.ndim + 1);
                goto done;
            }
            if (ts_tensor_alloc(&stacked[p], info.dtype, info.ndim + 1, sshapes[p])) goto done;
            size_t b = nbytes(&host[p]);
            for (int r = 0; r < P; r++) memcpy((char *)stacked[p].data + (size_t)r * b, host[r * np + p].data, b);
        }
    }
    /* host copies -> heaps, launch, heaps -> host copies */
    for (int i = 0; i < P * np; i++)
        if (args[i].data != host[i].data && (me < 0 || i / np == me) &&
            ts_world_write(w, i / np, ts_world_offset(w, i / np, args[i].data), host[i].data, (int64_t)nbytes(&host[i]))) {
            fprintf(stderr, "%s", ts_last_error(ctx));
            goto done;
        }
    int per = ts_world_ranks_per_node(w);
    if (me < 0 && per < P)
        printf("%s: %d ranks (sim, %d nodes of %d ranks), seed %llu\n", ts_kernel_name(k), P, (P + per - 1) / per, per,
               (unsigned long long)seed);
    else if (me < 0)
        printf("%s: %d ranks (%s), seed %llu\n", ts_kernel_name(k), P, cuda ? "local, GPU 0" : "sim",
               (unsigned long long)seed);
    else {
        int local, node = ts_world_node(w, me, &local);
        printf("%s: rank %d of %d (%s, pid %d, node %d, local rank %d), seed %llu\n", ts_kernel_name(k), me, P,
               cuda ? "ipc, a process per rank" : "proc, a process per rank", (int)getpid(), node, local,
               (unsigned long long)seed);
    }
    if (ts_kernel_launch_world(k, w, args, np)) {
        fprintf(stderr, "%s", ts_last_error(ctx));
        goto done;
    }
    if (me < 0 && per < P) { /* what crossed nodes (tests/run/dist_nodes.sh checks it did) */
        printf("transport between nodes: %lld requests\n", (long long)ts_world_xport_served(w));
    }
    for (int i = 0; i < P * np; i++)
        if (args[i].data != host[i].data && (me < 0 || i / np == me) &&
            ts_world_read(w, i / np, ts_world_offset(w, i / np, args[i].data), host[i].data, (int64_t)nbytes(&host[i]))) {
            fprintf(stderr, "%s", ts_last_error(ctx));
            goto done;
        }
    if (o.bench > 0 && ts_kernel_tier(k) == TS_TIER_QUICK && ts_kernel_wait_full(k)) /* time the full tier */
        fprintf(stderr, "%s", ts_last_error(ctx));
    if (o.bench > 0) {
        /* whole launches (all ranks, synchronized), host-timed: kernels meant
         * for timing repeat their work inside so launch costs amortize */
        double *ms = calloc((size_t)o.bench, sizeof *ms);
        int rp = -1; /* a scalar `round`: counts the launches (flags that only grow) */
        for (int p = 0; p < np; p++) {
            TsParamInfo info;
            ts_kernel_param(k, p, &info);
            if (!info.is_tensor && !strcmp(info.name, "round")) rp = p;
        }
        double round0 = rp >= 0 ? ts_tensor_get(&host[rp], 0) : 0;
        for (int i = 0; ms && i < o.bench; i++) {
            struct timespec t0, t1;
            for (int r = 0; rp >= 0 && r < P; r++) ts_tensor_set(&host[r * np + rp], 0, round0 + i + 1);
            clock_gettime(CLOCK_MONOTONIC, &t0);
            if (ts_kernel_launch_world(k, w, args, np)) {
                fprintf(stderr, "%s", ts_last_error(ctx));
                free(ms);
                goto done;
            }
            clock_gettime(CLOCK_MONOTONIC, &t1);
            ms[i] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
        }
        for (int i = 1; ms && i < o.bench; i++)
            for (int j = i; j > 0 && ms[j - 1] > ms[j]; j--) {
                double t = ms[j];
                ms[j] = ms[j - 1];
                ms[j - 1] = t;
            }
        if (ms) printf("bench: median %.4f ms per launch over %d launches\n", ms[o.bench / 2], o.bench);
        free(ms);
    }
    for (int i = 0; i < o.outs.n; i++)
        for (int p = 0; p < np; p++) {
            TsParamInfo info;
            ts_kernel_param(k, p, &info);
            if (strcmp(info.name, o.outs.v[i].name)) continue;
            for (int r = 0; r < P; r++) {
                if (me >= 0 && r != me) continue;
                subst_rank(&path, o.outs.v[i].value, r);
                if (path.oom || ts_npy_save(ctx, path.s, &host[r * np + p])) {
                    fprintf(stderr, "%s", path.oom ? "tilescale: error: out of memory\n" : ts_last_error(ctx));
                    goto done;
                }
            }
        }
    rc = 0;
    if (ref) {
        if (ts_kernel_launch(ref, stacked, np)) {
            fprintf(stderr, "%s", ts_last_error(ctx));
            rc = 1;
            goto done;
        }
        printf("check against %s:\n", o.check);
        cli_print_rule();
        int ok = 1;
        for (int p = 0; p < np; p++) {
            TsParamInfo info;
            ts_kernel_param(k, p, &info);
            if (!info.is_tensor || !is_float(info.dtype)) continue;
            double tol_a = o.atol >= 0 ? o.atol : info.dtype == TS_FLOAT32 || info.dtype == TS_FLOAT64 ? 1e-4 : 2e-2;
            double tol_r = o.rtol >= 0 ? o.rtol : tol_a;
            for (int r = 0; r < P; r++) {
                if (me >= 0 && r != me) continue;
                const TsTensor *got = &host[r * np + p];
                TsBuf label = {0};
                ts_buf_printf(&label, "%s rank %d", info.name, r);
                ok &= cli_compare(ts_buf_str(&label), got, &stacked[p], (int64_t)r * ts_tensor_numel(got),
                                  info.is_output, tol_a, tol_r);
                ts_buf_free(&label);
            }
        }
        printf("%s\n", ok ? "PASS" : "FAIL");
        rc = ok ? 0 : 1;
    } else {
        for (int p = 0; p < np; p++) {
            TsParamInfo info;
            ts_kernel_param(k, p, &info);
            if (!info.is_tensor) continue;
            for (int r = 0; r < P; r++) {
                if (me >= 0 && r != me) continue;
                double sum = 0;
                const TsTensor *t = &host[r * np + p];
                int64_t n = ts_tensor_numel(t);
                for (int64_t i = 0; i < n; i++) sum += ts_tensor_get(t, i);
                printf("  %-12s rank %d  sum %.6g\n", info.name, r, sum);
            }
        }
    }
done:
    for (int p = 0; host && p < np; p++) {
        TsParamInfo info;
        ts_kernel_param(k, p, &info);
        for (int r = 0; r < P; r++) ts_tensor_free(&host[r * np + p]);
        if (info.is_tensor && stacked) ts_tensor_free(&stacked[p]);
    }
    free(args);
    free(host);
    free(stacked);
    free(shapes);
    free(sshapes);
    ts_buf_free(&path);
    ts_world_destroy(w);
    ts_kernel_destroy(ref);
    ts_kernel_destroy(k);
    ts_context_destroy(ctx);
    return rc;
}
