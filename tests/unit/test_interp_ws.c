/*
 * test_interp_ws.c — warp-specialised kernels (T.ws roles handing tiles
 * over through mbarriers) compiled for CUDA and run thread by thread on
 * the CPU, against a reference run on the C target's block interpreter.
 *
 * What is checked: layout inference lays a role's fragments out over the
 * role's own threads (a role of 128 or 256 consumer threads gets the
 * mma.sync accumulator layout of its warps, its T.Parallel loops and
 * reductions run over the role's thread range) and the kernel then keeps
 * them in registers (no layout note); partition_threads records the warps
 * of a role's gemm on the op; the thread-level interpreter runs the result
 * with every thread simulated (roles, mbarrier phases and waits, the
 * roles' named barriers, the gemm over the role's warps, register
 * ownership by layout) and the outputs match the reference.  The same
 * GEMM and FlashAttention with TsCaps.ws_layout off (fragments in shared
 * memory, the path before) run too.
 *
 * The reference: the same entry on the C target where the roles' program
 * order is a valid schedule (ws_gemm.py's roles alternate inside the K
 * loop), else a naive kernel of the same file (ws_flash_attention.py's
 * roles each run their own K loop, which the C target cannot interleave).
 *
 * Planted bugs (mutations of the CUDA IR after its passes) must each make a
 * run fail: every mbarrier wait dropped (the producer overwrites a tile the
 * consumers still read), a role's thread ranges starting at thread 0 (the
 * thread index taken as the block's, not the role's), the gemm's recorded
 * warps moved by one warp, the roles' named barriers dropped (the
 * cross-warp row reduction's scratch then races), a producer's arrive_async
 * made a plain arrive (its cp.async copies are read in flight), a
 * producer's wait for its cp.async copies before its arrive dropped (the
 * same).
 * The program's own cp.async (T.ptx_cp_async; tests/run/kernels/cp_async.py)
 * runs the same way: a producer role's copies handed over by
 * T.cp_async_barrier_noinc, rows gathered in committed groups and waited for;
 * a plain arrive in place of the noinc one, dropped mbarrier waits and a
 * dropped group wait must each fail.
 *
 * The GEMMs' producers load with cp.async (pass ws_async_copy, TsCaps.ws_async):
 * the cases say so and the test checks that no global -> shared copy of
 * theirs stayed synchronous and that the hand-over has the form asked for
 * (TS_WS_ASYNC_NOINC, the default: a noinc arrive_async; TS_WS_ASYNC_WAIT:
 * a wait for every group before the arrive, the ring GEMM and
 * FlashAttention; TS_WS_ASYNC_MBAR: an arrive_async, the ring GEMM).  The
 * two GEMMs also compile for sm_90a, where pass ws_role_regs gives each
 * role a region of its own (its own copy of the K loop) and moves registers
 * from the producer to the mma role; they run the same and a dropped wait
 * is caught there too.
 */
#include "interp_test.h"
#include "ir/tileop.h"
#include "ir/walk.h"

typedef struct Case {
    const char *file, *entry;
    const char *ref;      /* the reference entry (NULL: the same one on the C target) */
    const char *defs[8];  /* "name=value", NULL-terminated; the reference gets those it declares */
    double tol;           /* relative tolerance */
    bool regs;            /* with ws_layout the fragments must end up in registers */
    bool async;           /* the producer's copies become cp.async, its arrive an arrive_async
                             (pass ws_async_copy) */
} Case;

static const Case cases[] = {
    /* one shared tile pair: consumer role [128, 256), 4 warps on a 128 x 128 accumulator */
    {"examples/ws_gemm.py", "ws_matmul", NULL, {"M=256", "N=128", "K=192"}, 1e-3, true, true},
    /* a ring of 2 tile pairs, consumer role [0, 128) */
    {"examples/ws_gemm.py", "ws_matmul_ring", NULL, {"M=128", "N=256", "K=320", "stages=2"}, 1e-3, true, true},
    /* partial tiles in M, N and K, a ring of 3, 32 x 32 accumulators on the role's 2 x 2 warps */
    {"examples/ws_gemm.py", "ws_matmul_ring", NULL,
     {"M=72", "N=80", "K=200", "block_M=32", "block_N=32", "block_K=16", "stages=3"}, 1e-3, true, false},
    /* 256 consumer threads (8 warps in rows, FullRow) on 128-row tiles: QK^T, online
     * softmax by shuffles over each row's lanes, P from registers into PV */
    {"examples/ws_flash_attention.py", "flashattn_ws", "attention_naive",
     {"batch=1", "heads=1", "seq_len=256", "dim=64", "is_causal=True", "block_M=128"}, 2e-2, true, true},
    {"examples/ws_flash_attention.py", "flashattn_ws", "attention_naive",
     {"batch=1", "heads=1", "seq_len=256", "dim=32", "is_causal=False", "block_M=128"}, 2e-2, true, true},
    /* (tests/golden/ir_ws_layout.py) a row reduction across the 2 x 2 warp grid of the
     * consumer role [128, 256): its scratch exchange under the role's named barrier */
    {"tests/golden/ir_ws_layout.py", "ws_rowmax", NULL, {"K=128"}, 1e-3, true, false},
    /* T.Scale("warp") / T.Scale("warpgroup") units (examples/scale_gemm.py): one role per
     * warp (32 threads) or warpgroup, each with its own accumulator in its own registers */
    {"examples/scale_gemm.py", "warp_gemm", "warp_gemm_ref", {"M=128", "N=32", "K=48"}, 1e-3, true, false},
    {"examples/scale_gemm.py", "wg_gemm", "wg_gemm_ref", {"M=32", "N=48", "K=128"}, 1e-3, true, false},
    /* 64-row tiles: no warp grid of 8 warps in rows fits; the gemms take 4 x 2 warps and
     * P, the register A operand of PV, is replicated over the 2 warp columns (layout MMA_A:
     * before it, the fragments stayed in shared memory) */
    {"examples/ws_flash_attention.py", "flashattn_ws", "attention_naive",
     {"batch=1", "heads=1", "seq_len=128", "dim=64", "is_causal=True"}, 2e-2, true, false},
    /* the program's own cp.async (tests/run/kernels/cp_async.py): a producer role's
     * T.ptx_cp_async rows of 16 and 8 bytes, some predicated off, handed over by
     * T.cp_async_barrier_noinc; gathered rows committed in groups and waited for */
    {"tests/run/kernels/cp_async.py", "ws_cp_async", "matmul_nt_naive", {"M=128", "N=72", "K=128"}, 1e-3, true,
     false},
    {"tests/run/kernels/cp_async.py", "ws_cp_async", "matmul_nt_naive",
     {"M=64", "N=64", "K=192", "vec=4", "block_K=32"}, 1e-3, true, false},
    {"tests/run/kernels/cp_async.py", "gather_groups", "gather_naive", {"R=300", "G=3"}, 0, true, false},
    /* 8 threads store one row's validity flag (one value), then copy the row if it is valid */
    {"tests/run/kernels/cp_async.py", "gather_flags", "gather_flags_naive", {"R=300", "G=3", "D=128"}, 0, true, false},
    /* Blackwell's form (pass lower_tmem, TsCaps.tmem_shared): a producer warp and an mma warp
     * over two or three slots, each T.tcgen05_gemm's arrive freeing its slot, T.tcgen05_mma_arrive
     * completing the tensor-memory accumulator for the whole block (a fragment of the mma role and
     * the block: shared memory); every lane of the mma warp arrives (partition_threads) */
    {"tests/run/kernels/tmem.py", "tc_ws", "gemm_kn_ref", {"M=64", "N=64", "K=96"}, 1e-4, false, false},
    {"tests/run/kernels/tmem.py", "tc_ws", "gemm_kn_ref", {"M=96", "N=80", "K=72", "stages=3"}, 1e-4, false, false},
    /* the same under `if tx >= 64:`: each thread tests its own store (pass forward_stores) */
    {"tests/run/kernels/cp_async.py", "gather_flags_branch", "gather_flags_naive", {"R=300", "G=3"}, 0, true, false},
};
enum { CASE_CP_ASYNC = 9, CASE_GATHER = 11 };

typedef enum Mutation {
    MUT_NONE,
    MUT_NO_MBAR_WAITS, /* every mbarrier wait dropped */
    MUT_ROLE_FROM_0,   /* thread ranges inside roles start at thread 0 */
    MUT_GEMM_WARPS,    /* a role gemm's recorded warps one warp later */
    MUT_NO_NAMED_BARRIERS, /* the roles' named barriers dropped */
    MUT_PLAIN_ARRIVE,  /* a producer's arrive_async made a plain arrive (its cp.async copies
                          then land at no point the consumer waits for) */
    MUT_NO_ASYNC_WAIT, /* a role's waits for its cp.async groups dropped (the same) */
} Mutation;

static void mutate_stmt(TsArena *a, IrStmt *s, Mutation mut, bool in_role) {
    if (!s) return;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++) {
            IrStmt *c = s->seq.v[i];
            if (mut == MUT_PLAIN_ARRIVE && c->kind == IR_S_MBAR && c->mbar.op == IR_MBAR_ARRIVE_ASYNC)
                c->mbar.op = IR_MBAR_ARRIVE;
            if ((mut == MUT_NO_MBAR_WAITS && c->kind == IR_S_MBAR && c->mbar.op == IR_MBAR_WAIT) ||
                (mut == MUT_NO_ASYNC_WAIT && c->kind == IR_S_ASYNC_WAIT) ||
                (mut == MUT_NO_NAMED_BARRIERS && c->kind == IR_S_BARRIER && c->barrier.id))
                c->kind = IR_S_SEQ, c->seq.v = NULL, c->seq.n = c->seq.cap = 0;
            else mutate_stmt(a, c, mut, in_role);
        }
        return;
    case IR_S_FOR:
        if (mut == MUT_ROLE_FROM_0 && in_role && s->for_.kind == IR_FOR_THREAD) {
            int64_t lo;
            if (ir_is_const_int(s->for_.min, &lo) && lo > 0) s->for_.min = ir_i32(a, 0);
        }
        mutate_stmt(a, s->for_.body, mut, in_role);
        return;
    case IR_S_IF:
        mutate_stmt(a, s->if_.then, mut, in_role);
        mutate_stmt(a, s->if_.else_, mut, in_role);
        return;
    case IR_S_WHILE: mutate_stmt(a, s->while_.body, mut, in_role); return;
    case IR_S_ROLE: mutate_stmt(a, s->role.body, mut, true); return;
    case IR_S_TILEOP:
        if (mut == MUT_GEMM_WARPS && s->op->kind == TS_OP_GEMM && s->op->mma_threads) s->op->mma_lo += 32;
        return;
    default: return;
    }
}

/* An arrive_async, of the NOINC form when *ctx. */
static bool is_arrive_async(const IrStmt *s, void *ctx) {
    return s->kind == IR_S_MBAR && s->mbar.op == IR_MBAR_ARRIVE_ASYNC && s->mbar.noinc == *(const bool *)ctx;
}

static bool is_async_wait(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_ASYNC_WAIT;
}

/* A copy from global into shared memory that is not a cp.async. */
static bool is_sync_copy(const IrStmt *s, void *ctx) {
    (void)ctx;
    return (s->kind == IR_S_VCOPY && !s->vcopy.async && s->vcopy.dst->scope == IR_SCOPE_SHARED &&
            s->vcopy.src->scope == IR_SCOPE_GLOBAL) ||
           (s->kind == IR_S_STORE && s->store.buf->scope == IR_SCOPE_SHARED && s->store.value->kind == IR_E_LOAD &&
            s->store.value->load.buf->scope == IR_SCOPE_GLOBAL);
}

static bool has_role_gemm(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_TILEOP && s->op->kind == TS_OP_GEMM && s->op->mma_threads > 0;
}

/* The case's inputs: multiples of 1/8 in [-1, 1); integers (gather_groups' row
 * indices) in [-40, 360): rows out of range (R = 300) on both sides. */
static double input(const void *ctx, const IrBuffer *b, int i, int64_t j, int64_t last) {
    (void)ctx, (void)i, (void)j, (void)last;
    if (b->dt == TS_INT32) return floor(it_frand() * 400) - 40;
    return floor(it_frand() * 8) / 8;
}

/* sm90a: compiled for sm_90a, where pass ws_role_regs gives each role its region and
 * moves registers (the GEMMs: checked to have happened). */
static bool run_case_arch(const Case *c, bool ws_layout, int form, Mutation mut, bool sm90a) {
    ItCase t;
    if (!it_open(&t, c->file)) return false;
    TsCaps cu;
    it_caps_sm80(&cu);
    if (sm90a) {
        snprintf(cu.arch, sizeof cu.arch, "sm_90a");
        cu.sm = 90;
    }
    cu.pipeline = true;
    cu.ws_layout = ws_layout;
    cu.ws_async = form;
    cu.mma_prefetch = 1;
    cu.smem_reuse = TS_SMEM_REUSE_OFF;
    TsCaps cc;
    memset(&cc, 0, sizeof cc);
    /* (tensor-memory tiles two roles share kept in shared memory: only tc_ws has one) */
    cu.tmem_shared = cc.tmem_shared = true;
    TsDefine defs[8];
    int nd = it_defines(&t.a, c->defs, defs, 8);
    char label[256];
    snprintf(label, sizeof label, "%s:%s", c->file, c->entry);
    /* (lenient: the reference kernel declares only some of the defines) */
    IrKernel *kc = it_compile(&t.a, &t.d, &t.src, c->ref ? c->ref : c->entry, defs, nd, true, TS_TARGET_C, &cc, label);
    IrKernel *kg = it_compile(&t.a, &t.d, &t.src, c->entry, defs, nd, true, TS_TARGET_CUDA, &cu, label);
    bool ok = kc && kg && kc->params.n == kg->params.n && !kg->next;
    if (ok && !mut) {
        /* the warps of every role gemm are recorded; registers where the case expects them */
        bool regs = !kg->layout_note;
        if (ws_layout && regs != c->regs) {
            fprintf(stderr, "%s: fragments %s registers (%s)\n", c->entry, regs ? "in" : "not in",
                    kg->layout_note ? kg->layout_note : "");
            ok = false;
        }
        bool noinc = form == TS_WS_ASYNC_NOINC, inc = false;
        bool handed = form != TS_WS_ASYNC_WAIT ? ir_stmt_any(kg->body, is_arrive_async, &noinc)
                                               : ir_stmt_any(kg->body, is_async_wait, NULL) &&
                                                     !ir_stmt_any(kg->body, is_arrive_async, &inc) &&
                                                     !ir_stmt_any(kg->body, is_arrive_async, &noinc);
        if (c->async && (!handed || ir_stmt_any(kg->body, is_sync_copy, NULL))) {
            fprintf(stderr, "%s: the producer's copies are not all cp.async before a %s\n", c->entry,
                    form == TS_WS_ASYNC_WAIT ? "wait and its arrive" : noinc ? "noinc arrive_async" : "arrive_async");
            ok = false;
        }
        if (sm90a && kg->min_blocks != 2) {
            fprintf(stderr, "%s: sm_90a, but pass ws_role_regs did not split the roles\n", c->entry);
            ok = false;
        }
        if (strncmp(c->entry, "gather_", 7) && !ir_stmt_any(kg->body, has_role_gemm, NULL)) {
            fprintf(stderr, "%s: no T.gemm with its role's warps recorded\n", c->entry);
            ok = false;
        }
    }
    if (ok) mutate_stmt(&t.a, kg->body, mut, false);
    ItCompare cmp = {label, c->tol, mut != MUT_NONE, input, NULL};
    ok = ok && it_against_c(&t.a, &t.d, kc, kg, &cmp);
    it_close(&t);
    return ok;
}

static bool run_case(const Case *c, bool ws_layout, int form, Mutation mut) {
    return run_case_arch(c, ws_layout, form, mut, false);
}

/* TileLang's MLA decode examples that use T.ptx_cp_async / T.wgmma_gemm with a
 * run-time clear_accum (bench/tilelang_examples.sh fetch puts them in
 * .tl-examples; skipped where they are not), compiled for sm_90a and run thread
 * by thread against the naive MLA decode of tests/run/kernels/mla_ref.py on the
 * C target. */
typedef struct TlCase {
    const char *file, *entry;
    const char *defs[12];
} TlCase;

static const TlCase tl_cases[] = {
    {".tl-examples/deepseek_mla/example_mla_decode_ws.py", "flashattn",
     {"batch=1", "heads=64", "kv_head_num=1", "seqlen_kv=128", "dim=512", "pe_dim=64", "block_N=64", "block_H=64",
      "num_split=1", "softmax_scale=0.041666666666666664"}},
    {".tl-examples/warp_specialize/example_warp_specialize_flashmla.py", "flashattn",
     {"batch=1", "heads=64", "kv_head_num=1", "seqlen_kv=256", "dim=512", "pe_dim=64", "block_N=64", "block_H=64",
      "num_split=1"}},
};

static int run_tl_case(const TlCase *c) {
    FILE *f = fopen(c->file, "r");
    if (!f) {
        fprintf(stderr, "skipped: %s (bench/tilelang_examples.sh fetch)\n", c->file);
        return -1;
    }
    fclose(f);
    ItCase t, r;
    if (!it_open(&t, c->file)) return 0;
    if (!it_open(&r, "tests/run/kernels/mla_ref.py")) {
        it_close(&t);
        return 0;
    }
    TsCaps cu;
    it_caps_sm80(&cu);
    snprintf(cu.arch, sizeof cu.arch, "sm_90a");
    cu.sm = 90;
    cu.pipeline = true;
    cu.ws_layout = true;
    cu.ws_async = TS_WS_ASYNC_NOINC;
    cu.smem_reuse = TS_SMEM_REUSE_OFF;
    TsCaps cc;
    memset(&cc, 0, sizeof cc);
    TsDefine defs[12];
    int nd = it_defines(&t.a, c->defs, defs, 12);
    IrKernel *kc = it_compile(&r.a, &r.d, &r.src, "mla_decode_naive", defs, nd, true, TS_TARGET_C, &cc, c->file);
    IrKernel *kg = it_compile(&t.a, &t.d, &t.src, c->entry, defs, nd, true, TS_TARGET_CUDA, &cu, c->file);
    bool ok = kc && kg && !kg->next;
    if (ok && kg->layout_note) {
        fprintf(stderr, "%s: fragments not in registers (%s)\n", c->file, kg->layout_note);
        ok = false;
    }
    ItCompare cmp = {c->file, 2e-2, false, input, NULL};
    ok = ok && it_against_c(&t.a, &t.d, kc, kg, &cmp);
    it_close(&r);
    it_close(&t);
    return ok;
}

int main(void) {
    it_rng = 0x9e3779b97f4a7c15ull;
    size_t n = sizeof cases / sizeof *cases;
    const char *only = getenv("TS_CASE"); /* (debugging: one case, ws_layout on, no planted bugs) */
    if (getenv("TS_TL_CASE")) { /* (debugging: one of TileLang's examples) */
        int r = run_tl_case(&tl_cases[atoi(getenv("TS_TL_CASE")) % (int)(sizeof tl_cases / sizeof *tl_cases)]);
        CHECK(r != 0);
        return test_done();
    }
    if (only) {
        CHECK(run_case(&cases[atoi(only) % n], true, TS_WS_ASYNC_NOINC, MUT_NONE));
        return test_done();
    }
    for (size_t i = 0; i < n; i++)
        for (int w = 1; w >= 0; w--) {
            if (!w && i != 0 && i != 3 && i != CASE_CP_ASYNC) continue; /* (the path before: a few cases, for time) */
            bool ok = run_case(&cases[i], w, TS_WS_ASYNC_NOINC, MUT_NONE);
            if (!ok) fprintf(stderr, "FAILED: %s %s %s ws_layout=%d\n", cases[i].file, cases[i].entry, cases[i].defs[0], w);
            CHECK(ok);
        }
    /* the other hand-overs of the producer's cp.async copies: a wait for them before
     * the plain arrive; cp.async.mbarrier.arrive, then the arrive */
    CHECK(run_case(&cases[1], true, TS_WS_ASYNC_WAIT, MUT_NONE));
    CHECK(run_case(&cases[3], true, TS_WS_ASYNC_WAIT, MUT_NONE));
    CHECK(run_case(&cases[1], true, TS_WS_ASYNC_MBAR, MUT_NONE));
    /* sm_90a: each role one region, setmaxnreg, two blocks per SM (pass ws_role_regs) */
    CHECK(run_case_arch(&cases[0], true, TS_WS_ASYNC_NOINC, MUT_NONE, true));
    CHECK(run_case_arch(&cases[1], true, TS_WS_ASYNC_NOINC, MUT_NONE, true));
    CHECK(!run_case_arch(&cases[1], true, TS_WS_ASYNC_NOINC, MUT_NO_MBAR_WAITS, true));
    static const char *const names[] = {"", "dropped mbarrier waits", "role thread ranges from thread 0",
                                        "gemm warps moved", "dropped named barriers", "plain arrive after cp.async",
                                        "dropped cp.async wait before the arrive"};
    static const struct {
        size_t c;
        Mutation m;
        int form;
    } planted[] = {
        {0, MUT_NO_MBAR_WAITS, TS_WS_ASYNC_NOINC},     {0, MUT_ROLE_FROM_0, TS_WS_ASYNC_NOINC},
        {0, MUT_GEMM_WARPS, TS_WS_ASYNC_NOINC},        {1, MUT_NO_MBAR_WAITS, TS_WS_ASYNC_NOINC},
        {3, MUT_NO_MBAR_WAITS, TS_WS_ASYNC_NOINC},     {5, MUT_NO_NAMED_BARRIERS, TS_WS_ASYNC_NOINC},
        {5, MUT_ROLE_FROM_0, TS_WS_ASYNC_NOINC},       {1, MUT_PLAIN_ARRIVE, TS_WS_ASYNC_NOINC},
        {1, MUT_NO_ASYNC_WAIT, TS_WS_ASYNC_WAIT},      {0, MUT_PLAIN_ARRIVE, TS_WS_ASYNC_MBAR},
        {CASE_CP_ASYNC, MUT_PLAIN_ARRIVE, TS_WS_ASYNC_NOINC}, {CASE_CP_ASYNC + 1, MUT_NO_MBAR_WAITS, TS_WS_ASYNC_NOINC},
        {CASE_GATHER, MUT_NO_ASYNC_WAIT, TS_WS_ASYNC_NOINC},
    };
    for (size_t i = 0; i < sizeof tl_cases / sizeof *tl_cases; i++) {
        int r = run_tl_case(&tl_cases[i]);
        if (!r) fprintf(stderr, "FAILED: %s\n", tl_cases[i].file);
        CHECK(r != 0);
    }
    for (size_t i = 0; i < sizeof planted / sizeof *planted; i++) {
        bool ok = run_case(&cases[planted[i].c], true, planted[i].form, planted[i].m);
        if (ok) fprintf(stderr, "NOT CAUGHT: %s in %s\n", names[planted[i].m], cases[planted[i].c].entry);
        CHECK(!ok);
    }
    return test_done();
}
