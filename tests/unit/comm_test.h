/*
 * comm_test.h — the kernels and runners shared by the tests of the
 * distributed world on sim ranks (test_comm.c: one node, test_comm_nodes.c:
 * several nodes, the accesses to other nodes through the transport).
 *
 * Why a header: both tests run the same two kernels — a ring shift
 * (T.put_block to rank + 1) and a chain of T.wait_ge / T.atom_add / T.ld /
 * T.st to every peer — with the same inputs, poison and checks; they had
 * grown two copies of the sources and the runners.  Each test keeps its own
 * world, its own extra kernels and the checks only it makes (the proxy's
 * served count, the errors of bad usage).
 *
 *   CT_SHIFT_SRC, CT_CHAIN_SRC   the kernels' TileLang text (after
 *                                "import tilelang.language as T")
 *   ct_urand()                   a seeded xorshift draw in [-1, 1)
 *   ct_shift()                   the shift on every rank of a world,
 *                                against a naive shift of random data
 *   ct_chain()                   the chain, every counter, read-back and
 *                                flag checked
 */
#ifndef TS_COMM_TEST_H
#define TS_COMM_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "test.h"
#include "tilescale.h"
#include "tilescale_comm.h"

#define CT_SHIFT_SRC                                                                                      \
    "def shift(N):\n"                                                                                     \
    "    @T.prim_func\n"                                                                                  \
    "    def main(X: T.Tensor((N,), \"float32\"), Y: T.Tensor((N,), \"float32\")):\n"                     \
    "        with T.Kernel(2, threads=64) as (bx):\n"                                                     \
    "            half = N // 2\n"                                                                         \
    "            T.put_block(src=T.address_of(X[bx * half]), dst=T.address_of(Y[bx * half]), size=half,\n" \
    "                        dst_pe=(T.get_rank() + 1) % T.get_num_ranks())\n"                            \
    "    return main\n"

#define CT_CHAIN_SRC                                                                                          \
    "def chain(P):\n"                                                                                         \
    "    @T.prim_func\n"                                                                                      \
    "    def main(cnt: T.Tensor((P,), \"int32\"), got: T.Tensor((P,), \"int32\"), flag: T.Tensor((1,), \"int32\")):\n" \
    "        with T.Kernel(1, threads=32) as (bx):\n"                                                         \
    "            me = T.get_rank()\n"                                                                         \
    "            T.wait_ge(flag[0], me)\n"                                                                    \
    "            for p in T.serial(T.get_num_ranks()):\n"                                                     \
    "                T.atom_add(cnt[me], me + 1, peer=p)\n"                                                   \
    "            v = T.alloc_var(\"int32\")\n"                                                                \
    "            T.ld(cnt[me], v, sem=\"acquire\", src_pe=(me + 1) % T.get_num_ranks())\n"                     \
    "            got[me] = v\n"                                                                               \
    "            for p in T.serial(T.get_num_ranks()):\n"                                                     \
    "                T.st(flag[0], me + 1, sem=\"release\", dst_pe=p)\n"                                      \
    "    return main\n"

static uint64_t ct_rng = 0x2545f4914f6cdd1dull; /* ct_urand's state (a test may reseed it) */

static inline double ct_urand(void) {
    ct_rng ^= ct_rng << 13;
    ct_rng ^= ct_rng >> 7;
    ct_rng ^= ct_rng << 17;
    return (double)(ct_rng >> 11) * 0x1p-53 * 2.0 - 1.0;
}

/* The ring shift (k: CT_SHIFT_SRC with N = shape[0]) on the P ranks of w:
 * X[r] random, Y[r] NaN, args[2r], args[2r + 1] = X[r], Y[r]; afterwards
 * Y on rank r + 1 must equal X of rank r.  The tensors keep pointing at
 * shape (the caller's, alive as long as they are).  Returns the launch's
 * status. */
static inline TsStatus ct_shift(TsContext *ctx, TsKernel *k, TsWorld *w, int P, int64_t *shape, TsTensor *X,
                                TsTensor *Y, TsTensor *args) {
    int64_t N = shape[0];
    CHECK_EQ_INT(TS_OK, ts_world_tensor(w, TS_FLOAT32, 1, shape, X));
    CHECK_EQ_INT(TS_OK, ts_world_tensor(w, TS_FLOAT32, 1, shape, Y));
    for (int r = 0; r < P; r++) {
        for (int64_t i = 0; i < N; i++) {
            ((float *)X[r].data)[i] = (float)ct_urand();
            ((float *)Y[r].data)[i] = NAN;
        }
        args[r * 2] = X[r];
        args[r * 2 + 1] = Y[r];
    }
    TsStatus st = ts_kernel_launch_world(k, w, args, 2);
    if (st) printf("%s", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, st);
    int bad = 0;
    for (int r = 0; r < P; r++)
        for (int64_t i = 0; i < N; i++) bad += ((float *)Y[(r + 1) % P].data)[i] != ((float *)X[r].data)[i];
    CHECK_EQ_INT(0, bad);
    return st;
}

/* The chain (kc: CT_CHAIN_SRC with this P) on the P ranks of w: rank r
 * waits for flag >= r, adds r + 1 to cnt[r] on every rank, reads cnt[r]
 * back from rank r + 1 and releases the next rank.  cnt 0, got poisoned
 * (-99), flag 0 first; args: 3 P tensors.  pshape = {P} and one = {1}:
 * the caller's, as ct_shift's shape. */
static inline void ct_chain(TsContext *ctx, TsKernel *kc, TsWorld *w, int P, int64_t *pshape, int64_t *one,
                            TsTensor *cnt, TsTensor *got, TsTensor *flag, TsTensor *args) {
    CHECK_EQ_INT(TS_OK, ts_world_tensor(w, TS_INT32, 1, pshape, cnt));
    CHECK_EQ_INT(TS_OK, ts_world_tensor(w, TS_INT32, 1, pshape, got));
    CHECK_EQ_INT(TS_OK, ts_world_tensor(w, TS_INT32, 1, one, flag));
    for (int r = 0; r < P; r++) {
        for (int i = 0; i < P; i++) {
            ((int32_t *)cnt[r].data)[i] = 0;
            ((int32_t *)got[r].data)[i] = -99;
        }
        ((int32_t *)flag[r].data)[0] = 0;
        args[r * 3] = cnt[r];
        args[r * 3 + 1] = got[r];
        args[r * 3 + 2] = flag[r];
    }
    TsStatus st = ts_kernel_launch_world(kc, w, args, 3);
    if (st) printf("%s", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, st);
    for (int r = 0; r < P; r++) {
        for (int i = 0; i < P; i++) CHECK_EQ_INT(i + 1, ((int32_t *)cnt[r].data)[i]); /* every rank added i+1 once */
        CHECK_EQ_INT(r + 1, ((int32_t *)got[r].data)[r]); /* read back from rank r+1 after the chain reached it */
        CHECK_EQ_INT(P, ((int32_t *)flag[r].data)[0]);    /* the last rank's store wins: P */
    }
}

#endif
