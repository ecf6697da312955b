/*
 * test_comm.c — the distributed world through the public API
 * (tilescale_comm.h), on sim ranks:
 *   - a ring shift written with T.put_block, launched with
 *     ts_kernel_launch_world on 3 ranks, against a naive C shift of fresh
 *     random data (outputs poisoned first);
 *   - T.st / T.ld / T.atom_add to and from peers, and a T.wait_ge chain
 *     that forces every rank to wait for the previous one (counts checked);
 *   - bad usage: tensors allocated in a different order per rank, a strided
 *     view of a heap tensor, a tensor
 *     that is not on the heap reached by a put, a world of 0 ranks, an
 *     exhausted heap — each a clear error, none a hang or a crash;
 *   - the same kernel still launches outside a world (rank 0 of 1).
 */
#include <stdlib.h>
#include <string.h>

#include "comm_test.h"

#define PRE "import tilelang\nimport tilelang.language as T\n\n"

static const char *SRC = PRE CT_SHIFT_SRC "\n" CT_CHAIN_SRC;

int main(void) {
    TsContext *ctx;
    CHECK_EQ_INT(TS_OK, ts_context_create(&ctx));
    enum { P = 3, N = 64 };
    TsCompileOptions o = {0};
    TsKernel *k = NULL, *kc = NULL;
    TsDefine dn = {"N", "64"}, dp = {"P", "3"};
    if (ts_compile_source(ctx, "shift.py", SRC, "shift", &dn, 1, &o, &k)) printf("%s", ts_last_error(ctx));
    if (ts_compile_source(ctx, "chain.py", SRC, "chain", &dp, 1, &o, &kc)) printf("%s", ts_last_error(ctx));
    CHECK(k && kc);
    if (!k || !kc) return test_done();

    /* ring shift on 3 ranks */
    TsWorldOptions wo = {TS_WORLD_SIM, P, 1 << 16, 5000, 0};
    TsWorld *w = NULL;
    CHECK_EQ_INT(TS_OK, ts_world_create(ctx, &wo, &w));
    CHECK_EQ_INT(-1, ts_world_rank(w));    /* this process runs every rank */
    CHECK_EQ_STR("", ts_world_warnings(w)); /* no topology to check on sim ranks */
    for (int r = 0; r < P; r++) { /* one node: node 0, local rank = rank (several nodes: dist_multinode.sh) */
        int local = -7;
        CHECK_EQ_INT(0, ts_world_node(w, r, &local));
        CHECK_EQ_INT(r, local);
    }
    int64_t shape[1] = {N};
    TsTensor X[P], Y[P], args[P * 2];
    TsStatus st = ct_shift(ctx, k, w, P, shape, X, Y, args);

    /* st / ld / atom_add / wait chain: rank r waits for flag >= r, then adds r+1 to cnt[r] on every
     * rank, reads cnt[r] back from rank r+1, and releases rank r+1 */
    int64_t pshape[1] = {P}, one[1] = {1};
    TsTensor cnt[P], got[P], flag[P], cargs[P * 3];
    ct_chain(ctx, kc, w, P, pshape, one, cnt, got, flag, cargs);

    /* tensors allocated in a different order on one rank */
    TsTensor swapped[P * 2];
    memcpy(swapped, args, sizeof swapped);
    swapped[2] = Y[1];
    swapped[3] = X[1];
    CHECK(ts_kernel_launch_world(k, w, swapped, 2) != TS_OK);
    CHECK_CONTAINS(ts_last_error(ctx), "symmetric tensors must be allocated in the same order on every rank");

    /* a strided view of the heap (remote tile copies move rows as flat ranges) */
    int64_t half[1] = {N / 2}, two[1] = {2};
    TsTensor strided[P * 2];
    memcpy(strided, args, sizeof strided);
    for (int r = 0; r < P; r++) strided[r * 2] = (TsTensor){X[r].data, TS_FLOAT32, 1, half, two};
    CHECK(ts_kernel_launch_world(k, w, strided, 2) != TS_OK);
    CHECK_CONTAINS(ts_last_error(ctx), "argument X on rank 0 is a strided view of the symmetric heap");

    /* a tensor that is not on the heap, reached by a put */
    float *plain = malloc(sizeof(float) * N * P);
    TsTensor off[P * 2];
    memcpy(off, args, sizeof off);
    off[1 * 2 + 1] = (TsTensor){plain + N, TS_FLOAT32, 1, shape, NULL};
    CHECK(ts_kernel_launch_world(k, w, off, 2) != TS_OK);
    CHECK_CONTAINS(ts_last_error(ctx), "is on the symmetric heap on rank 0 but not on rank");
    for (int r = 0; r < P; r++) off[r * 2 + 1] = (TsTensor){plain + r * N, TS_FLOAT32, 1, shape, NULL};
    st = ts_kernel_launch_world(k, w, off, 2);
    CHECK_EQ_INT(TS_ERR_RUNTIME, st);
    CHECK_CONTAINS(ts_last_error(ctx), "'Y' is not on the symmetric heap, so rank");

    /* outside a world: rank 0 of 1, the ring closes on itself */
    TsTensor solo[2] = {X[0], Y[0]};
    for (int i = 0; i < N; i++) ((float *)Y[0].data)[i] = NAN;
    CHECK_EQ_INT(TS_OK, ts_kernel_launch(k, solo, 2));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += ((float *)Y[0].data)[i] != ((float *)X[0].data)[i];
    CHECK_EQ_INT(0, bad);

    /* heap exhaustion, bad worlds */
    int64_t big[1] = {1 << 20};
    TsTensor tb[P];
    CHECK_EQ_INT(TS_ERR_NOMEM, ts_world_tensor(w, TS_FLOAT32, 1, big, tb));
    CHECK_CONTAINS(ts_last_error(ctx), "symmetric heap exhausted");
    TsWorldOptions bad0 = {TS_WORLD_SIM, 0, 0, 0, 0};
    TsWorld *w0 = NULL;
    CHECK_EQ_INT(TS_ERR_INVALID, ts_world_create(ctx, &bad0, &w0));
    CHECK(w0 == NULL);

    free(plain);
    ts_world_destroy(w);
    ts_kernel_destroy(k);
    ts_kernel_destroy(kc);
    ts_context_destroy(ctx);
    return test_done();
}
