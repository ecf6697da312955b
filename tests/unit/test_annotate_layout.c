/*
 * test_annotate_layout.c — T.annotate_layout on shared buffers: the layout
 * a user gives overrides the swizzle layout inference would choose.
 *
 * A transposing kernel stages a tile in shared memory annotated with
 *  - tilelang.layout.make_swizzled_layout(S): the CUDA target's XOR swizzle;
 *  - a def mapping (i, j) to (i, j ^ ((i % 8) * 8)): recognized as that XOR
 *    swizzle of 16-byte chunks, <3, 3, 3>;
 *  - the identity def: row-major, kept (annotated);
 *  - a transposing def: not a layout the CUDA target addresses, an error
 *    there (the C target ignores physical layouts and compiles it);
 * and each accepted kernel runs through every CUDA pass in the thread-level
 * interpreter (random data, poisoned output) against the transposition
 * computed here.  A tensor-core gemm whose A tile is annotated row-major
 * keeps it row-major (padded instead: plan_smem) while B gets the inferred
 * swizzle.
 */
#include <math.h>
#include <string.h>

#include "pass/pass.h"
#include "pass_test.h"
#include "test.h"

static TsArena A;

#define PRE "import tilelang\nimport tilelang.language as T\nfrom tilelang.layout import make_swizzled_layout\n\n"

static const char *SRC = PRE
    "def swz(i, j):\n"
    "    return i, j ^ ((i % 8) * 8)\n\n"
    "def ident(i, j):\n"
    "    return [i, j]\n\n"
    "def transposed(i, j):\n"
    "    return j, i\n\n"
    "@tilelang.jit\n"
    "def tr(M, N, bm, bn, how):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), \"float16\"), Y: T.Tensor((N, M), \"float16\")):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):\n"
    "            S = T.alloc_shared((bm, bn), \"float16\")\n"
    "            if how == 1:\n"
    "                T.annotate_layout({S: make_swizzled_layout(S)})\n"
    "            if how == 2:\n"
    "                T.annotate_layout({S: swz})\n"
    "            if how == 3:\n"
    "                T.annotate_layout({S: T.Layout((bm, bn), ident)})\n"
    "            if how == 4:\n"
    "                T.annotate_layout({S: transposed})\n"
    "            T.copy(X[by * bm, bx * bn], S)\n"
    "            for j, i in T.Parallel(bn, bm):\n"
    "                Y[bx * bn + j, by * bm + i] = S[i, j]\n"
    "    return main\n"
    "\n"
    "@tilelang.jit\n"
    "def mm(M, N, K):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"),\n"
    "             C: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(1, threads=128) as bx:\n"
    "            As = T.alloc_shared((M, K), \"float16\")\n"
    "            Bs = T.alloc_shared((K, N), \"float16\")\n"
    "            Cl = T.alloc_fragment((M, N), \"float32\")\n"
    "            T.annotate_layout({As: ident})\n"
    "            T.copy(A[0, 0], As)\n"
    "            T.copy(B[0, 0], Bs)\n"
    "            T.gemm(As, Bs, Cl, clear_accum=True)\n"
    "            T.copy(Cl, C[0, 0])\n"
    "    return main\n";

static IrKernel *compile(const char *entry, const char *defs, bool cuda, TsBuf *err) {
    TsCaps c;
    memset(&c, 0, sizeof c);
    if (cuda) {
        snprintf(c.arch, sizeof c.arch, "sm_80");
        c.sm = 80;
        c.mma = c.pad = c.vec = c.vec_cast = c.pipeline = c.layout = c.swizzle = true;
    }
    return pt_compile(&A, SRC, entry, defs, cuda ? TS_TARGET_CUDA : TS_TARGET_C, &c, &c, NULL, NULL, err);
}

int main(void) {
    enum { M = 128, N = 192 };
    TsBuf err = {0};
    uint64_t r = 99;
    double *X = TS_NEWN(&A, double, M * N), *Y = TS_NEWN(&A, double, M * N);
    for (int i = 0; i < M * N; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        X[i] = (double)((int)(r >> 40) % 2048 - 1024) / 8;
    }
    static const IrSwizzle want[4] = {
        {.kind = IR_SWIZZLE_NONE}, {.kind = IR_SWIZZLE_XOR, .bits = 3, .base = 3, .shift = 3},
        {.kind = IR_SWIZZLE_XOR, .bits = 3, .base = 3, .shift = 3}, {.kind = IR_SWIZZLE_NONE}};
    for (int how = 0; how < 4; how++) {
        char defs[96];
        snprintf(defs, sizeof defs, "M=%d N=%d bm=64 bn=64 how=%d", M, N, how);
        IrKernel *k = compile("tr", defs, true, &err);
        if (!k) fprintf(stderr, "how=%d: %s\n", how, ts_buf_str(&err));
        CHECK(k != NULL);
        if (!k) continue;
        const IrBuffer *s = pt_buffer(k, "S");
        CHECK(s != NULL);
        if (!s) continue;
        CHECK_EQ_INT(how > 0, s->swizzle_annotated);
        CHECK_EQ_INT(want[how].kind, s->swizzle.kind);
        CHECK_EQ_INT(want[how].bits, s->swizzle.bits);
        CHECK_EQ_INT(want[how].base, s->swizzle.base);
        CHECK_EQ_INT(want[how].shift, s->swizzle.shift);
        for (int i = 0; i < M * N; i++) Y[i] = NAN;
        double *data[2] = {X, Y};
        bool ok = pt_run(&A, k, data, 0, &err);
        if (!ok) fprintf(stderr, "how=%d: %s\n", how, ts_buf_str(&err));
        CHECK(ok);
        int bad = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) bad += Y[j * M + i] != X[i * N + j];
        CHECK_EQ_INT(0, bad);
        ts_buf_free(&err);
    }
    /* a transposing map: refused on CUDA, ignored on C */
    CHECK(compile("tr", "M=128 N=192 bm=64 bn=64 how=4", true, &err) == NULL);
    CHECK_CONTAINS(ts_buf_str(&err), "the layout given for shared buffer 'S' is neither row-major nor an XOR swizzle");
    ts_buf_free(&err);
    CHECK(compile("tr", "M=128 N=192 bm=64 bn=64 how=4", false, &err) != NULL);
    ts_buf_free(&err);

    /* gemm: the annotated A stays row-major (and gets plan_smem's padding);
     * B gets layout inference's swizzle */
    IrKernel *k = compile("mm", "M=32 N=64 K=64", true, &err);
    if (!k) fprintf(stderr, "%s\n", ts_buf_str(&err));
    CHECK(k != NULL);
    if (k) {
        const IrBuffer *as = pt_buffer(k, "As"), *bs = pt_buffer(k, "Bs");
        CHECK(as && bs);
        if (as && bs) {
            CHECK_EQ_INT(IR_SWIZZLE_NONE, as->swizzle.kind);
            CHECK_EQ_INT(8, as->row_pad);
            CHECK_EQ_INT(IR_SWIZZLE_XOR, bs->swizzle.kind);
            CHECK_EQ_INT(0, bs->row_pad);
        }
    }
    ts_buf_free(&err);
    ts_arena_free(&A);
    return test_done();
}
