/*
 * comm_cuda.c — the CUDA target's emitter of communication primitives (the
 * TS_OP_COMM tile ops kept by op/comm.c), called by codegen_cuda.c through
 * two hooks: ts_cuda_comm_prelude once per file that communicates, and
 * ts_cuda_comm_emit for each primitive, in uniform code between barriers.
 *
 * The world reaches the kernel the way TileScale's does (a table of heap
 * bases in device memory, tl_templates/cuda/distributed.h): module globals
 * `ts_comm_peer[rank]` (every rank's symmetric heap base), `ts_comm_heap`
 * (its size) and `ts_comm_timeout_ns`, which the launcher of a world sets
 * before launching; the kernel's signature does not change.  Every rank
 * of a `local` world on one GPU runs the same module, so one table serves
 * them all.  Outside a world the table is zero and only the local rank
 * can be reached (rank 0 of 1), as on the C target.  In an `ipc` world
 * (a process per rank, each with its own module) the barrier counter and
 * an abort word live on rank 0's heap instead: `ts_comm_sync_at` and
 * `ts_comm_abort_at` point there (zero otherwise), so T.barrier_all and a
 * failure reach every process.
 *
 * Remote address = peer base + (local address - own base), checked in
 * ts_comm_addr like the C target's (peer in range, range inside its
 * tensor, tensor on the heap).  A failure cannot call the host: the first
 * one is recorded in `ts_comm_err` (kind, rank, operands) and sets
 * `ts_comm_abort`, which every wait watches, so all ranks give up instead
 * of hanging; waits also give up past the timeout (%globaltimer).
 *
 * Who does what in a block: data movement (put/get) in uniform code is
 * spread over the threads pass lower_comm names (the block's, or a T.ws
 * role's: f2 threads, this one's index a2), as 16-byte vectors where
 * source and destination agree modulo 16.  Everything else reaches this emitter in
 * per-thread code: the stores, signals, atomics, waits and block barriers
 * of uniform code were given to one thread by pass lower_comm (a thread
 * range of one thread, the barriers around it placed by insert_sync,
 * T.atom_add's returned value through a shared word of the IR), and in a
 * T.Parallel body or a thread-dependent branch (DeepEP's style, every
 * thread storing its own flag or polling its own slot) the calling thread
 * does the primitive alone, a put/get moving all its elements itself.  So
 * this file prints no thread test and no barrier of its own.  A wait that
 * gives up lets the thread go on; every later wait then gives up at once
 * (the abort word), so the launch ends and the host reports the first
 * failure.  The block barriers are refused in per-thread code unless
 * lower_comm marked them (f1 = 1).  Memory order (doc/DISTRIBUTED.md's
 * table): T.st / T.ld of 2-, 4- or 8-byte elements are one st / ld with
 * the asked semantics and scope (weak, volatile, relaxed.S, release.S /
 * acquire.S), 1-byte ones a volatile access with fence.acq_rel of the
 * scope where the semantics asks; T.atom_add the atomicAdd of its scope
 * with the fences of its semantics; signals are releases at system scope,
 * waits a relaxed spin followed by fence.acq_rel.sys (an acquire).
 *
 * Several nodes (a kernel compiled multinode; ops marked xport by pass
 * lower_comm: the peer is on another node).  They are NCCL 2.28's GIN
 * device calls (nccl_device.h, gin.h: ncclGin(devComm, context).put /
 * putValue / flush on the world team, window + byte offset on both
 * sides): the module declares `ts_gin_comm` (the ncclDevComm the host
 * creates with GIN contexts), `ts_gin_win` (the heap's window),
 * `ts_comm_rpn` (ranks per node) and `ts_gin_sig` / `ts_gin_nsig` (each
 * signal buffer's first GIN signal, how many there are), set by the world
 * like ts_comm_peer.  Pass lower_comm chose each op's form (IrTileOp.gin,
 * TsGinForm) and this file prints it: a put from the heap is one `put` per
 * row, from a tile (not in a registered window) a `putValue` per element,
 * an adding signal riding on the last of them as ncclGin_SignalAdd (NCCL:
 * visible at the peer after this put's and the context's earlier puts'
 * payloads); T.st is a `putValue`; T.signal_op add / T.atom_add a
 * `signal(SignalAdd)`; a wait on this rank's word of a signal buffer reads
 * heap word + readSignal - shadow, a set of it moves the shadow first;
 * T.fence/T.quiet add a `flush` (the sources of this thread's puts may be
 * reused: no more).  What GIN does not have is refused by pass lower_comm
 * (op/comm.c: ts_comm_gin_lacks), naming it; this file only asserts that
 * none reaches it.  T.barrier_all across nodes is GIN signals between the
 * ranks (emit_barrier_all_gin), ordered after each rank's earlier puts as
 * NCCL documents.  doc/DISTRIBUTED.md has the facts and the races.
 */
#include <stdio.h>
#include <string.h>

#include "op/comm.h"
#include "target/cuda/comm_cuda.h"
#include "target/cuda/cuda_target.h"

static const char comm_prelude[] =
    "/* communication (src/target/cuda/comm_cuda.c) */\n"
    "__device__ ts_u64 ts_comm_peer[64];   /* heap base of every rank, set by the world */\n"
    "__device__ ts_i64 ts_comm_heap;       /* bytes of each heap */\n"
    "__device__ ts_i64 ts_comm_timeout_ns; /* waits fail past this (0: 60 s) */\n"
    "__device__ int ts_comm_abort;         /* non-zero once anything failed */\n"
    "__device__ ts_i64 ts_comm_err[6];     /* the first failure: kind, rank, and four operands */\n"
    "__device__ ts_i64 ts_comm_sync;       /* T.barrier_all's arrival counter */\n"
    "__device__ ts_u64 ts_comm_sync_at;    /* ipc: that counter on rank 0's heap (0: ts_comm_sync) */\n"
    "__device__ ts_u64 ts_comm_abort_at;   /* ipc: the world's abort word on rank 0's heap, or 0 */\n"
    "TS_DEV ts_u64 ts_comm_now() {\n"
    "    ts_u64 t;\n"
    "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n"
    "    return t;\n"
    "}\n"
    "TS_DEV void ts_comm_fail(ts_i64 kind, ts_i64 rank, ts_i64 a, ts_i64 b, ts_i64 c, ts_i64 d) {\n"
    "    if (atomicCAS(&ts_comm_abort, 0, 2) == 0) {\n"
    "        ts_comm_err[0] = kind; ts_comm_err[1] = rank; ts_comm_err[2] = a;\n"
    "        ts_comm_err[3] = b; ts_comm_err[4] = c; ts_comm_err[5] = d;\n"
    "        __threadfence_system();\n"
    "        atomicExch(&ts_comm_abort, 1);\n"
    "    }\n"
    "    if (ts_comm_abort_at) atomicExch_system((int *)ts_comm_abort_at, 1);\n"
    "}\n"
    /* kinds: what * 16 + 1 outside the tensor, + 2 peer out of range, + 3 not on the heap, + 4 timeout */
    "TS_DEV void *ts_comm_addr(int what, ts_i64 rank, ts_i64 nranks, ts_i64 pe, const void *p, ts_i64 bytes,\n"
    "                          const void *lo, const void *hi) {\n"
    "    const char *q = (const char *)p, *l = (const char *)lo, *h = (const char *)hi;\n"
    "    if (q < l || bytes < 0 || bytes > h - q) {\n"
    "        ts_comm_fail(what * 16 + 1, rank, pe, q - l, bytes, h - l);\n"
    "        return 0;\n"
    "    }\n"
    "    if (pe < 0 || pe == rank) return (void *)q;\n"
    "    if (pe >= nranks || pe >= 64) {\n"
    "        ts_comm_fail(what * 16 + 2, rank, pe, nranks, 0, 0);\n"
    "        return 0;\n"
    "    }\n"
    "    ts_u64 base = ts_comm_peer[rank];\n"
    "    ts_i64 off = (ts_i64)((ts_u64)q - base);\n"
    "    if (base == 0 || (ts_u64)q < base || bytes > ts_comm_heap - off) {\n"
    "        ts_comm_fail(what * 16 + 3, rank, pe, 0, bytes, 0);\n"
    "        return 0;\n"
    "    }\n"
    "    return (void *)(ts_comm_peer[pe] + (ts_u64)off);\n"
    "}\n"
    /* one iteration of a wait: 0 go on, 1 give up */
    "TS_DEV int ts_comm_spin(ts_u64 *t0) {\n"
    "    if (*(volatile int *)&ts_comm_abort) return 1;\n"
    "    if (ts_comm_abort_at && *(volatile int *)ts_comm_abort_at) return 1;\n"
    "    ts_u64 now = ts_comm_now();\n"
    "    ts_i64 lim = ts_comm_timeout_ns > 0 ? ts_comm_timeout_ns : 60000000000LL;\n"
    "    if (*t0 == 0) *t0 = now;\n"
    "    return now - *t0 > (ts_u64)lim ? 2 : 0;\n"
    "}\n"
    /* T.ld / T.st as the one PTX instruction their semantics and scope ask
     * (PTX ISA, memory consistency model, sm_70+; the qualifiers TileScale's
     * tl_templates/cuda/ldst.h uses): weak ld/st, .volatile, .relaxed.SCOPE,
     * ld.acquire.SCOPE, st.release.SCOPE; generic addresses (global or
     * shared), on the value's bits (2, 4 or 8 bytes; other sizes take the
     * fence forms of comm_cuda.c).  doc/DISTRIBUTED.md has the table. */
    "#define TS_COMM_LD(NAME, Q) \\\n"
    "template <typename T> TS_DEV T ts_ld_##NAME(const T *p) { \\\n"
    "    T v; \\\n"
    "    if (sizeof(T) == 8) { unsigned long long b; asm volatile(\"ld\" Q \".b64 %0, [%1];\" : \"=l\"(b) : \"l\"(p) : \"memory\"); *(decltype(b) *)&v = b; } \\\n"
    "    else if (sizeof(T) == 4) { unsigned int b; asm volatile(\"ld\" Q \".b32 %0, [%1];\" : \"=r\"(b) : \"l\"(p) : \"memory\"); *(decltype(b) *)&v = b; } \\\n"
    "    else { unsigned short b; asm volatile(\"ld\" Q \".b16 %0, [%1];\" : \"=h\"(b) : \"l\"(p) : \"memory\"); *(decltype(b) *)&v = b; } \\\n"
    "    return v; \\\n"
    "}\n"
    "#define TS_COMM_ST(NAME, Q) \\\n"
    "template <typename T> TS_DEV void ts_st_##NAME(T *p, T v) { \\\n"
    "    if (sizeof(T) == 8) { unsigned long long b = *(const decltype(b) *)&v; asm volatile(\"st\" Q \".b64 [%0], %1;\" :: \"l\"(p), \"l\"(b) : \"memory\"); } \\\n"
    "    else if (sizeof(T) == 4) { unsigned int b = *(const decltype(b) *)&v; asm volatile(\"st\" Q \".b32 [%0], %1;\" :: \"l\"(p), \"r\"(b) : \"memory\"); } \\\n"
    "    else { unsigned short b = *(const decltype(b) *)&v; asm volatile(\"st\" Q \".b16 [%0], %1;\" :: \"l\"(p), \"h\"(b) : \"memory\"); } \\\n"
    "}\n"
    "TS_COMM_LD(weak, \".weak\") TS_COMM_LD(volatile, \".volatile\")\n"
    "TS_COMM_LD(relaxed_cta, \".relaxed.cta\") TS_COMM_LD(relaxed_gpu, \".relaxed.gpu\") TS_COMM_LD(relaxed_sys, \".relaxed.sys\")\n"
    "TS_COMM_LD(acquire_cta, \".acquire.cta\") TS_COMM_LD(acquire_gpu, \".acquire.gpu\") TS_COMM_LD(acquire_sys, \".acquire.sys\")\n"
    "TS_COMM_ST(weak, \".weak\") TS_COMM_ST(volatile, \".volatile\")\n"
    "TS_COMM_ST(relaxed_cta, \".relaxed.cta\") TS_COMM_ST(relaxed_gpu, \".relaxed.gpu\") TS_COMM_ST(relaxed_sys, \".relaxed.sys\")\n"
    "TS_COMM_ST(release_cta, \".release.cta\") TS_COMM_ST(release_gpu, \".release.gpu\") TS_COMM_ST(release_sys, \".release.sys\")\n"
    "TS_DEV void ts_fence_acq_rel_cta() { asm volatile(\"fence.acq_rel.cta;\" ::: \"memory\"); }\n"
    "TS_DEV void ts_fence_acq_rel_gpu() { asm volatile(\"fence.acq_rel.gpu;\" ::: \"memory\"); }\n"
    "TS_DEV void ts_fence_acq_rel_sys() { asm volatile(\"fence.acq_rel.sys;\" ::: \"memory\"); }\n\n";

void ts_cuda_comm_prelude(TsBuf *o) { ts_buf_puts(o, comm_prelude); }

static const char gin_prelude[] =
    "/* several nodes: NCCL's GIN (src/target/cuda/comm_cuda.c) */\n"
    TS_CUDA_NCCL_MARK /* the include; it also sends the source to nvcc (nvcc.c) */
    "__device__ int ts_comm_rpn = 1 << 30;   /* ranks per node (set by the world; default: one node) */\n"
    "__device__ ncclDevComm ts_gin_comm;     /* NCCL's device communicator with GIN contexts */\n"
    "__device__ ncclWindow_t ts_gin_win;     /* the symmetric heap's window */\n"
    "__device__ ts_i64 ts_gin_sync;          /* T.barrier_all across nodes: this rank's blocks' arrivals */\n"
    "__device__ ts_i64 ts_gin_sync_rel;      /* ... and the epoch its last block released */\n"
    "__device__ unsigned ts_gin_sig[8];       /* each signal buffer's first GIN signal (set by the world; 0: none) */\n"
    "__device__ unsigned ts_gin_nsig;         /* GIN signals the world's device communicator has */\n"
    /* the byte offset in the heap (every rank's: symmetric) of `bytes` at
     * p inside [lo, hi), for rank pe of another node; -1 after recording */
    "TS_DEV ts_i64 ts_gin_off(int what, ts_i64 rank, ts_i64 nranks, ts_i64 pe, const void *p, ts_i64 bytes,\n"
    "                         const void *lo, const void *hi) {\n"
    "    const char *q = (const char *)p, *l = (const char *)lo, *h = (const char *)hi;\n"
    "    if (q < l || bytes < 0 || bytes > h - q) { ts_comm_fail(what * 16 + 1, rank, pe, q - l, bytes, h - l); return -1; }\n"
    "    if (pe < 0 || pe >= nranks || pe >= 64) { ts_comm_fail(what * 16 + 2, rank, pe, nranks, 0, 0); return -1; }\n"
    "    ts_u64 base = ts_comm_peer[rank];\n"
    "    ts_i64 off = (ts_i64)((ts_u64)q - base);\n"
    "    if (base == 0 || (ts_u64)q < base || bytes > ts_comm_heap - off) { ts_comm_fail(what * 16 + 3, rank, pe, 0, bytes, 0); return -1; }\n"
    "    return off;\n"
    "}\n"
    /* the GIN signal of element (p - lo) / esz of signal buffer `slot`
     * (pass lower_comm's slots, mapped by the world at launch), -1 after
     * recording when there is none */
    "TS_DEV int ts_gin_sid(int what, ts_i64 rank, int slot, const void *p, const void *lo, ts_i64 esz) {\n"
    "    const ts_i64 i = (ts_i64)((const char *)p - (const char *)lo) / esz;\n"
    "    const ts_i64 id = (ts_i64)ts_gin_sig[slot] + i;\n"
    "    if (ts_gin_sig[slot] == 0 || i < 0 || id >= (ts_i64)ts_gin_nsig) { ts_comm_fail(what * 16 + 5, rank, slot, i, ts_gin_nsig, 0); return -1; }\n"
    "    return (int)id;\n"
    "}\n\n";

void ts_cuda_gin_prelude(TsBuf *o) { ts_buf_puts(o, gin_prelude); }

/* The warp primitives (IR_WARP_*, printed by target/cexpr.c): CUDA's
 * __shfl_*_sync with TileLang's width and lane mask, __ballot_sync,
 * and the reductions as a butterfly of __shfl_xor_sync with offsets 16, 8,
 * 4, 2, 1, each step `own op other` (the C target's pass warp_c does the
 * same steps in the same order, so both give the same bits). */
static const char warp_prelude[] =
    "/* warp primitives (src/target/cuda/comm_cuda.c) */\n"
    "template <typename T> TS_DEV T ts_warp_shfl(T v, int l, int w, unsigned k) { return __shfl_sync(k, v, l, w); }\n"
    "template <typename T> TS_DEV T ts_warp_shfl_up(T v, int d, int w, unsigned k) { return __shfl_up_sync(k, v, (unsigned)d, w); }\n"
    "template <typename T> TS_DEV T ts_warp_shfl_down(T v, int d, int w, unsigned k) { return __shfl_down_sync(k, v, (unsigned)d, w); }\n"
    "template <typename T> TS_DEV T ts_warp_shfl_xor(T v, int m, int w, unsigned k) { return __shfl_xor_sync(k, v, m, w); }\n"
    "TS_DEV unsigned ts_warp_ballot(unsigned m, int p) { return __ballot_sync(m, p); }\n"
    "TS_DEV int ts_warp_sync(unsigned m) { __syncwarp(m); return 0; }\n"
    "#define TS_WARP_REDUCE(NAME, OP) \\\n"
    "template <typename T> TS_DEV T ts_warp_##NAME(T v) { \\\n"
    "    for (int o = 16; o > 0; o >>= 1) { T w = __shfl_xor_sync(0xffffffffu, v, o); v = OP; } \\\n"
    "    return v; \\\n"
    "}\n"
    "TS_WARP_REDUCE(sum, v + w)\n"
    "TS_WARP_REDUCE(max, w > v ? w : v)\n"
    "TS_WARP_REDUCE(min, w < v ? w : v)\n"
    "TS_WARP_REDUCE(bitand, v & w)\n"
    "TS_WARP_REDUCE(bitor, v | w)\n\n";

void ts_cuda_warp_prelude(TsBuf *o) { ts_buf_puts(o, warp_prelude); }

/* ---- emitter state ---------------------------------------------------------------- */

typedef struct Ce {
    const TsCudaComm *h;  /* the hook: expression emitter, buffers */
    TsBuf *o;             /* output, NULL in a dry run */
    int ind;              /* indentation */
    const IrStmt *s;      /* the primitive */
    int what;             /* TsCommKind, for failure records */
    int pt;               /* per-thread code: this thread alone, no barriers */
} Ce;

static void out(Ce *c, const char *s) {
    if (c->o) ts_buf_puts(c->o, s);
}
TS_PRINTF(2, 3) static void outf(Ce *c, const char *fmt, ...) {
    if (!c->o) return;
    va_list ap;
    va_start(ap, fmt);
    ts_buf_vprintf(c->o, fmt, ap);
    va_end(ap);
}
static void line(Ce *c) {
    if (c->o) ts_buf_indent(c->o, c->ind);
}
static void expr(Ce *c, const IrExpr *e) {
    c->h->x->o = c->o;
    ts_cx_expr(c->h->x, e);
}
static const char *storage(Ce *c, TsDType dt) { return ts_cx_storage(c->h->x->dl, dt); }
static int64_t esize(TsDType dt) { return (ts_dtype_bits(dt) + 7) / 8; }

/* `&name[index]` of the first element of r (through a shared tile's
 * swizzle: right for one element, which is all ST/LD/waits/signals touch;
 * ranges of swizzled tiles are refused by verify_lowered). */
static void emit_addr(Ce *c, const IrRegion *r) {
    TsCudaCommBuf b = c->h->buf(c->h->g, r->buf);
    const IrSwizzle *z = &r->buf->swizzle;
    outf(c, "&%s[", b.name);
    if (z->kind == IR_SWIZZLE_XOR) out(c, ts_cuda_swz_open(z));
    c->h->x->o = c->o;
    ts_cx_index(c->h->x, r->buf, b.name, b.param >= 0, b.strides, r->start, r->ndim, c->s->loc);
    if (z->kind == IR_SWIZZLE_XOR) out(c, ts_cuda_swz_close(c->h->x->a, z));
    out(c, "]");
}

/* `const char *<lo>, *<hi>`: the byte span of r's buffer. */
static void emit_span(Ce *c, const IrRegion *r, const char *lo, const char *hi) {
    TsCudaCommBuf b = c->h->buf(c->h->g, r->buf);
    line(c);
    if (b.param >= 0) {
        outf(c, "const char *%s = (const char *)%s, *%s = %s;\n", lo, b.name, hi, lo);
        line(c);
        out(c, "{ ts_i64 ts_mx = 0, ts_e = 1;");
        for (int d = 0; d < r->buf->ndim; d++)
            outf(c, " if (%s_n%d == 0) ts_e = 0; else if (%s_s%d > 0) ts_mx += (%s_n%d - 1) * %s_s%d;", b.name, d,
                 b.name, d, b.name, d, b.name, d);
        outf(c, " %s += ts_e ? (ts_mx + 1) * %lld : 0; }\n", hi, (long long)esize(r->buf->dt));
    } else {
        int64_t n = 1;
        for (int i = 0; i < r->buf->ndim; i++) {
            int64_t e = 1;
            ir_is_const_int(r->buf->shape[i], &e);
            n *= e;
        }
        outf(c, "const char *%s = (const char *)%s, *%s = %s + %lld;\n", lo, b.name, hi, lo,
             (long long)(n * esize(r->buf->dt) * (r->buf->stages > 1 ? r->buf->stages : 1)));
    }
}

static void emit_peer(Ce *c) {
    if (c->s->op->args[0]) {
        out(c, "(ts_i64)(");
        expr(c, c->s->op->args[0]);
        out(c, ")");
    } else {
        out(c, "(ts_i64)-1");
    }
}

/* `<T> *<var>` = the (maybe remote) address of `count` elements `off`
 * elements past r's first (off NULL: at it). */
static void emit_remote_off(Ce *c, const char *var, const IrRegion *r, int remote, const char *count, const char *off) {
    const char *st = storage(c, r->buf->dt);
    char lo[32], hi[32];
    snprintf(lo, sizeof lo, "%s_lo", var);
    snprintf(hi, sizeof hi, "%s_hi", var);
    emit_span(c, r, lo, hi);
    line(c);
    outf(c, "%s *%s = (%s *)ts_comm_addr(%d, ts_rank, ts_nranks, ", st, var, st, c->what);
    if (remote) emit_peer(c);
    else out(c, "(ts_i64)-1");
    out(c, ", ");
    emit_addr(c, r);
    if (off) outf(c, " + (%s)", off);
    outf(c, ", (ts_i64)(%s) * %lld, %s, %s);\n", count, (long long)esize(r->buf->dt), lo, hi);
}
static void emit_remote(Ce *c, const char *var, const IrRegion *r, int remote, const char *count) {
    emit_remote_off(c, var, r, remote, count, NULL);
}

/* The element stride of axis d of r's buffer: a tensor parameter's
 * run-time stride, a tile's constant row-major one. */
static void emit_stride(Ce *c, const IrRegion *r, int d) {
    TsCudaCommBuf b = c->h->buf(c->h->g, r->buf);
    if (b.param >= 0) outf(c, "%s_s%d", b.name, d);
    else outf(c, "(ts_i64)%lld", (long long)b.strides[d]);
}

static void open_block(Ce *c, const char *head) {
    line(c);
    outf(c, "%s{\n", head);
    c->ind++;
}
static void close_block(Ce *c) {
    c->ind--;
    line(c);
    out(c, "}\n");
}

/* A primitive that one thread does: pass lower_comm put it in a thread
 * range where it was uniform code (the printer decides nothing here). */
static void need_one_thread(Ce *c) {
    if (!c->pt)
        ts_fail_at(c->h->x->d, TS_ERR_INTERNAL, c->s->loc,
                   "CUDA codegen: T.%s in uniform code (pass lower_comm gives it to one thread)",
                   ts_comm_name(c->s->op->comm));
}

static const char *scope_name(int scope) {
    return scope == TS_SCOPE_CTA ? "cta" : scope == TS_SCOPE_GPU ? "gpu" : "sys";
}

/* `ts_fence_acq_rel_<scope>();`: the fence that makes a relaxed access
 * before it an acquire, and one after it a release (PTX memory model:
 * acquire and release patterns). */
static void emit_fence(Ce *c, int scope) {
    line(c);
    outf(c, "ts_fence_acq_rel_%s();\n", scope_name(scope));
}

/* The prelude's T.ld / T.st of a dt element at sem and scope
 * (ts_ld_<name> / ts_st_<name>), or NULL where dt is not 2, 4 or 8 bytes
 * (then: a volatile access with the fences the semantics ask). */
static const char *ldst_name(TsDType dt, int sem, int scope, char *buf, size_t n) {
    int64_t sz = esize(dt);
    if (ts_dtype_bits(dt) < 8 || (sz != 2 && sz != 4 && sz != 8)) return NULL;
    const char *s = sem == TS_SEM_WEAK ? "weak" : sem == TS_SEM_VOLATILE ? "volatile"
                    : sem == TS_SEM_ACQUIRE ? "acquire" : sem == TS_SEM_RELEASE ? "release" : "relaxed";
    if (sem == TS_SEM_WEAK || sem == TS_SEM_VOLATILE) snprintf(buf, n, "%s", s);
    else snprintf(buf, n, "%s_%s", s, scope_name(scope));
    return buf;
}

/* *p = value as T.st(sem, scope) asks: one st.<sem>.<scope> (the
 * prelude's ts_st_*), or for 1-byte elements a volatile store, after an
 * acq_rel fence for a release. */
static void emit_st(Ce *c, const char *p, TsDType dt, const IrExpr *value, int sem, int scope) {
    const char *st = storage(c, dt);
    char nm[32];
    if (ldst_name(dt, sem, scope, nm, sizeof nm)) {
        line(c);
        outf(c, "ts_st_%s((%s *)%s, (%s)%s", nm, st, p, st, ts_cx_store_conv(c->h->x, dt));
        expr(c, value);
        out(c, ")));\n");
        return;
    }
    if (sem == TS_SEM_RELEASE) emit_fence(c, scope);
    line(c);
    outf(c, "*(volatile %s *)%s = %s", st, p, ts_cx_store_conv(c->h->x, dt));
    expr(c, value);
    out(c, "));\n");
}

/* A signal's store (T.signal_op set, the signal of a put): a release at
 * system scope, so the data written before it is seen by whoever sees the
 * signal (NVSHMEM's put-with-signal ordering). */
static void emit_store_to(Ce *c, const char *p, TsDType dt, const IrExpr *value) {
    emit_st(c, p, dt, value, TS_SEM_RELEASE, TS_SCOPE_SYS);
}

/* The value at p (volatile), converted to the compute type. */
static void emit_load_from(Ce *c, const char *p, TsDType dt) {
    outf(c, "%s*(volatile %s *)%s)", ts_cx_load_conv(c->h->x, dt), storage(c, dt), p);
}

/* An atomic add at p of the asked scope (atomicAdd_block / atomicAdd /
 * atomicAdd_system) with the semantics' fences: release before, acquire
 * after, both for acq_rel (the fence forms of atom.add.<sem>.<scope>);
 * lhs: where the value before the add goes (NULL: nowhere). */
static void emit_atomic_add_sem(Ce *c, const char *lhs, const char *p, TsDType dt, const IrExpr *value, int sem,
                                int scope) {
    const char *st = storage(c, dt);
    switch (dt) {
    case TS_INT32: case TS_UINT32: case TS_INT64: case TS_UINT64: case TS_FLOAT32: case TS_FLOAT64: {
        const char *cast = dt == TS_INT32 ? "int" : dt == TS_UINT32 ? "unsigned int"
                         : dt == TS_FLOAT32 ? "float" : dt == TS_FLOAT64 ? "double" : "unsigned long long";
        if (sem == TS_SEM_RELEASE || sem == TS_SEM_ACQ_REL) emit_fence(c, scope);
        line(c);
        if (lhs) outf(c, "%s = (%s)", lhs, st);
        outf(c, "atomicAdd%s((%s *)%s, (%s)(", scope == TS_SCOPE_CTA ? "_block" : scope == TS_SCOPE_GPU ? "" : "_system",
             cast, p, cast);
        expr(c, value);
        out(c, "));\n");
        if (sem == TS_SEM_ACQUIRE || sem == TS_SEM_ACQ_REL) emit_fence(c, scope);
        return;
    }
    default: /* (verify_lowered refuses it: verify_target.c) */
        ts_fail_at(c->h->x->d, TS_ERR_INTERNAL, c->s->loc, "CUDA codegen: T.%s's atomic add on %s",
                   ts_comm_name(c->s->op->comm), ts_dtype_name(dt));
    }
}

/* A signal's add: a release at system scope. */
static void emit_atomic_add(Ce *c, const char *p, TsDType dt, const IrExpr *value) {
    emit_atomic_add_sem(c, NULL, p, dt, value, TS_SEM_RELEASE, TS_SCOPE_SYS);
}

/* A wait by thread 0: spin while !(cond over ts_v); the verdict to the block. */
static void emit_wait_loop(Ce *c, const char *load_stmt, const char *cond, const char *timeout_record) {
    line(c);
    out(c, "ts_u64 ts_t0 = 0;\n");
    line(c);
    out(c, "int ts_r = 0;\n");
    line(c);
    outf(c, "for (;;) { %s if (%s) break; if ((ts_r = ts_comm_spin(&ts_t0)) != 0) break; }\n", load_stmt, cond);
    line(c);
    outf(c, "if (ts_r == 2) %s;\n", timeout_record);
    /* the wait's acquire (a relaxed spin, then the fence; a wait that gave
     * up goes on: later waits see the abort at once) */
    emit_fence(c, TS_SCOPE_SYS);
}

/* ts_dp[0 .. ts_cnt) = ts_sp[...], by the block's threads (or this one).
 * When the two addresses agree modulo 16 bytes the bulk moves as 16-byte
 * vectors (a head of elements up to the first aligned address, the
 * vectors, a tail): one 128-bit load and store per thread and step
 * instead of one per element, which is what brings a put near the
 * device's copy bandwidth (issue 6's goal: >= 90% of a device copy). */
static void emit_copy_loop(Ce *c, TsDType dt, const char *first, const char *step) {
    int64_t es = esize(dt);
    line(c);
    if (ts_dtype_bits(dt) < 8 || 16 % es != 0) {
        outf(c, "if (ts_dp && ts_sp) for (ts_i64 ts_i = %s; ts_i < ts_cnt; ts_i += %s) ts_dp[ts_i] = ts_sp[ts_i];\n",
             first, step);
        return;
    }
    long long per = (long long)(16 / es);
    out(c, "if (ts_dp && ts_sp) {\n");
    c->ind++;
    line(c);
    out(c, "ts_i64 ts_h = ts_cnt, ts_nv = 0; /* head elements, 16-byte vectors */\n");
    line(c);
    outf(c, "if ((((ts_u64)ts_dp ^ (ts_u64)ts_sp) & 15) == 0) { ts_h = (ts_i64)((16 - ((ts_u64)ts_dp & 15)) & 15) / %lld; "
            "if (ts_h > ts_cnt) ts_h = ts_cnt; ts_nv = (ts_cnt - ts_h) / %lld; }\n",
         (long long)es, per);
    line(c);
    outf(c, "for (ts_i64 ts_i = %s; ts_i < ts_h; ts_i += %s) ts_dp[ts_i] = ts_sp[ts_i];\n", first, step);
    line(c);
    out(c, "const uint4 *ts_vs = (const uint4 *)(ts_sp + ts_h);\n");
    line(c);
    out(c, "uint4 *ts_vd = (uint4 *)(ts_dp + ts_h);\n");
    line(c);
    out(c, "#pragma unroll 4\n");
    line(c);
    outf(c, "for (ts_i64 ts_i = %s; ts_i < ts_nv; ts_i += %s) ts_vd[ts_i] = ts_vs[ts_i];\n", first, step);
    line(c);
    outf(c, "for (ts_i64 ts_i = ts_h + ts_nv * %lld + %s; ts_i < ts_cnt; ts_i += %s) ts_dp[ts_i] = ts_sp[ts_i];\n", per,
         first, step);
    c->ind--;
    line(c);
    out(c, "}\n");
}

/* The rows form (op/comm.h): ts_rows rows of ts_cnt elements, rows
 * ts_drs / ts_srs elements apart, flattened over the block's threads (or
 * this one): item i is (row i / n, column i % n), kept incrementally so
 * the loop divides only once.  16-byte vectors when both bases, the row
 * length and both row strides allow, else elements. */
static void emit_copy_rows(Ce *c, TsDType dt, int64_t rows, const char *first, const char *step) {
    int64_t es = esize(dt);
    const char *st = storage(c, dt);
    line(c);
    out(c, "if (ts_dp && ts_sp && ts_dl && ts_sl && ts_cnt > 0) {\n");
    c->ind++;
    int vec = ts_dtype_bits(dt) >= 8 && 16 % es == 0;
    for (int pass = vec ? 0 : 1; pass < 2; pass++) {
        long long per = pass == 0 ? (long long)(16 / es) : 1;
        const char *t = pass == 0 ? "uint4" : st;
        line(c);
        if (pass == 0)
            outf(c, "if (((((ts_u64)ts_dp | (ts_u64)ts_sp) & 15) == 0) && ts_cnt %% %lld == 0 && ts_drs %% %lld == 0 && "
                    "ts_srs %% %lld == 0) {\n", per, per, per);
        else if (vec)
            out(c, "} else {\n");
        else
            out(c, "{\n");
        c->ind++;
        line(c);
        outf(c, "const ts_i64 ts_n = ts_cnt / %lld, ts_dr = ts_drs / %lld, ts_sr = ts_srs / %lld, ts_q = (%s) / ts_n, "
                "ts_m = (%s) %% ts_n;\n", per, per, per, step, step);
        line(c);
        outf(c, "const %s *ts_vs = (const %s *)ts_sp;\n", t, t);
        line(c);
        outf(c, "%s *ts_vd = (%s *)ts_dp;\n", t, t);
        line(c);
        outf(c, "ts_i64 ts_r = %s / ts_n, ts_j = %s %% ts_n;\n", first, first);
        line(c);
        outf(c, "for (ts_i64 ts_i = %s; ts_i < %lld * ts_n; ts_i += %s) {\n", first, (long long)rows, step);
        c->ind++;
        line(c);
        out(c, "ts_vd[ts_r * ts_dr + ts_j] = ts_vs[ts_r * ts_sr + ts_j];\n");
        line(c);
        out(c, "ts_r += ts_q;\n");
        line(c);
        out(c, "ts_j += ts_m;\n");
        line(c);
        out(c, "if (ts_j >= ts_n) { ts_j -= ts_n; ts_r++; }\n");
        c->ind--;
        line(c);
        out(c, "}\n");
        c->ind--;
    }
    line(c);
    out(c, "}\n");
    c->ind--;
    line(c);
    out(c, "}\n");
}

static void emit_put_get(Ce *c, const IrTileOp *op) {
    int get = op->comm == TS_COMM_GET;
    const IrRegion *src = &op->r[0], *dst = &op->r[1];
    /* (no swizzled side: verify_lowered; elements of one size: op/comm.c) */
    if (src->buf->swizzle.kind != IR_SWIZZLE_NONE || dst->buf->swizzle.kind != IR_SWIZZLE_NONE)
        ts_fail_at(c->h->x->d, TS_ERR_INTERNAL, c->s->loc, "CUDA codegen: T.%s of a swizzled tile", ts_comm_name(op->comm));
    /* a warp variant in per-thread code: the lanes that call it together
     * with one range share it (op/comm.h); in uniform code the threads
     * and this one's share as pass lower_comm set them (f2, a2) */
    int warp = c->pt && op->cflags[1] == 1;
    int shared = !c->pt && op->cflags[2] > 0 && op->args[2];
    if (!c->pt && !shared)
        ts_fail_at(c->h->x->d, TS_ERR_INTERNAL, c->s->loc,
                   "CUDA codegen: T.%s in uniform code without its threads (pass lower_comm sets them)",
                   ts_comm_name(op->comm));
    char step[32];
    snprintf(step, sizeof step, "%d", shared ? op->cflags[2] : 1);
    const char *first = warp ? "ts_wl" : shared ? "ts_me" : "0";
    if (warp) {
        line(c);
        out(c, "unsigned ts_wg = 0; int ts_wl = 0, ts_wn = 1; /* the lanes sharing this range, this one's place */\n");
        snprintf(step, sizeof step, "ts_wn");
    }
    open_block(c, "");
    if (shared) {
        line(c);
        out(c, "const ts_i64 ts_me = (ts_i64)(");
        expr(c, op->args[2]);
        out(c, ");\n");
    }
    line(c);
    out(c, "const ts_i64 ts_cnt = (ts_i64)(");
    expr(c, op->args[1]);
    out(c, ");\n");
    emit_remote(c, "ts_dp", dst, !get, "ts_cnt");
    emit_remote(c, "ts_sp", src, get, "ts_cnt");
    if (warp) {
        line(c);
        out(c, "{ const unsigned ts_am = __activemask(); ts_wg = __match_any_sync(ts_am, (unsigned long long)ts_dp) & "
               "__match_any_sync(ts_am, (unsigned long long)ts_sp) & __match_any_sync(ts_am, (unsigned long long)ts_cnt); "
               "ts_wl = __popc(ts_wg & ((1u << (ts_tid & 31)) - 1u)); ts_wn = __popc(ts_wg); }\n");
    }
    int64_t rows = 1;
    int ad = ts_comm_rows_axis(dst, &rows), as = ts_comm_rows_axis(src, &rows);
    if (ad >= 0 && as >= 0) {
        /* the last row checked like the first */
        line(c);
        out(c, "const ts_i64 ts_drs = ");
        emit_stride(c, dst, ad);
        out(c, ", ts_srs = ");
        emit_stride(c, src, as);
        out(c, ";\n");
        char off[64];
        snprintf(off, sizeof off, "%lld * ts_drs", (long long)(rows - 1));
        emit_remote_off(c, "ts_dl", dst, !get, "ts_cnt", off);
        snprintf(off, sizeof off, "%lld * ts_srs", (long long)(rows - 1));
        emit_remote_off(c, "ts_sl", src, get, "ts_cnt", off);
        emit_copy_rows(c, dst->buf->dt, rows, first, step);
    } else {
        emit_copy_loop(c, dst->buf->dt, first, step);
    }
    close_block(c);
    if (op->nr == 3) {
        need_one_thread(c); /* in uniform code lower_comm splits off the signal */
        line(c);
        out(c, "__threadfence_system();\n");
        if (warp) {
            line(c);
            out(c, "__syncwarp(ts_wg);\n");
        }
        open_block(c, warp ? "if (ts_wl == 0) " : "");
        emit_remote(c, "ts_sg", &op->r[2], 1, "1");
        line(c);
        out(c, "if (ts_sg) {\n");
        c->ind++;
        if (op->cflags[0] == TS_SIG_ADD) {
            emit_atomic_add(c, "ts_sg", op->r[2].buf->dt, op->args[2]);
        } else {
            emit_store_to(c, "ts_sg", op->r[2].buf->dt, op->args[2]);
        }
        c->ind--;
        line(c);
        out(c, "}\n");
        close_block(c);
    }
}

/* The head of a wait on the word at ts_wp (T.wait_* and GIN's signal wait,
 * emit_gin_own): the awaited value ts_want and the value read, ts_v,
 * declared; *cond and *rec get the spin's test and its timeout report
 * (ts_comm_fail's fields: the word's element, the value, the awaited one). */
static void emit_wait_head(Ce *c, const IrTileOp *op, const char *ct, TsBuf *cond, TsBuf *rec) {
    line(c);
    outf(c, "const %s ts_want = (%s)(", ct, ct);
    expr(c, op->args[1]);
    out(c, ");\n");
    line(c);
    outf(c, "%s ts_v = 0;\n", ct);
    ts_buf_printf(cond, "ts_v %s ts_want", ts_comm_cmp_text(op->cflags[0]));
    ts_buf_printf(rec, "ts_comm_fail(%d, ts_rank, (ts_i64)((const char *)ts_wp - ts_wp_lo) / %lld, "
                       "(ts_i64)ts_v, (ts_i64)ts_want, %d)",
                  c->what * 16 + 4, (long long)esize(op->r[0].buf->dt), op->cflags[0]);
}

static void emit_wait(Ce *c, const IrTileOp *op) {
    const IrBuffer *b = op->r[0].buf;
    const char *ct = ts_cx_compute_ctype(c->h->x, b->dt, c->s->loc);
    need_one_thread(c);
    open_block(c, "");
    emit_remote(c, "ts_wp", &op->r[0], 1, "1");
    TsBuf ld = {0}, cond = {0}, rec = {0};
    emit_wait_head(c, op, ct, &cond, &rec);
    line(c);
    out(c, "if (ts_wp) {\n");
    c->ind++;
    TsBuf *saved = c->o;
    c->o = &ld;
    out(c, "ts_v = ");
    emit_load_from(c, "ts_wp", b->dt);
    out(c, ";");
    c->o = saved;
    emit_wait_loop(c, c->o ? ts_buf_str(&ld) : "", ts_buf_str(&cond), ts_buf_str(&rec));
    ts_buf_free(&ld);
    ts_buf_free(&cond);
    ts_buf_free(&rec);
    c->ind--;
    line(c);
    out(c, "}\n");
    close_block(c);
}

/* The block barriers, by the one thread lower_comm gave them to (f1 = 1),
 * after every thread's fence. */
static void emit_barrier_blocks(Ce *c, const IrTileOp *op) {
    need_one_thread(c);
    if (op->cflags[0]) {
        line(c);
        out(c, "__threadfence_system();\n");
    }
    open_block(c, "");
    emit_remote(c, "ts_bar", &op->r[0], 0, "ts_nranks");
    line(c);
    out(c, "int ts_bad = !ts_bar;\n");
    /* TileScale's scheme (tl_templates/cuda/sync.h): see the C target's emitter */
    line(c);
    out(c, "for (int ts_t = 0; ts_bar && ts_t < ts_nranks; ts_t++) {\n");
    c->ind++;
    line(c);
    out(c, "atomicAdd_system((int *)(ts_bar + ts_t), 1024);\n");
    line(c);
    outf(c, "int *ts_peer = (int *)ts_comm_addr(%d, ts_rank, ts_nranks, ts_t, ts_bar + ts_rank, 4, ts_bar_lo, ts_bar_hi);\n",
         c->what);
    line(c);
    out(c, "if (ts_peer) atomicSub_system(ts_peer, 1024);\n");
    c->ind--;
    line(c);
    out(c, "}\n");
    line(c);
    out(c, "for (int ts_t = 0; ts_bar && !ts_bad && ts_t < ts_nranks; ts_t++) {\n");
    c->ind++;
    line(c);
    out(c, "int ts_v = 0;\n");
    char rec[160];
    snprintf(rec, sizeof rec, "ts_comm_fail(%d, ts_rank, ts_t, (ts_i64)ts_v, 0, 0)", c->what * 16 + 4);
    emit_wait_loop(c, "ts_v = *(volatile int *)(ts_bar + ts_t);", "ts_v <= 0", rec);
    line(c);
    out(c, "ts_bad = ts_r;\n");
    c->ind--;
    line(c);
    out(c, "}\n");
    close_block(c);
}

static void emit_barrier_all(Ce *c) {
    need_one_thread(c);
    if (!c->s->op->cflags[1]) {
        line(c);
        out(c, "__threadfence_system();\n");
    }
    open_block(c, "");
    line(c);
    out(c, "const ts_i64 ts_tot = (ts_i64)gridDim.x * gridDim.y * gridDim.z * ts_nranks;\n");
    line(c);
    out(c, "ts_i64 *ts_cnt = ts_comm_sync_at ? (ts_i64 *)ts_comm_sync_at : &ts_comm_sync;\n");
    line(c);
    out(c, "const ts_i64 ts_goal = ((ts_i64)atomicAdd_system((unsigned long long *)ts_cnt, 1ull) / ts_tot + 1) * ts_tot;\n");
    line(c);
    out(c, "ts_i64 ts_v = 0;\n");
    char rec[160];
    snprintf(rec, sizeof rec, "ts_comm_fail(%d, ts_rank, ts_v - (ts_goal - ts_tot), ts_tot, 0, 0)", c->what * 16 + 4);
    emit_wait_loop(c, "ts_v = *(volatile ts_i64 *)ts_cnt;", "ts_v >= ts_goal", rec);
    close_block(c);
}

/* ---- several nodes: NCCL's GIN ---- */

/* T.barrier_all where the world spans nodes (xport; lower_comm branches to
 * it only then).  Rank 0's counter is on another node for most ranks, so
 * the barrier is two-level: this rank's blocks meet on ts_gin_sync (this
 * module's word); the last block to arrive posts a GIN signal (id
 * TS_GIN_SIG_BARRIER = 0, src/comm/local_cuda.c asks for it) to every
 * other rank, then waits, through ts_comm_spin like every wait (so a
 * missing rank is a timeout naming the count, never a hang), until its
 * own signal 0 reaches its shadow advanced by nranks - 1, and releases
 * this rank's blocks through ts_gin_sync_rel.  NCCL's gin.h: a signal is
 * visible at the peer only after the payloads of the context's earlier
 * puts to that peer have settled, so once the barrier is passed every put
 * a rank posted before it (all on context 0) has landed: T.barrier_all's
 * quiet.  The shadow lives in the device communicator (one per rank, the
 * same for every kernel), so barriers of successive kernels count on. */
static void emit_barrier_all_gin(Ce *c) {
    need_one_thread(c);
    if (!c->s->op->cflags[1]) {
        line(c);
        out(c, "__threadfence_system();\n");
    }
    open_block(c, "");
    line(c);
    out(c, "const ts_i64 ts_nb = (ts_i64)gridDim.x * gridDim.y * gridDim.z;\n");
    line(c);
    out(c, "const ts_i64 ts_old = (ts_i64)atomicAdd((unsigned long long *)&ts_gin_sync, 1ull);\n");
    line(c);
    out(c, "const ts_i64 ts_goal = (ts_old / ts_nb + 1) * ts_nb;\n");
    open_block(c, "if (ts_old + 1 == ts_goal) ");
    line(c);
    out(c, "ncclGin ts_g(ts_gin_comm, 0);\n");
    line(c);
    out(c, "for (int ts_p = 0; ts_p < (int)ts_nranks; ts_p++)\n");
    line(c);
    out(c, "    if (ts_p != (int)ts_rank) ts_g.signal(ncclTeamWorld(ts_gin_comm), ts_p, ncclGin_SignalInc{0});\n");
    line(c);
    out(c, "ts_g.increaseSignalShadow(0, (ts_u64)(ts_nranks - 1));\n");
    line(c);
    out(c, "const ts_u64 ts_want = *ts_g.getSignalShadowPtr(0);\n");
    line(c);
    out(c, "ts_u64 ts_got = 0;\n");
    char rec[200];
    snprintf(rec, sizeof rec,
             "ts_comm_fail(%d, ts_rank, (ts_i64)(ts_nranks - 1) - (ts_i64)(ts_want - ts_got), ts_nranks - 1, 0, 0)",
             c->what * 16 + 4);
    emit_wait_loop(c, "ts_got = ts_g.readSignal(0);", "(ts_i64)(ts_got - ts_want) >= 0", rec);
    line(c);
    out(c, "atomicExch((unsigned long long *)&ts_gin_sync_rel, (unsigned long long)ts_goal);\n");
    close_block(c);
    line(c);
    out(c, "ts_i64 ts_v = 0;\n");
    snprintf(rec, sizeof rec, "ts_comm_fail(%d, ts_rank, ts_v - (ts_goal - ts_nb), ts_nb, 0, 0)", c->what * 16 + 4);
    emit_wait_loop(c, "ts_v = *(volatile ts_i64 *)&ts_gin_sync_rel;", "ts_v >= ts_goal", rec);
    close_block(c);
}

/* `const ts_i64 <var> = ts_gin_off(...)` of `count` elements `off` past
 * r's first (peer: emit_peer when remote, else -1 for this rank's own). */
static void emit_gin_off(Ce *c, const char *var, const IrRegion *r, int remote, const char *count, const char *off) {
    char lo[32], hi[32];
    snprintf(lo, sizeof lo, "%s_lo", var);
    snprintf(hi, sizeof hi, "%s_hi", var);
    emit_span(c, r, lo, hi);
    line(c);
    outf(c, "const ts_i64 %s = ts_gin_off(%d, ts_rank, ts_nranks, ", var, c->what);
    if (remote) emit_peer(c);
    else out(c, "(ts_i64)ts_rank");
    out(c, ", ");
    emit_addr(c, r);
    if (off) outf(c, " + (%s)", off);
    outf(c, ", (ts_i64)(%s) * %lld, %s, %s);\n", count, (long long)esize(r->buf->dt), lo, hi);
}

_Static_assert(IR_GIN_MAX_SIG == 8, "gin_prelude's ts_gin_sig[8] holds IR_GIN_MAX_SIG slots");

/* `ts_g.putValue(world, pe, window, <off>, (T)(value)<action>)`. */
static void emit_gin_value(Ce *c, const char *off, TsDType dt, const IrExpr *value, const char *action) {
    line(c);
    outf(c, "if (%s >= 0) ts_g.putValue(ncclTeamWorld(ts_gin_comm), (int)ts_pe, ts_gin_win, (size_t)%s, (%s)(%s", off, off,
         storage(c, dt), ts_cx_store_conv(c->h->x, dt));
    expr(c, value);
    outf(c, "))%s);\n", action);
}

/* `const int ts_sid = ...`: the GIN signal of r's first element, r a
 * word of signal buffer `slot` (IrTileOp.gin_sig - 1), its tensor's span
 * at <lo> (emit_span's). */
static void emit_gin_sid(Ce *c, const IrRegion *r, int slot, const char *lo) {
    line(c);
    outf(c, "const int ts_sid = ts_gin_sid(%d, ts_rank, %d, ", c->what, slot);
    emit_addr(c, r);
    outf(c, ", %s, %lld);\n", lo, (long long)esize(r->buf->dt));
}

/* `const ts_u64 ts_sv = (ts_u64)(value)`: an adding signal's amount (a
 * negative one wraps: GIN's signals and our reads of them are modulo 2^64). */
static void emit_gin_amount(Ce *c, const IrExpr *value) {
    line(c);
    out(c, "const ts_u64 ts_sv = (ts_u64)(ts_i64)(");
    expr(c, value);
    out(c, ");\n");
}

#define GIN_ADD ", ncclGin_SignalAdd{(ncclGinSignal_t)ts_sid, ts_sv}"

/* A word of a signal buffer of this rank where the world spans nodes
 * (TS_GIN_WAIT_SIGNAL, TS_GIN_RESET): the heap word plus what its GIN
 * signal grew by past the shadow (NCCL's per-signal word of the device
 * communicator, which successive kernels share). */
static void emit_gin_own(Ce *c, const IrTileOp *op) {
    const IrBuffer *b = op->r[0].buf;
    const char *st = storage(c, b->dt);
    need_one_thread(c);
    open_block(c, "");
    line(c);
    out(c, "ncclGin ts_g(ts_gin_comm, 0);\n");
    emit_remote(c, "ts_wp", &op->r[0], 0, "1");
    line(c);
    out(c, "if (ts_wp) {\n");
    c->ind++;
    emit_gin_sid(c, &op->r[0], op->gin_sig - 1, "ts_wp_lo");
    line(c);
    out(c, "volatile ts_u64 *ts_sh = ts_sid >= 0 ? (volatile ts_u64 *)ts_g.getSignalShadowPtr(ts_sid) : 0;\n");
    if (op->gin == TS_GIN_RESET) {
        /* the signal's growth so far is dropped (the shadow takes it), then the
         * heap word is the value: an add that lands in between counts on top */
        line(c);
        out(c, "if (ts_sh) *ts_sh = ts_g.readSignal(ts_sid);\n");
        if (op->comm == TS_COMM_ST) emit_st(c, "ts_wp", b->dt, op->args[1], op->cflags[1], op->cflags[2]);
        else emit_store_to(c, "ts_wp", b->dt, op->args[1]);
    } else {
        const char *ct = ts_cx_compute_ctype(c->h->x, b->dt, c->s->loc);
        TsBuf cond = {0}, rec = {0};
        emit_wait_head(c, op, ct, &cond, &rec);
        char ld[256];
        snprintf(ld, sizeof ld, "if (!ts_sh) break; ts_v = (%s)(%s)((ts_u64)*(volatile %s *)ts_wp + (ts_g.readSignal(ts_sid) - *ts_sh));",
                 ct, st, st);
        emit_wait_loop(c, ld, ts_buf_str(&cond), ts_buf_str(&rec));
        ts_buf_free(&cond);
        ts_buf_free(&rec);
    }
    c->ind--;
    line(c);
    out(c, "}\n");
    close_block(c);
}

/* An op NCCL's GIN can do (pass lower_comm refused the others), in the
 * form lower_comm chose (IrTileOp.gin, TsGinForm). */
static void emit_gin(Ce *c, const IrTileOp *op) {
    if (op->gin == TS_GIN_WAIT_SIGNAL || op->gin == TS_GIN_RESET) {
        emit_gin_own(c, op);
        return;
    }
    need_one_thread(c); /* lower_comm: posted once */
    open_block(c, "");
    line(c);
    out(c, "ncclGin ts_g(ts_gin_comm, 0);\n");
    line(c);
    out(c, "const ts_i64 ts_pe = ");
    emit_peer(c);
    out(c, ";\n");
    if (op->gin == TS_GIN_VALUE) { /* T.st: data, no order promised */
        emit_gin_off(c, "ts_fo", &op->r[0], 1, "1", NULL);
        emit_gin_value(c, "ts_fo", op->r[0].buf->dt, op->args[1], "");
        close_block(c);
        return;
    }
    if (op->gin == TS_GIN_SIGNAL_ADD) { /* after the context's earlier puts to ts_pe (NCCL's gin.h) */
        emit_gin_off(c, "ts_fo", &op->r[0], 1, "1", NULL);
        emit_gin_sid(c, &op->r[0], op->gin_sig - 1, "ts_fo_lo");
        emit_gin_amount(c, op->args[1]);
        line(c);
        out(c, "if (ts_fo >= 0 && ts_sid >= 0) ts_g.signal(ncclTeamWorld(ts_gin_comm), (int)ts_pe" GIN_ADD ");\n");
        close_block(c);
        return;
    }
    if (op->gin != TS_GIN_PUT && op->gin != TS_GIN_PUT_VALUES)
        ts_fail_at(c->h->x->d, TS_ERR_INTERNAL, c->s->loc, "CUDA codegen: T.%s through NCCL's GIN in form '%s'",
                   ts_comm_name(op->comm), ts_gin_form_name(op->gin));
    /* PUT: from the heap one GIN put per row, from a tile a putValue per
     * element; an adding signal rides on the last of them */
    const IrRegion *src = &op->r[0], *dst = &op->r[1];
    int sig = op->nr == 3;
    int64_t eb = esize(dst->buf->dt), rows = 1; /* (the source's too: op/comm.c checks) */
    int ad = ts_comm_rows_axis(dst, &rows), as = ts_comm_rows_axis(src, &rows);
    TsCudaCommBuf sb = c->h->buf(c->h->g, src->buf);
    if ((sb.param >= 0) != (op->gin == TS_GIN_PUT))
        ts_fail_at(c->h->x->d, TS_ERR_INTERNAL, c->s->loc, "CUDA codegen: GIN form '%s' of a put from '%s'",
                   ts_gin_form_name(op->gin), src->buf->name);
    line(c);
    out(c, "const ts_i64 ts_cnt = (ts_i64)(");
    expr(c, op->args[1]);
    out(c, ");\n");
    emit_gin_off(c, "ts_do", dst, 1, "ts_cnt", NULL);
    line(c);
    out(c, "const ts_i64 ts_drs = ");
    if (ad >= 0) emit_stride(c, dst, ad);
    else out(c, "0");
    out(c, ", ts_srs = ");
    if (as >= 0) emit_stride(c, src, as);
    else out(c, "0");
    out(c, ";\n");
    if (ad >= 0) {
        char off[64];
        snprintf(off, sizeof off, "%lld * ts_drs", (long long)(rows - 1));
        emit_gin_off(c, "ts_dl", dst, 1, "ts_cnt", off);
    }
    if (sig) { /* the adding signal: its word's GIN signal */
        emit_gin_off(c, "ts_go", &op->r[2], 1, "1", NULL);
        emit_gin_sid(c, &op->r[2], op->gin_sig - 1, "ts_go_lo");
        emit_gin_amount(c, op->args[2]);
        line(c);
        out(c, "int ts_sent = ts_go < 0 || ts_sid < 0; /* the signal is on its way (or cannot be) */\n");
    }
    if (op->gin == TS_GIN_PUT) { /* a tensor: on the heap, in the window */
        emit_gin_off(c, "ts_so", src, 0, "ts_cnt", NULL);
        line(c);
        outf(c, "for (ts_i64 ts_r = 0; ts_do >= 0 && ts_so >= 0 && ts_cnt > 0 && ts_r < %lld; ts_r++) {\n", (long long)rows);
        c->ind++;
        line(c);
        outf(c, "const size_t ts_d = (size_t)(ts_do + ts_r * ts_drs * %lld), ts_s = (size_t)(ts_so + ts_r * ts_srs * %lld);\n",
             (long long)eb, (long long)eb);
        if (sig) {
            line(c);
            outf(c, "if (!ts_sent && ts_r == %lld) { ts_g.put(ncclTeamWorld(ts_gin_comm), (int)ts_pe, ts_gin_win, ts_d, "
                    "ts_gin_win, ts_s, (size_t)ts_cnt * %lldu" GIN_ADD "); ts_sent = 1; }\n",
                 (long long)(rows - 1), (long long)eb);
            line(c);
            out(c, "else ");
        } else {
            line(c);
        }
        outf(c, "ts_g.put(ncclTeamWorld(ts_gin_comm), (int)ts_pe, ts_gin_win, ts_d, ts_gin_win, ts_s, (size_t)ts_cnt * %lldu);\n",
             (long long)eb);
        c->ind--;
        line(c);
        out(c, "}\n");
    } else { /* a tile of this block: not in a registered window */
        const char *st = storage(c, dst->buf->dt);
        line(c);
        outf(c, "const %s *ts_sp = (const %s *)", st, st);
        emit_addr(c, src);
        out(c, ";\n");
        line(c);
        outf(c, "for (ts_i64 ts_r = 0; ts_do >= 0 && ts_r < %lld; ts_r++)\n", (long long)rows);
        line(c);
        outf(c, "    for (ts_i64 ts_i = 0; ts_i < ts_cnt; ts_i++) {\n");
        c->ind += 2;
        line(c);
        outf(c, "const size_t ts_d = (size_t)(ts_do + (ts_r * ts_drs + ts_i) * %lld);\n", (long long)eb);
        if (sig) {
            line(c);
            outf(c, "if (!ts_sent && ts_r == %lld && ts_i == ts_cnt - 1) { ts_g.putValue(ncclTeamWorld(ts_gin_comm), "
                    "(int)ts_pe, ts_gin_win, ts_d, ts_sp[ts_r * ts_srs + ts_i]" GIN_ADD "); ts_sent = 1; }\n",
                 (long long)(rows - 1));
            line(c);
            out(c, "else ");
        } else {
            line(c);
        }
        out(c, "ts_g.putValue(ncclTeamWorld(ts_gin_comm), (int)ts_pe, ts_gin_win, ts_d, ts_sp[ts_r * ts_srs + ts_i]);\n");
        c->ind -= 2;
        line(c);
        out(c, "    }\n");
    }
    if (sig) { /* nothing to carry it (no elements): the signal alone, still after the earlier puts */
        line(c);
        out(c, "if (!ts_sent && ts_do >= 0) ts_g.signal(ncclTeamWorld(ts_gin_comm), (int)ts_pe" GIN_ADD ");\n");
    }
    close_block(c);
}

int ts_cuda_comm_per_thread_ok(const IrTileOp *op) {
    return (op->comm != TS_COMM_BARRIER_BLOCKS && op->comm != TS_COMM_BARRIER_ALL) || op->cflags[1] == 1;
}

void ts_cuda_comm_emit(const TsCudaComm *h, const IrStmt *s) {
    const IrTileOp *op = s->op;
    Ce c0 = {h, h->x->o, h->ind, s, op->comm, h->per_thread}, *c = &c0;
    if (op->xport && op->comm == TS_COMM_BARRIER_ALL) {
        emit_barrier_all_gin(c);
        return;
    }
    if (op->xport && op->comm != TS_COMM_FENCE) {
        int own = op->gin == TS_GIN_WAIT_SIGNAL || op->gin == TS_GIN_RESET; /* this rank's word: no peer's lack */
        if (!op->gin || (!own && ts_comm_gin_lacks(op)))
            ts_fail_at(h->x->d, TS_ERR_INTERNAL, s->loc,
                       "CUDA codegen: T.%s through NCCL's GIN was not refused or given a form by lower_comm",
                       ts_comm_name(op->comm));
        emit_gin(c, op);
        return;
    }
    switch (op->comm) {
    case TS_COMM_PUT:
    case TS_COMM_GET: emit_put_get(c, op); return;
    case TS_COMM_ATOM_ADD:
        if (op->nr > 1) { /* T.atom_add's value before the add, into r1 (lower_comm: a shared word in uniform code) */
            const IrBuffer *b = op->r[0].buf;
            need_one_thread(c);
            open_block(c, "");
            line(c);
            outf(c, "%s ts_old = 0;\n", storage(c, b->dt));
            emit_remote(c, "ts_p", &op->r[0], 1, "1");
            line(c);
            out(c, "if (ts_p) {\n");
            c->ind++;
            emit_atomic_add_sem(c, "ts_old", "ts_p", b->dt, op->args[1], op->cflags[1], op->cflags[2]);
            c->ind--;
            line(c);
            out(c, "}\n");
            line(c);
            out(c, "(");
            emit_addr(c, &op->r[1]);
            outf(c, ")[0] = ts_old;\n");
            close_block(c);
            return;
        }
        /* fall through */
    case TS_COMM_ST:
    case TS_COMM_SIGNAL: {
        const IrBuffer *b = op->r[0].buf;
        need_one_thread(c);
        open_block(c, "");
        emit_remote(c, "ts_p", &op->r[0], 1, "1");
        line(c);
        out(c, "if (ts_p) {\n");
        c->ind++;
        if (op->comm == TS_COMM_ST) emit_st(c, "ts_p", b->dt, op->args[1], op->cflags[1], op->cflags[2]);
        else if (op->comm == TS_COMM_SIGNAL && op->cflags[0] == TS_SIG_SET) emit_store_to(c, "ts_p", b->dt, op->args[1]);
        else if (op->comm == TS_COMM_SIGNAL) emit_atomic_add(c, "ts_p", b->dt, op->args[1]);
        else emit_atomic_add_sem(c, NULL, "ts_p", b->dt, op->args[1], op->cflags[1], op->cflags[2]);
        c->ind--;
        line(c);
        out(c, "}\n");
        close_block(c);
        return;
    }
    case TS_COMM_LD: {
        const IrBuffer *d = op->r[1].buf;
        int priv = d->scope == IR_SCOPE_LOCAL || d->scope == IR_SCOPE_VAR;
        if (!priv) need_one_thread(c); /* into memory the threads share: lower_comm gave it to one */
        open_block(c, "");
        emit_remote(c, "ts_p", &op->r[0], 1, "1");
        line(c);
        out(c, "if (ts_p) { (");
        emit_addr(c, &op->r[1]);
        outf(c, ")[0] = %s", ts_cx_store_conv(h->x, d->dt));
        TsDType sdt = op->r[0].buf->dt;
        char nm[32];
        if (ldst_name(sdt, op->cflags[1], op->cflags[2], nm, sizeof nm)) { /* one ld.<sem>.<scope> */
            outf(c, "%sts_ld_%s((const %s *)ts_p)))); }\n", ts_cx_load_conv(h->x, sdt), nm, storage(c, sdt));
        } else {
            emit_load_from(c, "ts_p", sdt);
            out(c, ")); }\n");
            if (op->cflags[1] == TS_SEM_ACQUIRE) emit_fence(c, op->cflags[2]);
        }
        close_block(c);
        return;
    }
    case TS_COMM_WAIT: emit_wait(c, op); return;
    case TS_COMM_FENCE:
        if (op->cflags[0]) { /* T.quiet: completion of everything issued (stores to peers are done when visible) */
            line(c);
            out(c, "__threadfence_system();\n");
        } else { /* T.fence_cta/gpu/sys, T.fence: TileScale's fence.acq_rel of the scope */
            emit_fence(c, op->cflags[2]);
        }
        if (op->gin == TS_GIN_FLUSH) { /* several nodes: this thread's GIN puts have read their sources (only) */
            line(c);
            out(c, "ncclGin(ts_gin_comm, 0).flush(ncclCoopThread());\n");
        }
        return;
    case TS_COMM_BARRIER_BLOCKS: emit_barrier_blocks(c, op); return;
    case TS_COMM_BARRIER_ALL: emit_barrier_all(c); return;
    default:
        ts_fail_at(h->x->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: communication op '%s' was not lowered",
                   ts_comm_name(op->comm));
    }
}
