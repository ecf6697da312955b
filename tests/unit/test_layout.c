/*
 * test_layout.c — fragment layouts (src/ir/layout.c).
 *
 * Every family is checked three ways: ir_layout_check (native maps against
 * the IR expressions, every element held exactly `replicate` times); the
 * mma.sync accumulator element by element against the PTX ISA's table
 * for m16n8k16 (written out again here from the ISA, independently of
 * layout.c); and the row projection against the accumulator it projects
 * (every thread holding (i, j) holds row i).
 */
#include "ir/layout.h"
#include "test.h"

#include <stdlib.h>

static IrKernel *kernel(TsArena *A) { return ir_kernel_new(A, "k"); }

static void check_ok(TsArena *A, const IrLayout *l, const char *what) {
    const char *why = "";
    CHECK(l != NULL);
    if (!l) return;
    bool ok = ir_layout_check(A, l, &why);
    if (!ok) fprintf(stderr, "%s: %s\n", what, why);
    CHECK(ok);
}

/* PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type",
 * C/D: groupID = lane >> 2, threadID_in_group = lane % 4;
 * row = groupID for c0, c1 and groupID + 8 for c2, c3;
 * col = threadID_in_group * 2 + (i & 1). */
static void ptx_c(int lane, int i, int *row, int *col) {
    *row = (lane >> 2) + (i >= 2 ? 8 : 0);
    *col = (lane % 4) * 2 + (i & 1);
}

static void test_mma_c(void) {
    TsArena A;
    ts_arena_init(&A);
    IrKernel *k = kernel(&A);
    const int cfg[][4] = {{16, 8, 1, 1}, {64, 64, 4, 1}, {128, 128, 2, 2}, {128, 256, 2, 4}, {64, 128, 1, 4}};
    for (int c = 0; c < 5; c++) {
        int m = cfg[c][0], n = cfg[c][1], wm = cfg[c][2], wn = cfg[c][3];
        IrLayout *l = ir_layout_mma_c(k, m, n, wm, wn);
        check_ok(&A, l, "mma_c");
        if (!l) continue;
        int WM = m / wm, WN = n / wn, ni = WN / 8;
        int bad = 0;
        /* the warp at (wr, wc) holds tile (it, jt) of its sub-tile; register i
         * of that tile, in acc[it][jt][i] order, is local ((it*ni + jt)*4 + i) */
        for (int w = 0; w < wm * wn; w++)
            for (int lane = 0; lane < 32; lane++)
                for (int it = 0; it < WM / 16; it++)
                    for (int jt = 0; jt < ni; jt++)
                        for (int i = 0; i < 4; i++) {
                            int r, cc;
                            ptx_c(lane, i, &r, &cc);
                            int64_t idx[2] = {(w / wn) * WM + it * 16 + r, (w % wn) * WN + jt * 8 + cc}, t, loc;
                            ir_layout_forward(l, idx, 0, &t, &loc);
                            bad += t != w * 32 + lane || loc != (it * ni + jt) * 4 + i;
                        }
        CHECK_EQ_INT(0, bad);
        /* its row projection */
        IrLayout *rows = ir_layout_mma_rows(k, m, n, wm, wn);
        check_ok(&A, rows, "mma_rows");
        int miss = 0;
        for (int64_t row = 0; row < m; row++)
            for (int64_t col = 0; col < n; col++) {
                int64_t idx[2] = {row, col}, t, loc, found = 0;
                ir_layout_forward(l, idx, 0, &t, &loc);
                for (int r = 0; r < rows->replicate; r++) {
                    int64_t t2, l2;
                    ir_layout_forward(rows, &row, r, &t2, &l2);
                    found |= t2 == t;
                }
                miss += !found;
            }
        CHECK_EQ_INT(0, miss);
    }
    CHECK(ir_layout_mma_c(k, 24, 8, 1, 1) == NULL);
    CHECK(ir_layout_mma_c(k, 64, 64, 4, 3) == NULL);
    ts_arena_free(&A);
}

/* PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type",
 * A (16 x 16, .f16/.bf16, registers a0..a7): row = groupID for a0, a1, a4,
 * a5 and groupID + 8 for a2, a3, a6, a7; col = threadID_in_group * 2 +
 * (i & 1), plus 8 for a4..a7. */
static void ptx_a(int lane, int i, int *row, int *col) {
    *row = (lane >> 2) + ((i >> 1) & 1) * 8;
    *col = (lane % 4) * 2 + (i & 1) + (i >= 4 ? 8 : 0);
}

/* The register A operand on a wm x wn warp grid: every warp of a warp row
 * holds the whole k extent of its rows, register a_i of k16 step ks and m
 * tile it at local (it * NK8 + 2 ks) * 4 + i (how the CUDA gemm function
 * reads it: q = (i * NK8 + k0 / 8) * 4, a[.][0..3] = A[q..q+7]). */
static void test_mma_a(void) {
    TsArena A;
    ts_arena_init(&A);
    IrKernel *k = kernel(&A);
    const int cfg[][4] = {{64, 64, 1, 8}, {64, 64, 4, 1}, {128, 32, 2, 2}, {16, 16, 1, 4}, {64, 128, 2, 4}};
    for (int c = 0; c < 5; c++) {
        int m = cfg[c][0], kk = cfg[c][1], wm = cfg[c][2], wn = cfg[c][3];
        IrLayout *l = ir_layout_mma_a(k, m, kk, wm, wn);
        check_ok(&A, l, "mma_a");
        if (!l) continue;
        CHECK_EQ_INT(wn, l->replicate);
        int WM = m / wm, nk8 = kk / 8, bad = 0;
        for (int w = 0; w < wm * wn; w++)
            for (int lane = 0; lane < 32; lane++)
                for (int it = 0; it < WM / 16; it++)
                    for (int ks = 0; ks < kk / 16; ks++)
                        for (int i = 0; i < 8; i++) {
                            int r, cc;
                            ptx_a(lane, i, &r, &cc);
                            int64_t idx[2] = {(w / wn) * WM + it * 16 + r, ks * 16 + cc};
                            bad += ir_layout_local_at(l, idx, w * 32 + lane) != (it * nk8 + 2 * ks) * 4 + i;
                        }
        CHECK_EQ_INT(0, bad);
        /* one warp column: the same map as the accumulator layout of m x k */
        if (wn == 1) {
            IrLayout *cl = ir_layout_mma_c(k, m, kk, wm, 1);
            int diff = 0;
            for (int64_t row = 0; row < m; row++)
                for (int64_t col = 0; col < kk; col++) {
                    int64_t idx[2] = {row, col}, t1, l1, t2, l2;
                    ir_layout_forward(l, idx, 0, &t1, &l1);
                    ir_layout_forward(cl, idx, 0, &t2, &l2);
                    diff += t1 != t2 || l1 != l2;
                }
            CHECK_EQ_INT(0, diff);
        }
    }
    CHECK(ir_layout_mma_a(k, 24, 16, 1, 1) == NULL);
    CHECK(ir_layout_mma_a(k, 64, 12, 1, 2) == NULL);
    CHECK(!ir_layout_equal(ir_layout_mma_a(k, 64, 64, 1, 8), ir_layout_mma_a(k, 64, 64, 1, 4)));
    ts_arena_free(&A);
}

static void test_cyclic(void) {
    TsArena A;
    ts_arena_init(&A);
    IrKernel *k = kernel(&A);
    int64_t s1[1] = {256}, s2[2] = {64, 48}, s3[3] = {4, 8, 16};
    check_ok(&A, ir_layout_cyclic(k, 1, s1, 128), "cyclic 1-D");
    check_ok(&A, ir_layout_cyclic(k, 2, s2, 128), "cyclic 2-D");
    check_ok(&A, ir_layout_cyclic(k, 3, s3, 64), "cyclic 3-D");
    CHECK(ir_layout_cyclic(k, 1, s1, 96) == NULL); /* 256 % 96 != 0 */
    IrLayout *a = ir_layout_cyclic(k, 2, s2, 128), *b = ir_layout_cyclic(k, 2, s2, 128);
    CHECK(ir_layout_equal(a, b));
    CHECK(!ir_layout_equal(a, ir_layout_cyclic(k, 2, s2, 64)));
    /* fewer elements than threads: replicated, one register per thread */
    int64_t s4[1] = {64}, s5[2] = {4, 8}, s6[1] = {48};
    IrLayout *r = ir_layout_cyclic(k, 1, s4, 128);
    check_ok(&A, r, "cyclic replicated 1-D");
    CHECK(r && r->replicate == 2 && r->local_size == 1);
    check_ok(&A, ir_layout_cyclic(k, 2, s5, 256), "cyclic replicated 2-D");
    CHECK(ir_layout_cyclic(k, 1, s6, 128) == NULL); /* 128 % 48 != 0 */
    CHECK(r && !ir_layout_equal(r, ir_layout_cyclic(k, 1, s1, 128)));
    int64_t idx[1] = {5};
    CHECK(r && ir_layout_local_at(r, idx, 69) == 0 && ir_layout_local_at(r, idx, 6) == -1);
    ts_arena_free(&A);
}

/* Rows over warps: every row in one warp, columns on lanes, and the
 * projection held by the 32 lanes of that warp. */
static void test_warp_rows(void) {
    TsArena A;
    ts_arena_init(&A);
    IrKernel *k = kernel(&A);
    const int cfg[][3] = {{16, 1024, 4}, {32, 64, 4}, {8, 32, 8}, {64, 256, 2}};
    for (int c = 0; c < 4; c++) {
        int m = cfg[c][0], n = cfg[c][1], nw = cfg[c][2];
        IrLayout *l = ir_layout_warp_rows(k, m, n, nw), *p = ir_layout_warp_rows_proj(k, m, n, nw);
        check_ok(&A, l, "warp_rows");
        check_ok(&A, p, "warp_rows_proj");
        if (!l || !p) continue;
        int bad = 0;
        for (int64_t r = 0; r < m; r++)
            for (int64_t j = 0; j < n; j++) {
                int64_t idx[2] = {r, j}, t, loc, t2, l2;
                ir_layout_forward(l, idx, 0, &t, &loc);
                bad += t / 32 != r / (m / nw) || t % 32 != j % 32; /* the row's warp, lane j % 32 */
                ir_layout_forward(p, &r, t % 32, &t2, &l2);
                bad += t2 != t;                                    /* the thread holds its row */
            }
        CHECK_EQ_INT(0, bad);
    }
    CHECK(ir_layout_warp_rows(k, 16, 48, 4) == NULL); /* 48 columns: not whole lanes */
    CHECK(ir_layout_warp_rows(k, 6, 64, 4) == NULL);  /* 6 rows over 4 warps */
    ts_arena_free(&A);
}

/* Rows over warps with v-element vectors, checked against a brute-force
 * statement of what the family promises: every row inside one warp; a
 * thread's v columns consecutive and starting at a multiple of v; the
 * lanes of one warp step hold consecutive vectors of memory (lane l + 1
 * holds the vector after lane l's, G whole rows per step when a row is
 * shorter than 32 vectors); the projection held by exactly the threads
 * holding some element of the row. */
static void test_warp_rows_vec(void) {
    TsArena A;
    ts_arena_init(&A);
    IrKernel *k = kernel(&A);
    const int cfg[][4] = {{16, 1024, 4, 4}, {32, 64, 4, 4}, {32, 64, 4, 2}, {8, 256, 8, 8},
                          {64, 16, 2, 4},   {8, 8, 1, 2},   {16, 128, 4, 4}};
    for (int c = 0; c < 7; c++) {
        int64_t m = cfg[c][0], n = cfg[c][1];
        int nw = cfg[c][2], v = cfg[c][3];
        IrLayout *l = ir_layout_warp_rows_vec(k, m, n, nw, v), *p = ir_layout_warp_rows_vec_proj(k, m, n, nw, v);
        check_ok(&A, l, "warp_rows_vec");
        check_ok(&A, p, "warp_rows_vec_proj");
        if (!l || !p) continue;
        int64_t L = n / v < 32 ? n / v : 32;
        CHECK_EQ_INT((int)L, ir_layout_row_lanes(l));
        int bad = 0;
        int64_t nt = 32 * nw;
        bool *holds = calloc((size_t)(nt * m), 1);
        for (int64_t r = 0; r < m; r++)
            for (int64_t j = 0; j < n; j++) {
                int64_t idx[2] = {r, j}, t, loc, t0, l0;
                ir_layout_forward(l, idx, 0, &t, &loc);
                bad += t / 32 != r / (m / nw); /* the row's warp */
                int64_t j0[2] = {r, j - j % v};
                ir_layout_forward(l, j0, 0, &t0, &l0);
                bad += t0 != t || loc != l0 + j % v; /* a vector: one thread, consecutive registers */
                holds[t * m + r] = true;
            }
        /* a warp step: for fixed local vector digits, lanes in order hold consecutive vectors */
        for (int64_t t = 0; t < nt; t++) {
            int64_t d[3] = {0, 0, 0}, e0[2], e1[2];
            if (t % 32 == 31) continue;
            for (d[0] = 0; d[0] < l->local_shape[0]; d[0]++)
                for (d[1] = 0; d[1] < l->local_shape[1]; d[1]++) {
                    if (!ir_layout_inverse(l, t, d, e0) || !ir_layout_inverse(l, t + 1, d, e1)) {
                        bad++;
                        continue;
                    }
                    bad += e1[0] * n + e1[1] != e0[0] * n + e0[1] + (L == 32 || (t + 1) % L ? v : n - (L - 1) * v);
                }
        }
        for (int64_t r = 0; r < m; r++) {
            int64_t cnt = 0;
            for (int64_t rep = 0; rep < p->replicate; rep++) {
                int64_t t, loc;
                ir_layout_forward(p, &r, rep, &t, &loc);
                bad += !holds[t * m + r];
                bad += ir_layout_local_at(p, &r, t) != loc;
                cnt++;
            }
            for (int64_t t = 0; t < nt; t++) cnt -= holds[t * m + r];
            bad += cnt != 0;
        }
        free(holds);
        CHECK_EQ_INT(0, bad);
    }
    CHECK(ir_layout_warp_rows_vec(k, 16, 48, 4, 4) == NULL); /* 12 vectors per row: not a power of two */
    CHECK(ir_layout_warp_rows_vec(k, 4, 64, 4, 4) == NULL);  /* 2 rows per warp step, 1 row per warp */
    CHECK(ir_layout_warp_rows_vec(k, 16, 66, 4, 4) == NULL); /* not whole vectors */
    /* v = 1 is the original family, same expressions */
    CHECK(ir_layout_equal(ir_layout_warp_rows_vec(k, 16, 64, 4, 1), ir_layout_warp_rows(k, 16, 64, 4)));
    ts_arena_free(&A);
}

/* Fewer rows than warps (RMSNorm's one row per block): row r on the W =
 * nw / m warps from r * W, its vectors in order over those W * 32 threads
 * (thread r * 32 W + (j / v) % (32 W)), and the projection of row r held by
 * exactly those threads. */
static void test_warp_rows_multi(void) {
    TsArena A;
    ts_arena_init(&A);
    IrKernel *k = kernel(&A);
    const int cfg[][4] = {{1, 8192, 4, 4}, {2, 1024, 4, 4}, {1, 1024, 8, 4}, {1, 128, 4, 1}, {2, 512, 8, 2}};
    for (int c = 0; c < 5; c++) {
        int64_t m = cfg[c][0], n = cfg[c][1];
        int nw = cfg[c][2], v = cfg[c][3];
        IrLayout *l = ir_layout_warp_rows_vec(k, m, n, nw, v), *p = ir_layout_warp_rows_vec_proj(k, m, n, nw, v);
        check_ok(&A, l, "warp_rows_vec (rows over warps)");
        check_ok(&A, p, "warp_rows_vec_proj (rows over warps)");
        if (!l || !p) continue;
        int64_t W = nw / m, L = 32 * W;
        CHECK_EQ_INT((int)L, ir_layout_row_lanes(l));
        CHECK_EQ_INT((int)W, ir_layout_row_warps(l));
        CHECK_EQ_INT((int)W, ir_layout_row_warps(p));
        int bad = 0;
        for (int64_t r = 0; r < m; r++)
            for (int64_t j = 0; j < n; j++) {
                int64_t idx[2] = {r, j}, t, loc, t0, l0;
                ir_layout_forward(l, idx, 0, &t, &loc);
                bad += t != r * L + (j / v) % L; /* the row's warps, vectors in thread order */
                int64_t j0[2] = {r, j - j % v};
                ir_layout_forward(l, j0, 0, &t0, &l0);
                bad += t0 != t || loc != l0 + j % v; /* a vector: one thread, consecutive registers */
            }
        for (int64_t r = 0; r < m; r++) {
            bool *seen = calloc((size_t)(32 * nw), 1);
            for (int64_t rep = 0; rep < p->replicate; rep++) {
                int64_t t, loc;
                ir_layout_forward(p, &r, rep, &t, &loc);
                bad += t / L != r || seen[t];
                seen[t] = true;
                bad += ir_layout_local_at(p, &r, t) != loc;
            }
            free(seen);
            bad += p->replicate != L;
        }
        CHECK_EQ_INT(0, bad);
    }
    CHECK(ir_layout_warp_rows_vec(k, 1, 256, 4, 4) == NULL); /* 64 vectors for 128 threads */
    CHECK(ir_layout_warp_rows_vec(k, 3, 1024, 4, 4) == NULL); /* 4 warps do not split into 3 rows */
    ts_arena_free(&A);
}

/* layout_inference does not re-check layouts at compile time: every
 * family is checked here over the parameters the pass can ask for. */
static void test_sweep(void) {
    TsArena A;
    ts_arena_init(&A);
    IrKernel *k = kernel(&A);
    int checked = 0, bad = 0;
    for (int wm = 1; wm <= 8; wm *= 2)
        for (int wn = 1; wn * wm <= 8; wn *= 2)
            for (int64_t m = 16 * wm; m <= 128; m *= 2)
                for (int64_t n = 8 * wn; n <= 256; n *= 2) {
                    const IrLayout *ls[2] = {ir_layout_mma_c(k, m, n, wm, wn), ir_layout_mma_rows(k, m, n, wm, wn)};
                    for (int i = 0; i < 2; i++) {
                        const char *why = "";
                        if (!ls[i] || !ir_layout_check(&A, ls[i], &why)) {
                            bad++;
                            fprintf(stderr, "mma %lldx%lld warps %dx%d (%d): %s\n", (long long)m, (long long)n, wm, wn, i, why);
                        }
                        checked++;
                    }
                }
    for (int nw = 1; nw <= 8; nw *= 2)
        for (int64_t m = nw; m <= 64; m *= 2)
            for (int64_t n = 32; n <= 1024; n *= 4) {
                const IrLayout *ls[2] = {ir_layout_warp_rows(k, m, n, nw), ir_layout_warp_rows_proj(k, m, n, nw)};
                for (int i = 0; i < 2; i++) {
                    const char *why = "";
                    if (!ls[i] || !ir_layout_check(&A, ls[i], &why)) bad++;
                    checked++;
                }
            }
    /* the vector members the pass asks for: 2/4/8-element vectors, rows of 8 to 1024 columns */
    for (int nw = 1; nw <= 8; nw *= 2)
        for (int64_t m = 1; m <= 64; m *= 2) /* (m < nw: rows over several warps) */
            for (int64_t n = 8; n <= 1024; n *= 2)
                for (int v = 1; v <= 8; v *= 2) {
                    const IrLayout *ls[2] = {ir_layout_warp_rows_vec(k, m, n, nw, v),
                                             ir_layout_warp_rows_vec_proj(k, m, n, nw, v)};
                    for (int i = 0; i < 2; i++) {
                        const char *why = "";
                        if (!ls[i]) continue; /* does not fit: the pass then takes another */
                        if (!ir_layout_check(&A, ls[i], &why)) {
                            bad++;
                            fprintf(stderr, "warp_rows %lldx%lld %d warps vec %d (%d): %s\n", (long long)m,
                                    (long long)n, nw, v, i, why);
                        }
                        checked++;
                    }
                }
    CHECK_EQ_INT(0, bad);
    CHECK(checked > 100);
    ts_arena_free(&A);
}

/* A broken layout must be caught: make the thread expression of a cyclic
 * layout disagree with its native map. */
static void test_check_catches(void) {
    TsArena A;
    ts_arena_init(&A);
    IrKernel *k = kernel(&A);
    int64_t s[1] = {256};
    IrLayout *l = ir_layout_cyclic(k, 1, s, 128);
    l->thread = ir_bin(&A, IR_FLOORMOD, ir_var_ref(&A, l->in[0]), ir_i32(&A, 64));
    const char *why = NULL;
    CHECK(!ir_layout_check(&A, l, &why));
    CHECK(why != NULL);
    ts_arena_free(&A);
}

/* PTX ISA, "Register Fragments and Shared Memory Matrix Layouts" of
 * wgmma.mma_async, matrix D of .m64nNk16 with .f32 accumulators (written
 * out again here from the ISA's figure, independently of layout.c): warp
 * w of the warpgroup holds rows 16w .. 16w + 15; in it, with groupID =
 * lane >> 2 and threadID_in_group = lane % 4, register i is at row 16w +
 * groupID + 8 * ((i >> 1) & 1), column 8 * (i >> 2) + threadID_in_group *
 * 2 + (i & 1). */
static void ptx_wgmma_d(int t, int i, int *row, int *col) {
    int w = t / 32, lane = t % 32;
    *row = 16 * w + (lane >> 2) + 8 * ((i >> 1) & 1);
    *col = 8 * (i >> 2) + (lane % 4) * 2 + (i & 1);
}

static void test_wgmma_c(void) {
    TsArena A;
    ts_arena_init(&A);
    IrKernel *k = kernel(&A);
    /* m, n, gm, gn, N of one instruction */
    const int cfg[][5] = {{64, 8, 1, 1, 8}, {64, 256, 1, 1, 256}, {128, 256, 2, 1, 256}, {128, 128, 1, 1, 128},
                          {128, 256, 1, 2, 128}, {256, 128, 2, 2, 64}, {64, 512, 1, 1, 256}};
    for (int c = 0; c < 7; c++) {
        int m = cfg[c][0], n = cfg[c][1], gm = cfg[c][2], gn = cfg[c][3], ni = cfg[c][4];
        IrLayout *l = ir_layout_wgmma_c(k, m, n, gm, gn);
        check_ok(&A, l, "wgmma_c");
        if (!l) continue;
        CHECK_EQ_INT(gm * gn * 128, l->nthreads);
        int WM = m / gm, WN = n / gn, bad = 0;
        /* warpgroup g issues, for its m64 tile mt and N chunk nc, one
         * instruction whose register i is local mt * WN / 2 + nc * ni / 2 + i
         * (the order wgmma_cuda.c passes them in) */
        for (int g = 0; g < gm * gn; g++)
            for (int t = 0; t < 128; t++)
                for (int mt = 0; mt < WM / 64; mt++)
                    for (int nc = 0; nc < WN / ni; nc++)
                        for (int i = 0; i < ni / 2; i++) {
                            int r, cc;
                            ptx_wgmma_d(t, i, &r, &cc);
                            int64_t idx[2] = {(g / gn) * WM + mt * 64 + r, (g % gn) * WN + nc * ni + cc}, th, loc;
                            ir_layout_forward(l, idx, 0, &th, &loc);
                            bad += th != g * 128 + t || loc != mt * WN / 2 + nc * ni / 2 + i;
                        }
        CHECK_EQ_INT(0, bad);
    }
    CHECK(ir_layout_wgmma_c(k, 32, 64, 1, 1) == NULL);
    CHECK(ir_layout_wgmma_c(k, 128, 60, 1, 1) == NULL);
    CHECK(ir_layout_wgmma_c(k, 128, 64, 4, 1) == NULL);
    ts_arena_free(&A);
}

/* The wgmma operand layouts and descriptors (PTX ISA, "Matrix Descriptor
 * Format" and "Shared Memory Matrix Layout"; doc/HOPPER.md), against
 * values worked out by hand. */
static void test_wgmma_desc(void) {
    /* bits 0-13: address >> 4; 16-29: LBO >> 4; 32-45: SBO >> 4; 62-63: mode */
    CHECK(ir_wgmma_desc(0, 16, 1024, 1) == 0x4000004000010000ull);
    CHECK(ir_wgmma_desc(0x400, 16384, 1024, 1) == 0x4000004004000040ull);
    CHECK(ir_wgmma_desc(0x12340, 0, 512, 2) == 0x8000002000001234ull);
    CHECK(ir_wgmma_desc(0x3FFF0, 256, 256, 3) == 0xC000001000103FFFull);
    IrSwizzle z;
    IrWgmmaOperand w;
    /* A 128 x 64 K-major: one 128B block, SBO 8 rows of 128 bytes */
    CHECK(ir_wgmma_operand(128, 64, 0, &z, &w));
    CHECK_EQ_INT(1, w.mode);
    CHECK_EQ_INT(128, w.row_bytes);
    CHECK_EQ_INT(1024, (int)w.sbo);
    CHECK_EQ_INT(0, z.lblk);
    CHECK_EQ_INT(3, z.bits);
    /* B 128 x 256 MN-major: four 128B blocks of 128 rows, LBO from one to the next */
    CHECK(ir_wgmma_operand(128, 256, 1, &z, &w));
    CHECK_EQ_INT(16384, (int)w.blk_bytes);
    CHECK_EQ_INT(16384, (int)w.lbo);
    CHECK_EQ_INT(6, z.lblk);
    CHECK_EQ_INT(8, z.lcols);
    /* 64B and 32B rows */
    CHECK(ir_wgmma_operand(64, 32, 0, &z, &w));
    CHECK_EQ_INT(2, w.mode);
    CHECK_EQ_INT(512, (int)w.sbo);
    CHECK_EQ_INT(2, z.bits);
    CHECK(ir_wgmma_operand(64, 16, 1, &z, &w));
    CHECK_EQ_INT(3, w.mode);
    CHECK_EQ_INT(256, (int)w.sbo);
    CHECK_EQ_INT(1, z.bits);
    CHECK(!ir_wgmma_operand(64, 8, 0, &z, &w));
    CHECK(!ir_wgmma_operand(60, 64, 0, &z, &w));
    CHECK(!ir_wgmma_operand(64, 96, 0, &z, &w));
    /* the blocked swizzle: element (r, c) of a 128 x 256 tile lands in block
     * c / 64 at row r, its 16-byte chunk XORed by r % 8 (the 128B atom) */
    CHECK(ir_wgmma_operand(128, 256, 1, &z, &w));
    int bad = 0;
    uint8_t *seen = calloc(2 * 128 * 256, 1);
    for (int64_t o = 0; o < 2 * 128 * 256; o++) { /* two stages */
        int64_t st = o / (128 * 256), r = (o / 256) % 128, c = o % 256;
        int64_t want = st * 128 * 256 + (c / 64) * 128 * 64 + r * 64 + ((((c % 64) / 8) ^ (r % 8)) * 8) + c % 8;
        int64_t got = ir_swizzle_apply(&z, o);
        bad += got != want || seen[got];
        seen[got] = 1;
    }
    free(seen);
    CHECK_EQ_INT(0, bad);
    CHECK_EQ_INT(128 * 256, (int)ir_swizzle_period(&z));
    /* unblocked 64B: chunk bits 0-1 XORed by (offset / 64 elements) % 4 (Swizzle<2,4,3> on bytes) */
    CHECK(ir_wgmma_operand(64, 32, 0, &z, &w));
    bad = 0;
    for (int64_t o = 0; o < 64 * 32; o++) {
        int64_t chunk = (o / 8) % 4, x = (o / 64) % 4;
        bad += ir_swizzle_apply(&z, o) != o - chunk * 8 + ((chunk ^ x) * 8);
    }
    CHECK_EQ_INT(0, bad);
}

int main(void) {
    test_wgmma_c();
    test_wgmma_desc();
    test_mma_c();
    test_mma_a();
    test_cyclic();
    test_warp_rows();
    test_warp_rows_vec();
    test_warp_rows_multi();
    test_sweep();
    test_check_catches();
    return test_done();
}
