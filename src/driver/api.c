/*
 * api.c — the public API's compile driver and kernel queries.
 *
 * ts_compile_* is the whole pipeline in one readable function: parse,
 * elaborate, run the pass list, generate code, build.  Every step records
 * its time.  Errors from any step unwind (longjmp) to the ts_try here and
 * come back as a status plus the context's diagnostic text.
 */
#include "core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "elab/elab.h"
#include "front/ast.h"
#include "pass/pass.h"
#include "runtime/cache.h"
#include "runtime/launch.h"
#include "runtime/npy.h"
#include "target/c/c_target.h"
#include "target/cuda/cuda_target.h"

TsStatus ts_context_create(TsContext **out) {
    if (!out) return TS_ERR_INVALID;
    *out = calloc(1, sizeof(TsContext));
    return *out ? TS_OK : TS_ERR_NOMEM;
}

void ts_context_destroy(TsContext *ctx) {
    if (!ctx) return;
    ts_buf_free(&ctx->diag.msg);
    ts_buf_free(&ctx->diag.warn);
    ts_arena_free(&ctx->scratch);
    free(ctx);
}

const char *ts_last_error(const TsContext *ctx) {
    if (!ctx) return "";
    if (ctx->diag.msg.s && ctx->diag.msg.s[0]) return ctx->diag.msg.s;
    /* A failure whose message could not be stored (memory ran out while
     * formatting it) still says what went wrong. */
    if (ctx->diag.status == TS_ERR_NOMEM) return "tilescale: error: out of memory\n";
    if (ctx->diag.status != TS_OK) return "tilescale: error: the call failed (no message could be stored)\n";
    return "";
}

const char *ts_last_warnings(const TsContext *ctx) {
    return ctx && ctx->diag.warn.s ? ctx->diag.warn.s : "";
}

/* A compile starts with no warnings (other calls keep the last compile's). */
static void reset_warnings(TsContext *ctx) {
    ctx->diag.warn.n = 0;
    if (ctx->diag.warn.s) ctx->diag.warn.s[0] = 0;
}

static void reset_diag(TsContext *ctx) {
    ctx->diag.msg.n = 0;
    if (ctx->diag.msg.s) ctx->diag.msg.s[0] = 0;
    ctx->diag.status = TS_OK;
}

void ts_kernel_destroy(TsKernel *k) {
    if (!k) return;
    ts_kernel_destroy(k->next);
    ts_cuda_tier_free(k->tier); /* first: joins the background build (api.c's tiered build) */
    if (k->cmod) ts_c_module_free(k->cmod);
    if (k->cumod) ts_cuda_module_free(k->cumod);
    if (k->cumod_quick) ts_cuda_module_free(k->cumod_quick);
    ts_buf_free(&k->quick_code);
    ts_buf_free(&k->code);
    ts_buf_free(&k->ir_text);
    ts_buf_free(&k->timing);
    ts_arena_free(&k->arena);
    free(k);
}

static void record(TsKernel *k, const char *phase, double t0) {
    if (k->opt.timing) ts_buf_printf(&k->timing, "%s %.3f\n", phase, ts_now_ms() - t0);
}

/* Shared memory per block (the opt-in maximum) by compute capability x 10.
 * Facts from the CUDA C++ Programming Guide's table of technical
 * specifications per compute capability: 227 KB on 9.0 and 10.x, 163 KB on
 * 8.0 and 8.7, 99 KB on 8.6, 8.9 and 12.x, 64 KB on 7.5, 96 KB on 7.0/7.2,
 * 48 KB before. */
static int64_t cuda_smem_limit(int sm) {
    if (sm >= 120) return 101376;
    if (sm >= 90) return 232448;
    if (sm == 80 || sm == 87) return 166912;
    if (sm >= 86) return 101376;
    if (sm >= 80) return 166912;
    if (sm == 75) return 65536;
    if (sm >= 70) return 98304;
    return 49152;
}

/* An environment switch: on unless set to "0" (or to `off_word`). */
static bool env_on(const char *name, const char *off_word) {
    const char *v = getenv(name);
    return !(v && (!strcmp(v, "0") || (off_word && !strcmp(v, off_word))));
}

/* A quick tier's capabilities (TsCaps.quick_tier): pass tier_plan rolls
 * the gemms' k16 loops and asks for NVRTC's fast-compile level; no gemm is
 * split across the pipeline's barrier (TILESCALE_CUDA_PREFETCH=0's path:
 * the split's prologue and tail copies of a k16 step are most of a rolled
 * body's remaining size). */
static void quick_caps(TsCaps *c) {
    c->quick_tier = true;
    c->mma_prefetch = 0;
}

/* The target's capabilities and path switches, read once per compile:
 * the only place the compiler looks at TILESCALE_CUDA_* (see base/caps.h). */
static void set_caps(TsCaps *c, TsTarget target, int check_bounds, int tiered) {
    memset(c, 0, sizeof *c);
    /* the C target is the reference: checked unless turned off */
    c->check_bounds = check_bounds > 0 || (check_bounds == 0 && target != TS_TARGET_CUDA);
    {
        const char *v = getenv("TILESCALE_TMEM_SHARED");
        c->tmem_shared = v && !strcmp(v, "1");
    }
    if (target != TS_TARGET_CUDA) return;
    ts_cuda_pick_arch(getenv("TILESCALE_CUDA_ARCH"), c->arch, sizeof c->arch);
    const char *p = c->arch;
    while (*p && (*p < '0' || *p > '9')) p++;
    c->sm = atoi(p);
    c->smem_max = cuda_smem_limit(c->sm ? c->sm : 90);
    c->mma = env_on("TILESCALE_CUDA_MMA", NULL);
    {
        /* wgmma.mma_async: sm_90a only (the architecture-specific target); on by default since
         * the H200 run of 2026-12-02 05:55 (correct everywhere, GEMM 8192^3 0.63 -> 0.71 of cuBLAS) */
        size_t n = strlen(c->arch);
        c->wgmma = c->mma && env_on("TILESCALE_CUDA_WGMMA", NULL) && c->sm == 90 && n > 0 && c->arch[n - 1] == 'a';
    }
    {
        const char *v = getenv("TILESCALE_CUDA_WGMMA_INFLIGHT");
        c->wgmma_inflight = !v || !*v || !strcmp(v, "auto") ? TS_WGMMA_INFLIGHT_AUTO
                            : atoi(v) == 1                      ? TS_WGMMA_INFLIGHT_TOP
                            : atoi(v) == 2                      ? TS_WGMMA_INFLIGHT_ONE
                            : atoi(v) == 3                      ? TS_WGMMA_INFLIGHT_SLOT
                                                                : TS_WGMMA_INFLIGHT_OFF;
    }
    c->vec = env_on("TILESCALE_CUDA_VEC", NULL);
    c->vec_cast = c->vec && env_on("TILESCALE_CUDA_VEC", "nocast");
    c->pad = env_on("TILESCALE_CUDA_PAD", NULL);
    c->layout = env_on("TILESCALE_CUDA_LAYOUT", NULL);
    c->ws_layout = env_on("TILESCALE_CUDA_WS_LAYOUT", NULL);
    /* the producer's cp.async hand-over (caps.h, TS_WS_ASYNC_*): by default .noinc, which
     * compute-sanitizer's synccheck accepts (bench/ws_async_variants.sh, H200 2026-12-02) */
    {
        const char *v = getenv("TILESCALE_CUDA_WS_ASYNC");
        c->ws_async = !v || !strcmp(v, "1") || !strcmp(v, "noinc") ? TS_WS_ASYNC_NOINC
                      : !strcmp(v, "wait")                         ? TS_WS_ASYNC_WAIT
                      : !strcmp(v, "mbar")                         ? TS_WS_ASYNC_MBAR
                                                                   : TS_WS_ASYNC_OFF;
    }
    c->swizzle = env_on("TILESCALE_CUDA_SWIZZLE", NULL);
    c->pipeline = env_on("TILESCALE_CUDA_PIPELINE", NULL);
    c->index32 = env_on("TILESCALE_CUDA_INDEX32", NULL);
    const char *l2 = getenv("TILESCALE_CUDA_L2_PREFETCH");
    int l2v = l2 ? atoi(l2) : 0;
    c->l2_prefetch = l2v == 64 || l2v == 128 || l2v == 256 ? l2v : 0;
    c->split_addr = env_on("TILESCALE_CUDA_SPLIT_ADDR", NULL);
    c->store_align = env_on("TILESCALE_CUDA_STORE_ALIGN", NULL);
    const char *pf = getenv("TILESCALE_CUDA_PREFETCH");
    c->mma_prefetch = pf && *pf ? atoi(pf) & 15 : TS_PREFETCH_DEFAULT;
    const char *reuse = getenv("TILESCALE_CUDA_SMEM_REUSE");
    c->smem_reuse = !reuse || !*reuse ? TS_SMEM_REUSE_FIT
                    : !strcmp(reuse, "0") ? TS_SMEM_REUSE_OFF
                    : !strcmp(reuse, "1") ? TS_SMEM_REUSE_ALWAYS
                                          : TS_SMEM_REUSE_FIT;
    const char *pf2 = getenv("TILESCALE_CUDA_PTXAS_FAST");
    c->ptxas_fast = pf2 && !strcmp(pf2, "1")   ? TS_PTXAS_FAST_ALL
                    : pf2 && !strcmp(pf2, "2") ? TS_PTXAS_FAST_LARGE
                                               : TS_PTXAS_FAST_OFF;
    const char *mb = getenv("TILESCALE_CUDA_MINBLOCKS");
    c->min_blocks = mb && atoi(mb) > 0 && atoi(mb) <= 32 ? atoi(mb) : 0;
    if (tiered == TS_TIERED_QUICK) quick_caps(c);
}


/* What the CUDA target cannot launch, known at compile time: constant grid
 * extents beyond CUDA's limits (2^31-1 blocks in x, 65535 in y and z).  A
 * warning, not an error: compiling (--emit, a build, TileLang's get_tir and
 * analysis, as analyze/example_conv_analyze.py does with 262144 blocks in
 * y) is not launching; the launch refuses it (driver/launch.c,
 * run_cuda_args), at the same grid extent.  (More shared memory per block
 * than the architecture has is the pass plan_smem's error, which names the
 * buffers: no module could be loaded.) */
static void check_cuda_limits(TsDiag *d, const IrKernel *k) {
    static const int64_t grid_max[3] = {2147483647LL, 65535, 65535};
    for (int i = 0; i < k->ngrid && i < 3; i++) {
        int64_t g;
        if (k->grid[i] && ir_is_const_int(k->grid[i], &g) && g > grid_max[i])
            ts_warn_at(d, k->grid[i]->loc.src || !k->body ? k->grid[i]->loc : k->body->loc, /* (a -D value has none) */
                       "kernel '%s': a grid of %lld blocks in %c is more than CUDA allows (%lld); compiled, but a "
                       "launch will be refused", k->name, (long long)g, "xyz"[i], (long long)grid_max[i]);
    }
}

/* ---- the tiered CUDA build (TsCompileOptions.tiered) ---------------------------------
 *
 * A kernel whose cold NVRTC build is long (pass tier_plan: IrKernel.tier_large) is
 * built in two tiers when the disk cache has no full build of it yet: the quick
 * tier (the same program elaborated again and compiled with TsCaps.quick_tier)
 * now, for the first launches, and the full tier on a background thread
 * (target/cuda/tier_cuda.c), which writes it to the cache.  The first launch
 * after that build has finished takes it, loads it on the launching thread
 * (where the driver's context is) and stores it in k->cumod atomically; the quick
 * module stays alive until the kernel is freed, for launches already under way
 * on other threads and for plans made on it.  A cached full build skips the
 * quick tier.  Only a kernel that is not a chain is tiered. */

/* What the elaboration needs again for the quick tier (compile() sets it). */
typedef struct TierSrc {
    const AstModule *m;   /* the parsed module */
    const char *entry;    /* the entry's name */
    const TsDefine *defs; /* the -D values */
    int ndefs;            /* their number */
} TierSrc;

static bool tier_wanted(const TsKernel *head, const TsKernel *k) {
    if (k != head || k->ir->next || k->target != TS_TARGET_CUDA) return false;
    if (k->ir->multinode) return false; /* NCCL's device API: built whole by nvcc (target/cuda/nvcc.c), no quick tier */
    return k->opt.tiered == TS_TIERED_ON || (k->opt.tiered == TS_TIERED_AUTO && k->ir->tier_large);
}

static void build_tiered(TsKernel *k, const TsCudaCodeInfo *ci) {
    TsDiag *d = &k->ctx->diag;
    TsBuf *timing = k->opt.timing ? &k->timing : NULL;
    const char *code = ts_buf_str(&k->code);
    /* a full build in the cache: that is the build */
    size_t size = 0;
    char arch[24];
    int ptx = 0;
    unsigned char *img = ts_cuda_image(d, k->caps.arch, code, k->ir->name, &k->opt, 1, timing, &size, arch, &ptx);
    if (img) {
        k->cumod = ts_cuda_module_new(d, k->ir->name, ci, img, size, arch, ptx, TS_ERR_BUILD, timing);
        if (!k->cumod) ts_rethrow(d, d->status ? d->status : TS_ERR_BUILD);
        return;
    }
    /* the quick tier: the program again, with the quick tier's capabilities */
    double t = ts_now_ms();
    const TierSrc *ts = k->tier_src;
    TsCaps qc = k->caps;
    quick_caps(&qc);
    IrKernel *q = ts_elaborate_for(d, &k->arena, ts->m, ts->entry, ts->defs, ts->ndefs, k->opt.lenient_defines != 0, &qc);
    TsPassCtx pc = {d, &k->arena, q, k->target, &qc};
    TsBuf dump = {0};
    ts_run_passes(&pc, NULL, &dump, NULL);
    ts_buf_free(&dump);
    TsCudaCodeInfo qci = ts_cuda_codegen(d, q, &qc, &k->quick_code);
    if (k->quick_code.oom) ts_fail_at(d, TS_ERR_NOMEM, (TsLoc){0}, "out of memory for the generated code");
    record(k, "quick tier codegen", t);
    k->cumod = ts_cuda_build(d, q, &qci, qc.arch, ts_buf_str(&k->quick_code), &k->opt, timing);
    /* the full tier in the background, into the same cache directory */
    TsBuf dir = {0};
    if (ts_cache_dir(d, &k->opt, &dir) != TS_OK) {
        ts_buf_free(&dir);
        ts_rethrow(d, TS_ERR_IO);
    }
    k->tier = ts_cuda_tier_start(d, k->ir->name, ci, k->caps.arch, code, ts_buf_str(&dir));
    ts_buf_free(&dir);
    if (!k->tier) ts_rethrow(d, d->status ? d->status : TS_ERR_RUNTIME);
    __atomic_store_n(&k->tier_kind, TS_TIER_QUICK, __ATOMIC_RELEASE);
}

/* Swap a finished full tier in (wait: wait for its build first).  Called by
 * every launch (driver/launch.c) and by ts_kernel_wait_full; errors of the full
 * tier go to d only when waiting (a launch goes on with the quick tier). */
TsStatus ts_kernel_tier_install(TsKernel *k, int wait, TsDiag *d) {
    if (!k->tier || __atomic_load_n(&k->tier_kind, __ATOMIC_ACQUIRE) != TS_TIER_QUICK) return TS_OK;
    if (!wait && ts_cuda_tier_state(k->tier) == TS_CUDA_TIER_RUNNING) return TS_OK;
    TsDiag local;
    memset(&local, 0, sizeof local);
    double ms = 0;
    TsModuleCuda *m = ts_cuda_tier_take(k->tier, wait, &local, &ms);
    TsStatus st = TS_OK;
    if (m) {
        k->cumod_quick = k->cumod; /* only the one taker gets here */
        k->cumod = m;
        __atomic_store_n(&k->tier_kind, TS_TIER_FULL, __ATOMIC_RELEASE);
        if (k->opt.timing) ts_buf_printf(&k->timing, "tier full %.3f (built in the background, swapped in)\n", ms);
    } else if (ts_cuda_tier_state(k->tier) == TS_CUDA_TIER_FAILED) {
        __atomic_store_n(&k->tier_kind, TS_TIER_QUICK_ONLY, __ATOMIC_RELEASE);
        st = TS_ERR_BUILD;
        if (wait && d) {
            ts_buf_printf(&d->msg, "tilescale: the full tier of '%s' did not build (the quick tier stays): %s",
                          k->ir->name, ts_cuda_tier_error(k->tier));
            d->status = st;
        }
    }
    ts_buf_free(&local.msg);
    ts_buf_free(&local.warn);
    return st;
}

int ts_kernel_tier(const TsKernel *k) { return k ? __atomic_load_n(&k->tier_kind, __ATOMIC_ACQUIRE) : TS_TIER_FULL; }

TsStatus ts_kernel_wait_full(TsKernel *k) {
    if (!k) return TS_ERR_INVALID;
    reset_diag(k->ctx);
    if (!k->tier) return ts_kernel_tier(k) == TS_TIER_FULL ? TS_OK : TS_ERR_UNSUPPORTED;
    TsStatus st = ts_kernel_tier_install(k, 1, &k->ctx->diag);
    if (st) return st;
    /* another thread may have taken the build and be loading it */
    while (ts_kernel_tier(k) == TS_TIER_QUICK && ts_cuda_tier_state(k->tier) == TS_CUDA_TIER_TAKEN) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (ts_kernel_tier(k) == TS_TIER_FULL) return TS_OK;
    ts_buf_printf(&k->ctx->diag.msg, "tilescale: the full tier of '%s' did not build (the quick tier stays): %s",
                  k->ir->name, ts_cuda_tier_error(k->tier));
    return k->ctx->diag.status = TS_ERR_BUILD;
}

/* Passes, code generation and build of one kernel of the chain; IR text
 * and timing go to the head. */
static void compile_part(TsKernel *head, TsKernel *k) {
    TsDiag *d = &k->ctx->diag;
    TsBuf *timing = head->opt.timing ? &head->timing : NULL;
    TsPassCtx pc = {d, &head->arena, k->ir, k->target, &k->caps};
    ts_run_passes(&pc, k->opt.dump_after, &head->ir_text, timing);
    if (!k->opt.dump_after) ir_print_kernel(&head->ir_text, k->ir);

    double t = ts_now_ms();
    if (k->target == TS_TARGET_CUDA) {
        TsCudaCodeInfo ci = ts_cuda_codegen(d, k->ir, &k->caps, &k->code);
        record(head, "codegen", t);
        check_cuda_limits(d, k->ir);
        if (k->opt.skip_build) return;
        if (tier_wanted(head, k)) { /* built by build_tiered once the chain is known to be k alone */
            TsCudaCodeInfo *keep = TS_NEW(&head->arena, TsCudaCodeInfo);
            *keep = ci;
            return build_tiered(head, keep);
        }
        k->cumod = ts_cuda_build(d, k->ir, &ci, k->caps.arch, ts_buf_str(&k->code), &k->opt, timing);
        return;
    }
    ts_c_codegen(d, k->ir, &k->caps, &k->code);
    if (k->code.oom) ts_fail_at(d, TS_ERR_NOMEM, (TsLoc){0}, "out of memory for the generated code");
    record(head, "codegen", t);
    if (k->opt.skip_build) return;
    k->cmod = ts_c_build(d, ts_buf_str(&k->code), &k->opt, timing);
}

/* The pipeline.  Runs inside the caller's ts_try. */
static void compile(TsKernel *k, const char *entry, const TsDefine *defs, int ndefs) {
    TsDiag *d = &k->ctx->diag;
    double t = ts_now_ms();
    AstModule *m = ts_parse_module(&k->arena, &k->src);
    record(k, "parse", t);

    t = ts_now_ms();
    k->ir = ts_elaborate_for(d, &k->arena, m, entry, defs, ndefs, k->opt.lenient_defines != 0, &k->caps);
    record(k, "elaborate", t);

    TierSrc tsrc = {m, entry, defs, ndefs};
    k->tier_src = &tsrc; /* for build_tiered, during this call only */
    TsKernel *part = k;
    for (const IrKernel *ir = k->ir; ir; ir = ir->next) {
        if (ir != k->ir) {
            TsKernel *p = calloc(1, sizeof *p);
            if (!p) ts_fail_at(d, TS_ERR_NOMEM, (TsLoc){0}, "out of memory");
            p->ctx = k->ctx;
            ts_arena_init(&p->arena);
            p->arena.oom = k->arena.oom;
            p->ir = (IrKernel *)ir;
            p->target = k->target;
            p->opt = k->opt;
            p->caps = k->caps;
            part->next = p;
            part = p;
        }
        compile_part(k, part);
    }
    k->tier_src = NULL;
}

TsStatus ts_compile_source(TsContext *ctx, const char *filename, const char *text,
                           const char *entry, const TsDefine *defs, int ndefs,
                           const TsCompileOptions *opt, TsKernel **out) {
    if (!ctx) return TS_ERR_INVALID;
    reset_diag(ctx);
    reset_warnings(ctx);
    if (!out || !text || !entry || (ndefs && !defs)) {
        ts_buf_puts(&ctx->diag.msg, "tilescale: error: ts_compile_source: NULL argument\n");
        return TS_ERR_INVALID;
    }
    *out = NULL;
    TsKernel *k = calloc(1, sizeof *k);
    if (!k) return ctx->diag.status = TS_ERR_NOMEM;
    k->ctx = ctx;
    ts_arena_init(&k->arena);
    if (opt) k->opt = *opt;
    k->target = k->opt.target;
    /* the environment is read here, at the API boundary, not by the build */
    if (!k->opt.cc || !*k->opt.cc) {
        const char *env = getenv("CC");
        k->opt.cc = env && *env ? env : "cc";
    }
    if (!k->opt.cflags) {
        const char *env = getenv("TILESCALE_CFLAGS");
        k->opt.cflags = env ? env : "";
    }
    if (!k->opt.nvcc || !*k->opt.nvcc) k->opt.nvcc = getenv("TILESCALE_NVCC"); /* NULL: nvcc.c's search */
    if (!k->opt.nccl_include || !*k->opt.nccl_include) k->opt.nccl_include = getenv("TILESCALE_NCCL_INCLUDE");
    if (k->opt.tiered == TS_TIERED_AUTO) {
        const char *env = getenv("TILESCALE_TIERED");
        k->opt.tiered = !env || !*env          ? TS_TIERED_AUTO
                        : !strcmp(env, "0")    ? TS_TIERED_OFF
                        : !strcmp(env, "quick") ? TS_TIERED_QUICK
                        : !strcmp(env, "1")    ? TS_TIERED_ON
                                               : TS_TIERED_AUTO;
    }
    if (k->target != TS_TARGET_CUDA) k->opt.tiered = TS_TIERED_OFF; /* the C target has one build */
    if (k->opt.tiered == TS_TIERED_QUICK) k->tier_kind = TS_TIER_QUICK_ONLY;
    double t0 = ts_now_ms();
    /* CUDA: the device's architecture, through the driver (cuInit) */
    set_caps(&k->caps, k->target, k->opt.check_bounds, k->opt.tiered);
    k->caps.multinode = k->opt.multinode > 0;

    if (k->target == TS_TARGET_CUDA) record(k, "cuda device", t0);

    jmp_buf jb;
    jmp_buf *volatile saved = NULL;
    jmp_buf oom;
    jmp_buf *outer = ctx->diag.jb;
    if (setjmp(oom)) {
        ctx->diag.jb = outer; /* the ts_try below may have been entered: its frame is gone */
        ctx->diag.status = TS_ERR_NOMEM;
        ts_kernel_destroy(k); /* first: its memory lets the message be stored */
        ts_buf_puts(&ctx->diag.msg, "tilescale: error: out of memory\n");
        return TS_ERR_NOMEM;
    }
    k->arena.oom = &oom;
    if (ts_try(&ctx->diag, &jb, &saved)) {
        ts_try_end(&ctx->diag, saved);
        TsStatus st = ctx->diag.status ? ctx->diag.status : TS_ERR_INTERNAL;
        ts_kernel_destroy(k);
        return st;
    }
    double t = ts_now_ms();
    size_t len = strlen(text);
    k->src.name = ts_strdup(&k->arena, filename ? filename : "<source>");
    k->src.text = ts_strndup(&k->arena, text, len);
    k->src.len = len;
    record(k, "read", t);
    compile(k, entry, defs, ndefs);
    ts_try_end(&ctx->diag, saved);
    for (TsKernel *p = k; p; p = p->next) p->arena.oom = NULL; /* its handler's frame ends here */
    *out = k;
    return TS_OK;
}

TsStatus ts_compile_file(TsContext *ctx, const char *path, const char *entry,
                         const TsDefine *defs, int ndefs, const TsCompileOptions *opt,
                         TsKernel **out) {
    if (!ctx) return TS_ERR_INVALID;
    reset_diag(ctx);
    reset_warnings(ctx);
    if (!path) return TS_ERR_INVALID;
    size_t len;
    char *text = ts_read_file(path, &len);
    if (!text) {
        ts_buf_printf(&ctx->diag.msg, "tilescale: error: %s: cannot read: %s\n", path, ts_file_error(errno));
        return TS_ERR_IO;
    }
    if (strlen(text) != len) {
        free(text);
        ts_buf_printf(&ctx->diag.msg, "%s: error: file contains a NUL byte\n", path);
        return TS_ERR_SYNTAX;
    }
    TsStatus st = ts_compile_source(ctx, path, text, entry, defs, ndefs, opt, out);
    free(text);
    return st;
}

const char *ts_kernel_name(const TsKernel *k) { return k && k->ir ? k->ir->name : ""; }

int ts_kernel_num_params(const TsKernel *k) { return k && k->ir ? ts_launch_user_params(k->ir) : 0; }

int ts_kernel_num_workspaces(const TsKernel *k) {
    return k && k->ir ? k->ir->params.n - ts_launch_user_params(k->ir) : 0;
}

TsStatus ts_kernel_param(const TsKernel *k, int i, TsParamInfo *info) {
    if (!k || !info || i < 0 || i >= k->ir->params.n) return TS_ERR_INVALID;
    const IrParam *p = &k->ir->params.v[i];
    memset(info, 0, sizeof *info);
    info->name = p->name;
    info->is_output = p->is_output;
    if (p->buf) {
        info->is_tensor = 1;
        info->dtype = p->buf->dt;
        info->ndim = p->buf->ndim;
        for (int d = 0; d < p->buf->ndim && d < 8; d++) {
            int64_t c;
            const IrExpr *e = p->buf->shape[d];
            if (ir_is_const_int(e, &c)) info->shape[d] = c;
            else {
                info->shape[d] = -1;
                info->shape_names[d] = e->kind == IR_E_VAR ? e->var->name : "?";
            }
        }
    } else {
        info->dtype = p->var->dt;
    }
    return TS_OK;
}

const char *ts_kernel_param_extent(const TsKernel *k, int i, int d) {
    if (!k || !k->ir || i < 0 || i >= k->ir->params.n) return NULL;
    const IrBuffer *b = k->ir->params.v[i].buf;
    if (!b || d < 0 || d >= b->ndim) return NULL;
    TsBuf t = {0};
    ir_print_expr(&t, b->shape[d]);
    /* (the kernel's arena: the text lives as long as the kernel; a query, not a change) */
    const char *s = t.oom ? NULL : ts_strdup(&((TsKernel *)k)->arena, ts_buf_str(&t));
    ts_buf_free(&t);
    return s;
}

void ts_kernel_grid(const TsKernel *k, int64_t grid[3], int *threads) {
    for (int i = 0; i < 3; i++) {
        int64_t c;
        grid[i] = k && k->ir && ir_is_const_int(k->ir->grid[i], &c) ? c : -1;
    }
    if (threads) *threads = k && k->ir ? k->ir->threads[0] * k->ir->threads[1] * k->ir->threads[2] : 0;
}

const TsKernel *ts_kernel_next(const TsKernel *k) { return k ? k->next : NULL; }

const char *ts_kernel_source(const TsKernel *k) { return k ? ts_buf_str((TsBuf *)&k->code) : ""; }
const char *ts_kernel_ir(const TsKernel *k) { return k ? ts_buf_str((TsBuf *)&k->ir_text) : ""; }
const char *ts_kernel_timing(const TsKernel *k) { return k ? ts_buf_str((TsBuf *)&k->timing) : ""; }

TsStatus ts_kernel_device_code(const TsKernel *k, const char *form, void **out, size_t *size) {
    if (!k || !form || !out || !size) return TS_ERR_INVALID;
    reset_diag(k->ctx);
    *out = NULL;
    *size = 0;
    int ptx = !strcmp(form, "ptx");
    if (k->target != TS_TARGET_CUDA || (!ptx && strcmp(form, "cubin"))) {
        ts_buf_printf(&k->ctx->diag.msg, "error: device code '%s' needs the CUDA target and \"ptx\" or \"cubin\"\n", form);
        return TS_ERR_INVALID;
    }
    TsDiag *d = &k->ctx->diag;
    *out = ts_nvrtc_emit(d, ts_buf_str((TsBuf *)&k->code), k->ir ? k->ir->name : NULL, k->caps.arch, ptx, &k->opt, size);
    return *out ? TS_OK : d->status ? d->status : TS_ERR_BUILD;
}

TsStatus ts_kernel_launch(TsKernel *k, const TsTensor *args, int nargs) {
    if (!k) return TS_ERR_INVALID;
    reset_diag(k->ctx);
    if (!k->cmod && !k->cumod) {
        ts_buf_puts(&k->ctx->diag.msg, "tilescale: error: this kernel was compiled without a build (skip_build)\n");
        return TS_ERR_INVALID;
    }
    double t = ts_now_ms();
    TsWorkspaces w;
    TsStatus st = ts_workspaces_alloc(k, args, nargs, &k->ctx->diag, 0, &w);
    for (TsKernel *p = k; p && st == TS_OK; p = p->next) st = ts_launch(p, w.args, w.nargs);
    ts_workspaces_free(&w);
    record(k, "run", t);
    return st;
}

TsStatus ts_kernel_launch_device(TsKernel *k, const TsTensor *args, int nargs, void *stream) {
    if (!k) return TS_ERR_INVALID;
    reset_diag(k->ctx);
    if (k->target != TS_TARGET_CUDA || !k->cumod) {
        ts_buf_puts(&k->ctx->diag.msg, k->target != TS_TARGET_CUDA
                                           ? "tilescale: error: device tensors need a kernel compiled for the CUDA target\n"
                                           : "tilescale: error: this kernel was compiled without a build (skip_build)\n");
        return TS_ERR_INVALID;
    }
    TsWorkspaces w;
    TsStatus st = ts_workspaces_alloc(k, args, nargs, &k->ctx->diag, 1, &w);
    for (TsKernel *p = k; p && st == TS_OK; p = p->next) st = ts_launch_device(p, w.args, w.nargs, stream);
    ts_workspaces_free(&w); /* (cuMemFree waits for the queued kernels) */
    return st;
}

/* A tiered kernel's plan asks here, while it still runs the quick tier, for
 * the module to launch: the launch takes and loads a finished full tier
 * exactly as ts_kernel_launch does (one taker, on its own thread). */
static TsModuleCuda *plan_upgrade(void *owner) {
    TsKernel *k = owner;
    (void)ts_kernel_tier_install(k, 0, NULL);
    return ts_kernel_tier(k) == TS_TIER_FULL ? k->cumod : NULL;
}

TsStatus ts_kernel_prepare_device(TsKernel *k, const TsTensor *args, int nargs, TsPlan **plan) {
    if (!k || !plan) return TS_ERR_INVALID;
    *plan = NULL;
    reset_diag(k->ctx);
    if (ts_kernel_num_workspaces(k)) { /* a plan is reused; workspaces are per launch */
        ts_buf_puts(&k->ctx->diag.msg, "tilescale: error: a kernel with T.alloc_global workspaces has no prepared launch\n");
        return k->ctx->diag.status = TS_ERR_UNSUPPORTED;
    }
    if (k->target != TS_TARGET_CUDA || !k->cumod || k->next) {
        ts_buf_puts(&k->ctx->diag.msg, k->target != TS_TARGET_CUDA ? "tilescale: error: device tensors need a kernel compiled for the CUDA target\n"
                                       : !k->cumod ? "tilescale: error: this kernel was compiled without a build (skip_build)\n"
                                                   : "tilescale: error: a chain of kernels has no prepared launch\n");
        k->ctx->diag.status = k->next && k->cumod ? TS_ERR_UNSUPPORTED : TS_ERR_INVALID;
        return k->ctx->diag.status;
    }
    TsStatus st = ts_launch_prepare(k, args, nargs, plan);
    if (st == TS_OK) ts_kernel_plan_tiered(k, *plan);
    return st;
}

void ts_kernel_plan_tiered(TsKernel *k, TsPlan *plan) {
    if (!k->tier) return;
    /* the plan starts on the module bound now and moves to the full tier's once a
     * launch finds it swapped in (plan_upgrade); not where it is bound to the full tier
     * already, nor where the full build failed (QUICK_ONLY for good) */
    int tier = ts_kernel_tier(k);
    if (tier == TS_TIER_QUICK || (tier == TS_TIER_FULL && ts_cuda_plan_module(plan) != k->cumod))
        ts_cuda_plan_tiered(plan, plan_upgrade, k);
}

uint64_t *ts_plan_pointers(TsPlan *plan) { return ts_cuda_plan_slots(plan); }

TsStatus ts_plan_launch(TsPlan *plan, void *stream) { return ts_cuda_plan_launch(plan, stream); }

TsStatus ts_plan_launch_packed(TsPlan *plan, const void *packed) { return ts_cuda_plan_launch_packed(plan, packed); }

int64_t ts_kernel_shared_bytes(const TsKernel *k) {
    return k && k->cumod ? k->cumod->info.smem_bytes : -1;
}

TsTarget ts_kernel_target(const TsKernel *k) { return k ? k->target : TS_TARGET_C; }

TsStatus ts_npy_load(TsContext *ctx, const char *path, TsTensor *out) {
    if (!ctx || !path || !out) return TS_ERR_INVALID;
    reset_diag(ctx);
    memset(out, 0, sizeof *out);
    return ts_npy_read_tensor(&ctx->diag, path, out);
}

TsStatus ts_npy_save(TsContext *ctx, const char *path, const TsTensor *t) {
    if (!ctx || !path || !t) return TS_ERR_INVALID;
    reset_diag(ctx);
    return ts_npy_write_tensor(&ctx->diag, path, t);
}

size_t ts_abi_sizeof(const char *name) {
    if (!name) return 0;
    if (!strcmp(name, "TsTensor")) return sizeof(TsTensor);
    if (!strcmp(name, "TsDefine")) return sizeof(TsDefine);
    if (!strcmp(name, "TsCompileOptions")) return sizeof(TsCompileOptions);
    if (!strcmp(name, "TsParamInfo")) return sizeof(TsParamInfo);
    if (!strcmp(name, "TsEntryInfo")) return sizeof(TsEntryInfo);
    if (!strcmp(name, "TsEntryParam")) return sizeof(TsEntryParam);
    if (!strcmp(name, "TsCacheInfo")) return sizeof(TsCacheInfo);
    return 0;
}

int ts_target_available(TsTarget t) {
    if (t == TS_TARGET_C) return 1;
    if (t != TS_TARGET_CUDA) return 0;
    char arch[32];
    return ts_cuda_device_arch(arch, sizeof arch, NULL) && ts_nvrtc_available(NULL);
}
