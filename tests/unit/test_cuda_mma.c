/*
 * test_cuda_mma.c — the CUDA target's tensor-core T.gemm, without a GPU.
 *
 * 1. Which gemms take the tensor-core path: kernels are compiled for the
 *    CUDA target without building (no NVRTC needed) and the generated
 *    source is searched for the gemm function's call; ineligible ones
 *    (fp32 or int8 inputs, C not float32, M not a multiple of 16, N of 8,
 *    K of 16, threads not whole warps, C in local memory) must fall back
 *    to the generic loops, and TILESCALE_CUDA_MMA=0 turns the path off.
 * 2. The warp split (ts_cuda_mma_plan) covers C exactly and stays within
 *    the register budget.
 * 3. The generated gemm functions compute the right thing: each one
 *    (ts_cuda_mma_emit: 4 transpose combinations, float16 and bfloat16,
 *    clear_accum, several shapes and warp counts, aligned strides that
 *    take ldmatrix and padded ones that take 16-bit loads, odd numbers of
 *    n8 tiles) is compiled on the host with the system C compiler,
 *    together with a model of one warp: 32 POSIX threads in lock step at
 *    each ldmatrix and mma.sync, whose behaviour is written here from the
 *    PTX ISA's description (fragment layouts of mma.m16n8k16 with
 *    floating-point types; ldmatrix's row addresses, its .trans, and its
 *    16-byte alignment rule, checked).  The result is compared with a
 *    naive triple loop on fresh random data.  Inputs are small integers,
 *    exactly representable in both half formats, so the comparison is
 *    exact.  The same file is also built with TS_HAS_MMA=0, the path of
 *    GPUs older than sm_80.
 * 4. The register-mode functions (ts_cuda_mma_emit_reg, what layout
 *    inference uses for every fragment accumulator) against the same
 *    model: C, and A with `areg`, are each thread's registers, placed and
 *    read back through ir_layout_forward's MMA_C map; A and B sit in one
 *    NaN-filled shared-memory arena (32-bit shared addresses are offsets
 *    into it, checked in range and 16-byte aligned), XOR-swizzled with
 *    every valid shift, at stage offsets inside the swizzle's period and
 *    outside it; all warps of the wm x wn grid run, and register guard
 *    words must survive.  Shapes: 128x128x32 on 2x2 warps (all transpose
 *    pairs), 128x256x64 on 2x4, 64x64x64 FullRow 4x1 with A in registers,
 *    single-tile 16x8x16, odd n8 counts (ldmatrix .x2), rows that are not
 *    16-byte aligned (16-bit loads); TS_HAS_MMA=0 for all but register A
 *    (which traps there).  Deliberately planted emitter bugs (swizzle
 *    shift off by one, the .x2 k half, the stage offset added twice, the
 *    register-A k step, the warp grid's order) each fail several cases.
 *    TS_TEST_VERBOSE=1 lists every case.
 * The model checks the generator against our reading of the ISA; the GPU
 * run (bench/gpu_check.sh, test_cuda_nvrtc) checks that reading.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir/layout.h"
#include "target/cuda/cuda_target.h"
#include "test.h"
#include "tilescale.h"

#define PRE "import tilelang\nimport tilelang.language as T\n\n"

/* ---- 1. eligibility ------------------------------------------------------------------------ */

static const char *SRC_GEMM = PRE
    "def gm(M, N, K, bm, bn, bk, ta, tb, dtype, cdtype, threads, cscope, clear):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((K, M) if ta else (M, K), dtype), B: T.Tensor((N, K) if tb else (K, N), dtype),\n"
    "             C: T.Tensor((M, N), cdtype)):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):\n"
    "            As = T.alloc_shared((bk, bm) if ta else (bm, bk), dtype)\n"
    "            Bs = T.alloc_shared((bn, bk) if tb else (bk, bn), dtype)\n"
    "            if cscope == 'local':\n"
    "                Cf = T.alloc_local((bm, bn), cdtype)\n"
    "            else:\n"
    "                Cf = T.alloc_fragment((bm, bn), cdtype)\n"
    "            T.clear(Cf)\n"
    "            for k in T.serial(T.ceildiv(K, bk)):\n"
    "                if ta:\n"
    "                    T.copy(A[k * bk, by * bm], As)\n"
    "                else:\n"
    "                    T.copy(A[by * bm, k * bk], As)\n"
    "                if tb:\n"
    "                    T.copy(B[bx * bn, k * bk], Bs)\n"
    "                else:\n"
    "                    T.copy(B[k * bk, bx * bn], Bs)\n"
    "                T.gemm(As, Bs, Cf, transpose_A=ta, transpose_B=tb, clear_accum=clear)\n"
    "            T.copy(Cf, C[by * bm, bx * bn])\n"
    "    return main\n";

static TsContext *ctx;

/* Generated CUDA source of gm(...) for the given -D values, or NULL. */
static char *cuda_source(const char *defs) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", defs);
    TsDefine d[16];
    int n = 0;
    for (char *tok = strtok(buf, " "); tok && n < 16; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        if (!eq) continue;
        *eq = 0;
        d[n].name = tok;
        d[n].value = eq + 1;
        n++;
    }
    TsCompileOptions o = {0};
    o.target = TS_TARGET_CUDA;
    o.skip_build = 1;
    TsKernel *k = NULL;
    TsStatus st = ts_compile_source(ctx, "gm.py", SRC_GEMM, "gm", d, n, &o, &k);
    if (st) fprintf(stderr, "%s: %s", defs, ts_last_error(ctx));
    char *src = st ? NULL : strdup(ts_kernel_source(k));
    ts_kernel_destroy(k);
    return src;
}

#define BASE "M=128 N=128 K=64 bm=64 bn=64 bk=32 ta=False tb=False clear=False cscope=fragment "

static void test_eligibility(void) {
    static const struct {
        const char *defs;
        int mma; /* 1: the tensor-core call is expected */
    } cases[] = {
        {BASE "dtype=float16 cdtype=float32 threads=128", 1},
        {BASE "dtype=bfloat16 cdtype=float32 threads=128", 1},
        {BASE "dtype=float16 cdtype=float32 threads=256", 1},
        {BASE "dtype=float16 cdtype=float32 threads=32", 1},
        {"M=64 N=64 K=64 bm=16 bn=8 bk=16 ta=True tb=True clear=True cscope=fragment dtype=float16 "
         "cdtype=float32 threads=64", 1},
        {BASE "dtype=float32 cdtype=float32 threads=128", 0},  /* fp32 inputs */
        {BASE "dtype=int8 cdtype=int32 threads=128", 0},       /* integer */
        {BASE "dtype=float16 cdtype=float16 threads=128", 0},  /* C not fp32 */
        {BASE "dtype=float16 cdtype=float32 threads=96", 1},   /* 3 whole warps */
        {BASE "dtype=float16 cdtype=float32 threads=100", 0},  /* not whole warps */
        {"M=128 N=128 K=64 bm=24 bn=64 bk=32 ta=False tb=False clear=False cscope=fragment dtype=float16 "
         "cdtype=float32 threads=128", 0},                      /* M % 16 */
        {"M=128 N=128 K=64 bm=64 bn=60 bk=32 ta=False tb=False clear=False cscope=fragment dtype=float16 "
         "cdtype=float32 threads=128", 0},                      /* N % 8 */
        {"M=128 N=128 K=64 bm=64 bn=64 bk=24 ta=False tb=False clear=False cscope=fragment dtype=float16 "
         "cdtype=float32 threads=128", 0},                      /* K % 16 */
        {"M=64 N=64 K=64 bm=16 bn=16 bk=16 ta=False tb=False clear=False cscope=local dtype=float16 "
         "cdtype=float32 threads=32", 0},                       /* C local */
    };
    for (int i = 0; i < TS_COUNTOF(cases); i++) {
        char *src = cuda_source(cases[i].defs);
        CHECK(src != NULL);
        if (!src) continue;
        int has = strstr(src, "ts_gemm_0(") != NULL && strstr(src, "mma.sync.aligned.m16n8k16") != NULL;
        if (has != cases[i].mma) fprintf(stderr, "%s: tensor-core call %s\n", cases[i].defs, has ? "present" : "absent");
        CHECK_EQ_INT(cases[i].mma, has);
        /* fragment accumulators live in registers (layout inference), shared ones are loaded per call */
        const char *want = strstr(cases[i].defs, "bfloat16") ? "ts_mma_bf16(" : "ts_mma_f16(";
        if (cases[i].mma) CHECK_CONTAINS(src, want);
        if (cases[i].mma && strstr(cases[i].defs, "cscope=fragment"))
            CHECK_CONTAINS(src, "float *C, int tid) {"); /* the register-mode signature */
        free(src);
    }
    /* the switch */
    setenv("TILESCALE_CUDA_MMA", "0", 1);
    char *src = cuda_source(BASE "dtype=float16 cdtype=float32 threads=128");
    unsetenv("TILESCALE_CUDA_MMA");
    CHECK(src && !strstr(src, "ts_gemm_0("));
    free(src);
    /* the examples: both gemms of FlashAttention and the GEMM example take it */
    TsCompileOptions o = {0};
    o.target = TS_TARGET_CUDA;
    o.skip_build = 1;
    TsKernel *k = NULL;
    TsDefine fd[5] = {{"batch", "1"}, {"heads", "2"}, {"seq_len", "128"}, {"dim", "64"}, {"is_causal", "False"}};
    TsStatus st = ts_compile_file(ctx, "examples/flash_attention.py", "flashattn", fd, 5, &o, &k);
    CHECK_EQ_INT(TS_OK, st);
    if (k) {
        CHECK_CONTAINS(ts_kernel_source(k), "ts_gemm_0(");
        CHECK_CONTAINS(ts_kernel_source(k), "ts_gemm_1(");
        CHECK_CONTAINS(ts_kernel_source(k), "C[64 x 64] += A * B^T over K = 64"); /* Q K^T */
        CHECK_CONTAINS(ts_kernel_source(k), "C[64 x 64] += A(registers) * B over K = 64"); /* P V, P in registers */
        CHECK_CONTAINS(ts_kernel_source(k), "warps 4 x 1, registers");                  /* FullRow */
    }
    ts_kernel_destroy(k);
}

/* ---- 2. the plan -------------------------------------------------------------------------- */

static void test_plan(void) {
    int bad = 0;
    for (int m = 16; m <= 256; m += 16)
        for (int n = 8; n <= 256; n += 8)
            for (int w = 1; w <= 32; w *= 2) {
                TsCudaMma p;
                memset(&p, 0, sizeof p);
                p.m = m;
                p.n = n;
                p.nwarps = w;
                ts_cuda_mma_plan(&p);
                int ok = p.cm >= 16 && p.cn >= 8 && p.cm % 16 == 0 && p.cn % 8 == 0 && m % p.cm == 0 &&
                         n % p.cn == 0 && (p.cm / 16) * (p.cn / 8) <= 32;
                if (!ok && bad++ < 5) fprintf(stderr, "plan %dx%d on %d warps: %dx%d\n", m, n, w, p.cm, p.cn);
            }
    CHECK_EQ_INT(0, bad);
    TsCudaMma p = {0};
    p.m = p.n = 128;
    p.nwarps = 4;
    ts_cuda_mma_plan(&p);
    CHECK(p.cm == 64 && p.cn == 64); /* the GEMM example: one 64x64 quarter per warp */
    p.m = p.n = 64;
    ts_cuda_mma_plan(&p);
    CHECK(p.cm == 32 && p.cn == 32); /* FlashAttention's 64x64 scores */
}

/* ---- 3. the functions, against a model of one warp ---------------------------------------- */

/* The host side: types and conversions of the CUDA prelude, and the warp
 * model standing in for the PTX wrappers. */
static const char *HARNESS =
    "#include <pthread.h>\n"
    "#include <stdint.h>\n"
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include <string.h>\n"
    "#include <math.h>\n"
    "typedef unsigned short ts_u16;\n"
    "typedef unsigned int ts_u32;\n"
    "typedef struct { float x, y; } ts_f2;\n"
    "#define TS_DEV static inline\n"
    "static float ts_h2f(ts_u16 h) {\n"
    "    int e = (h >> 10) & 31, m = h & 1023;\n"
    "    float f = e ? ldexpf((float)(m + 1024), e - 25) : ldexpf((float)m, -24);\n"
    "    return (h & 0x8000) ? -f : f;\n"
    "}\n"
    "static float ts_bf2f(ts_u16 h) { ts_u32 u = (ts_u32)h << 16; float f; memcpy(&f, &u, 4); return f; }\n"
    "static ts_u32 ts_pack2(ts_u16 lo, ts_u16 hi) { return (ts_u32)lo | ((ts_u32)hi << 16); }\n"
    "/* one warp: 32 threads, in lock step at every warp-wide instruction */\n"
    "static pthread_barrier_t bar;\n"
    "static _Thread_local int lane;\n"
    "static int bf16, errors;\n"
    "static const ts_u16 *addr[32];\n"
    "static ts_u32 fa[32][4], fb[32][2];\n"
    "static float fc[32][4];\n"
    "static float val(ts_u16 h) { return bf16 ? ts_bf2f(h) : ts_h2f(h); }\n"
    "static void sync(void) { pthread_barrier_wait(&bar); }\n"
    "static void err(void) { __atomic_fetch_add(&errors, 1, __ATOMIC_RELAXED); } /* lanes report concurrently */\n"
    "/* register mode: shared memory is one arena; a 32-bit shared address is\n"
    " * the byte offset from its start (cvta.to.shared) */\n"
    "static char *smem;\n"
    "static size_t smem_size;\n"
    "static int in_smem(const void *p) { /* a 16-byte row inside the arena (always, without one) */\n"
    "    return !smem || ((const char *)p >= smem && (const char *)p + 16 <= smem + smem_size);\n"
    "}\n"
    "static ts_u32 ts_smem_u32(const void *p) {\n"
    "    if (!smem || (const char *)p < smem || (const char *)p > smem + smem_size) err();\n"
    "    return (ts_u32)((const char *)p - smem);\n"
    "}\n"
    "/* ldmatrix: lanes 8j..8j+7 give matrix j's rows; register j of lane l gets row l/4,\n"
    " * columns 2(l%4) and 2(l%4)+1 of matrix j (of its transpose with .trans) */\n"
    "static void ldsm(ts_u32 *r, const ts_u16 *p, int nmat, int trans) {\n"
    "    addr[lane] = p;\n"
    "    sync();\n"
    "    for (int j = 0; j < nmat; j++) {\n"
    "        if ((uintptr_t)addr[8 * j + lane / 4] % 16) err();\n"
    "        if (!in_smem(addr[8 * j + lane / 4])) { err(); r[j] = 0; continue; }\n"
    "        ts_u16 lo, hi;\n"
    "        if (!trans) {\n"
    "            lo = addr[8 * j + lane / 4][2 * (lane % 4)];\n"
    "            hi = addr[8 * j + lane / 4][2 * (lane % 4) + 1];\n"
    "        } else {\n"
    "            lo = addr[8 * j + 2 * (lane % 4)][lane / 4];\n"
    "            hi = addr[8 * j + 2 * (lane % 4) + 1][lane / 4];\n"
    "        }\n"
    "        r[j] = ts_pack2(lo, hi);\n"
    "    }\n"
    "    sync();\n"
    "}\n"
    "static void ts_ldsm_x4(ts_u32 *r, const ts_u16 *p) { ldsm(r, p, 4, 0); }\n"
    "static void ts_ldsm_x4_t(ts_u32 *r, const ts_u16 *p) { ldsm(r, p, 4, 1); }\n"
    "static void ts_ldsm_x2(ts_u32 *r, const ts_u16 *p) { ldsm(r, p, 2, 0); }\n"
    "static void ts_ldsm_x2_t(ts_u32 *r, const ts_u16 *p) { ldsm(r, p, 2, 1); }\n"
    "static void ts_ldsm_x4_u(ts_u32 *r, ts_u32 a) { ldsm(r, (const ts_u16 *)(smem + a), 4, 0); }\n"
    "static void ts_ldsm_x4_tu(ts_u32 *r, ts_u32 a) { ldsm(r, (const ts_u16 *)(smem + a), 4, 1); }\n"
    "static void ts_ldsm_x2_u(ts_u32 *r, ts_u32 a) { ldsm(r, (const ts_u16 *)(smem + a), 2, 0); }\n"
    "static void ts_ldsm_x2_tu(ts_u32 *r, ts_u32 a) { ldsm(r, (const ts_u16 *)(smem + a), 2, 1); }\n"
    "/* mma.m16n8k16, fp32 accumulate: element i of a thread's fragment is at\n"
    " *   A: row groupID (+8 for i in 2,3,6,7), col threadID_in_group*2 + (i&1) (+8 for i >= 4)\n"
    " *   B: row threadID_in_group*2 + (i&1) (+8 for i >= 2), col groupID\n"
    " *   C: row groupID (+8 for i >= 2), col threadID_in_group*2 + (i&1)\n"
    " * element i of A/B is half (i&1) of register i/2, low half first */\n"
    "static void mma(float *d, const ts_u32 *a, const ts_u32 *b) {\n"
    "    memcpy(fa[lane], a, sizeof fa[0]);\n"
    "    memcpy(fb[lane], b, sizeof fb[0]);\n"
    "    memcpy(fc[lane], d, sizeof fc[0]);\n"
    "    sync();\n"
    "    float A[16][16], B[16][8], C[16][8];\n"
    "    for (int l = 0; l < 32; l++) {\n"
    "        int gid = l >> 2, tig = l % 4;\n"
    "        for (int i = 0; i < 8; i++) {\n"
    "            ts_u16 h = (ts_u16)(fa[l][i / 2] >> (16 * (i & 1)));\n"
    "            A[gid + ((i == 2 || i == 3 || i == 6 || i == 7) ? 8 : 0)][tig * 2 + (i & 1) + (i >= 4 ? 8 : 0)] = val(h);\n"
    "        }\n"
    "        for (int i = 0; i < 4; i++) {\n"
    "            ts_u16 h = (ts_u16)(fb[l][i / 2] >> (16 * (i & 1)));\n"
    "            B[tig * 2 + (i & 1) + (i >= 2 ? 8 : 0)][gid] = val(h);\n"
    "            C[gid + (i >= 2 ? 8 : 0)][tig * 2 + (i & 1)] = fc[l][i];\n"
    "        }\n"
    "    }\n"
    "    for (int i = 0; i < 4; i++) {\n"
    "        int row = (lane >> 2) + (i >= 2 ? 8 : 0), col = (lane % 4) * 2 + (i & 1);\n"
    "        double s = C[row][col];\n"
    "        for (int k = 0; k < 16; k++) s += (double)A[row][k] * B[k][col];\n"
    "        d[i] = (float)s;\n"
    "    }\n"
    "    sync();\n"
    "}\n"
    "static void ts_mma_f16(float *d, const ts_u32 *a, const ts_u32 *b) { mma(d, a, b); }\n"
    "static void ts_mma_bf16(float *d, const ts_u32 *a, const ts_u32 *b) { mma(d, a, b); }\n";

/* One configuration of the gemm function. */
typedef struct Cfg {
    int m, n, k, ta, tb, bf16, clear, nwarps;
    int pad_a, pad_b, pad_c; /* extra elements per stored row */
    int cn;                  /* > 0: force this sub-tile width (odd n8 counts) */
} Cfg;

static TsCudaMma make(const Cfg *c) {
    TsCudaMma p;
    memset(&p, 0, sizeof p);
    p.m = c->m;
    p.n = c->n;
    p.k = c->k;
    p.trans_a = c->ta;
    p.trans_b = c->tb;
    p.bf16 = c->bf16;
    p.clear = c->clear;
    p.nwarps = c->nwarps;
    p.lda = (c->ta ? c->m : c->k) + c->pad_a;
    p.ldb = (c->tb ? c->k : c->n) + c->pad_b;
    p.ldc = c->n + c->pad_c;
    p.ldsm_a = p.lda % 8 == 0;
    p.ldsm_b = p.ldb % 8 == 0;
    p.c2 = p.ldc % 2 == 0;
    ts_cuda_mma_plan(&p);
    if (c->cn > 0) {
        p.cn = c->cn;
        p.cm = 16;
    }
    return p;
}

static char tmpdir[256];

/* Write f's program to tmpdir/<tag><has>.c, build it with TS_HAS_MMA=has,
 * run it, and check that it printed one "ok" line for each of its n
 * configurations (other lines are shown). */
static void build_and_run(TsBuf *f, const char *tag, int has, int n) {
    char src[400], exe[400], cmd[1400];
    snprintf(src, sizeof src, "%s/%s%d.c", tmpdir, tag, has);
    snprintf(exe, sizeof exe, "%s/%s%d", tmpdir, tag, has);
    FILE *fp = fopen(src, "w");
    CHECK(fp != NULL);
    if (!fp) {
        ts_buf_free(f);
        return;
    }
    fputs(ts_buf_str(f), fp);
    fclose(fp);
    ts_buf_free(f);
    const char *cc = getenv("CC");
    snprintf(cmd, sizeof cmd, "%s -std=gnu11 -O1 -w -DTS_HAS_MMA=%d -o %s %s -lm -pthread", cc && *cc ? cc : "cc", has,
             exe, src);
    int rc = system(cmd);
    if (rc) fprintf(stderr, "model build failed (%d): %s\n", rc, cmd);
    CHECK_EQ_INT(0, rc);
    if (rc) return;
    snprintf(cmd, sizeof cmd, "%s > %s.out 2>&1", exe, exe);
    rc = system(cmd);
    snprintf(cmd, sizeof cmd, "%s.out", exe);
    fp = fopen(cmd, "r");
    int lines = 0, oks = 0;
    char line[400];
    while (fp && fgets(line, sizeof line, fp)) {
        lines++;
        if (!strncmp(line, "ok ", 3)) oks++;
        if (strncmp(line, "ok ", 3) || getenv("TS_TEST_VERBOSE"))
            fprintf(stderr, "  %s (TS_HAS_MMA=%d): %s", tag, has, line);
    }
    if (fp) fclose(fp);
    printf("  warp model (%s), TS_HAS_MMA=%d: %d of %d configurations exact\n", tag, has, oks, n);
    CHECK_EQ_INT(0, rc);
    CHECK_EQ_INT(n, oks);
    CHECK_EQ_INT(n, lines);
}

/* Write the harness, every function and a driver; build with TS_HAS_MMA=has; run. */
static void run_model(const Cfg *cfgs, int n, int has, uint64_t seed) {
    TsBuf f = {0};
    ts_buf_puts(&f, HARNESS);
    for (int i = 0; i < n; i++) {
        TsCudaMma p = make(&cfgs[i]);
        char name[32];
        snprintf(name, sizeof name, "gemm_%d", i);
        ts_cuda_mma_emit(&f, name, &p);
    }
    ts_buf_puts(&f, "typedef void (*Fn)(const ts_u16 *, const ts_u16 *, float *, int);\n"
                    "typedef struct { int m, n, k, lda, ldb, ldc, ta, tb, bf16, clear, nwarps; Fn fn; } Cfg;\n"
                    "static const Cfg cfgs[] = {\n");
    for (int i = 0; i < n; i++) {
        TsCudaMma p = make(&cfgs[i]);
        ts_buf_printf(&f, "    {%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, gemm_%d},\n", p.m, p.n, p.k, p.lda, p.ldb,
                      p.ldc, p.trans_a, p.trans_b, p.bf16, p.clear, p.nwarps, i);
    }
    ts_buf_printf(&f, "};\nstatic unsigned long long rng = %lluull;\n", (unsigned long long)seed);
    ts_buf_puts(&f,
                "static int rnd(void) { rng = rng * 6364136223846793005ull + 1442695040888963407ull; return (int)(rng >> 33) % 7 - 3; }\n"
                "static ts_u16 enc(int v) { /* small integers, exact in both formats */\n"
                "    static const ts_u16 h[7] = {0xC200, 0xC000, 0xBC00, 0x0000, 0x3C00, 0x4000, 0x4200};\n"
                "    static const ts_u16 b[7] = {0xC040, 0xC000, 0xBF80, 0x0000, 0x3F80, 0x4000, 0x4040};\n"
                "    return bf16 ? b[v + 3] : h[v + 3];\n"
                "}\n"
                "static const Cfg *cur;\n"
                "static const ts_u16 *gA, *gB;\n"
                "static float *gC;\n"
                "static int warp;\n"
                "static void *lane_main(void *arg) {\n"
                "    lane = (int)(intptr_t)arg;\n"
                "    cur->fn(gA, gB, gC, warp * 32 + lane);\n"
                "    return NULL;\n"
                "}\n"
                "int main(void) {\n"
                "    int failed = 0;\n"
                "    pthread_barrier_init(&bar, NULL, 32);\n"
                "    for (unsigned c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {\n"
                "        const Cfg *g = cur = &cfgs[c];\n"
                "        bf16 = g->bf16;\n"
                "        int ra = g->ta ? g->k : g->m, rb = g->tb ? g->n : g->k;\n"
                "        ts_u16 *A = aligned_alloc(16, ((size_t)ra * g->lda * 2 + 15) / 16 * 16);\n"
                "        ts_u16 *B = aligned_alloc(16, ((size_t)rb * g->ldb * 2 + 15) / 16 * 16);\n"
                "        float *C = aligned_alloc(16, ((size_t)g->m * g->ldc * 4 + 15) / 16 * 16);\n"
                "        float *R = malloc((size_t)g->m * g->n * sizeof *R);\n"
                "        int *a = malloc((size_t)ra * g->lda * sizeof *a), *b = malloc((size_t)rb * g->ldb * sizeof *b);\n"
                "        for (int i = 0; i < ra * g->lda; i++) A[i] = enc(a[i] = rnd());\n"
                "        for (int i = 0; i < rb * g->ldb; i++) B[i] = enc(b[i] = rnd());\n"
                "        for (int i = 0; i < g->m * g->ldc; i++) C[i] = (float)(rnd() * 5);\n"
                "        for (int i = 0; i < g->m; i++)\n"
                "            for (int j = 0; j < g->n; j++) {\n"
                "                double s = g->clear ? 0 : C[i * g->ldc + j];\n"
                "                for (int k = 0; k < g->k; k++)\n"
                "                    s += (double)a[g->ta ? k * g->lda + i : i * g->lda + k] * b[g->tb ? j * g->ldb + k : k * g->ldb + j];\n"
                "                R[i * g->n + j] = (float)s;\n"
                "            }\n"
                "        float pad = C[g->n < g->ldc ? g->n : 0];\n"
                "        gA = A; gB = B; gC = C;\n"
                "        for (warp = 0; warp < g->nwarps; warp++) {\n"
                "            pthread_t th[32];\n"
                "            for (int l = 0; l < 32; l++) pthread_create(&th[l], NULL, lane_main, (void *)(intptr_t)l);\n"
                "            for (int l = 0; l < 32; l++) pthread_join(th[l], NULL);\n"
                "        }\n"
                "        int bad = 0;\n"
                "        for (int i = 0; i < g->m; i++)\n"
                "            for (int j = 0; j < g->n; j++)\n"
                "                if (C[i * g->ldc + j] != R[i * g->n + j]) {\n"
                "                    if (!bad) printf(\"cfg %u: C[%d][%d] = %g, want %g\\n\", c, i, j, C[i * g->ldc + j], R[i * g->n + j]);\n"
                "                    bad++;\n"
                "                }\n"
                "        if (g->n < g->ldc && C[g->n] != pad) bad++; /* padding untouched */\n"
                "        printf(\"%s cfg %u: %dx%dx%d ta=%d tb=%d %s clear=%d warps=%d ld=%d/%d/%d\\n\", bad ? \"FAIL\" : \"ok\", c,\n"
                "               g->m, g->n, g->k, g->ta, g->tb, g->bf16 ? \"bf16\" : \"f16\", g->clear, g->nwarps, g->lda, g->ldb, g->ldc);\n"
                "        failed += bad != 0;\n"
                "        free(A); free(B); free(C); free(R); free(a); free(b);\n"
                "    }\n"
                "    if (errors) printf(\"FAIL: %d ldmatrix rows not 16-byte aligned\\n\", errors);\n"
                "    return failed || errors;\n"
                "}\n");
    build_and_run(&f, "model", has, n);
}

static void test_model(uint64_t seed) {
    Cfg cfgs[64];
    int n = 0;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int bf = 0; bf < 2; bf++) {
                int v = ta * 4 + tb * 2 + bf;
                /* aligned (ldmatrix), the example's 4-warp split */
                cfgs[n++] = (Cfg){64, 64, 32, ta, tb, bf, v & 1, 4, 0, 0, 0, 0};
                /* padded rows: 16-bit loads; odd ldc: scalar C accesses */
                cfgs[n++] = (Cfg){32, 40, 48, ta, tb, bf, !(v & 1), 2, 4, 12, 1, 0};
                /* one mma tile, one warp, padding that keeps 16-byte rows */
                cfgs[n++] = (Cfg){16, 8, 16, ta, tb, bf, 0, 1, 8, 8, 2, 0};
                /* three n8 tiles per sub-tile: ldmatrix .x2 for the last */
                cfgs[n++] = (Cfg){48, 24, 32, ta, tb, bf, v & 1, 3, 0, 0, 0, 24};
            }
    cfgs[n++] = (Cfg){128, 128, 32, 0, 0, 0, 0, 4, 0, 0, 0, 0};    /* 64x64 per warp, 128 accumulators */
    cfgs[n++] = (Cfg){128, 64, 64, 0, 1, 1, 0, 8, 8, 8, 0, 0};     /* 8 warps */
    cfgs[n++] = (Cfg){64, 128, 16, 1, 0, 0, 1, 2, 0, 0, 0, 0};     /* more sub-tiles than warps */
    cfgs[n++] = (Cfg){256, 32, 16, 0, 0, 1, 0, 4, 0, 0, 0, 0};
    run_model(cfgs, n, 1, seed);
    run_model(cfgs, n, 0, seed + 1);
}

/* ---- 4. register mode (ts_cuda_mma_emit_reg), against the same model ---------------------- */

/*
 * The functions layout inference makes every fragment accumulator use:
 * C (and maybe A) are the calling thread's registers in the MMA_C layout
 * (layout.h), A and B shared tiles addressed by base pointer + element
 * offset, stored XOR-swizzled.  The driver below keeps one shared-memory
 * arena (ts_smem_u32 is the byte offset from its start, the _u ldmatrix
 * wrappers add it back and check it stays inside), fills it with NaN so a
 * stray read shows, stores the operands through its own copy of the
 * swizzle (o ^ (((o >> (3 + S)) & 7) << 3), S = swz - 1), and puts C in
 * and takes it out of each thread's registers through tables made here
 * with ir_layout_forward: the map the lowering itself uses (test_layout
 * checks it against the PTX ISA's fragment table).  All wm * wn warps run,
 * one at a time, each as 32 lock-step threads; every thread's register
 * array has guard words after it that must stay untouched.
 */
typedef struct RCfg {
    int m, n, k;      /* C is m x n, the reduction k deep */
    int wm, wn;       /* C's warp grid */
    int ta, tb;       /* A stored k x m, B stored n x k */
    int bf16, clear;  /* bfloat16 inputs; clear_accum */
    int areg;         /* A in registers (MMA_C layout of m x k; wn must be 1) */
    int swz_a, swz_b; /* 0: plain; 1 + S: swizzled with shift S; -1: the shift layout_inference picks */
    int per_a, per_b; /* the offset is a multiple of the swizzle's period (added outside it) */
    int pad_a, pad_b; /* extra elements per stored row (not a multiple of 8: 16-bit loads) */
    int off_a, off_b; /* per_*: the pipeline stage; else the operand's element offset in its buffer */
    int scalar;       /* 1: 16-bit loads although the rows are 16-byte aligned */
} RCfg;

/* A configuration resolved: the emitter's parameters and the buffers. */
typedef struct RRun {
    TsCudaMma p;              /* what ts_cuda_mma_emit_reg gets */
    int a_off, b_off;         /* the offsets passed to the function */
    int a_size, b_size;       /* elements of the A / B shared buffers (whole swizzle periods) */
} RRun;

/* The swizzle layout_inference gives a 16-bit tile whose rows are `cols`
 * elements: keyed by the row (rows of 128 bytes or more) or by the
 * 128-byte line (shorter rows); as swz_*, 1 + the shift. */
static int natural_swz(int cols) {
    int lg = 0;
    while ((1 << lg) < cols) lg++;
    return cols * 2 >= 128 ? lg - 3 + 1 : 3 + 1;
}

static int round_up(int x, int m) { return (x + m - 1) / m * m; }

static RRun resolve(const RCfg *c) {
    /* a shift below 3 makes the key overlap the chunk bits: not a bijection */
    CHECK((c->swz_a <= 0 || c->swz_a >= 4) && (c->swz_b <= 0 || c->swz_b >= 4));
    RRun r;
    memset(&r, 0, sizeof r);
    TsCudaMma *p = &r.p;
    p->m = c->m;
    p->n = c->n;
    p->k = c->k;
    p->trans_a = c->ta;
    p->trans_b = c->tb;
    p->bf16 = c->bf16;
    p->clear = c->clear;
    p->creg = 1;
    p->areg = c->areg;
    p->wm = c->wm;
    p->wn = c->wn;
    p->nwarps = c->wm * c->wn;
    if (!c->areg) {
        int ra = c->ta ? c->k : c->m, ca = c->ta ? c->m : c->k;
        p->lda = ca + c->pad_a;
        p->swz_a = c->swz_a < 0 ? natural_swz(ca) : c->swz_a;
        p->per_a = c->per_a;
        int stage = round_up(ra * p->lda, 2048); /* 2048: a multiple of every period used */
        r.a_off = c->per_a ? c->off_a * stage : c->off_a;
        p->ldsm_a = !c->scalar && p->lda % 8 == 0 && r.a_off % 8 == 0;
        r.a_size = round_up(r.a_off + ra * p->lda, 2048);
    }
    int rb = c->tb ? c->n : c->k, cb = c->tb ? c->k : c->n;
    p->ldb = cb + c->pad_b;
    p->swz_b = c->swz_b < 0 ? natural_swz(cb) : c->swz_b;
    p->per_b = c->per_b;
    int stage = round_up(rb * p->ldb, 2048);
    r.b_off = c->per_b ? c->off_b * stage : c->off_b;
    p->ldsm_b = !c->scalar && p->ldb % 8 == 0 && r.b_off % 8 == 0;
    r.b_size = round_up(r.b_off + rb * p->ldb, 2048);
    return r;
}

/* The prelude's TS_SWZ macro, as the generated kernels define it. */
static char *prelude_swz(void) {
    char *src = cuda_source(BASE "dtype=float16 cdtype=float32 threads=128");
    const char *d = src ? strstr(src, "#define TS_SWZ(") : NULL;
    CHECK(d != NULL);
    char *line = NULL;
    if (d) {
        const char *e = strchr(d, '\n');
        size_t len = e ? (size_t)(e - d) : strlen(d);
        line = malloc(len + 2);
        memcpy(line, d, len);
        strcpy(line + len, "\n");
    }
    free(src);
    return line;
}

/* Emit `static const int lay_<id>[]`: for each element (row-major) of a
 * rows x cols MMA_C(wm, wn) tile, thread * L + local (L: elements per thread). */
static void emit_layout(TsBuf *f, IrKernel *k, int id, int rows, int cols, int wm, int wn) {
    IrLayout *l = ir_layout_mma_c(k, rows, cols, wm, wn);
    CHECK(l != NULL);
    if (!l) return;
    int64_t L = ir_layout_local_size(l), bad = 0;
    ts_buf_printf(f, "static const int lay_%d[] = {", id);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            int64_t idx[2] = {i, j}, t, loc;
            ir_layout_forward(l, idx, 0, &t, &loc);
            bad += t < 0 || t >= wm * wn * 32 || loc < 0 || loc >= L;
            int64_t e = i * cols + j;
            ts_buf_printf(f, "%s%lld", e == 0 ? "\n" : e % 32 ? "," : ",\n", (long long)(t * L + loc));
        }
    ts_buf_puts(f, "};\n");
    CHECK_EQ_INT(0, (int)bad);
}

static const char *REG_TYPES =
    "typedef void (*RFn)(const ts_u16 *, int, const ts_u16 *, int, float *, int);\n"
    "typedef struct {\n"
    "    int m, n, k, wm, wn, lda, ldb, ta, tb, bf16, clear, areg, swz_a, swz_b, a_off, b_off, a_size, b_size;\n"
    "    const int *lc, *la; /* element -> thread * L + local, of C (m x n) and register A (m x k) */\n"
    "    RFn fn;\n"
    "    const char *desc;\n"
    "} RCfg;\n";

static const char *REG_DRIVER =
    "static int rnd(void) { rng = rng * 6364136223846793005ull + 1442695040888963407ull; return (int)(rng >> 33) % 7 - 3; }\n"
    "static ts_u16 enc(int v) { /* small integers, exact in both formats */\n"
    "    static const ts_u16 h[7] = {0xC200, 0xC000, 0xBC00, 0x0000, 0x3C00, 0x4000, 0x4200};\n"
    "    static const ts_u16 b[7] = {0xC040, 0xC000, 0xBF80, 0x0000, 0x3F80, 0x4000, 0x4040};\n"
    "    return bf16 ? b[v + 3] : h[v + 3];\n"
    "}\n"
    "/* the tiles' swizzle, from its definition: 16-byte chunk bits 3..5 XORed with bits 3+S..5+S */\n"
    "static int swz(int o, int z) { return z ? o ^ (((o >> (3 + z - 1)) & 7) << 3) : o; }\n"
    "enum { GUARD = 4 };\n"
    "static const RCfg *cur;\n"
    "static const ts_u16 *gA, *gB, *gAreg;\n"
    "static float *gC;\n"
    "static int warp, LA, LC;\n"
    "static void *lane_main(void *arg) {\n"
    "    lane = (int)(intptr_t)arg;\n"
    "    int tid = warp * 32 + lane;\n"
    "    if (cur->areg) cur->fn(gAreg + (size_t)tid * LA, 0, gB, cur->b_off, gC + (size_t)tid * (LC + GUARD), tid);\n"
    "    else cur->fn(gA, cur->a_off, gB, cur->b_off, gC + (size_t)tid * (LC + GUARD), tid);\n"
    "    return NULL;\n"
    "}\n"
    "int main(void) {\n"
    "    int failed = 0;\n"
    "    pthread_barrier_init(&bar, NULL, 32);\n"
    "    for (unsigned c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {\n"
    "        const RCfg *g = cur = &cfgs[c];\n"
    "        bf16 = g->bf16;\n"
    "        int m = g->m, n = g->n, k = g->k, nt = g->wm * g->wn * 32, before = errors;\n"
    "        LC = (m / g->wm / 16) * (n / g->wn / 8) * 4;\n"
    "        LA = (m / g->wm / 16) * (k / 8) * 4;\n"
    "        /* shared memory: A's buffer, a gap, B's buffer, all NaN but the operands */\n"
    "        size_t boff = g->areg ? 0 : ((size_t)g->a_size * 2 + 48 + 15) / 16 * 16;\n"
    "        smem_size = boff + (size_t)g->b_size * 2;\n"
    "        smem = aligned_alloc(128, (smem_size + 127) / 128 * 128);\n"
    "        ts_u16 *S = (ts_u16 *)smem, nan16 = bf16 ? 0x7FC0 : 0x7E00;\n"
    "        for (size_t i = 0; i < smem_size / 2; i++) S[i] = nan16;\n"
    "        ts_u16 *A = g->areg ? NULL : S, *B = (ts_u16 *)(smem + boff);\n"
    "        int *a = malloc(sizeof(int) * m * k), *b = malloc(sizeof(int) * k * n);\n"
    "        float *cm = malloc(sizeof(float) * m * n), *R = malloc(sizeof(float) * m * n);\n"
    "        ts_u16 *Areg = malloc(sizeof(ts_u16) * (size_t)nt * LA);\n"
    "        float *C = malloc(sizeof(float) * (size_t)nt * (LC + GUARD));\n"
    "        for (int i = 0; i < nt * LA; i++) Areg[i] = nan16;\n"
    "        for (int i = 0; i < nt * (LC + GUARD); i++) C[i] = 1e30f; /* guards (and any unmapped register) */\n"
    "        /* A as the logical m x k matrix a[i * k + kk], stored transposed or not */\n"
    "        for (int i = 0; i < m; i++)\n"
    "            for (int kk = 0; kk < k; kk++) {\n"
    "                int v = a[i * k + kk] = rnd();\n"
    "                if (g->areg) {\n"
    "                    int tl = g->la[i * k + kk];\n"
    "                    Areg[tl] = enc(v);\n"
    "                } else {\n"
    "                    int o = g->a_off + (g->ta ? kk * g->lda + i : i * g->lda + kk);\n"
    "                    A[swz(o, g->swz_a)] = enc(v);\n"
    "                }\n"
    "            }\n"
    "        for (int kk = 0; kk < k; kk++)\n"
    "            for (int j = 0; j < n; j++) {\n"
    "                int v = b[kk * n + j] = rnd();\n"
    "                int o = g->b_off + (g->tb ? j * g->ldb + kk : kk * g->ldb + j);\n"
    "                B[swz(o, g->swz_b)] = enc(v);\n"
    "            }\n"
    "        for (int i = 0; i < m; i++)\n"
    "            for (int j = 0; j < n; j++) {\n"
    "                int tl = g->lc[i * n + j];\n"
    "                C[tl / LC * (LC + GUARD) + tl % LC] = cm[i * n + j] = (float)(rnd() * 5);\n"
    "                double s = g->clear ? 0 : cm[i * n + j];\n"
    "                for (int kk = 0; kk < k; kk++) s += (double)a[i * k + kk] * b[kk * n + j];\n"
    "                R[i * n + j] = (float)s;\n"
    "            }\n"
    "        gA = A; gB = B; gAreg = Areg; gC = C;\n"
    "        for (warp = 0; warp < g->wm * g->wn; warp++) {\n"
    "            pthread_t th[32];\n"
    "            for (int l = 0; l < 32; l++) pthread_create(&th[l], NULL, lane_main, (void *)(intptr_t)l);\n"
    "            for (int l = 0; l < 32; l++) pthread_join(th[l], NULL);\n"
    "        }\n"
    "        int bad = 0;\n"
    "        for (int i = 0; i < m; i++)\n"
    "            for (int j = 0; j < n; j++) {\n"
    "                int tl = g->lc[i * n + j];\n"
    "                float got = C[tl / LC * (LC + GUARD) + tl % LC];\n"
    "                if (got != R[i * n + j]) {\n"
    "                    if (!bad) printf(\"rcfg %u: C[%d][%d] (thread %d, register %d) = %g, want %g\\n\", c, i, j, tl / LC,\n"
    "                                     tl % LC, got, R[i * n + j]);\n"
    "                    bad++;\n"
    "                }\n"
    "            }\n"
    "        for (int t = 0; t < nt; t++)\n"
    "            for (int e = 0; e < GUARD; e++)\n"
    "                if (C[t * (LC + GUARD) + LC + e] != 1e30f) {\n"
    "                    if (!bad) printf(\"rcfg %u: thread %d wrote past its %d registers\\n\", c, t, LC);\n"
    "                    bad++;\n"
    "                }\n"
    "        if (errors != before) {\n"
    "            printf(\"rcfg %u: %d bad shared addresses (ldmatrix rows unaligned or outside the arena)\\n\", c, errors - before);\n"
    "            bad++;\n"
    "        }\n"
    "        printf(\"%s rcfg %u: %s\\n\", bad ? \"FAIL\" : \"ok\", c, g->desc);\n"
    "        failed += bad != 0;\n"
    "        free(smem); smem = NULL;\n"
    "        free(a); free(b); free(cm); free(R); free(Areg); free(C);\n"
    "    }\n"
    "    return failed;\n"
    "}\n";

/* Build and run the model over cfgs (those with A in registers only when
 * has: without mma.sync that path traps). */
static void run_model_reg(const RCfg *cfgs, int n, int has, uint64_t seed) {
    char *swz_line = prelude_swz();
    if (!swz_line) return;
    TsBuf f = {0};
    ts_buf_puts(&f, HARNESS);
    ts_buf_puts(&f, swz_line);
    free(swz_line);
    TsArena arena;
    ts_arena_init(&arena);
    IrKernel *k = ir_kernel_new(&arena, "k");
    int lay[64][4], nlay = 0, lc[64], la[64], used = 0;
    /* the layouts (one table per distinct one) and the functions */
    for (int i = 0; i < n && i < 64; i++) {
        if (cfgs[i].areg && !has) continue;
        RRun r = resolve(&cfgs[i]);
        for (int which = 0; which < 2; which++) {
            if (which == 1 && !cfgs[i].areg) {
                la[i] = -1;
                continue;
            }
            int key[4] = {r.p.m, which ? r.p.k : r.p.n, r.p.wm, which ? 1 : r.p.wn}, id = -1;
            for (int j = 0; j < nlay && id < 0; j++)
                if (!memcmp(lay[j], key, sizeof key)) id = j;
            if (id < 0 && nlay < 64) {
                id = nlay++;
                memcpy(lay[id], key, sizeof key);
                emit_layout(&f, k, id, key[0], key[1], key[2], key[3]);
            }
            (which ? la : lc)[i] = id;
        }
        char name[32];
        snprintf(name, sizeof name, "rgemm_%d", i);
        ts_cuda_mma_emit_reg(&f, name, &r.p);
    }
    ts_buf_printf(&f, "static unsigned long long rng = %lluull;\n", (unsigned long long)seed);
    /* the configurations */
    TsBuf cf = {0};
    ts_buf_puts(&cf, REG_TYPES);
    ts_buf_puts(&cf, "static const RCfg cfgs[] = {\n");
    for (int i = 0; i < n && i < 64; i++) {
        if (cfgs[i].areg && !has) continue;
        RRun r = resolve(&cfgs[i]);
        const TsCudaMma *p = &r.p;
        char la_name[32] = "NULL";
        if (la[i] >= 0) snprintf(la_name, sizeof la_name, "lay_%d", la[i]);
        ts_buf_printf(&cf, "    {%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, lay_%d, %s, rgemm_%d,\n",
                      p->m, p->n, p->k, p->wm, p->wn, p->lda, p->ldb, p->trans_a, p->trans_b, p->bf16, p->clear, p->areg,
                      p->swz_a, p->swz_b, r.a_off, r.b_off, r.a_size, r.b_size, lc[i], la_name, i);
        ts_buf_printf(&cf, "     \"%dx%dx%d warps %dx%d %s%s%s%s clear=%d swz=%d/%d per=%d/%d off=%d/%d ld=%d/%d ldsm=%d/%d\"},\n",
                      p->m, p->n, p->k, p->wm, p->wn, p->bf16 ? "bf16" : "f16", p->trans_a ? " A^T" : "",
                      p->trans_b ? " B^T" : "", p->areg ? " A(registers)" : "", p->clear, p->swz_a, p->swz_b, p->per_a,
                      p->per_b, r.a_off, r.b_off, p->lda, p->ldb, p->ldsm_a, p->ldsm_b);
        used++;
    }
    ts_buf_puts(&cf, "};\n");
    ts_buf_puts(&f, ts_buf_str(&cf));
    ts_buf_free(&cf);
    ts_buf_puts(&f, REG_DRIVER);
    ts_arena_free(&arena);
    build_and_run(&f, "regmodel", has, used);
}

static void test_model_reg(uint64_t seed) {
    RCfg c[64];
    int n = 0;
    /* 128x128x32 on 2x2 warps (64x64 each): every transpose combination,
     * swizzled and not, the offset inside the swizzle and outside it */
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int sw = 0; sw < 2; sw++) {
                int per_a = (ta ^ tb ^ sw) & 1, per_b = !per_a || !sw;
                c[n++] = (RCfg){128, 128, 32, 2, 2, ta, tb, (ta + tb + sw) & 1, (ta ^ sw) & 1, 0, -sw, -sw,
                                per_a, per_b, 0, 0, per_a ? 1 + ta : 40, per_b ? 2 - tb : 64 + 8 * sw, 0};
            }
    /* the GEMM example's shape on 8 warps: 2x4 of 64x64 */
    c[n++] = (RCfg){128, 256, 64, 2, 4, 0, 0, 0, 0, 0, -1, -1, 1, 1, 0, 0, 1, 2, 0};
    c[n++] = (RCfg){128, 256, 64, 2, 4, 1, 1, 1, 1, 0, -1, -1, 1, 1, 0, 0, 2, 1, 0};
    c[n++] = (RCfg){128, 256, 64, 2, 4, 0, 1, 0, 0, 0, -1, 0, 0, 1, 0, 0, 24, 3, 0};
    /* FlashAttention's P V: 64x64x64 FullRow (4x1), A in registers */
    for (int v = 0; v < 4; v++)
        c[n++] = (RCfg){64, 64, 64, 4, 1, 0, v & 1, v >> 1, (v + 1) & 1, 1, 0, v < 2 ? -1 : 0, 0, 1, 0, 0, 0,
                        v == 1 ? 2 : 1, 0};
    c[n++] = (RCfg){64, 64, 64, 4, 1, 0, 1, 0, 0, 0, -1, -1, 1, 1, 0, 0, 1, 1, 0}; /* Q K^T: both shared */
    /* one mma tile on one warp (one n8 tile: the .x2 path only), and with A in registers */
    for (int v = 0; v < 4; v++)
        c[n++] = (RCfg){16, 8, 16, 1, 1, v & 1, v >> 1, v & 1, v >> 1, 0, 4 + v % 3, 4 + (v + 1) % 3, v & 1, 1, 0, 0,
                        (v & 1) ? 1 : 16, 1, 0};
    c[n++] = (RCfg){16, 8, 16, 1, 1, 0, 0, 1, 0, 1, 0, 4, 0, 1, 0, 0, 0, 3, 0};
    c[n++] = (RCfg){16, 16, 32, 1, 1, 0, 1, 0, 1, 1, 0, -1, 0, 1, 0, 0, 0, 1, 0};
    /* odd numbers of n8 tiles per warp: 3 (64x48 on 2x2) and 5 (32x40 on 2x1) */
    for (int tb = 0; tb < 2; tb++) {
        c[n++] = (RCfg){64, 48, 32, 2, 2, 0, tb, tb, 0, 0, -1, 5 + tb, 1, 0, 0, 0, 1, 8 * (1 + tb), 0};
        c[n++] = (RCfg){32, 40, 32, 2, 1, 1, tb, 0, tb, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0};
        c[n++] = (RCfg){32, 24, 32, 2, 1, 0, tb, 1 - tb, 0, 1, 0, -1, 0, 1, 0, 0, 0, 1, 0};
    }
    /* rows that are not 16-byte aligned: 16-bit loads for A, for B, for both */
    c[n++] = (RCfg){64, 64, 32, 2, 2, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 3, 5, 7, 0};
    c[n++] = (RCfg){64, 64, 32, 2, 2, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0};
    c[n++] = (RCfg){64, 64, 32, 2, 2, 0, 1, 0, 0, 0, -1, 0, 1, 1, 0, 5, 1, 3, 0};
    /* 16-bit loads from swizzled aligned tiles, offsets inside and outside the swizzle */
    for (int v = 0; v < 4; v++)
        c[n++] = (RCfg){64, 64, 64, 2, 2, v & 1, v >> 1, v & 1, v >> 1, 0, -1, -1, v & 1, (v >> 1) & 1, 0, 0,
                        (v & 1) ? 1 : 24, (v >> 1) ? 2 : 72, 1};
    /* every valid swizzle shift (3..5: the key bits above the chunk bits) on both operands */
    for (int v = 0; v < 6; v++) {
        int sa = 3 + v % 3, sb = 5 - v / 2;
        c[n++] = (RCfg){64, 64, 64, 2, 2, v & 1, (v >> 1) & 1, v & 1, 0, 0, 1 + sa, 1 + sb, v % 3 != 0, v % 2 == 0,
                        0, 0, v % 3 != 0 ? 1 : 8 * v, v % 2 == 0 ? 2 : 8, 0};
    }
    run_model_reg(c, n, 1, seed + 2);
    run_model_reg(c, n, 0, seed + 3);
}

int main(void) {
    const char *seed_env = getenv("TS_TEST_SEED");
    uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL);
    printf("seed %llu (TS_TEST_SEED replays it)\n", (unsigned long long)seed);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ts-test-mma-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    ts_context_create(&ctx);
    test_eligibility();
    test_plan();
    test_model(seed);
    test_model_reg(seed);
    ts_context_destroy(ctx);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", tmpdir);
    return test_done();
}
