/*
 * test_cuda_tier.c — the tiered CUDA build (driver/api.c, target/cuda/tier_cuda.c)
 * with NVRTC and no GPU.  Needs NVRTC (exits 77, reported as skipped, without it).
 *
 * What must hold, each in a fresh cache directory:
 *   - a large kernel (GEMM 128x256x128 on 256 threads: 256 mma.sync per warp,
 *     pass tier_plan) builds its quick tier and launches with it (tier QUICK),
 *     the full tier builds in the background; waiting swaps it in (FULL) and
 *     both cubins are in the cache, the quick one's source asking for NVRTC's
 *     fast-compile level and rolled gemm loops, the full one's not;
 *   - the next compile (as a second process would) finds the full tier in
 *     the cache and skips the quick one (FULL at once, no new file);
 *   - freeing the kernel while its worker still compiles neither crashes nor
 *     leaks (the ASan build checks) and the full cubin still lands in the cache;
 *   - a small kernel (GEMM 64x64x16, 8 mma.sync per warp) is not tiered by
 *     default, is with TS_TIERED_ON; TS_TIERED_OFF never; TS_TIERED_QUICK
 *     builds the quick tier alone; the C target ignores the option;
 *   - the worker's state machine: of several threads taking the finished
 *     build at once exactly one gets the module, the others nothing;
 *   - a prepared launch (TsPlan, the Python fast path) made on the quick
 *     tier launches the quick module while the full tier builds, and moves
 *     to the full module when launches find it done (several threads at
 *     once: each gets one of the two modules, the kernel swaps once, the
 *     plan stays on the full one); a plan of a kernel built in the quick
 *     tier alone stays on it.  No driver: the plan's choice of module
 *     (ts_cuda_plan_module, what ts_cuda_plan_launch launches) is checked
 *     on plans made without loading (ts_cuda_plan_new).
 */
#include "test.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "runtime/launch.h"
#include "target/cuda/cuda_target.h"
#include "tilescale.h"

static TsContext *ctx;

static const TsDefine big[] = {{"M", "256"},     {"N", "256"},       {"K", "384"},         {"block_M", "128"},
                               {"block_N", "256"}, {"block_K", "128"}, {"num_stages", "2"}, {"threads", "256"}};
static const TsDefine small[] = {{"M", "256"},     {"N", "256"},     {"K", "256"},         {"block_M", "64"},
                                 {"block_N", "64"}, {"block_K", "16"}, {"num_stages", "3"}, {"threads", "128"}};

/* Files in dir ending in `ext`; with `needle`, only those whose text contains it. */
static int count_files(const char *dir, const char *ext, const char *needle) {
    DIR *d = opendir(dir);
    int c = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name), m = strlen(ext);
        if (n < m || strcmp(e->d_name + n - m, ext) || strncmp(e->d_name, "tsk-", 4)) continue;
        if (needle) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            FILE *f = fopen(path, "rb");
            static char buf[1 << 20];
            size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
            if (f) fclose(f);
            buf[got] = 0;
            if (!strstr(buf, needle)) continue;
        }
        c++;
    }
    if (d) closedir(d);
    return c;
}

static void rm_rf(const char *dir) {
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    rmdir(dir);
}

static TsKernel *compile_entry(const char *dir, const char *file, const char *entry, const TsDefine *defs, int ndefs,
                               int tiered, TsTarget target) {
    TsCompileOptions o;
    memset(&o, 0, sizeof o);
    o.target = target;
    o.cache_dir = dir;
    o.tiered = tiered;
    o.timing = 1;
    TsKernel *k = NULL;
    TsStatus st = ts_compile_file(ctx, file, entry, defs, ndefs, &o, &k);
    if (st) fprintf(stderr, "%s", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, st);
    return k;
}

static TsKernel *compile(const char *dir, const TsDefine *defs, int ndefs, int tiered, TsTarget target) {
    return compile_entry(dir, "examples/gemm.py", "matmul", defs, ndefs, tiered, target);
}

static void new_dir(char *tmp, size_t n) {
    snprintf(tmp, n, "/tmp/ts-tier-XXXXXX");
    CHECK(mkdtemp(tmp) != NULL);
}

#define NBIG ((int)(sizeof big / sizeof big[0]))
#define NSMALL ((int)(sizeof small / sizeof small[0]))

static void test_quick_then_full(void) {
    char dir[64];
    new_dir(dir, sizeof dir);
    TsKernel *k = compile(dir, big, NBIG, TS_TIERED_AUTO, TS_TARGET_CUDA);
    if (!k) return;
    CHECK_EQ_INT(TS_TIER_QUICK, ts_kernel_tier(k));
    CHECK_CONTAINS(ts_kernel_timing(k), "quick tier codegen");
    /* the kernel's source is the full tier's (what --emit cuda shows) */
    CHECK(!strstr(ts_kernel_source(k), TS_CUDA_NVRTC_FAST));
    CHECK_EQ_INT(TS_OK, ts_kernel_wait_full(k));
    CHECK_EQ_INT(TS_TIER_FULL, ts_kernel_tier(k));
    CHECK_CONTAINS(ts_kernel_timing(k), "tier full");
    CHECK_EQ_INT(2, count_files(dir, ".cubin", NULL));
    CHECK_EQ_INT(1, count_files(dir, ".cu", TS_CUDA_NVRTC_FAST));
    CHECK_EQ_INT(1, count_files(dir, ".cu", "#pragma unroll 1\n    for (int k0 = 0; k0 < K; k0 += 16)"));
    CHECK_EQ_INT(1, count_files(dir, ".cu", "--Ofast-compile=min */"));
    ts_kernel_destroy(k);

    /* the next compile (another process alike: all it shares is the disk) takes the full tier */
    k = compile(dir, big, NBIG, TS_TIERED_AUTO, TS_TARGET_CUDA);
    if (k) {
        CHECK_EQ_INT(TS_TIER_FULL, ts_kernel_tier(k));
        CHECK(!strstr(ts_kernel_timing(k), "quick tier"));
        CHECK_CONTAINS(ts_kernel_timing(k), "cache hit");
        CHECK_EQ_INT(TS_OK, ts_kernel_wait_full(k));
        ts_kernel_destroy(k);
    }
    CHECK_EQ_INT(2, count_files(dir, ".cubin", NULL));
    rm_rf(dir);
}

static void test_free_while_building(void) {
    char dir[64];
    new_dir(dir, sizeof dir);
    TsKernel *k = compile(dir, big, NBIG, TS_TIERED_ON, TS_TARGET_CUDA);
    if (k) {
        CHECK_EQ_INT(TS_TIER_QUICK, ts_kernel_tier(k));
        ts_kernel_destroy(k); /* the worker is (almost surely) still in NVRTC */
    }
    /* the running compile was waited for: its cubin is there too */
    CHECK_EQ_INT(2, count_files(dir, ".cubin", NULL));
    rm_rf(dir);
}

static void test_options(void) {
    char dir[64];
    new_dir(dir, sizeof dir);
    /* small: not tiered by default */
    TsKernel *k = compile(dir, small, NSMALL, TS_TIERED_AUTO, TS_TARGET_CUDA);
    if (k) {
        CHECK_EQ_INT(TS_TIER_FULL, ts_kernel_tier(k));
        CHECK_EQ_INT(TS_OK, ts_kernel_wait_full(k));
        ts_kernel_destroy(k);
    }
    CHECK_EQ_INT(1, count_files(dir, ".cubin", NULL));
    rm_rf(dir);
    /* ... but with TS_TIERED_ON */
    new_dir(dir, sizeof dir);
    k = compile(dir, small, NSMALL, TS_TIERED_ON, TS_TARGET_CUDA);
    if (k) {
        CHECK_EQ_INT(TS_TIER_QUICK, ts_kernel_tier(k));
        CHECK_EQ_INT(TS_OK, ts_kernel_wait_full(k));
        CHECK_EQ_INT(TS_TIER_FULL, ts_kernel_tier(k));
        ts_kernel_destroy(k);
    }
    CHECK_EQ_INT(2, count_files(dir, ".cubin", NULL));
    rm_rf(dir);
    /* large, TS_TIERED_OFF: one build */
    new_dir(dir, sizeof dir);
    k = compile(dir, big, NBIG, TS_TIERED_OFF, TS_TARGET_CUDA);
    if (k) {
        CHECK_EQ_INT(TS_TIER_FULL, ts_kernel_tier(k));
        ts_kernel_destroy(k);
    }
    CHECK_EQ_INT(1, count_files(dir, ".cubin", NULL));
    CHECK_EQ_INT(0, count_files(dir, ".cu", TS_CUDA_NVRTC_FAST));
    rm_rf(dir);
    /* TS_TIERED_QUICK: the quick tier alone, and it is the kernel's source */
    new_dir(dir, sizeof dir);
    k = compile(dir, big, NBIG, TS_TIERED_QUICK, TS_TARGET_CUDA);
    if (k) {
        CHECK_EQ_INT(TS_TIER_QUICK_ONLY, ts_kernel_tier(k));
        CHECK_CONTAINS(ts_kernel_source(k), TS_CUDA_NVRTC_FAST);
        CHECK_CONTAINS(ts_kernel_ir(k), "quick_tier gemm_k_rolled nvrtc_fast_compile min");
        CHECK_EQ_INT(TS_ERR_UNSUPPORTED, ts_kernel_wait_full(k));
        ts_kernel_destroy(k);
    }
    CHECK_EQ_INT(1, count_files(dir, ".cubin", NULL));
    CHECK_EQ_INT(1, count_files(dir, ".cu", TS_CUDA_NVRTC_FAST));
    rm_rf(dir);
    /* the C target has one build whatever the option says */
    new_dir(dir, sizeof dir);
    k = compile(dir, small, NSMALL, TS_TIERED_ON, TS_TARGET_C);
    if (k) {
        CHECK_EQ_INT(TS_TIER_FULL, ts_kernel_tier(k));
        CHECK(!strstr(ts_kernel_ir(k), "quick_tier"));
        CHECK_EQ_INT(TS_OK, ts_kernel_wait_full(k));
        ts_kernel_destroy(k);
    }
    rm_rf(dir);
}

/* The quick tier of GEMM with 128x256 tiles and of FlashAttention D128 builds
 * with NVRTC for sm_80 and sm_90 (GEMM's K tile 64 on sm_80: 128 does not fit
 * its shared memory). */
static void test_archs(void) {
    static const TsDefine fa[] = {{"batch", "1"},     {"heads", "2"},       {"seq_len", "256"},   {"dim", "128"},
                                  {"is_causal", "True"}, {"block_M", "128"}, {"block_N", "128"}, {"num_stages", "2"},
                                  {"threads", "256"}};
    static const TsDefine g80[] = {{"M", "256"},     {"N", "256"},      {"K", "256"},         {"block_M", "128"},
                                   {"block_N", "256"}, {"block_K", "64"}, {"num_stages", "2"}, {"threads", "256"}};
    const char *archs[] = {"sm_80", "sm_90"};
    for (int a = 0; a < 2; a++) {
        char dir[64];
        new_dir(dir, sizeof dir);
        setenv("TILESCALE_CUDA_ARCH", archs[a], 1);
        TsKernel *k = compile_entry(dir, "examples/flash_attention.py", "flashattn", fa, (int)(sizeof fa / sizeof fa[0]),
                                    TS_TIERED_QUICK, TS_TARGET_CUDA);
        if (k) {
            CHECK_CONTAINS(ts_kernel_source(k), "#pragma unroll 1\n    for (int k0 = 0; k0 < K; k0 += 16)");
            ts_kernel_destroy(k);
        }
        k = a ? compile(dir, big, NBIG, TS_TIERED_QUICK, TS_TARGET_CUDA)
              : compile(dir, g80, (int)(sizeof g80 / sizeof g80[0]), TS_TIERED_QUICK, TS_TARGET_CUDA);
        if (k) {
            CHECK_CONTAINS(ts_kernel_source(k), TS_CUDA_NVRTC_FAST);
            ts_kernel_destroy(k);
        }
        CHECK_EQ_INT(2, count_files(dir, ".cubin", NULL));
        rm_rf(dir);
    }
    setenv("TILESCALE_CUDA_ARCH", "sm_90", 1);
}

/* ---- the worker's state machine, several takers at once ---- */

typedef struct Taker {
    TsCudaTier *t;    /* the build */
    TsModuleCuda *m;  /* what this thread got */
} Taker;

static void *take(void *arg) {
    Taker *tk = arg;
    TsDiag d;
    memset(&d, 0, sizeof d);
    tk->m = ts_cuda_tier_take(tk->t, 1, &d, NULL);
    ts_buf_free(&d.msg);
    ts_buf_free(&d.warn);
    return NULL;
}

static void test_takers(void) {
    char dir[64];
    new_dir(dir, sizeof dir);
    TsCompileOptions o;
    memset(&o, 0, sizeof o);
    o.target = TS_TARGET_CUDA;
    o.skip_build = 1;
    TsKernel *k = NULL;
    CHECK_EQ_INT(TS_OK, ts_compile_file(ctx, "examples/gemm.py", "matmul", small, NSMALL, &o, &k));
    if (!k) return;
    TsCudaCodeInfo ci;
    memset(&ci, 0, sizeof ci);
    ci.smem_bytes = ts_kernel_shared_bytes(k) > 0 ? ts_kernel_shared_bytes(k) : 0;
    ci.threads = 128;
    TsDiag d;
    memset(&d, 0, sizeof d);
    TsCudaTier *t = ts_cuda_tier_start(&d, "matmul", &ci, "sm_90", ts_kernel_source(k), dir);
    CHECK(t != NULL);
    if (t) {
        Taker tk[4];
        pthread_t th[4];
        for (int i = 0; i < 4; i++) {
            tk[i].t = t;
            tk[i].m = NULL;
            CHECK_EQ_INT(0, pthread_create(&th[i], NULL, take, &tk[i]));
        }
        int got = 0;
        for (int i = 0; i < 4; i++) {
            pthread_join(th[i], NULL);
            if (tk[i].m) {
                got++;
                CHECK(tk[i].m->image_size > 0);
                CHECK_EQ_STR("sm_90", tk[i].m->arch);
                ts_cuda_module_free(tk[i].m);
            }
        }
        CHECK_EQ_INT(1, got);
        CHECK_EQ_INT(TS_CUDA_TIER_TAKEN, ts_cuda_tier_state(t));
        ts_cuda_tier_free(t);
    }
    /* a build that fails reports it, and nothing is taken */
    t = ts_cuda_tier_start(&d, "broken", &ci, "sm_90", "this is not CUDA\n", dir);
    CHECK(t != NULL);
    if (t) {
        TsDiag e;
        memset(&e, 0, sizeof e);
        CHECK(ts_cuda_tier_take(t, 1, &e, NULL) == NULL);
        CHECK_EQ_INT(TS_CUDA_TIER_FAILED, ts_cuda_tier_state(t));
        CHECK(strlen(ts_cuda_tier_error(t)) > 0);
        CHECK(e.msg.s && strlen(e.msg.s) > 0);
        ts_buf_free(&e.msg);
        ts_cuda_tier_free(t);
    }
    ts_buf_free(&d.msg);
    ts_kernel_destroy(k);
    rm_rf(dir);
}

/* ---- prepared launches of a tiered kernel ---- */

/* A plan of k on module m as ts_cuda_plan_device makes it, without loading
 * m (made-up addresses and extents: nothing is launched). */
static TsPlan *plan_on(TsKernel *k, TsModuleCuda *m) {
    enum { MAXP = 8 };
    static const int64_t ext[8] = {256, 256, 256, 256, 256, 256, 256, 256};
    void *data[MAXP];
    const int64_t *shape[MAXP], *strides[MAXP];
    int np = k->ir->params.n;
    CHECK(np <= MAXP);
    if (np > MAXP) return NULL;
    for (int p = 0; p < np; p++) {
        data[p] = (void *)(uintptr_t)(0x10000u * (unsigned)(p + 1));
        shape[p] = ext;
        strides[p] = ext;
    }
    int64_t vars[8] = {0};
    TsLaunchArgs a;
    memset(&a, 0, sizeof a);
    a.nparams = np;
    a.data = data;
    a.shape = shape;
    a.strides = strides;
    a.shape_vars = vars;
    a.nshape_vars = k->ir->shape_vars.n < 8 ? k->ir->shape_vars.n : 8;
    a.grid[0] = 2, a.grid[1] = 1, a.grid[2] = 1;
    TsDiag d;
    memset(&d, 0, sizeof d);
    TsPlan *pl = NULL;
    CHECK_EQ_INT(TS_OK, ts_cuda_plan_new(&d, m, k->ir, &a, &pl));
    ts_buf_free(&d.msg);
    ts_buf_free(&d.warn);
    if (pl) {
        CHECK(ts_plan_pointers(pl)[0] == 0x10000u);
        /* ts_plan_launch_packed's parameter array: the data entries point at the
         * caller's addresses, everything else at the plan's values */
        uint64_t addr[MAXP];
        void *kp[64];
        for (int p = 0; p < np; p++) addr[p] = 0xabc000u + (unsigned)p;
        CHECK_EQ_INT(np, ts_cuda_plan_nparams(pl));
        int nk = ts_cuda_plan_params(pl, addr, kp), seen = 0, plan_vals = 0;
        CHECK(nk <= 64);
        for (int i = 0; i < nk && nk <= 64; i++) {
            uintptr_t q = (uintptr_t)kp[i];
            if (q >= (uintptr_t)addr && q < (uintptr_t)(addr + np)) {
                CHECK(*(uint64_t *)kp[i] == 0xabc000u + (unsigned)seen); /* in parameter order */
                seen++;
            } else {
                /* (int32 or int64 values, 4-byte aligned: the low word, little-endian) */
                int32_t v;
                memcpy(&v, kp[i], sizeof v);
                plan_vals += v == 256;
            }
        }
        CHECK_EQ_INT(np, seen);
        CHECK(plan_vals >= np); /* extents and strides: still the plan's */
        CHECK(ts_plan_pointers(pl)[0] == 0x10000u); /* the plan's own slots untouched */
        ts_kernel_plan_tiered(k, pl); /* the tail of ts_kernel_prepare_device */
    }
    return pl;
}

typedef struct Launcher {
    TsPlan *pl;      /* the plan */
    TsModuleCuda *m[8]; /* the module each of 8 launches chose */
} Launcher;

static void *launches(void *arg) {
    Launcher *l = arg;
    for (int i = 0; i < 8; i++) l->m[i] = ts_cuda_plan_module(l->pl);
    return NULL;
}

static void test_plan(void) {
    char dir[64];
    new_dir(dir, sizeof dir);
    TsKernel *k = compile(dir, big, NBIG, TS_TIERED_ON, TS_TARGET_CUDA);
    if (!k) return;
    CHECK_EQ_INT(TS_TIER_QUICK, ts_kernel_tier(k));
    TsModuleCuda *quick = k->cumod;
    TsPlan *pl = plan_on(k, quick), *pl2 = plan_on(k, quick);
    if (!pl || !pl2) {
        ts_kernel_destroy(k);
        return;
    }
    /* while the worker compiles (NVRTC: ~100 ms at least), a launch runs the quick tier */
    TsModuleCuda *now = ts_cuda_plan_module(pl);
    if (ts_cuda_tier_state(k->tier) == TS_CUDA_TIER_RUNNING) {
        CHECK(now == quick);
        CHECK_EQ_INT(TS_TIER_QUICK, ts_kernel_tier(k));
    }
    /* the build done, not yet taken: launches on 4 threads take it (one of them) */
    CHECK_EQ_INT(TS_CUDA_TIER_READY, ts_cuda_tier_wait(k->tier));
    Launcher l[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        l[i].pl = i % 2 ? pl2 : pl;
        CHECK_EQ_INT(0, pthread_create(&th[i], NULL, launches, &l[i]));
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    CHECK_EQ_INT(TS_TIER_FULL, ts_kernel_tier(k));
    CHECK_EQ_INT(TS_CUDA_TIER_TAKEN, ts_cuda_tier_state(k->tier));
    TsModuleCuda *full = k->cumod;
    CHECK(full != quick);
    CHECK(k->cumod_quick == quick);
    /* each launch ran one of the two; a plan never goes back; the first launch
     * of all took the finished build, so it ran the full tier */
    int nfull = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++) {
            CHECK(l[i].m[j] == quick || l[i].m[j] == full);
            if (j && l[i].m[j - 1] == full) CHECK(l[i].m[j] == full);
            nfull += l[i].m[j] == full;
        }
    CHECK(nfull > 0);
    CHECK(ts_cuda_plan_module(pl) == full);
    CHECK(ts_cuda_plan_module(pl2) == full);
    /* a plan prepared now is bound to the full tier */
    TsPlan *pl3 = plan_on(k, full);
    if (pl3) CHECK(ts_cuda_plan_module(pl3) == full);
    CHECK_EQ_INT(TS_OK, ts_kernel_wait_full(k));
    ts_kernel_destroy(k); /* frees the plans (owned by the modules) */

    /* the quick tier alone: the plan stays on it */
    k = compile(dir, big, NBIG, TS_TIERED_QUICK, TS_TARGET_CUDA);
    if (k) {
        CHECK_EQ_INT(TS_TIER_QUICK_ONLY, ts_kernel_tier(k));
        TsPlan *p = plan_on(k, k->cumod);
        if (p) CHECK(ts_cuda_plan_module(p) == k->cumod);
        ts_kernel_destroy(k);
    }
    rm_rf(dir);
}

int main(void) {
    TsBuf why = {0};
    if (!ts_nvrtc_available(&why)) {
        printf("skipped: %s\n", ts_buf_str(&why));
        ts_buf_free(&why);
        return 77;
    }
    ts_buf_free(&why);
    /* shared memory of a 128x256x128 double-buffered tile needs sm_90's limit,
     * whatever the machine's GPU; the tiering decision is the library's own */
    setenv("TILESCALE_CUDA_ARCH", "sm_90", 1);
    unsetenv("TILESCALE_TIERED");
    CHECK_EQ_INT(TS_OK, ts_context_create(&ctx));
    test_quick_then_full();
    test_free_while_building();
    test_options();
    test_archs();
    test_takers();
    test_plan();
    ts_context_destroy(ctx);
    return test_done();
}
