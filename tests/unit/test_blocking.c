/*
 * test_blocking.c — blocks that wait for each other must not deadlock on
 * the C target (the distributed layer's ranks wait on signals the same
 * way).  Each block of a chain spins until the next block has published
 * its result, so the blocks finish in reverse order of their index; with
 * more blocks than worker threads, running blocks to completion one after
 * another would hang.  The elaborator marks the kernel as blocking because
 * a while loop's condition reads global memory.
 */
#include <stdio.h>
#include <stdlib.h>

#include "test.h"
#include "tilescale.h"

static const char *src =
    "import tilelang.language as T\n"
    "\n"
    "def chain(n):\n"
    "    @T.prim_func\n"
    "    def main(flags: T.Tensor((n,), 'int32'), vals: T.Tensor((n,), 'int32'),\n"
    "             seed: T.Tensor((n,), 'int32')):\n"
    "        with T.Kernel(n, threads=1) as bx:\n"
    "            if bx < n - 1:\n"
    "                while flags[bx + 1] == 0:\n"
    "                    pass\n"
    "                vals[bx] = vals[bx + 1] + seed[bx]\n"
    "            else:\n"
    "                vals[bx] = seed[bx]\n"
    "            flags[bx] = 1\n"
    "    return main\n";

int main(void) {
    TsContext *ctx;
    ts_context_create(&ctx);
    enum { N = 64 };
    TsDefine defs[] = {{"n", "64"}};
    TsCompileOptions opt = {0};
    opt.num_threads = 2;
    TsKernel *k = NULL;
    TsStatus st = ts_compile_source(ctx, "chain.py", src, "chain", defs, 1, &opt, &k);
    if (st) fprintf(stderr, "%s", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, st);
    if (!k) return test_done();
    CHECK_CONTAINS(ts_kernel_source(k), "may_block"); /* the module says it blocks */

    for (int rep = 0; rep < 3; rep++) {
        int64_t shape[1] = {N};
        TsTensor t[3];
        for (int i = 0; i < 3; i++) ts_tensor_alloc(&t[i], TS_INT32, 1, shape);
        srand((unsigned)(rep + 1));
        for (int i = 0; i < N; i++) {
            ts_tensor_set(&t[0], i, 0);
            ts_tensor_set(&t[1], i, -7777); /* poison */
            ts_tensor_set(&t[2], i, rand() % 100);
        }
        st = ts_kernel_launch(k, t, 3);
        CHECK_EQ_INT(TS_OK, st);
        /* vals[i] = seed[i] + seed[i+1] + ... + seed[n-1] */
        long want = 0;
        int bad = 0;
        for (int i = N - 1; i >= 0; i--) {
            want += (long)ts_tensor_get(&t[2], i);
            if ((long)ts_tensor_get(&t[1], i) != want || ts_tensor_get(&t[0], i) != 1) bad++;
        }
        CHECK_EQ_INT(0, bad);
        for (int i = 0; i < 3; i++) ts_tensor_free(&t[i]);
    }
    ts_kernel_destroy(k);
    ts_context_destroy(ctx);
    return test_done();
}
