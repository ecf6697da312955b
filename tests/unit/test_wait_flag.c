/*
 * test_wait_flag.c — partition_threads' polling loops: in a kernel whose
 * blocks wait for each other (IrKernel.may_block), a uniform while loop
 * whose condition reads global memory becomes one thread's read of the
 * flag into a shared word that the whole block decides on, and every such
 * loop is marked acquire (the printer's fence after it).  The barriers
 * around the shared word are insert_sync's.
 *
 * A chain kernel (block b waits for block b + 1's flag, then adds its seed
 * to the value block b + 1 wrote) runs in the thread-level interpreter
 * with its blocks in reverse order (each wait already satisfied), on random
 * seeds and poisoned outputs, against suffix sums computed here; the IR is
 * checked for its shape (the shared word, one thread storing it, the
 * acquire mark, the barriers); and with the barrier between the store and
 * the block's read of the word removed, the interpreter must report the
 * race (a planted bug that must fail).
 */
#include <string.h>

#include "ir/walk.h"
#include "pass/pass.h"
#include "pass_test.h"
#include "test.h"

static TsArena A;

static const char *SRC_CHAIN =
    "import tilelang\nimport tilelang.language as T\n\n"
    "def chain(n):\n"
    "    @T.prim_func\n"
    "    def main(flags: T.Tensor((n,), 'int32'), vals: T.Tensor((n,), 'int32'),\n"
    "             seed: T.Tensor((n,), 'int32')):\n"
    "        with T.Kernel(n, threads=32) as bx:\n"
    "            if bx < n - 1:\n"
    "                while flags[bx + 1] == 0:\n"
    "                    pass\n"
    "                vals[bx] = vals[bx + 1] + seed[bx]\n"
    "            else:\n"
    "                vals[bx] = seed[bx]\n"
    "            flags[bx] = 1\n"
    "    return main\n";

static IrKernel *compile(const char *defs, TsBuf *err) {
    TsCaps c;
    memset(&c, 0, sizeof c);
    snprintf(c.arch, sizeof c.arch, "sm_80");
    c.sm = 80;
    c.mma = c.vec = c.pipeline = c.layout = c.swizzle = c.pad = true;
    return pt_compile(&A, SRC_CHAIN, "chain", defs, TS_TARGET_CUDA, &c, NULL, NULL, NULL, err);
}

typedef struct Found {
    const IrStmt *poll;   /* the while loop */
    const IrBuffer *word; /* the shared word it stores */
    int roles;            /* one-thread ranges storing the word */
    int barriers;         /* barriers inside the loop */
} Found;

static bool find(const IrStmt *s, void *ctx) {
    Found *f = ctx;
    if (s->kind == IR_S_WHILE) {
        f->poll = s;
    }
    if (s->kind == IR_S_ALLOC && s->alloc.buf->scope == IR_SCOPE_SHARED) f->word = s->alloc.buf;
    if (s->kind == IR_S_FOR && s->for_.kind == IR_FOR_THREAD && f->word && ir_stmt_access_rw(s, f->word, 0) == IR_ACC_WRITE) {
        int64_t e;
        if (ir_is_const_int(s->for_.extent, &e) && e == 1) f->roles++;
    }
    return false;
}

static bool count_barrier(const IrStmt *s, void *ctx) {
    *(int *)ctx += s->kind == IR_S_BARRIER;
    return false;
}

/* Remove the first barrier of seq's statements (recursively) that comes
 * right before a read of b in uniform code. */
static bool drop_barrier_before_read(IrStmt *seq, const IrBuffer *b) {
    if (!seq) return false;
    switch (seq->kind) {
    case IR_S_SEQ:
        for (int i = 1; i < seq->seq.n; i++) {
            IrStmt *s = seq->seq.v[i];
            if (s->kind == IR_S_LET && seq->seq.v[i - 1]->kind == IR_S_BARRIER && ir_stmt_access_rw(s, b, 0) == IR_ACC_READ) {
                for (int j = i - 1; j + 1 < seq->seq.n; j++) seq->seq.v[j] = seq->seq.v[j + 1];
                seq->seq.n--;
                return true;
            }
        }
        for (int i = 0; i < seq->seq.n; i++)
            if (drop_barrier_before_read(seq->seq.v[i], b)) return true;
        return false;
    case IR_S_IF: return drop_barrier_before_read(seq->if_.then, b) || drop_barrier_before_read(seq->if_.else_, b);
    case IR_S_WHILE: return drop_barrier_before_read(seq->while_.body, b);
    default: return false;
    }
}

int main(void) {
    enum { N = 9 };
    TsBuf err = {0};
    IrKernel *k = compile("n=9", &err);
    if (!k) fprintf(stderr, "%s\n", ts_buf_str(&err));
    CHECK(k != NULL);
    if (!k) return test_done();
    CHECK(k->may_block);
    Found f = {0};
    ir_stmt_any(k->body, find, &f);
    CHECK(f.poll != NULL);
    CHECK(f.word != NULL);
    if (f.poll) {
        CHECK(f.poll->while_.acquire);
        int64_t one;
        CHECK(ir_is_const_int(f.poll->while_.cond, &one) && one == 1); /* polls inside: while true */
        int nb = 0;
        ir_stmt_any(f.poll->while_.body, count_barrier, &nb);
        CHECK(nb >= 2); /* after the store; before the next store over what was read */
    }
    CHECK_EQ_INT(1, f.roles);
    TsBuf t = {0};
    ir_print_kernel(&t, k);
    CHECK_CONTAINS(ts_buf_str(&t), "while True: # acquire");
    ts_buf_free(&t);

    uint64_t r = 12345;
    double flags[N], vals[N], seed[N];
    for (int i = 0; i < N; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        seed[i] = (double)((int)(r >> 40) % 1000 - 500);
        flags[i] = 0;
        vals[i] = -777777;
    }
    double *data[3] = {flags, vals, seed};
    bool ok = pt_run(&A, k, data, N, &err);
    if (!ok) fprintf(stderr, "%s\n", ts_buf_str(&err));
    CHECK(ok);
    double want = 0;
    int bad = 0;
    for (int i = N - 1; i >= 0; i--) {
        want += seed[i];
        bad += vals[i] != want || flags[i] != 1;
    }
    CHECK_EQ_INT(0, bad);

    /* planted: no barrier between thread 0's store and the block's read */
    CHECK(f.word && drop_barrier_before_read(k->body, f.word));
    for (int i = 0; i < N; i++) flags[i] = 0, vals[i] = -777777;
    ts_buf_free(&err);
    CHECK(!pt_run(&A, k, data, N, &err));
    CHECK_CONTAINS(ts_buf_str(&err), "shared-memory race on wait_flag[0]");
    ts_buf_free(&err);
    ts_arena_free(&A);
    return test_done();
}
