/*
 * test_coll_op.c — the tile-level collectives as one tile op (TS_OP_COLL)
 * until the pass lower_coll expands them (issue 6: the elaborator used to
 * write the expansion itself).
 *
 * What could go wrong and is checked here: the op's regions as the
 * walkers see them (ir_tileop_region_rw through op/coll.c: src read, dst
 * written, allreduce's buffer and the units' scratch both; a swapped pair
 * or a read missing would let insert_sync or the pipeline passes move
 * accesses across it); what the elaborator records (kind, reduction,
 * units, unit index, one scratch shared by every unit's op, the units'
 * own tiles); and that lower_coll leaves no op behind and puts the
 * expansion where the op was: between units a copy into the unit's slot,
 * a barrier of the block, the combining loop, a second barrier; between
 * ranks the world barriers of each collective (pull-and-fold ones before
 * and after, in-place allreduce once per round too; push ones after).
 * Numbers (the results) are tested by test_scale_coll (thread
 * interpreter), tests/run/scale_coll.sh and tests/run/dist_examples.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "elab/elab.h"
#include "front/ast.h"
#include "ir/ir.h"
#include "ir/tileop.h"
#include "ir/walk.h"
#include "pass/pass.h"
#include "test.h"

enum { R = IR_ACC_READ, W = IR_ACC_WRITE };

static int rw(int coll, int nr, int i) {
    IrTileOp op = {0};
    op.kind = TS_OP_COLL;
    op.coll = coll;
    op.nr = nr;
    return ir_tileop_region_rw(&op, i);
}

/* The statements of a kind found in a body, in pre-order. */
typedef struct Found {
    const IrStmt *v[64]; /* the statements */
    int n;               /* how many */
    int want;            /* IR_S_* kind looked for; IR_S_TILEOP: COLL ops only */
} Found;

static bool find(const IrStmt *s, void *ctx) {
    Found *f = ctx;
    if ((int)s->kind == f->want && (s->kind != IR_S_TILEOP || s->op->kind == TS_OP_COLL) && f->n < 64)
        f->v[f->n++] = s;
    return false;
}

static Found find_all(const IrStmt *body, int kind) {
    Found f = {{0}, 0, kind};
    ir_stmt_any(body, find, &f);
    return f;
}

static int count_comm(const IrStmt *s, int comm) {
    int n = 0;
    if (s->kind == IR_S_TILEOP && s->op->kind == TS_OP_COMM && s->op->comm == comm) return 1;
    if (s->kind == IR_S_SEQ)
        for (int i = 0; i < s->seq.n; i++) n += count_comm(s->seq.v[i], comm);
    if (s->kind == IR_S_FOR) n += count_comm(s->for_.body, comm);
    if (s->kind == IR_S_IF) n += count_comm(s->if_.then, comm) + (s->if_.else_ ? count_comm(s->if_.else_, comm) : 0);
    return n;
}

/* Elaborates entry of file with defines (name=value pairs). */
static IrKernel *elaborate(TsArena *a, TsDiag *d, const char *file, const char *entry, const TsDefine *defs,
                           int nd) {
    size_t len = 0;
    char *heap = ts_read_file(file, &len);
    if (!heap) return NULL;
    char *text = ts_strdup(a, heap); /* the AST and diagnostics point into it: the arena's, as long */
    free(heap);
    TsSource src = {file, text, len};
    AstModule *m = ts_parse_module(a, &src);
    return ts_elaborate(d, a, m, entry, defs, nd, false);
}

static void unit_case(const char *entry, int coll, const char *level, int units) {
    TsArena a;
    ts_arena_init(&a);
    TsDiag d = {0};
    TsCaps cu;
    memset(&cu, 0, sizeof cu);
    jmp_buf jb, *saved;
    if (ts_try(&d, &jb, &saved)) {
        fprintf(stderr, "%s %s: %s\n", entry, level, ts_buf_str(&d.msg));
        CHECK(0);
    } else {
        TsDefine defs[2] = {{"level", level}, {"threads", "256"}};
        IrKernel *k = elaborate(&a, &d, "examples/scale_coll.py", entry, defs, 2);
        CHECK(k != NULL);
        TsPassCtx pc = {&d, &a, k, TS_TARGET_C, &cu};
        ts_pass_verify(&pc);
        Found ops = find_all(k->body, IR_S_TILEOP);
        Found roles = find_all(k->body, IR_S_ROLE);
        CHECK_EQ_INT(units, ops.n);
        CHECK_EQ_INT(units, roles.n);
        for (int g = 0; g < ops.n && g < roles.n; g++) {
            const IrTileOp *o = ops.v[g]->op;
            int64_t id = -1, slots = 0;
            CHECK_EQ_INT(coll, o->coll);
            CHECK_EQ_INT(TS_REDUCE_SUM, o->reduce);
            CHECK_EQ_INT(units, o->coll_units);
            CHECK_EQ_INT(256 / units, o->coll_unit_threads);
            CHECK(ir_is_const_int(o->args[0], &id) && id == g);
            CHECK_EQ_INT(3, o->nr);
            /* one scratch for all, [units, src's shape...] in shared memory */
            CHECK(o->r[2].buf == ops.v[0]->op->r[2].buf);
            CHECK(o->r[2].buf->scope == IR_SCOPE_SHARED);
            CHECK(ir_is_const_int(o->r[2].buf->shape[0], &slots) && slots == units);
            CHECK_EQ_INT(o->r[0].buf->ndim + 1, o->r[2].buf->ndim);
            /* the unit's own tiles: allocated in its role, not the other's */
            const IrStmt *mine = roles.v[g]->role.body, *other = roles.v[(g + 1) % roles.n]->role.body;
            CHECK(ir_stmt_access_rw(mine, o->r[0].buf, 0) != 0);
            CHECK_EQ_INT(0, ir_stmt_access_rw(other, o->r[0].buf, 0));
            /* as the walkers see the op */
            int want_src = coll == TS_COLL_ALLREDUCE ? (R | W) : R;
            int want_dst = coll == TS_COLL_ALLREDUCE ? (R | W) : W;
            CHECK_EQ_INT(want_src, ir_stmt_access_rw(ops.v[g], o->r[0].buf, 0));
            CHECK_EQ_INT(want_dst, ir_stmt_access_rw(ops.v[g], o->r[1].buf, 0));
            CHECK_EQ_INT(R | W, ir_stmt_access_rw(ops.v[g], o->r[2].buf, 0));
        }
        IrBuffer *S = ops.n ? ops.v[0]->op->r[2].buf : NULL;
        ts_pass_lower_coll(&pc);
        ts_pass_verify(&pc);
        CHECK_EQ_INT(0, find_all(k->body, IR_S_TILEOP).n);
        roles = find_all(k->body, IR_S_ROLE);
        CHECK_EQ_INT(units, roles.n);
        for (int g = 0; g < roles.n; g++) {
            /* spliced into the role's body: ..., copy -> slot g, barrier, loop, barrier, ... */
            const IrStmt *b = roles.v[g]->role.body;
            int at = -1;
            for (int i = 0; i < b->seq.n; i++)
                if (b->seq.v[i]->kind == IR_S_TILEOP && b->seq.v[i]->op->kind == TS_OP_COPY &&
                    b->seq.v[i]->op->r[1].buf == S)
                    at = i;
            CHECK(at >= 0 && at + 3 < b->seq.n);
            if (at < 0 || at + 3 >= b->seq.n) continue;
            int64_t slot = -1;
            CHECK(ir_is_const_int(b->seq.v[at]->op->r[1].start[0], &slot) && slot == g);
            for (int j = 1; j <= 3; j += 2) {
                const IrStmt *bar = b->seq.v[at + j];
                CHECK(bar->kind == IR_S_BARRIER && bar->barrier.id == 1 && bar->barrier.count == 256);
            }
            CHECK(b->seq.v[at + 2]->kind == IR_S_FOR && b->seq.v[at + 2]->for_.kind == IR_FOR_PARALLEL);
            CHECK_EQ_INT(R, ir_stmt_access_rw(b->seq.v[at + 2], S, 0));
        }
    }
    ts_try_end(&d, saved);
    ts_arena_free(&a);
}

static void rank_case(const char *entry, int coll, const TsDefine *defs, int nd, int barriers) {
    TsArena a;
    ts_arena_init(&a);
    TsDiag d = {0};
    TsCaps cu;
    memset(&cu, 0, sizeof cu);
    jmp_buf jb, *saved;
    if (ts_try(&d, &jb, &saved)) {
        fprintf(stderr, "%s: %s\n", entry, ts_buf_str(&d.msg));
        CHECK(0);
    } else {
        IrKernel *k = elaborate(&a, &d, "examples/distributed/collectives.py", entry, defs, nd);
        CHECK(k != NULL);
        TsPassCtx pc = {&d, &a, k, TS_TARGET_C, &cu};
        Found ops = find_all(k->body, IR_S_TILEOP);
        CHECK_EQ_INT(1, ops.n);
        if (ops.n == 1) {
            const IrTileOp *o = ops.v[0]->op;
            CHECK_EQ_INT(coll, o->coll);
            CHECK_EQ_INT(0, o->coll_units);
            CHECK_EQ_INT(2, o->nr);
            CHECK(o->r[0].buf->scope == IR_SCOPE_GLOBAL && o->r[1].buf->scope == IR_SCOPE_GLOBAL);
            CHECK((o->r[0].buf == o->r[1].buf) == (coll == TS_COLL_ALLREDUCE));
            CHECK(k->may_block);
        }
        CHECK_EQ_INT(0, count_comm(k->body, TS_COMM_BARRIER_ALL));
        ts_pass_lower_coll(&pc);
        ts_pass_verify(&pc);
        CHECK_EQ_INT(0, find_all(k->body, IR_S_TILEOP).n);
        CHECK_EQ_INT(barriers, count_comm(k->body, TS_COMM_BARRIER_ALL));
    }
    ts_try_end(&d, saved);
    ts_arena_free(&a);
}

int main(void) {
    /* regions: src read, dst written; allreduce (in place) and the units' scratch both */
    CHECK_EQ_INT(R | W, rw(TS_COLL_ALLREDUCE, 2, 0));
    CHECK_EQ_INT(R | W, rw(TS_COLL_ALLREDUCE, 2, 1));
    for (int c = TS_COLL_ALLGATHER; c < TS_COLL_COUNT; c++) {
        CHECK_EQ_INT(R, rw(c, 3, 0));
        CHECK_EQ_INT(W, rw(c, 3, 1));
        CHECK_EQ_INT(R | W, rw(c, 3, 2));
    }
    CHECK(!strcmp(ts_coll_name(TS_COLL_REDUCE_SCATTER), "reduce_scatter"));
    CHECK(!strcmp(ts_op_name(TS_OP_COLL), "coll"));

    unit_case("allreduce", TS_COLL_ALLREDUCE, "warpgroup", 2);
    unit_case("reduce_scatter", TS_COLL_REDUCE_SCATTER, "warp", 8);
    unit_case("allgather", TS_COLL_ALLGATHER, "warp", 8);
    unit_case("all_to_all", TS_COLL_ALL_TO_ALL, "warpgroup", 2);

    TsDefine ar[2] = {{"rows", "24"}, {"cols", "40"}};
    rank_case("allreduce", TS_COLL_ALLREDUCE, ar, 2, 2);
    TsDefine rs[3] = {{"rows", "5"}, {"cols", "12"}, {"P", "4"}};
    rank_case("reduce_scatter", TS_COLL_REDUCE_SCATTER, rs, 3, 2);
    TsDefine ag[3] = {{"rows", "6"}, {"cols", "10"}, {"P", "4"}};
    rank_case("allgather", TS_COLL_ALLGATHER, ag, 3, 1);
    TsDefine aa[3] = {{"chunk", "3"}, {"cols", "7"}, {"P", "4"}};
    rank_case("all_to_all", TS_COLL_ALL_TO_ALL, aa, 3, 1);
    return test_done();
}
