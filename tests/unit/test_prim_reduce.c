/*
 * test_prim_reduce.c — T.fill, T.clear, T.reduce_*, T.cumsum and
 * T.atomic_add on the C target, against naive C loops on fresh random data.
 *
 *   - Reductions: every kind (max, min, sum, abssum, absmax) along dim 0,
 *     dim 1 and dim -1, with clear=True and with clear=False.  For
 *     clear=False the destination fragment is first loaded from a random
 *     input, so the result must combine the old values with the reduction
 *     (sum: old + r, max: max(old, r), ...); a kernel that ignored `clear`
 *     or the old values would fail.  Also float16 and int32 data, a
 *     destination that keeps the reduced axis as extent 1, and rows of
 *     -inf / +inf built with T.infinity.
 *   - T.cumsum along both dims, forward and reverse, in place in shared
 *     memory and into a separate fragment.
 *   - T.atomic_add, element form: hundreds of blocks add into a handful of
 *     counters; the launch uses more worker threads than blocks can be
 *     serialized by, so lost updates (a plain read-modify-write) show up
 *     as exact mismatches on integer-valued data (int32, float32 and
 *     float16, whose sums stay exactly representable).  Tile/region form:
 *     a split-K style accumulation of partial tiles into a global tensor
 *     that starts with random values (not zero), partial tiles guarded.
 *   - T.fill with constants and run-time values, on whole buffers and
 *     regions of shared, fragment, local and global buffers; T.clear.
 */
#include "kernel_test.h"

/* ---- reductions ----------------------------------------------------------------------------- */

/* A block reduces a (bm, N) tile of A.  dim 1/-1: Out is (M,), one value per
 * row; dim 0: Out is (M / bm, N), one row per block.  Init has Out's shape
 * and is where clear=False starts from. */
static const char *SRC_REDUCE =
    "@tilelang.jit(out_idx=[2])\n"
    "def red(M, N, bm, kind, dim, clear, dt=\"float32\"):\n"
    "    out_shape = (M // bm, N) if dim == 0 else (M,)\n"
    "    tile_out = (N,) if dim == 0 else (bm,)\n"
    "\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), dt), Init: T.Tensor(out_shape, dt), Out: T.Tensor(out_shape, dt)):\n"
    "        with T.Kernel(M // bm, threads=128) as bx:\n"
    "            A_s = T.alloc_shared((bm, N), dt)\n"
    "            A_f = T.alloc_fragment((bm, N), dt)\n"
    "            R = T.alloc_fragment(tile_out, dt)\n"
    "            T.copy(A[bx * bm, 0], A_s)\n"
    "            T.copy(A_s, A_f)\n"
    "            if dim == 0:\n"
    "                T.copy(Init[bx, :], R)\n"
    "            else:\n"
    "                T.copy(Init[bx * bm : (bx + 1) * bm], R)\n"
    "            if kind == \"max\":\n"
    "                T.reduce_max(A_f, R, dim=dim, clear=clear)\n"
    "            elif kind == \"min\":\n"
    "                T.reduce_min(A_f, R, dim=dim, clear=clear)\n"
    "            elif kind == \"sum\":\n"
    "                T.reduce_sum(A_f, R, dim, clear)\n"
    "            elif kind == \"abssum\":\n"
    "                T.reduce_abssum(A_f, R, dim=dim, clear=clear)\n"
    "            else:\n"
    "                T.reduce_absmax(A_f, R, dim=dim, clear=clear)\n"
    "            if dim == 0:\n"
    "                T.copy(R, Out[bx, :])\n"
    "            else:\n"
    "                T.copy(R, Out[bx * bm])\n"
    "    return main\n"
    "\n"
    /* the reduced axis kept as extent 1, default dim (last), shared source */
    "@tilelang.jit(out_idx=[1])\n"
    "def red_keep(M, N, bm):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), Out: T.Tensor((M, 1), \"float32\")):\n"
    "        with T.Kernel(M // bm, threads=128) as bx:\n"
    "            A_s = T.alloc_shared((bm, N), \"float32\")\n"
    "            R = T.alloc_fragment((bm, 1), \"float32\")\n"
    "            T.copy(A[bx * bm, 0], A_s)\n"
    "            T.reduce_sum(A_s, R)\n"
    "            T.copy(R, Out[bx * bm, 0])\n"
    "    return main\n"
    "\n"
    /* rows 0 and 1 of each tile become -inf / +inf; then max, min, sum */
    "@tilelang.jit(out_idx=[1, 2, 3])\n"
    "def red_inf(M, N, bm):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), Mx: T.Tensor((M,), \"float32\"),\n"
    "             Mn: T.Tensor((M,), \"float32\"), Sm: T.Tensor((M,), \"float32\")):\n"
    "        with T.Kernel(M // bm, threads=128) as bx:\n"
    "            A_f = T.alloc_fragment((bm, N), \"float32\")\n"
    "            r = T.alloc_fragment((bm,), \"float32\")\n"
    "            T.copy(A[bx * bm, 0], A_f)\n"
    "            for i, j in T.Parallel(bm, N):\n"
    "                A_f[i, j] = T.if_then_else(i == 0, -T.infinity(\"float32\"), A_f[i, j])\n"
    "            for j in T.Parallel(N):\n"
    "                A_f[1, j] = T.infinity(\"float32\")\n"
    "            T.fill(r, -T.infinity(\"float32\"))\n"
    "            T.reduce_max(A_f, r, dim=1, clear=False)\n"
    "            T.copy(r, Mx[bx * bm])\n"
    "            T.reduce_min(A_f, r, dim=1)\n"
    "            T.copy(r, Mn[bx * bm])\n"
    "            T.reduce_sum(A_f, r, dim=-1)\n"
    "            T.copy(r, Sm[bx * bm])\n"
    "    return main\n";

static double combine(const char *kind, double acc, double x) {
    if (!strcmp(kind, "max")) return x > acc ? x : acc;
    if (!strcmp(kind, "min")) return x < acc ? x : acc;
    if (!strcmp(kind, "sum")) return acc + x;
    if (!strcmp(kind, "abssum")) return acc + fabs(x);
    return fabs(x) > acc ? fabs(x) : acc;
}

static double identity(const char *kind) {
    if (!strcmp(kind, "max")) return -INFINITY;
    if (!strcmp(kind, "min")) return INFINITY;
    return 0;
}

/* With clear=False the old value joins as a reduced value itself (abs
 * forms: it is combined as is, not through abs). */
static double join_old(const char *kind, double old, double r) {
    if (!strcmp(kind, "max") || !strcmp(kind, "absmax")) return old > r ? old : r;
    if (!strcmp(kind, "min")) return old < r ? old : r;
    return old + r;
}

static void reduce_case(const char *kind, int dim, int clear, TsDType dt) {
    int64_t bm = 8, M = 24, N = 37;
    int rd = dim < 0 ? dim + 2 : dim;
    char defs[200], what[200];
    snprintf(defs, sizeof defs, "M=%lld N=%lld bm=%lld kind=%s dim=%d clear=%s dt=%s", (long long)M, (long long)N,
             (long long)bm, kind, dim, clear ? "True" : "False", ts_dtype_name(dt));
    snprintf(what, sizeof what, "reduce_%s dim=%d clear=%d %s", kind, dim, clear, ts_dtype_name(dt));
    TsKernel *k = kt_compile(SRC_REDUCE, "red", defs);
    int64_t on = rd == 0 ? (M / bm) * N : M;
    TsTensor a = kt_tensor(dt, 2, M, N);
    TsTensor init = rd == 0 ? kt_tensor(dt, 2, M / bm, N) : kt_tensor(dt, 1, M);
    TsTensor out = rd == 0 ? kt_tensor(dt, 2, M / bm, N) : kt_tensor(dt, 1, M);
    if (kt_is_float(dt)) {
        kt_fill(&a, -4, 4);
        kt_fill(&init, -3, 3);
    } else {
        kt_fill(&a, -1000, 1000);
        kt_fill(&init, -3000, 3000);
    }
    kt_poison(&out);
    TsTensor args[3] = {a, init, out};
    if (kt_launch(k, args, 3)) {
        double *w = kt_zeros(on);
        for (int64_t o = 0; o < on; o++) {
            double acc = identity(kind);
            if (rd == 1) {
                for (int64_t j = 0; j < N; j++) acc = combine(kind, acc, ts_tensor_get(&a, o * N + j));
            } else {
                int64_t blk = o / N, j = o % N;
                for (int64_t i = 0; i < bm; i++) acc = combine(kind, acc, ts_tensor_get(&a, (blk * bm + i) * N + j));
            }
            if (!clear) acc = join_old(kind, ts_tensor_get(&init, o), acc);
            w[o] = kt_round(dt, acc);
        }
        /* sums of N float32 values: float32 accumulation error */
        KT_COMPARE(what, &out, w, kt_is_float(dt) ? 1e-5 : 0, kt_rtol(dt));
        free(w);
    }
    ts_tensor_free(&a);
    ts_tensor_free(&init);
    ts_tensor_free(&out);
    ts_kernel_destroy(k);
}

static void test_reduce(void) {
    static const char *kinds[] = {"max", "min", "sum", "abssum", "absmax"};
    static const int dims[] = {0, 1, -1};
    for (int kd = 0; kd < 5; kd++)
        for (int d = 0; d < 3; d++)
            for (int c = 0; c < 2; c++) reduce_case(kinds[kd], dims[d], c, TS_FLOAT32);
    reduce_case("sum", 1, 0, TS_FLOAT16);
    reduce_case("max", 0, 1, TS_FLOAT16);
    reduce_case("absmax", -1, 0, TS_BFLOAT16);
    reduce_case("sum", 0, 0, TS_INT32);
    reduce_case("max", 1, 1, TS_INT32);
    reduce_case("min", 0, 0, TS_INT32);

    {
        int64_t M = 32, N = 19;
        TsKernel *k = kt_compile(SRC_REDUCE, "red_keep", "M=32 N=19 bm=16");
        TsTensor a = kt_tensor(TS_FLOAT32, 2, M, N), o = kt_tensor(TS_FLOAT32, 2, M, 1);
        kt_fill(&a, -1, 1);
        kt_poison(&o);
        TsTensor args[2] = {a, o};
        if (kt_launch(k, args, 2)) {
            double *w = kt_zeros(M);
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) w[i] += ts_tensor_get(&a, i * N + j);
            KT_COMPARE("reduce_sum into (bm, 1), default dim, shared source", &o, w, 1e-5, 1e-5);
            free(w);
        }
        ts_tensor_free(&a);
        ts_tensor_free(&o);
        ts_kernel_destroy(k);
    }
    {
        int64_t M = 16, N = 13, bm = 8;
        TsKernel *k = kt_compile(SRC_REDUCE, "red_inf", "M=16 N=13 bm=8");
        TsTensor a = kt_tensor(TS_FLOAT32, 2, M, N), mx = kt_tensor(TS_FLOAT32, 1, M);
        TsTensor mn = kt_tensor(TS_FLOAT32, 1, M), sm = kt_tensor(TS_FLOAT32, 1, M);
        kt_fill(&a, -5, 5);
        kt_poison(&mx);
        kt_poison(&mn);
        kt_poison(&sm);
        TsTensor args[4] = {a, mx, mn, sm};
        if (kt_launch(k, args, 4)) {
            double *wx = kt_zeros(M), *wn = kt_zeros(M), *ws = kt_zeros(M);
            for (int64_t i = 0; i < M; i++) {
                double x = -INFINITY, n = INFINITY, s = 0;
                for (int64_t j = 0; j < N; j++) {
                    double v = i % bm == 0 ? -INFINITY : i % bm == 1 ? INFINITY : ts_tensor_get(&a, i * N + j);
                    x = fmax(x, v);
                    n = fmin(n, v);
                    s += v;
                }
                wx[i] = x;
                wn[i] = n;
                ws[i] = s;
            }
            KT_COMPARE("reduce_max over -inf rows (T.infinity), clear=False", &mx, wx, 0, 0);
            KT_COMPARE("reduce_min over +inf rows", &mn, wn, 0, 0);
            KT_COMPARE("reduce_sum dim=-1 with infinite rows", &sm, ws, 1e-5, 1e-5);
            free(wx);
            free(wn);
            free(ws);
        }
        ts_tensor_free(&a);
        ts_tensor_free(&mx);
        ts_tensor_free(&mn);
        ts_tensor_free(&sm);
        ts_kernel_destroy(k);
    }
}

/* ---- cumsum --------------------------------------------------------------------------------- */

/* Block b takes A[b] (M x N): P = cumsum in place in shared, Q = cumsum into
 * a fragment (source untouched: it is copied out again as R). */
static const char *SRC_CUMSUM =
    "@tilelang.jit(out_idx=[1, 2, 3])\n"
    "def cums(Bt, M, N, dim, reverse, dt=\"float32\"):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((Bt, M, N), dt), P: T.Tensor((Bt, M, N), dt), Q: T.Tensor((Bt, M, N), \"float32\"),\n"
    "             R: T.Tensor((Bt, M, N), dt)):\n"
    "        with T.Kernel(Bt, threads=64) as b:\n"
    "            S = T.alloc_shared((M, N), dt)\n"
    "            S2 = T.alloc_shared((M, N), dt)\n"
    "            F = T.alloc_fragment((M, N), \"float32\")\n"
    "            T.copy(A[b, :, :], S)\n"
    "            T.copy(S, S2)\n"
    "            T.cumsum(S2, F, dim=dim, reverse=reverse)\n"
    "            T.cumsum(S, dim=dim, reverse=reverse)\n"
    "            T.copy(S, P[b, :, :])\n"
    "            T.copy(F, Q[b, :, :])\n"
    "            T.copy(S2, R[b, :, :])\n"
    "    return main\n";

static void cumsum_case(int dim, int reverse, TsDType dt) {
    int64_t Bt = 3, M = 11, N = 17;
    int d = dim < 0 ? dim + 2 : dim;
    char defs[200], what[200];
    snprintf(defs, sizeof defs, "Bt=3 M=11 N=17 dim=%d reverse=%s dt=%s", dim, reverse ? "True" : "False",
             ts_dtype_name(dt));
    TsKernel *k = kt_compile(SRC_CUMSUM, "cums", defs);
    TsTensor a = kt_tensor(dt, 3, Bt, M, N), p = kt_tensor(dt, 3, Bt, M, N);
    TsTensor q = kt_tensor(TS_FLOAT32, 3, Bt, M, N), r = kt_tensor(dt, 3, Bt, M, N);
    kt_fill(&a, -2, 2);
    kt_poison(&p);
    kt_poison(&q);
    kt_poison(&r);
    TsTensor args[4] = {a, p, q, r};
    if (kt_launch(k, args, 4)) {
        int64_t n = Bt * M * N, len = d == 0 ? M : N;
        double *w = kt_zeros(n), *wr = kt_values(&a);
        for (int64_t b = 0; b < Bt; b++)
            for (int64_t o = 0; o < (d == 0 ? N : M); o++) {
                double acc = 0;
                for (int64_t t = 0; t < len; t++) {
                    int64_t pos = reverse ? len - 1 - t : t;
                    int64_t i = b * M * N + (d == 0 ? pos * N + o : o * N + pos);
                    acc += ts_tensor_get(&a, i);
                    w[i] = acc;
                }
            }
        snprintf(what, sizeof what, "cumsum dim=%d reverse=%d into a fragment", dim, reverse);
        KT_COMPARE(what, &q, w, 1e-5, 1e-5);
        for (int64_t i = 0; i < n; i++) w[i] = kt_round(dt, w[i]);
        snprintf(what, sizeof what, "cumsum dim=%d reverse=%d in place (%s)", dim, reverse, ts_dtype_name(dt));
        KT_COMPARE(what, &p, w, 1e-5, kt_rtol(dt));
        KT_COMPARE("cumsum source left as it was", &r, wr, 0, 0);
        free(w);
        free(wr);
    }
    ts_tensor_free(&a);
    ts_tensor_free(&p);
    ts_tensor_free(&q);
    ts_tensor_free(&r);
    ts_kernel_destroy(k);
}

static void test_cumsum(void) {
    for (int d = 0; d < 2; d++)
        for (int r = 0; r < 2; r++) cumsum_case(d, r, TS_FLOAT32);
    cumsum_case(-1, 1, TS_FLOAT32);
    cumsum_case(1, 0, TS_FLOAT16);
}

/* ---- atomic_add ------------------------------------------------------------------------------ */

/* Element form: block b adds A[b, j] into H[j % 4] one by one, and its row
 * total (a var) into Total[0]. */
static const char *SRC_ATOMIC =
    "@tilelang.jit(out_idx=[])\n"
    "def hist(G, N, dt):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((G, N), dt), H: T.Tensor((4,), dt), Total: T.Tensor((1,), dt)):\n"
    "        with T.Kernel(G, threads=32) as b:\n"
    "            s = T.alloc_var(dt)\n"
    "            s = 0\n"
    "            for j in T.serial(N):\n"
    "                T.atomic_add(H[j % 4], A[b, j])\n"
    "                s += A[b, j]\n"
    "            T.atomic_add(Total[0], s)\n"
    "    return main\n"
    "\n"
    /* Tile form: split-K style.  Block (bx, by, z) adds tile A[z, rows, cols]
     * (times 2, in a fragment) into C, once through the element-start form
     * and once through slices. */
    "@tilelang.jit(out_idx=[])\n"
    "def tiles(Z, M, N, bm, bn):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((Z, M, N), \"float32\"), C: T.Tensor((M, N), \"float32\"),\n"
    "             D: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), Z, threads=128) as (bx, by, z):\n"
    "            F = T.alloc_fragment((bm, bn), \"float32\")\n"
    "            T.copy(A[z, by * bm, bx * bn], F)\n"
    "            for i, j in T.Parallel(bm, bn):\n"
    "                F[i, j] = F[i, j] * 2\n"
    "            T.atomic_add(C[by * bm, bx * bn], F)\n"
    "            T.atomic_add(D[by * bm : (by + 1) * bm, bx * bn : (bx + 1) * bn], F)\n"
    "    return main\n";

static void atomic_case(TsDType dt, int64_t G, int64_t N, int64_t lo, int64_t hi) {
    char defs[200], what[200];
    snprintf(defs, sizeof defs, "G=%lld N=%lld dt=%s", (long long)G, (long long)N, ts_dtype_name(dt));
    TsKernel *k = kt_compile(SRC_ATOMIC, "hist", defs);
    TsTensor a = kt_tensor(dt, 2, G, N), h = kt_tensor(dt, 1, 4), t = kt_tensor(dt, 1, 1);
    /* integer values, so every partial sum is exact in dt and only lost
     * updates can make a difference */
    int64_t n = G * N;
    for (int64_t i = 0; i < n; i++) ts_tensor_set(&a, i, (double)kt_randint(lo, hi));
    for (int i = 0; i < 4; i++) ts_tensor_set(&h, i, (double)kt_randint(-50, 50));
    ts_tensor_set(&t, 0, 17);
    double base[4], sum_h[4] = {0, 0, 0, 0}, sum_t = 0, wh[4], wt[1];
    for (int i = 0; i < 4; i++) base[i] = ts_tensor_get(&h, i);
    for (int64_t i = 0; i < n; i++) {
        sum_h[(i % N) % 4] += ts_tensor_get(&a, i);
        sum_t += ts_tensor_get(&a, i);
    }
    TsTensor args[3] = {a, h, t};
    /* three launches on the same counters: each adds the same sums again */
    for (int rep = 1; rep <= 3; rep++) {
        if (!kt_launch(k, args, 3)) break;
        for (int i = 0; i < 4; i++) wh[i] = base[i] + rep * sum_h[i];
        wt[0] = 17 + rep * sum_t;
        snprintf(what, sizeof what, "atomic_add element form, %lld blocks into 4 counters (%s)", (long long)G,
                 ts_dtype_name(dt));
        KT_COMPARE(what, &h, wh, 0, 0);
        snprintf(what, sizeof what, "atomic_add of block totals into one scalar (%s)", ts_dtype_name(dt));
        KT_COMPARE(what, &t, wt, 0, 0);
    }
    ts_tensor_free(&a);
    ts_tensor_free(&h);
    ts_tensor_free(&t);
    ts_kernel_destroy(k);
}

static void test_atomic(void) {
    int saved = kt_opt.num_threads;
    kt_opt.num_threads = 8; /* more workers than cores: interleaving guaranteed */
    /* enough work per launch (2M adds) that all workers overlap in time */
    atomic_case(TS_INT32, 2048, 1024, -1000, 1000);
    atomic_case(TS_FLOAT32, 1024, 512, -100, 100); /* |sums| << 2^24: exact */
    atomic_case(TS_FLOAT16, 256, 32, -1, 1);       /* |sums| << 2^11: exact */
    atomic_case(TS_BFLOAT16, 64, 16, -1, 1);       /* |sums| << 2^8: exact */
    {
        int64_t Z = 5, M = 45, N = 38;
        TsKernel *k = kt_compile(SRC_ATOMIC, "tiles", "Z=5 M=45 N=38 bm=16 bn=16");
        TsTensor a = kt_tensor(TS_FLOAT32, 3, Z, M, N), c = kt_tensor(TS_FLOAT32, 2, M, N), d = kt_tensor(TS_FLOAT32, 2, M, N);
        kt_fill(&a, -1, 1);
        kt_fill(&c, -10, 10);
        kt_fill(&d, -10, 10);
        double *wc = kt_values(&c), *wd = kt_values(&d);
        for (int64_t z = 0; z < Z; z++)
            for (int64_t i = 0; i < M * N; i++) {
                wc[i] += 2 * ts_tensor_get(&a, z * M * N + i);
                wd[i] += 2 * ts_tensor_get(&a, z * M * N + i);
            }
        TsTensor args[3] = {a, c, d};
        if (kt_launch(k, args, 3)) {
            KT_COMPARE("atomic_add tile form C[by*bm, bx*bn] += F (split over z, partial tiles)", &c, wc, 1e-5, 1e-5);
            KT_COMPARE("atomic_add region form D[a:b, c:d] += F", &d, wd, 1e-5, 1e-5);
        }
        free(wc);
        free(wd);
        ts_tensor_free(&a);
        ts_tensor_free(&c);
        ts_tensor_free(&d);
        ts_kernel_destroy(k);
    }
    kt_opt.num_threads = saved;
}

/* ---- fill / clear ---------------------------------------------------------------------------- */

/* Out rows: block bx writes rows [bx*bm, (bx+1)*bm) of Out (guarded partial
 * last tile) with: column 0..3 = value of a shared buffer filled with the
 * constant 2.5 then region [.., 1:3] filled with A[bx, 0] (a run-time
 * value); columns 4.. = fragment cleared then += 1; local buffer filled with
 * an int; IntOut cleared int tile; G: a global region filled directly. */
static const char *SRC_FILL =
    "@tilelang.jit(out_idx=[1, 2])\n"
    "def fills(M, bm):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, 8), \"float32\"), Out: T.Tensor((M, 8), \"float32\"),\n"
    "             IntOut: T.Tensor((M, 3), \"int32\"), G: T.Tensor((M, 5), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(M, bm), threads=32) as bx:\n"
    "            S = T.alloc_shared((bm, 4), \"float32\")\n"
    "            F = T.alloc_fragment((bm, 4), \"float32\")\n"
    "            L = T.alloc_local((4,), \"int32\")\n"
    "            I = T.alloc_fragment((bm, 3), \"int32\")\n"
    "            T.fill(S, 2.5)\n"
    "            T.fill(S[:, 1:3], A[bx * bm, 0])\n"
    "            T.clear(F)\n"
    "            T.fill(L, 7)\n"
    "            for i, j in T.Parallel(bm, 4):\n"
    "                F[i, j] += L[j] + 1\n"
    "            T.clear(I)\n"
    "            I[0, 0] = 5\n"
    "            T.copy(S, Out[bx * bm, 0])\n"
    "            T.copy(F, Out[bx * bm, 4])\n"
    "            T.copy(I, IntOut[bx * bm, 0])\n"
    "            T.fill(G[bx * bm : (bx + 1) * bm, 1:4], -3.25)\n"
    "    return main\n";

static void test_fill(void) {
    int64_t M = 21, bm = 8;
    TsKernel *k = kt_compile(SRC_FILL, "fills", "M=21 bm=8");
    TsTensor a = kt_tensor(TS_FLOAT32, 2, M, 8), o = kt_tensor(TS_FLOAT32, 2, M, 8);
    TsTensor io = kt_tensor(TS_INT32, 2, M, 3), g = kt_tensor(TS_FLOAT32, 2, M, 5);
    kt_fill(&a, -1, 1);
    kt_poison(&o);
    kt_poison(&io);
    kt_fill(&g, 10, 20);
    double *wg = kt_values(&g);
    TsTensor args[4] = {a, o, io, g};
    if (kt_launch(k, args, 4)) {
        double *w = kt_zeros(M * 8), *wi = kt_zeros(M * 3);
        for (int64_t i = 0; i < M; i++) {
            double v = ts_tensor_get(&a, (i / bm) * bm * 8);
            for (int j = 0; j < 4; j++) w[i * 8 + j] = j == 1 || j == 2 ? v : 2.5;
            for (int j = 4; j < 8; j++) w[i * 8 + j] = 8;
            wi[i * 3] = i % bm == 0 ? 5 : 0;
            for (int j = 1; j < 4; j++) wg[i * 5 + j] = -3.25;
        }
        KT_COMPARE("T.fill constant and run-time value on shared regions, T.clear + local fill", &o, w, 0, 0);
        KT_COMPARE("T.clear of an int32 fragment", &io, wi, 0, 0);
        KT_COMPARE("T.fill of a global region (rest untouched, partial tile guarded)", &g, wg, 0, 0);
        free(w);
        free(wi);
    }
    free(wg);
    ts_tensor_free(&a);
    ts_tensor_free(&o);
    ts_tensor_free(&io);
    ts_tensor_free(&g);
    ts_kernel_destroy(k);
}

int main(void) {
    kt_init("test_prim_reduce");
    test_reduce();
    test_cumsum();
    test_atomic();
    test_fill();
    kt_finish();
    return test_done();
}
