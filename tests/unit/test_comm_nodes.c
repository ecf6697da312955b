/*
 * test_comm_nodes.c — worlds of several nodes on sim ranks (issue 6 part
 * A, multi-node): the node map, and accesses to ranks of other nodes
 * going through the transport instead of loads and stores.
 *
 *   - the node of each rank (r / ranks_per_node), its local rank, "same
 *     node", TILESCALE_RANKS_PER_NODE, and bad settings refused (more ranks
 *     per node than ranks, a local world split into nodes);
 *   - a ring shift (T.put_block to rank + 1), a chain of T.atom_add /
 *     T.ld / T.st / T.wait_ge to every peer, and a pull kernel (T.get_block
 *     from rank + 1 after T.barrier_all, T.putmem_signal with an adding
 *     signal, T.signal_wait_until) on 4 ranks as 2 nodes x 2, compiled for
 *     several nodes: results against naive C on random data (outputs
 *     poisoned), and the proxy really served requests;
 *   - the same shift compiled for one node in that world fails at its
 *     first access to the other node, naming the node: the peer table
 *     holds no address there (what a GPU without GIN would have);
 *   - adding signals across nodes (a heap put's and a tile put's, T.signal_op
 *     add, T.atom_add) and waits after them on 2 x 2 (on CUDA: NCCL GIN
 *     signals, compiled here); a put's SET signal, which sim ranks keep
 *     (their proxy's FIFO orders it after the data) and CUDA refuses for
 *     several nodes, naming the adding signal.
 */
#include <stdlib.h>
#include <string.h>

#include "comm_test.h"

#define PRE "import tilelang\nimport tilelang.language as T\n\n"

static const char *SRC = PRE CT_SHIFT_SRC "\n" CT_CHAIN_SRC
    "\n"
    "def pull(N):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((N,), \"float32\"), Y: T.Tensor((N,), \"float32\"), Z: T.Tensor((N,), \"float32\"),\n"
    "             sig: T.Tensor((1,), \"uint64\")):\n"
    "        with T.Kernel(1, threads=32) as (bx):\n"
    "            me = T.get_rank()\n"
    "            n = T.get_num_ranks()\n"
    "            T.barrier_all()\n"
    "            T.get_block(src=T.address_of(X[0]), dst=T.address_of(Y[0]), size=N, src_pe=(me + 1) % n)\n"
    "            T.putmem_signal_nbi_block(T.address_of(Z[0]), T.address_of(X[0]), N * 4, T.address_of(sig[0]), 1, 10,\n"
    "                                      (me + n - 1) % n)\n"
    "            T.signal_wait_until(T.address_of(sig[0]), 5, 1)\n"
    "    return main\n"
    "\n"
    /* adding signals across nodes (on CUDA: GIN signals, lower_comm's signal buffer): every block
     * pushes its slice of X to rank + 1 (a heap put and a tile's put), adding 1 and 2 there, and
     * T.signal_op / T.atom_add add 1 + 2 more; each block waits for all of rank - 1's, then sums */
    "def ring(N):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((N,), \"float32\"), Y: T.Tensor((N,), \"float32\"), Z: T.Tensor((N,), \"float32\"),\n"
    "             W: T.Tensor((N,), \"float32\"), sig: T.Tensor((3,), \"uint64\")):\n"
    "        with T.Kernel(4, threads=32) as bx:\n"
    "            me = T.get_rank()\n"
    "            n = T.get_num_ranks()\n"
    "            t = T.alloc_shared((N // 4,), \"float32\")\n"
    "            T.copy(X[bx * (N // 4):(bx + 1) * (N // 4)], t)\n"
    "            T.putmem_signal_nbi_block(T.address_of(Y[bx * (N // 4)]), T.address_of(X[bx * (N // 4)]), N,\n"
    "                                      T.address_of(sig[0]), 1, T.Amo.SIGNAL_ADD, (me + 1) % n)\n"
    "            T.putmem_signal_nbi_block(T.address_of(Z[bx * (N // 4)]), T.address_of(t[0]), N,\n"
    "                                      T.address_of(sig[1]), 2, T.Amo.SIGNAL_ADD, (me + 1) % n)\n"
    "            T.signal_op(T.address_of(sig[2]), 1, T.Amo.SIGNAL_ADD, (me + 1) % n)\n"
    "            T.atom_add(sig[2], 2, peer=(me + 1) % n)\n"
    "            T.signal_wait_until(T.address_of(sig[0]), T.CmpType.GE, 4)\n"
    "            T.signal_wait_until(T.address_of(sig[1]), T.CmpType.GE, 8)\n"
    "            T.signal_wait_until(T.address_of(sig[2]), T.CmpType.GE, 12)\n"
    "            for i in T.Parallel(N // 4):\n"
    "                W[bx * (N // 4) + i] = Y[bx * (N // 4) + i] + 2.0 * Z[bx * (N // 4) + i]\n"
    "    return main\n"
    "\n"
    /* a put's SET signal to rank + 1: ordered on sim ranks (the proxy's FIFO), refused on CUDA */
    "def setsig(N):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((N,), \"float32\"), Y: T.Tensor((N,), \"float32\"), sig: T.Tensor((1,), \"uint64\")):\n"
    "        with T.Kernel(1, threads=32) as bx:\n"
    "            me = T.get_rank()\n"
    "            n = T.get_num_ranks()\n"
    "            T.putmem_signal_nbi_block(T.address_of(Y[0]), T.address_of(X[0]), N * 4, T.address_of(sig[0]), 7,\n"
    "                                      T.Amo.SIGNAL_SET, (me + 1) % n)\n"
    "            T.signal_wait_until(T.address_of(sig[0]), T.CmpType.EQ, 7)\n"
    "    return main\n";

enum { P = 4, PER = 2, N = 64 };

static void node_map(TsContext *ctx) {
    TsWorldOptions wo = {TS_WORLD_SIM, P, 1 << 16, 5000, PER};
    TsWorld *w = NULL;
    CHECK_EQ_INT(TS_OK, ts_world_create(ctx, &wo, &w));
    CHECK_EQ_INT(PER, ts_world_ranks_per_node(w));
    for (int r = 0; r < P; r++) {
        int local = -7;
        CHECK_EQ_INT(r / PER, ts_world_node(w, r, &local));
        CHECK_EQ_INT(r % PER, local);
        for (int q = 0; q < P; q++) CHECK_EQ_INT(r / PER == q / PER, ts_world_same_node(w, r, q));
    }
    CHECK_EQ_INT(0, ts_world_same_node(w, 0, P)); /* out of range: no node */
    ts_world_destroy(w);
    /* the environment's setting, 5 ranks as nodes of 2, 2 and 1 */
    setenv("TILESCALE_RANKS_PER_NODE", "2", 1);
    TsWorldOptions we = {TS_WORLD_SIM, 5, 1 << 16, 5000, 0};
    CHECK_EQ_INT(TS_OK, ts_world_create(ctx, &we, &w));
    CHECK_EQ_INT(2, ts_world_ranks_per_node(w));
    CHECK_EQ_INT(2, ts_world_node(w, 4, NULL));
    CHECK_EQ_INT(1, ts_world_same_node(w, 2, 3));
    ts_world_destroy(w);
    setenv("TILESCALE_RANKS_PER_NODE", "x", 1);
    CHECK_EQ_INT(TS_ERR_INVALID, ts_world_create(ctx, &we, &w));
    CHECK(strstr(ts_last_error(ctx), "TILESCALE_RANKS_PER_NODE=x") != NULL);
    unsetenv("TILESCALE_RANKS_PER_NODE");
    /* one node by default */
    CHECK_EQ_INT(TS_OK, ts_world_create(ctx, &we, &w));
    CHECK_EQ_INT(5, ts_world_ranks_per_node(w));
    CHECK_EQ_INT(0, ts_world_node(w, 4, NULL));
    ts_world_destroy(w);
    /* bad settings */
    TsWorldOptions bad = {TS_WORLD_SIM, P, 1 << 16, 5000, P + 1};
    CHECK_EQ_INT(TS_ERR_INVALID, ts_world_create(ctx, &bad, &w));
    CHECK(strstr(ts_last_error(ctx), "5 ranks per node in a world of 4 ranks") != NULL);
    TsWorldOptions loc = {TS_WORLD_LOCAL, P, 1 << 16, 5000, PER};
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED, ts_world_create(ctx, &loc, &w));
    CHECK(strstr(ts_last_error(ctx), "ranks per node") != NULL);
}

static TsKernel *build_for(TsContext *ctx, const char *entry, const char *dname, const char *dval, int multinode,
                           TsTarget target) {
    TsCompileOptions o = {0};
    o.multinode = multinode;
    o.target = target;
    o.skip_build = target == TS_TARGET_CUDA; /* the CUDA source only (no GPU, no nvcc needed) */
    TsDefine d = {dname, dval};
    TsKernel *k = NULL;
    ts_compile_source(ctx, "nodes.py", SRC, entry, &d, 1, &o, &k);
    return k;
}

static TsKernel *build(TsContext *ctx, const char *entry, const char *dname, const char *dval, int multinode) {
    TsKernel *k = build_for(ctx, entry, dname, dval, multinode, TS_TARGET_C);
    if (!k) printf("%s", ts_last_error(ctx));
    CHECK(k != NULL);
    return k;
}

/* Adding signals across the nodes of 2 x 2 sim ranks: the data arrived
 * before the counts each wait saw (W from Y and Z after the waits), the
 * counts exact; against naive C on random data, outputs poisoned. */
static void ring_case(TsContext *ctx, TsKernel *k, TsWorld *w) {
    int64_t shape[1] = {N}, three[1] = {3};
    TsTensor X[P], Y[P], Z[P], W[P], sig[P], args[P * 5];
    CHECK_EQ_INT(TS_OK, ts_world_tensor(w, TS_FLOAT32, 1, shape, X)); /* every rank's, symmetric */
    CHECK_EQ_INT(TS_OK, ts_world_tensor(w, TS_FLOAT32, 1, shape, Y));
    CHECK_EQ_INT(TS_OK, ts_world_tensor(w, TS_FLOAT32, 1, shape, Z));
    CHECK_EQ_INT(TS_OK, ts_world_tensor(w, TS_FLOAT32, 1, shape, W));
    CHECK_EQ_INT(TS_OK, ts_world_tensor(w, TS_UINT64, 1, three, sig));
    for (int r = 0; r < P; r++) {
        for (int i = 0; i < N; i++) {
            ((float *)X[r].data)[i] = (float)ct_urand();
            ((float *)Y[r].data)[i] = ((float *)Z[r].data)[i] = ((float *)W[r].data)[i] = NAN;
        }
        memset(sig[r].data, 0, 3 * sizeof(uint64_t));
        TsTensor a[5] = {X[r], Y[r], Z[r], W[r], sig[r]};
        memcpy(&args[r * 5], a, sizeof a);
    }
    int64_t before = ts_world_xport_served(w);
    TsStatus st = ts_kernel_launch_world(k, w, args, 5);
    if (st) printf("%s", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, st);
    int bad = 0;
    for (int r = 0; r < P; r++) {
        const float *x = X[(r + P - 1) % P].data;
        for (int i = 0; i < N; i++) {
            bad += ((float *)Y[r].data)[i] != x[i] || ((float *)Z[r].data)[i] != x[i];
            bad += ((float *)W[r].data)[i] != x[i] + 2.0f * x[i];
        }
        const uint64_t *s = sig[r].data;
        bad += s[0] != 4 || s[1] != 8 || s[2] != 12;
    }
    CHECK_EQ_INT(0, bad);
    CHECK(ts_world_xport_served(w) >= before + 2 * 4 * 4); /* ranks 1 and 3: 4 blocks x (2 puts + 2 adds) at least */
}

int main(void) {
    ct_rng = 0x9e3779b97f4a7c15ull;
    TsContext *ctx;
    CHECK_EQ_INT(TS_OK, ts_context_create(&ctx));
    node_map(ctx);

    TsKernel *k = build(ctx, "shift", "N", "64", 1), *k1 = build(ctx, "shift", "N", "64", 0);
    TsKernel *kc = build(ctx, "chain", "P", "4", 1), *kp = build(ctx, "pull", "N", "64", 1);
    if (!k || !k1 || !kc || !kp) return test_done();
    TsWorldOptions wo = {TS_WORLD_SIM, P, 1 << 16, 5000, PER};
    TsWorld *w = NULL;
    CHECK_EQ_INT(TS_OK, ts_world_create(ctx, &wo, &w));
    int64_t shape[1] = {N}, pshape[1] = {P}, one[1] = {1};
    TsTensor X[P], Y[P], Z[P], args[P * 4];

    /* ring shift: ranks 1 -> 2 and 3 -> 0 cross nodes */
    TsStatus st = ct_shift(ctx, k, w, P, shape, X, Y, args);
    int64_t served = ts_world_xport_served(w);
    CHECK(served >= 4); /* two ranks' puts, two blocks each, went through the proxy */

    /* compiled for one node: its put to the other node has no address */
    st = ts_kernel_launch_world(k1, w, args, 2);
    CHECK_EQ_INT(TS_ERR_RUNTIME, st);
    CHECK(strstr(ts_last_error(ctx), "is on node") != NULL);
    CHECK(strstr(ts_last_error(ctx), "through the transport") != NULL);

    /* chain: atomics, loads and stores to every peer, half of them on the other node */
    TsTensor cnt[P], got[P], flag[P], sig[P], cargs[P * 3];
    ct_chain(ctx, kc, w, P, pshape, one, cnt, got, flag, cargs);
    CHECK(ts_world_xport_served(w) > served);

    /* pull: get from rank + 1, put with an adding signal to rank - 1, wait for it */
    CHECK_EQ_INT(TS_OK, ts_world_tensor(w, TS_FLOAT32, 1, shape, Z));
    CHECK_EQ_INT(TS_OK, ts_world_tensor(w, TS_UINT64, 1, one, sig));
    for (int r = 0; r < P; r++) {
        for (int i = 0; i < N; i++) {
            ((float *)X[r].data)[i] = (float)ct_urand();
            ((float *)Y[r].data)[i] = NAN;
            ((float *)Z[r].data)[i] = NAN;
        }
        ((uint64_t *)sig[r].data)[0] = 0;
        args[r * 4] = X[r];
        args[r * 4 + 1] = Y[r];
        args[r * 4 + 2] = Z[r];
        args[r * 4 + 3] = sig[r];
    }
    st = ts_kernel_launch_world(kp, w, args, 4);
    if (st) printf("%s", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, st);
    int bad = 0;
    for (int r = 0; r < P; r++) {
        for (int i = 0; i < N; i++) {
            bad += ((float *)Y[r].data)[i] != ((float *)X[(r + 1) % P].data)[i];
            bad += ((float *)Z[r].data)[i] != ((float *)X[(r + 1) % P].data)[i]; /* rank r+1 pushed its X to r */
        }
        bad += ((uint64_t *)sig[r].data)[0] != 1;
    }
    CHECK_EQ_INT(0, bad);

    /* adding signals and waits after them, half of them across nodes */
    TsKernel *kr = build(ctx, "ring", "N", "64", 1);
    if (kr) ring_case(ctx, kr, w);
    ts_kernel_destroy(kr);

    /* a put's SET signal: sim ranks keep it (their proxy is one FIFO: the flag lands after the data) ... */
    TsKernel *ks = build(ctx, "setsig", "N", "64", 1);
    if (ks) {
        for (int r = 0; r < P; r++) {
            for (int i = 0; i < N; i++) ((float *)Y[r].data)[i] = NAN;
            ((uint64_t *)sig[r].data)[0] = 0;
            args[r * 3] = X[r];
            args[r * 3 + 1] = Y[r];
            args[r * 3 + 2] = sig[r];
        }
        st = ts_kernel_launch_world(ks, w, args, 3);
        if (st) printf("%s", ts_last_error(ctx));
        CHECK_EQ_INT(TS_OK, st);
        bad = 0;
        for (int r = 0; r < P; r++) {
            for (int i = 0; i < N; i++) bad += ((float *)Y[r].data)[i] != ((float *)X[(r + P - 1) % P].data)[i];
            bad += ((uint64_t *)sig[r].data)[0] != 7;
        }
        CHECK_EQ_INT(0, bad);
    }
    ts_kernel_destroy(ks);
    /* ... CUDA refuses it for several nodes (NCCL's GIN has no ordered set), naming the adding signal,
     * and compiles it for one node; the adding ring compiles for several */
    CHECK(build_for(ctx, "setsig", "N", "64", 1, TS_TARGET_CUDA) == NULL);
    CHECK(strstr(ts_last_error(ctx), "nodes.py:") != NULL);
    CHECK(strstr(ts_last_error(ctx), "cannot set a signal in order after the data") != NULL);
    CHECK(strstr(ts_last_error(ctx), "use an adding signal") != NULL);
    TsKernel *kc1 = build_for(ctx, "setsig", "N", "64", 0, TS_TARGET_CUDA);
    CHECK(kc1 != NULL);
    ts_kernel_destroy(kc1);
    TsKernel *kcr = build_for(ctx, "ring", "N", "64", 1, TS_TARGET_CUDA);
    if (!kcr) printf("%s", ts_last_error(ctx));
    CHECK(kcr != NULL);
    ts_kernel_destroy(kcr);

    ts_world_destroy(w);
    ts_kernel_destroy(k);
    ts_kernel_destroy(k1);
    ts_kernel_destroy(kc);
    ts_kernel_destroy(kp);
    ts_context_destroy(ctx);
    return test_done();
}
