/*
 * test_comm_regions.c — what each communication primitive tells the passes
 * it reads and writes (ir_tileop_region_rw, answered by op/comm.c's
 * ts_op_comm_regions): the source of a put/get/remote copy is read and its
 * destination written, a wait only reads, a store only writes, a signal
 * that adds and an atomic read and write, the block barriers' counters are
 * read and written.  Before, every region of every primitive was "read and
 * written", which kept plan_smem from seeing where a tile a remote load
 * fills starts its life; a regression to that (or a swapped pair) fails
 * here.  Also: a kernel that uses a primitive only inside a T.ws role is
 * seen as communicating (ts_comm_used walks roles: before, the C target
 * left out the prelude and the kernel failed to load).
 */
#include "ir/ir.h"
#include "ir/tileop.h"
#include "ir/walk.h"
#include "op/comm.h"
#include "test.h"

enum { R = IR_ACC_READ, W = IR_ACC_WRITE };

static int rw(int comm, int nr, int i, int f0) {
    IrTileOp op = {0};
    op.kind = TS_OP_COMM;
    op.comm = comm;
    op.nr = nr;
    op.cflags[0] = f0;
    return ir_tileop_region_rw(&op, i);
}

int main(void) {
    /* data movement: source read, destination written; a put's signal written (set) or read+written (add) */
    CHECK_EQ_INT(R, rw(TS_COMM_PUT, 2, 0, 0));
    CHECK_EQ_INT(W, rw(TS_COMM_PUT, 2, 1, 0));
    CHECK_EQ_INT(W, rw(TS_COMM_PUT, 3, 2, TS_SIG_SET));
    CHECK_EQ_INT(R | W, rw(TS_COMM_PUT, 3, 2, TS_SIG_ADD));
    CHECK_EQ_INT(R, rw(TS_COMM_GET, 2, 0, 0));
    CHECK_EQ_INT(W, rw(TS_COMM_GET, 2, 1, 0));
    CHECK_EQ_INT(R, rw(TS_COMM_COPY, 2, 0, 1));
    CHECK_EQ_INT(W, rw(TS_COMM_COPY, 2, 1, 1));
    /* a warp's shared copy (two regions) and fill (one) */
    CHECK_EQ_INT(R, rw(TS_COMM_LANES, 2, 0, 32));
    CHECK_EQ_INT(W, rw(TS_COMM_LANES, 2, 1, 32));
    CHECK_EQ_INT(W, rw(TS_COMM_LANES, 1, 0, 32));
    /* elements */
    CHECK_EQ_INT(W, rw(TS_COMM_ST, 1, 0, 0));
    CHECK_EQ_INT(R, rw(TS_COMM_LD, 2, 0, 0));
    CHECK_EQ_INT(W, rw(TS_COMM_LD, 2, 1, 0));
    CHECK_EQ_INT(R, rw(TS_COMM_WAIT, 1, 0, TS_CMP_GE));
    CHECK_EQ_INT(R | W, rw(TS_COMM_ATOM_ADD, 2, 0, 0));
    CHECK_EQ_INT(W, rw(TS_COMM_ATOM_ADD, 2, 1, 0));
    CHECK_EQ_INT(W, rw(TS_COMM_SIGNAL, 1, 0, TS_SIG_SET));
    CHECK_EQ_INT(R | W, rw(TS_COMM_SIGNAL, 1, 0, TS_SIG_ADD));
    CHECK_EQ_INT(R | W, rw(TS_COMM_BARRIER_BLOCKS, 1, 0, 1));

    /* a primitive inside a T.ws role is a use */
    TsArena a;
    ts_arena_init(&a);
    IrStmt *prim = ir_stmt(&a, IR_S_TILEOP, (TsLoc){0});
    prim->op = TS_NEW(&a, IrTileOp);
    prim->op->kind = TS_OP_COMM;
    prim->op->comm = TS_COMM_FENCE;
    IrStmt *role = ir_stmt(&a, IR_S_ROLE, (TsLoc){0});
    role->role.lo = 128;
    role->role.n = 128;
    role->role.id = 1;
    role->role.body = ir_seq(&a);
    ir_seq_push(&a, role->role.body, prim);
    IrStmt *body = ir_seq(&a);
    CHECK(!ts_comm_used(body));
    ir_seq_push(&a, body, role);
    CHECK(ts_comm_used(body));
    /* a tile-op statement without its op (malformed) is walked over, not dereferenced */
    ir_seq_push(&a, body, ir_stmt(&a, IR_S_TILEOP, (TsLoc){0}));
    CHECK(ts_comm_used(body));
    ts_arena_free(&a);
    return test_done();
}
