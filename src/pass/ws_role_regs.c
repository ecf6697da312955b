/*
 * ws_role_regs.c — the CUDA pass (sm_90a) that gives a warp-specialised
 * kernel's tensor-core role the registers its producer role does not need,
 * so that two blocks fit on an SM.
 *
 * Why.  examples/ws_gemm.py's GEMMs run 256 threads: a producer warp group
 * that only copies tiles and an mma warp group whose 128 x 128 fp32
 * accumulator alone takes 128 registers a thread.  Compiled for one register
 * count for all threads (~170), one block fills an SM's 64 K registers: four
 * mma warps per SM where gemm.py's plain GEMM has eight.  sm_90a's
 * setmaxnreg lets a warp give registers back (dec) or take them (inc) from
 * its block's pool: compiled for two blocks per SM (128 registers a
 * thread), the producer drops to PRODUCER_REGS and the mma role rises to
 * what that frees (208 with 128 + 128 threads).
 *
 * ptxas gives code after a setmaxnreg the new count only where that code
 * belongs to the warps that ran it: with the roles' blocks interleaved in
 * one K loop (`for k: producer(k); mma(k)`, as T.ws writes them) the loop is
 * compiled once for all threads, at 128 registers, and spills (3.7 KB of
 * spill stores for ws_matmul_ring).  The producer's region comes first (with
 * the mma role's first and a producer count of 40, ptxas spilled a little).  So the pass first gives each role one
 * region of its own: every statement after the block's set-up is a role
 * block or a serial loop of role blocks, and each role's region is its own
 * blocks and its own copy of each loop, in program order:
 *
 *   role P: setmaxnreg.dec;  for k: P(k)
 *   role M: setmaxnreg.inc;  M(before);  for k: M(k);  M(after)
 *
 * A thread runs exactly the statements it ran before, in the same order
 * (the other role's blocks were skipped, the loop bounds are uniform), so
 * the rewrite changes no thread's execution; the roles meet only at their
 * mbarriers, which do not care which loop a wait or arrive is in.  That
 * needs: no statement outside the roles after the set-up (uniform code, a
 * block barrier), no block barrier (id 0) in a role, and roles that cover
 * the block's threads in whole warps (setmaxnreg is per warp and .aligned).
 *
 * When.  Only for sm_90a (setmaxnreg; TsCaps.arch), with exactly two roles:
 * one holding the tensor-core gemms (warps recorded by partition_threads)
 * and one without any, neither nested; where two blocks' shared buffers fit
 * an SM; and where the mma role's register arrays (its alloc_local
 * buffers, 32-bit words a thread) plus MMA_MARGIN fit the count it gets
 * (else two blocks would spill: FlashAttention's 384 threads leave the
 * consumers 104); not where the program sets register counts itself
 * (T.set_max_nreg), nor with TILESCALE_CUDA_MINBLOCKS.  The kernel is then compiled for two blocks per SM
 * (IrKernel.min_blocks, __launch_bounds__'s second argument).
 */
#include <string.h>

#include "ir/tileop.h"
#include "ir/walk.h"
#include "pass/pass.h"

#define SM_REGS 65536     /* 32-bit registers of an SM (sm_90) */
/* What a copying role keeps (a multiple of 8, >= 24): with 40 ptxas spilled
 * 28 bytes in ws_matmul_ring (nvcc 13.0), with 48 or 32 nothing. */
#define PRODUCER_REGS 48
#define MMA_MARGIN 64     /* registers an mma role needs besides its arrays: fragments, addresses */
#define BLOCKS 2          /* blocks per SM asked for */

/* A role's statements, collected in program order. */
typedef struct Region {
    const IrStmt *role;         /* its first role block (lo, n, id) */
    IrStmt *body;               /* the region's statement list */
    bool mma;                   /* holds a tensor-core gemm */
} Region;

static bool is_gemm(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_TILEOP && s->op->kind == TS_OP_GEMM && s->op->mma_threads > 0;
}

static bool bad_inside(const IrStmt *s, void *ctx) {
    (void)ctx;
    return (s->kind == IR_S_BARRIER && s->barrier.id == 0) || s->kind == IR_S_ROLE;
}

/* A register count the program set itself (T.set_max_nreg and its aliases). */
static bool has_nreg(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_EVAL && s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_SET_MAX_NREG;
}

static Region *region_of(TsArena *a, Region *rs, int *nr, const IrStmt *role) {
    for (int i = 0; i < *nr; i++)
        if (rs[i].role->role.lo == role->role.lo && rs[i].role->role.n == role->role.n) return &rs[i];
    if (*nr == 2) return NULL;
    Region *r = &rs[(*nr)++];
    r->role = role;
    r->body = ir_seq(a);
    r->mma = false;
    return r;
}

/* The statements of a loop body (a list or one statement), each a role block. */
static bool roles_only(const IrStmt *s) {
    if (s->kind == IR_S_ROLE) return true;
    if (s->kind != IR_S_SEQ) return false;
    for (int i = 0; i < s->seq.n; i++)
        if (s->seq.v[i]->kind != IR_S_ROLE) return false;
    return s->seq.n > 0;
}

static int n_roles(const IrStmt *s) { return s->kind == IR_S_ROLE ? 1 : s->seq.n; }
static const IrStmt *role_at(const IrStmt *s, int i) { return s->kind == IR_S_ROLE ? s : s->seq.v[i]; }

/* 32-bit words a thread holds in local arrays the statement touches. */
typedef struct Words {
    TsArena *a;                       /* where the list grows */
    TS_VEC(const IrBuffer *) seen;    /* buffers counted */
    int64_t words;                    /* their words */
} Words;

static void count_local(IrVisitor *v, const IrAccess *acc) {
    Words *w = v->ctx;
    const IrBuffer *b = acc->buf;
    if (b->scope != IR_SCOPE_LOCAL) return;
    for (int i = 0; i < w->seen.n; i++)
        if (w->seen.v[i] == b) return;
    ts_vec_push(w->a, w->seen, b);
    int64_t n = 1, e;
    for (int d = 0; d < b->ndim; d++) n *= ir_is_const_int(b->shape[d], &e) ? e : 64;
    w->words += (n * ts_dtype_bits(b->dt) + 31) / 32;
}

/* Bytes of shared memory the kernel's buffers take (before plan_smem's padding). */
static int64_t shared_bytes(const IrKernel *k) {
    int64_t total = 0, e;
    for (int i = 0; i < k->buffers.n; i++) {
        const IrBuffer *b = k->buffers.v[i];
        if (b->scope != IR_SCOPE_SHARED) continue;
        int64_t n = 1;
        for (int d = 0; d < b->ndim; d++) n *= ir_is_const_int(b->shape[d], &e) ? e : 0;
        total += n * ts_dtype_bits(b->dt) / 8;
    }
    return total;
}

static IrStmt *set_max_nreg(TsArena *a, TsLoc loc, int count, bool inc) {
    IrExpr **xs = TS_NEWN(a, IrExpr *, 2);
    xs[0] = ir_i32(a, count);
    xs[1] = ir_i32(a, inc);
    IrStmt *s = ir_stmt(a, IR_S_EVAL, loc);
    s->eval.e = ir_call(a, IR_SET_MAX_NREG, xs, 2, TS_INT32);
    s->eval.e->loc = loc;
    return s;
}

void ts_pass_ws_role_regs(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    size_t al = strlen(cx->caps->arch); /* setmaxnreg: sm_90a (as pass arch_hints decides) */
    if (cx->caps->sm != 90 || !al || cx->caps->arch[al - 1] != 'a' || k->may_block || cx->caps->min_blocks > 0 || k->body->kind != IR_S_SEQ ||
        ir_stmt_any(k->body, has_nreg, NULL))
        return;
    int nthreads = (int)ir_kernel_nthreads(k);
    IrStmt *body = k->body;
    int first = -1;
    for (int i = 0; i < body->seq.n && first < 0; i++)
        if (ir_stmt_any(body->seq.v[i], bad_inside, NULL)) first = i;
    if (first < 0) return;
    Region rs[2];
    int nr = 0;
    for (int i = first; i < body->seq.n; i++) { /* the shape the essay asks for */
        const IrStmt *s = body->seq.v[i];
        if (s->kind == IR_S_ROLE) {
            if (s->role.solo || ir_stmt_any(s->role.body, bad_inside, NULL) || !region_of(cx->arena, rs, &nr, s)) return;
        } else if (s->kind == IR_S_FOR && s->for_.kind == IR_FOR_SERIAL && roles_only(s->for_.body)) {
            for (int j = 0; j < n_roles(s->for_.body); j++) {
                const IrStmt *r = role_at(s->for_.body, j);
                if (r->role.solo || ir_stmt_any(r->role.body, bad_inside, NULL) || !region_of(cx->arena, rs, &nr, r))
                    return;
            }
        } else return;
    }
    if (nr != 2) return;
    const IrStmt *a0 = rs[0].role, *a1 = rs[1].role;
    if (a0->role.n + a1->role.n != nthreads || a0->role.lo % 32 || a0->role.n % 32 || a1->role.lo % 32 ||
        a1->role.n % 32 || (a0->role.lo < a1->role.lo + a1->role.n && a1->role.lo < a0->role.lo + a0->role.n))
        return;
    /* the regions, in program order */
    for (int i = first; i < body->seq.n; i++) {
        IrStmt *s = body->seq.v[i];
        if (s->kind == IR_S_ROLE) {
            Region *r = region_of(cx->arena, rs, &nr, s);
            ir_seq_push(cx->arena, r->body, s->role.body);
            r->mma |= ir_stmt_any(s->role.body, is_gemm, NULL);
            continue;
        }
        bool copied = false; /* the loop already went to a region */
        for (int q = 0; q < 2; q++) {
            IrStmt *lb = ir_seq(cx->arena);
            lb->loc = s->loc;
            for (int j = 0; j < n_roles(s->for_.body); j++) {
                const IrStmt *r = role_at(s->for_.body, j);
                if (region_of(cx->arena, rs, &nr, r) != &rs[q]) continue;
                ir_seq_push(cx->arena, lb, r->role.body);
                rs[q].mma |= ir_stmt_any(r->role.body, is_gemm, NULL);
            }
            if (!lb->seq.n) continue;
            /* the second copy of a loop gets a variable of its own */
            IrVar *v = s->for_.var;
            IrStmt *lbody = lb;
            if (copied) {
                IrVar *nv = ir_var(k, v->name, v->dt, IR_VAR_LOOP);
                IrExpr *to = ir_var_ref(cx->arena, nv);
                lbody = ir_stmt_subst(cx->arena, lb, &v, &to, 1);
                v = nv;
            }
            IrStmt *f = ir_for(cx->arena, v, s->for_.min, s->for_.extent, IR_FOR_SERIAL, lbody);
            f->loc = s->loc;
            ir_seq_push(cx->arena, rs[q].body, f);
            copied = true;
        }
    }
    if (rs[0].mma == rs[1].mma) return; /* one mma role and one producer */
    Region *m = rs[0].mma ? &rs[0] : &rs[1], *p = rs[0].mma ? &rs[1] : &rs[0];
    int launch = SM_REGS / (nthreads * BLOCKS) / 8 * 8; /* the count each thread starts with */
    int nm = m->role->role.n, np = p->role->role.n;
    int mma_regs = (launch + (launch - PRODUCER_REGS) * np / nm) / 8 * 8;
    if (mma_regs > 256) mma_regs = 256;
    Words w = {.a = cx->arena};
    IrVisitor vis = {.ctx = &w, .access = count_local};
    ir_visit_stmt(&vis, m->body);
    if (launch <= PRODUCER_REGS || w.words + MMA_MARGIN > mma_regs ||
        shared_bytes(k) * BLOCKS > (cx->caps->smem_max ? cx->caps->smem_max : 227 * 1024))
        return;
    /* the new body: the set-up, then each role's region with its register count first */
    IrStmt *nb = ir_seq(cx->arena);
    nb->loc = body->loc;
    for (int i = 0; i < first; i++) ir_seq_push(cx->arena, nb, body->seq.v[i]);
    for (int q = 0; q < 2; q++) { /* the producer's first (ptxas then spills nothing in either) */
        Region *r = q ? m : p;
        IrStmt *rb = ir_seq(cx->arena);
        rb->loc = r->role->loc;
        ir_seq_push(cx->arena, rb, r == m ? set_max_nreg(cx->arena, r->role->loc, mma_regs, true)
                                          : set_max_nreg(cx->arena, r->role->loc, PRODUCER_REGS, false));
        for (int i = 0; i < r->body->seq.n; i++) ir_seq_push(cx->arena, rb, r->body->seq.v[i]);
        IrStmt *role = ir_stmt(cx->arena, IR_S_ROLE, r->role->loc);
        *role = *r->role;
        role->role.body = rb;
        ir_seq_push(cx->arena, nb, role);
    }
    k->body = nb;
    k->min_blocks = BLOCKS;
}
