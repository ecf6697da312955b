/*
 * plot.c — pictures of a compiled kernel's layouts, as SVG files
 * (ts_kernel_plot_layouts; `tilescale compile --plot-layouts DIR`;
 * kernel.plot_layouts(dir) in Python).
 *
 * Why pictures: a fragment layout (which thread holds which element, in
 * which register) and a shared-memory swizzle (where each element really
 * lands, hence which bank it hits) are maps over thousands of elements;
 * printed as formulas (ir_layout_describe) they are hard to check by eye,
 * drawn as a grid they are obvious — TileLang users know such pictures
 * from its plot_layout.  SVG is text, so this needs no plotting library
 * and the files open in any browser.
 *
 * One file per buffer, <kernel>_<buffer>.svg (with _k<i> for the i-th
 * kernel of a chain after the first):
 *
 *   fragment  (a buffer with an IrLayout: CUDA target after layout
 *             inference) a grid of its logical elements, rows = all but the
 *             last dimension, columns = the last; each cell names the
 *             thread holding the element ("T37") and its register (local
 *             index, "r5"), coloured by lane (hue) and warp (lightness);
 *             a replicated layout shows the first holder and says how many.
 *   shared    a grid of its logical elements; each cell gives where the
 *             element is stored after the swizzle: its 16-byte chunk
 *             within the row ("k3") and its bank ("b12"), coloured by bank,
 *             so bank conflicts of a column read show as repeated colours.
 *
 * The native layout maps of layout.c (ir_layout_forward) and the same
 * swizzle formula as the code generators (TS_SWZ in codegen_cuda.c:
 * bits [M, M+B) of the element offset XORed with bits [M+S, M+S+B)) are
 * evaluated per element.  Grids larger than 128 x 128 show their top-left
 * 128 x 128 corner and say so.  Buffers with non-constant extents are
 * skipped.  Errors (the directory cannot be written) come back as
 * TS_ERR_IO with the reason in the context's diagnostic.
 */
#include "core.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/layout.h"

#define MAX_SIDE 128 /* cells drawn per row and per column at most */
#define CELL_W 44    /* cell width in SVG units */
#define CELL_H 30    /* cell height */
#define MARGIN 40    /* room for the title and the index labels */

/* XML-escaped text. */
static void esc(TsBuf *b, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '<': ts_buf_puts(b, "&lt;"); break;
        case '>': ts_buf_puts(b, "&gt;"); break;
        case '&': ts_buf_puts(b, "&amp;"); break;
        case '"': ts_buf_puts(b, "&quot;"); break;
        default: ts_buf_printf(b, "%c", *s);
        }
    }
}

/* A file-name-safe copy of s (letters, digits, '_', '-', '.'). */
static void safe_name(TsBuf *b, const char *s) {
    for (; s && *s; s++) {
        char c = *s;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        ts_buf_printf(b, "%c", ok ? c : '_');
    }
}

/* Constant extents of b (false if any is not constant or the count overflows). */
static bool const_shape(const IrBuffer *b, int64_t *shape, int64_t *numel) {
    *numel = 1;
    if (b->ndim < 1 || b->ndim > 8) return false;
    for (int i = 0; i < b->ndim; i++) {
        if (!ir_is_const_int(b->shape[i], &shape[i]) || shape[i] <= 0 || shape[i] > ((int64_t)1 << 24)) return false;
        *numel *= shape[i];
        if (*numel > ((int64_t)1 << 28)) return false;
    }
    return true;
}

/* Header, title lines and the grid's index labels. */
static void svg_begin(TsBuf *o, int64_t rows, int64_t cols, const char *title, const char *sub) {
    int64_t dr = rows < MAX_SIDE ? rows : MAX_SIDE, dc = cols < MAX_SIDE ? cols : MAX_SIDE;
    int64_t w = MARGIN + dc * CELL_W + 10, h = 2 * MARGIN + dr * CELL_H + 10;
    ts_buf_printf(o,
                  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%lld\" height=\"%lld\" "
                  "font-family=\"monospace\" font-size=\"10\">\n"
                  "<style>g rect{stroke:#888;stroke-width:.5} g text{text-anchor:middle} .l{fill:#666}</style>\n"
                  "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"4\" y=\"14\" font-size=\"13\">",
                  (long long)w, (long long)h);
    esc(o, title);
    ts_buf_puts(o, "</text>\n<text x=\"4\" y=\"30\">");
    esc(o, sub);
    if (rows > dr || cols > dc)
        ts_buf_printf(o, " (top-left %lld x %lld of %lld x %lld shown)", (long long)dr, (long long)dc, (long long)rows,
                      (long long)cols);
    ts_buf_puts(o, "</text>\n<g>\n");
    for (int64_t c = 0; c < dc; c++)
        ts_buf_printf(o, "<text x=\"%lld\" y=\"%d\" class=\"l\">%lld</text>\n",
                      (long long)(MARGIN + c * CELL_W + CELL_W / 2), 2 * MARGIN - 4, (long long)c);
    for (int64_t r = 0; r < dr; r++)
        ts_buf_printf(o, "<text x=\"%d\" y=\"%lld\" class=\"l\">%lld</text>\n", MARGIN / 2,
                      (long long)(2 * MARGIN + r * CELL_H + CELL_H / 2 + 4), (long long)r);
}

/* One cell: a filled rectangle with two short lines of text. */
static void cell(TsBuf *o, int64_t r, int64_t c, int hue, int light, const char *l1, const char *l2) {
    int64_t x = MARGIN + c * CELL_W, y = 2 * MARGIN + r * CELL_H, xm = x + CELL_W / 2;
    ts_buf_printf(o,
                  "<rect x=\"%lld\" y=\"%lld\" width=\"%d\" height=\"%d\" fill=\"hsl(%d,70%%,%d%%)\"/>"
                  "<text x=\"%lld\" y=\"%lld\">%s</text><text x=\"%lld\" y=\"%lld\">%s</text>\n",
                  (long long)x, (long long)y, CELL_W, CELL_H, hue, light, (long long)xm, (long long)(y + 12), l1,
                  (long long)xm, (long long)(y + 25), l2);
}

/* Logical indices of cell (r, c) of a rows x cols view of shape. */
static void cell_index(const int64_t *shape, int ndim, int64_t r, int64_t c, int64_t *idx) {
    idx[ndim - 1] = c;
    for (int i = ndim - 2; i >= 0; i--) {
        idx[i] = r % shape[i];
        r /= shape[i];
    }
}

static void plot_fragment(TsBuf *o, const IrKernel *k, const IrBuffer *b) {
    const IrLayout *l = b->layout;
    int nd = l->ndim;
    int64_t cols = l->shape[nd - 1], rows = 1;
    for (int i = 0; i < nd - 1; i++) rows *= l->shape[i];
    TsBuf title = {0}, sub = {0};
    ts_buf_printf(&title, "%s: fragment %s[", k->name ? k->name : "kernel", b->name);
    for (int i = 0; i < nd; i++) ts_buf_printf(&title, "%s%lld", i ? ", " : "", (long long)l->shape[i]);
    ts_buf_printf(&title, "] %s", ts_dtype_name(b->dt));
    ir_layout_describe(&sub, l);
    ts_buf_printf(&sub, ": %lld threads, %lld registers each", (long long)l->nthreads,
                  (long long)ir_layout_local_size(l));
    if (l->replicate > 1) ts_buf_printf(&sub, ", each element held by %d threads (first shown)", l->replicate);
    if (l->origin) ts_buf_printf(&sub, "; from %s", l->origin);
    ts_buf_puts(&sub, "; cell: thread / register");
    svg_begin(o, rows, cols, ts_buf_str(&title), ts_buf_str(&sub));
    ts_buf_free(&title);
    ts_buf_free(&sub);
    int64_t idx[8];
    for (int64_t r = 0; r < rows && r < MAX_SIDE; r++)
        for (int64_t c = 0; c < cols && c < MAX_SIDE; c++) {
            cell_index(l->shape, nd, r, c, idx);
            int64_t th = 0, loc = 0;
            ir_layout_forward(l, idx, 0, &th, &loc);
            char l1[32], l2[32];
            snprintf(l1, sizeof l1, "T%lld", (long long)th);
            snprintf(l2, sizeof l2, "r%lld", (long long)loc);
            int lane = (int)(th % 32), warp = (int)(th / 32);
            cell(o, r, c, lane * 360 / 32, warp % 2 ? 62 : 80, l1, l2);
        }
    ts_buf_puts(o, "</g>\n</svg>\n");
}

static void plot_shared(TsBuf *o, const IrKernel *k, const IrBuffer *b, const int64_t *shape) {
    int nd = b->ndim;
    int64_t cols = shape[nd - 1], rows = 1;
    for (int i = 0; i < nd - 1; i++) rows *= shape[i];
    int bytes = (ts_dtype_bits(b->dt) + 7) / 8;
    const IrSwizzle *z = &b->swizzle;
    TsBuf title = {0}, sub = {0};
    ts_buf_printf(&title, "%s: shared %s[", k->name ? k->name : "kernel", b->name);
    for (int i = 0; i < nd; i++) ts_buf_printf(&title, "%s%lld", i ? ", " : "", (long long)shape[i]);
    ts_buf_printf(&title, "] %s", ts_dtype_name(b->dt));
    if (z->kind == IR_SWIZZLE_XOR)
        ts_buf_printf(&sub, "XOR swizzle <B=%d, M=%d, S=%d> of element offsets", z->bits, z->base, z->shift);
    else
        ts_buf_puts(&sub, "no swizzle (row-major)");
    if (b->stages > 1) ts_buf_printf(&sub, ", %d pipeline stages", b->stages);
    ts_buf_puts(&sub, "; cell: 16-byte chunk in its row / bank");
    svg_begin(o, rows, cols, ts_buf_str(&title), ts_buf_str(&sub));
    ts_buf_free(&title);
    ts_buf_free(&sub);
    int64_t mask = z->bits > 0 && z->bits < 31 ? ((int64_t)1 << z->bits) - 1 : 0;
    for (int64_t r = 0; r < rows && r < MAX_SIDE; r++)
        for (int64_t c = 0; c < cols && c < MAX_SIDE; c++) {
            int64_t off = r * cols + c;
            if (z->kind == IR_SWIZZLE_XOR && z->base + z->shift < 62)
                off ^= ((off >> (z->base + z->shift)) & mask) << z->base;
            int64_t byte = off * bytes, bank = (byte / 4) % 32, chunk = (byte % (cols * bytes)) / 16;
            char l1[32], l2[32];
            snprintf(l1, sizeof l1, "k%lld", (long long)chunk);
            snprintf(l2, sizeof l2, "b%lld", (long long)bank);
            cell(o, r, c, (int)(bank * 360 / 32), 78, l1, l2);
        }
    ts_buf_puts(o, "</g>\n</svg>\n");
}

/* A fragment's registers after lowering (`X_reg`, scope local, same
 * layout as the fragment X that is still listed): drawn once, as X. */
static bool lowered_copy(const IrKernel *ir, const IrBuffer *b) {
    if (b->scope == IR_SCOPE_FRAGMENT) return false;
    size_t n = strlen(b->name);
    if (n < 5 || strcmp(b->name + n - 4, "_reg")) return false;
    for (int i = 0; i < ir->buffers.n; i++) {
        const IrBuffer *f = ir->buffers.v[i];
        if (f != b && f->layout && strlen(f->name) == n - 4 && !strncmp(f->name, b->name, n - 4)) return true;
    }
    return false;
}

static TsStatus write_file(TsContext *ctx, const char *path, const TsBuf *b) {
    FILE *f = fopen(path, "w");
    if (!f || fwrite(b->s ? b->s : "", 1, b->n, f) != b->n || fclose(f) != 0) {
        int e = errno;
        ts_buf_printf(&ctx->diag.msg, "tilescale: error: cannot write %s: %s\n", path, strerror(e));
        return TS_ERR_IO;
    }
    return TS_OK;
}

TsStatus ts_kernel_plot_layouts(TsKernel *k, const char *dir, int *nwritten) {
    if (nwritten) *nwritten = 0;
    if (!k || !k->ctx || !dir || !*dir) return TS_ERR_INVALID;
    TsContext *ctx = k->ctx;
    ctx->diag.msg.n = 0;
    if (ctx->diag.msg.s) ctx->diag.msg.s[0] = 0;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        int e = errno;
        ts_buf_printf(&ctx->diag.msg, "tilescale: error: cannot create directory %s: %s\n", dir, strerror(e));
        return TS_ERR_IO;
    }
    int part = 0, count = 0;
    for (TsKernel *p = k; p; p = p->next, part++) {
        const IrKernel *ir = p->ir;
        if (!ir) continue;
        for (int i = 0; i < ir->buffers.n; i++) {
            const IrBuffer *b = ir->buffers.v[i];
            int64_t shape[8], numel;
            bool frag = b->layout != NULL && b->layout->ndim >= 1 && b->layout->ndim <= 4 && !lowered_copy(ir, b);
            bool shared = b->scope == IR_SCOPE_SHARED && const_shape(b, shape, &numel);
            if (!frag && !shared) continue;
            TsBuf svg = {0}, path = {0};
            if (frag) plot_fragment(&svg, ir, b);
            else plot_shared(&svg, ir, b, shape);
            ts_buf_printf(&path, "%s/", dir);
            safe_name(&path, k->ir && k->ir->name ? k->ir->name : "kernel");
            if (part) ts_buf_printf(&path, "_k%d", part);
            ts_buf_puts(&path, "_");
            safe_name(&path, b->name);
            ts_buf_puts(&path, ".svg");
            TsStatus st = write_file(ctx, ts_buf_str(&path), &svg);
            ts_buf_free(&svg);
            ts_buf_free(&path);
            if (st) return st;
            count++;
        }
    }
    if (nwritten) *nwritten = count;
    return TS_OK;
}
