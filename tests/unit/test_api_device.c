/*
 * test_api_device.c — the device-pointer entry points of the public API
 * (ts_kernel_launch_device, ts_kernel_prepare_device and its plans,
 * ts_kernel_shared_bytes, ts_kernel_target)
 * that the Python layer uses for torch CUDA tensors, and the layout
 * pictures (ts_kernel_plot_layouts, src/driver/plot.c).  CI has no GPU, so
 * this checks what can be checked without one: a C-target kernel and a
 * CUDA kernel compiled without a build refuse device launches with a
 * status and a message (never a crash), and the queries answer.  The
 * launch itself is covered on the device by bench/py_launch_overhead.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "tilescale.h"

static const char *SRC =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "@tilelang.jit(out_idx=[-1])\n"
    "def add(N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), \"float32\"), B: T.Tensor((N,), \"float32\"), C: T.Tensor((N,), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, 32), threads=32) as bx:\n"
    "            for i in T.Parallel(32):\n"
    "                if bx * 32 + i < N:\n"
    "                    C[bx * 32 + i] = A[bx * 32 + i] + B[bx * 32 + i]\n"
    "    return main\n";

/* A GEMM whose 64 x 64 float32 accumulator gets the mma.sync C layout and
 * whose float16 shared tiles get an XOR swizzle on the CUDA target. */
static const char *GEMM =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "@tilelang.jit(out_idx=[-1])\n"
    "def mm(M, N, K):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"), C: T.Tensor((M, N), \"float16\")):\n"
    "        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):\n"
    "            A_s = T.alloc_shared((64, 64), \"float16\")\n"
    "            B_s = T.alloc_shared((64, 64), \"float16\")\n"
    "            C_l = T.alloc_fragment((64, 64), \"float32\")\n"
    "            T.clear(C_l)\n"
    "            for k in T.Pipelined(T.ceildiv(K, 64), num_stages=1):\n"
    "                T.copy(A[by * 64, k * 64], A_s)\n"
    "                T.copy(B[k * 64, bx * 64], B_s)\n"
    "                T.gemm(A_s, B_s, C_l)\n"
    "            T.copy(C_l, C[by * 64, bx * 64])\n"
    "    return main\n";

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

/* The start of cell (row, col)'s rectangle in the SVG (plot.c's geometry:
 * 44 x 30 cells from (40, 80)). */
static void cell_head(char *buf, size_t n, int row, int col) {
    snprintf(buf, n, "<rect x=\"%d\" y=\"%d\" width=\"44\" height=\"30\" fill=", 40 + col * 44, 80 + row * 30);
}

/* Cell (row, col) of svg shows l1 over l2. */
static void check_cell(const char *svg, int row, int col, const char *l1, const char *l2) {
    char head[128], labels[160];
    cell_head(head, sizeof head, row, col);
    const char *p = svg ? strstr(svg, head) : NULL;
    CHECK(p != NULL);
    if (!p) return;
    int x = 40 + col * 44 + 22, y = 80 + row * 30;
    snprintf(labels, sizeof labels, "<text x=\"%d\" y=\"%d\">%s</text><text x=\"%d\" y=\"%d\">%s</text>", x, y + 12,
             l1, x, y + 25, l2);
    const char *e = strchr(p, '\n');
    CHECK(e && strstr(p, labels) && strstr(p, labels) < e);
    if (!(e && strstr(p, labels) && strstr(p, labels) < e)) fprintf(stderr, "  cell (%d, %d) wants %s\n", row, col, labels);
}

static void test_plot_layouts(TsContext *ctx) {
    TsDefine defs[] = {{"M", "128"}, {"N", "128"}, {"K", "128"}};
    TsCompileOptions opt = {0};
    opt.target = TS_TARGET_CUDA;
    opt.skip_build = 1;
    TsKernel *k = NULL;
    CHECK_EQ_INT(TS_OK, ts_compile_source(ctx, "mm.py", GEMM, "mm", defs, 3, &opt, &k));
    if (!k) return;
    char dir[] = "/tmp/ts_plot_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    int n = -1;
    CHECK_EQ_INT(TS_OK, ts_kernel_plot_layouts(k, dir, &n));
    CHECK(n >= 3);
    char path[256];
    snprintf(path, sizeof path, "%s/main_C_l.svg", dir);
    char *frag = slurp(path);
    CHECK(frag && strstr(frag, "mma_c(64 x 64"));
    /* PTX ISA, mma.m16n8k16 C fragment: lane 4g + t holds rows g and g + 8,
     * columns 2t and 2t + 1 (c0 c1 / c2 c3).  Warps in a wm x wn grid (warp
     * w at row w / wn, column w % wn), each holding (64/wm) x (64/wn) as
     * m16n8 tiles whose registers follow one another row-major. */
    int wm = 0, wn = 0;
    const char *w = frag ? strstr(frag, "warps ") : NULL;
    CHECK(w && sscanf(w, "warps %d x %d", &wm, &wn) == 2 && wm * wn == 4);
    if (wm * wn == 4) {
        int sm = 64 / wm, sn = 64 / wn, tiles_n = sn / 8;
        for (int r = 0; r < 64; r += 3)
            for (int c = 0; c < 64; c += 5) {
                int warp = (r / sm) * wn + c / sn, rr = r % sm, cc = c % sn;
                int lane = (rr % 8) * 4 + (cc % 8) / 2;
                int reg = (((rr / 16) * tiles_n + cc / 8) * 2 + (rr % 16) / 8) * 2 + cc % 2;
                char t[16], g[16];
                snprintf(t, sizeof t, "T%d", warp * 32 + lane);
                snprintf(g, sizeof g, "r%d", reg);
                check_cell(frag, r, c, t, g);
            }
    }
    snprintf(path, sizeof path, "%s/main_A_s.svg", dir);
    char *sh = slurp(path);
    CHECK(sh && strstr(sh, "XOR swizzle"));
    /* 64 float16 per row = 8 chunks of 16 bytes; with a <3, 3, 3> swizzle row
     * r's chunk c lands at chunk c ^ (r % 8): element (1, 0) in chunk 1, whose
     * first 4 bytes are bank 4 (row 1 starts at byte 128 = bank 0). */
    if (sh && strstr(sh, "<B=3, M=3, S=3>")) {
        check_cell(sh, 0, 0, "k0", "b0");
        check_cell(sh, 1, 0, "k1", "b4");
        check_cell(sh, 3, 9, "k2", "b8");
    }
    free(frag);
    free(sh);
    CHECK_EQ_INT(TS_ERR_IO, ts_kernel_plot_layouts(k, "/proc/ts/no/such", &n));
    CHECK_CONTAINS(ts_last_error(ctx), "cannot create directory");
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_plot_layouts(k, NULL, &n));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_plot_layouts(NULL, dir, &n));
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_EQ_INT(0, system(cmd));
    ts_kernel_destroy(k);
}

int main(void) {
    static int ok_marker;
    TsContext *ctx;
    CHECK_EQ_INT(TS_OK, ts_context_create(&ctx));
    TsDefine defs[] = {{"N", "64"}};
    float a[64], b[64], c[64];
    int64_t shape[1] = {64};
    for (int i = 0; i < 64; i++) a[i] = (float)rand() / RAND_MAX, b[i] = (float)rand() / RAND_MAX, c[i] = -1;
    TsTensor args[3] = {{a, TS_FLOAT32, 1, shape, NULL}, {b, TS_FLOAT32, 1, shape, NULL}, {c, TS_FLOAT32, 1, shape, NULL}};

    /* C target: device launches are refused; host launches still work */
    TsKernel *k = NULL;
    CHECK_EQ_INT(TS_OK, ts_compile_source(ctx, "add.py", SRC, "add", defs, 1, NULL, &k));
    CHECK_EQ_INT(TS_TARGET_C, ts_kernel_target(k));
    CHECK_EQ_INT(-1, ts_kernel_shared_bytes(k));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_launch_device(k, args, 3, NULL));
    CHECK_CONTAINS(ts_last_error(ctx), "CUDA target");
    TsPlan *plan = (TsPlan *)&ok_marker;
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_prepare_device(k, args, 3, &plan));
    CHECK(plan == NULL);
    CHECK_CONTAINS(ts_last_error(ctx), "CUDA target");
    CHECK_EQ_STR("64", ts_kernel_param_extent(k, 2, 0)); /* an extent's text (here a constant) */
    CHECK(ts_kernel_param_extent(k, 2, 1) == NULL && ts_kernel_param_extent(k, 3, 0) == NULL &&
          ts_kernel_param_extent(NULL, 0, 0) == NULL);
    CHECK_EQ_INT(TS_OK, ts_kernel_launch(k, args, 3));
    int ok = 1;
    for (int i = 0; i < 64; i++) ok &= c[i] == a[i] + b[i];
    CHECK(ok);
    ts_kernel_destroy(k);
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_launch_device(NULL, args, 3, NULL));
    CHECK_EQ_INT(-1, ts_kernel_shared_bytes(NULL));

    /* CUDA target without a build (no NVRTC needed): refused, not crashed */
    TsCompileOptions opt = {0};
    opt.target = TS_TARGET_CUDA;
    opt.skip_build = 1;
    k = NULL;
    CHECK_EQ_INT(TS_OK, ts_compile_source(ctx, "add.py", SRC, "add", defs, 1, &opt, &k));
    CHECK_EQ_INT(TS_TARGET_CUDA, ts_kernel_target(k));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_launch_device(k, args, 3, NULL));
    CHECK_CONTAINS(ts_last_error(ctx), "without a build");
    plan = (TsPlan *)&ok_marker;
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_prepare_device(k, args, 3, &plan));
    CHECK(plan == NULL);
    CHECK_CONTAINS(ts_last_error(ctx), "without a build");
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_prepare_device(NULL, args, 3, &plan));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_prepare_device(k, args, 3, NULL));
    CHECK(ts_plan_pointers(NULL) == NULL);
    CHECK_EQ_INT(TS_ERR_INVALID, ts_plan_launch(NULL, NULL));
    uint64_t words[4] = {0};
    CHECK_EQ_INT(TS_ERR_INVALID, ts_plan_launch_packed(NULL, words));
    ts_kernel_destroy(k);
    test_plot_layouts(ctx);
    ts_context_destroy(ctx);
    return test_done();
}
