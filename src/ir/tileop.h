/*
 * tileop.h — the tile-operator node of the IR and its vocabulary.
 *
 * A tile operator (T.copy, T.gemm, T.fill, T.reduce_*, T.cumsum,
 * T.atomic_add, the communication primitives and the tile-level
 * collectives) is one IR statement,
 * IR_S_TILEOP, pointing at an IrTileOp.  The node and the enumerations its
 * fields take (op kinds, reduce kinds, instruction families, GEMM warp
 * policies, communication kinds, comparisons, memory semantics, scopes)
 * live here, with the IR, so that everything in src/ir/ (printer,
 * verifier, walkers, interpreters) reads tile ops without including
 * src/op/, which sits above the IR: op/ holds what each operator *does*
 * (its lowering, op/op.h; the checks of communication operands,
 * op/comm.h), the IR holds what it *is*.
 */
#ifndef TS_IR_TILEOP_H
#define TS_IR_TILEOP_H

#include "ir/ir.h"

/* X(enum, name): the single list of tile operators (op/op.h pairs each with its lowering) */
#define TS_TILEOPS(X)                 \
    X(TS_OP_COPY, "copy")             \
    X(TS_OP_FILL, "fill")             \
    X(TS_OP_GEMM, "gemm")             \
    X(TS_OP_REDUCE, "reduce")         \
    X(TS_OP_CUMSUM, "cumsum")         \
    X(TS_OP_ATOMIC_ADD, "atomic_add") \
    X(TS_OP_COMM, "comm")             \
    X(TS_OP_COLL, "coll")

typedef enum TsOpKind {
#define X(e, n) e,
    TS_TILEOPS(X)
#undef X
    TS_OP_COUNT
} TsOpKind;

typedef enum TsReduceKind {
    TS_REDUCE_SUM,
    TS_REDUCE_MAX,
    TS_REDUCE_MIN,
    TS_REDUCE_ABSSUM,
    TS_REDUCE_ABSMAX,
} TsReduceKind;

/* How a tile operator reaches the target.  A lowering normally replaces
 * the op by loops, so an op in lowered IR is an error; a target-specific
 * lowering may instead keep the op, marked with the instruction family
 * the target's code generator emits for it (verify_lowered lets those
 * through, every other consumer of lowered IR refuses tile ops). */
typedef enum TsOpInst {
    TS_OP_INST_LOOPS,    /* lowered to loops of loads and stores (never seen after lowering) */
    TS_OP_INST_MMA_SYNC, /* GEMM kept for the CUDA code generator: warp-tiled
                            mma.sync.m16n8k16 on operands in shared memory
                            or, once layout inference gave them layouts,
                            register fragments */
    TS_OP_INST_FRAGMENT, /* kept for the CUDA layout_inference pass, which
                            lowers it by the fragments' layouts (T.reduce and
                            T.cumsum on register fragments: warp shuffles) or, when it
                            gives no layouts, by the generic lowering */
    TS_OP_INST_COMM,     /* a communication primitive (op/comm.h) kept for the
                            target's emitter of remote accesses and waits */
    TS_OP_INST_WGMMA,    /* GEMM kept for the CUDA code generator on sm_90a:
                            wgmma.mma_async over warpgroups, A and B read from
                            shared memory through matrix descriptors
                            (IrTileOp.wg), the accumulator in registers
                            (layout WGMMA_C); doc/HOPPER.md */
} TsOpInst;

/* How a wgmma gemm's shared operand is laid out, as its matrix descriptors
 * describe it (PTX ISA, "Matrix Descriptor Format"; doc/HOPPER.md).  The
 * stored matrix (rows x cols, cols contiguous) is in blocks of `row_bytes`
 * columns, each block rows x row_bytes row-major and XOR-swizzled by the
 * mode; element (r, c) before the swizzle is at byte
 *     r * row_bytes + (c / (row_bytes / 2)) * blk_bytes + (c % (row_bytes / 2)) * 2.
 * Set by layout inference (op/gemm.c) with the buffer's IrSwizzle. */
typedef struct IrWgmmaOperand {
    int mn_major;      /* 1: the M (A) or N (B) axis is the contiguous one (transposed for wgmma) */
    int mode;          /* the descriptor's swizzle mode: 1 128B, 2 64B, 3 32B */
    int row_bytes;     /* bytes of one swizzled row: 128, 64 or 32 */
    int64_t blk_bytes; /* bytes from one column block to the next (rows * row_bytes) */
    int64_t lbo, sbo;  /* the descriptor's leading / stride dimension byte offsets */
} IrWgmmaOperand;

/* Which part of a tensor-core T.gemm a kept op runs (IrTileOp.mma_part).
 * inject_pipeline splits the gemm at the end of a pipelined loop so that
 * the first k16 step's operand fragments of the next stage are loaded
 * (ldmatrix) right after the loop's barrier, while the last k16 step of
 * the current stage still multiplies: the three parts share a pair of
 * fragment register sets (IrTileOp.mma_frag).  Their effect together is
 * the whole gemm; the thread-level interpreter computes it at BODY. */
typedef enum TsMmaPart {
    TS_MMA_WHOLE, /* the whole gemm (every kept gemm not split) */
    TS_MMA_PRE,   /* before the loop: load step 0's fragments of the first stage (set 0) */
    TS_MMA_BODY,  /* steps 0 .. K/16-2: load step s+1's fragments, multiply step s */
    TS_MMA_TAIL,  /* after the barrier: load step 0 of the next stage (r[0], r[1] are the next
                     stage's operands) into set 0, multiply the last step (set 1) */
    TS_MMA_REST,  /* the rest of the gemm whose PRE ran after the same barrier (not split across
                     it; the stage's copies issued between the two): steps 0 .. K/16-1, loading
                     step s+1 into set (s+1) % 2 before multiplying step s */
} TsMmaPart;

typedef enum TsGemmPolicy {
    TS_GEMM_SQUARE,  /* T.GemmWarpPolicy.Square (default) */
    TS_GEMM_FULLROW, /* FullRow */
    TS_GEMM_FULLCOL, /* FullCol */
} TsGemmPolicy;

/*
 * One tile operator.  Which fields mean what, per op:
 *
 *  COPY        r[0] = src, r[1] = dst.  The elaborator gives both regions
 *              their extents (the `A[i, j]` "start of a tile" form takes
 *              its extents from the other side).  After dropping extents of
 *              1, both must have the same extents.  Elements outside a
 *              global buffer are not read (zero is copied) or not written.
 *  FILL        r[0] = dst, value = the fill value (T.clear: 0).
 *  GEMM        r[0] = A, r[1] = B, r[2] = C (accumulator);
 *              C += op(A) * op(B) with op = transpose if trans_a/trans_b;
 *              clear_accum zeroes C first.  policy/k_pack/wg_wait are
 *              scheduling hints for the GPU.  Block-scaled
 *              (T.mma_gemm_blockscaled, nr == 5): r[3] = SFA, r[4] = SFB,
 *              uint32 words of four UE4M3 scale bytes each (sf_*), every
 *              product a[m, k] b[k, n] multiplied by A's scale of (m, k)
 *              and B's of (n, k); op/gemm.c says which byte that is.
 *  REDUCE      r[0] = src, r[1] = dst; reduce `kind` over axis `dim` of
 *              src; dst has src's shape without `dim` (or with it as 1).
 *              clear = 1: dst is overwritten; 0: dst takes part.
 *  CUMSUM      r[0] = src, r[1] = dst (same shape); prefix sums along
 *              `dim`, from the end when `reverse`.
 *  ATOMIC_ADD  r[0] = dst; either r[1] = src region (nr == 2) or value =
 *              a scalar (nr == 1, dst is one element).
 *  COMM        a communication primitive of the distributed layer: `comm`
 *              says which (TsCommKind), op/comm.h which region and
 *              operand is what.
 *  COLL        a tile-level collective (T.allreduce, T.allgather,
 *              T.reduce_scatter, T.all_to_all): `coll` says which
 *              (TsCollKind), `reduce` the reduction (sum, max, min).
 *              r[0] = src, r[1] = dst (the same buffer for allreduce).
 *              Between the ranks of the world (coll_units 0): src and dst
 *              are whole tensors on the symmetric heap.  Between the
 *              units of one block (T.Scale("warp"|"warpgroup") roles,
 *              coll_units = n units of coll_unit_threads threads each):
 *              src and dst are this unit's own tiles, args[0] its unit
 *              index, r[2] the call site's shared scratch [n, src's
 *              shape...] that the n units' ops share.  Between the
 *              blocks of the grid (T.Scale("block"), coll_units -1): src
 *              and dst are each block's own tiles (shared, fragment or
 *              local), the kernel cooperative (split_grid) with a constant
 *              grid; the staging is in the grid workspace.  The pass
 *              lower_coll expands it (op/coll.c says into what).
 */
/* IrTileOp.sf_layout: where a block-scaled gemm's scale words are */
typedef enum TsSfLayout {
    TS_SF_ROWMAJOR,    /* SF[m, (k_start + k) / 64] */
    TS_SF_CHUNK_KMAJOR /* TileLang's "blockscaled_chunk_kmajor" tile order (op/gemm.c) */
} TsSfLayout;

struct IrTileOp {
    TsOpKind kind;
    IrRegion r[5];
    int nr;
    IrExpr *value;        /* FILL value; ATOMIC_ADD scalar */
    int trans_a, trans_b; /* GEMM */
    int clear_accum;      /* GEMM */
    TsGemmPolicy policy;  /* GEMM */
    int k_pack, wg_wait;  /* GEMM hints */
    int sf_gran[2];       /* GEMM block-scaled (nr == 5): K elements per scale byte of A, of B (16) */
    int sf_layout;        /* GEMM block-scaled: TsSfLayout; its k_start (the tile's first K, the
                             rowmajor layout's word offset) is args[0] */
    TsReduceKind reduce;  /* REDUCE */
    int dim;              /* REDUCE, CUMSUM */
    int clear;            /* REDUCE */
    int reverse;          /* CUMSUM */
    TsOpInst inst;        /* set by a target's lowering that keeps the op (see TsOpInst) */
    int async;            /* COPY: a producer of a software pipeline (set by the CUDA pass
                             pipeline_planning): lowered to asynchronous copies with no
                             barrier around them; inject_pipeline places the waits */
    int mma_part;         /* GEMM kept for tensor cores: TsMmaPart (inject_pipeline) */
    int mma_frag;         /* GEMM parts: > 0, the same for the PRE/BODY/TAIL of one split gemm
                             (names their fragment registers); 0 for a whole gemm */
    IrWgmmaOperand wg[2]; /* GEMM kept for wgmma: A's and B's descriptor layouts (layout_inference) */
    int wg_ni;            /* GEMM kept for wgmma: N of one instruction (layout_inference) */
    /* GEMM from T.tcgen05_gemm (Blackwell's tcgen05.mma, issued without waiting): 1 until pass
     * lower_tmem decides how it runs (on targets without tensor memory: this gemm, done when it
     * ends, then the arrive on `mbar` the hardware would make, IR_MBAR_ARRIVE_ONE); mbar: the
     * T.alloc_barrier buffer whose element args[0] gets that arrive, NULL: none (mbar=None) */
    int tcgen05;
    IrBuffer *mbar;
    int wg_async;         /* GEMM kept for wgmma: 1 (T.wgmma_gemm): no wait after the issue, the
                             user's T.wait_wgmma waits; 0: wait until wg_wait groups are pending */
    int mma_lo, mma_threads; /* GEMM kept for tensor cores: its warps are the threads [mma_lo, mma_lo +
                                mma_threads), numbered from mma_lo (a T.ws role's; set by layout_inference
                                or partition_threads); mma_threads 0: the whole block's */
    int comm;             /* COMM: TsCommKind (op/comm.h) */
    IrExpr *args[3];      /* COMM: peer rank, count or value, signal value (op/comm.h); GEMM with
                             tcgen05 and mbar: args[0] = the mbarrier's element index; GEMM
                             block-scaled (nr == 5, never with mbar): args[0] = k_start */
    int cflags[3];        /* COMM: comparison or signal op, memory semantics, scope */
    int coll;             /* COLL: TsCollKind */
    int coll_units;       /* COLL: how many units of the block take part (0: the ranks of the world,
                             -1: the blocks of the grid) */
    int coll_unit_threads; /* COLL between units: threads per unit (32: warps, 128: warpgroups) */
    int xport;            /* COMM: 1: through the transport (the peer is on another node: NCCL's GIN
                             on CUDA, the world's proxy on sim ranks), not a load/store (pass
                             lower_comm, multi-node kernels); FENCE: also completes the transport's
                             puts; BARRIER_*: a word of a rank on another node through it */
    int gin;              /* COMM with xport on CUDA: how NCCL's GIN carries it (TsGinForm below), decided
                             by pass lower_comm and printed as told by comm_cuda.c; 0 elsewhere */
    int gin_sig;          /* COMM on CUDA, several nodes: 1 + the slot (IrKernel.gin_sig_param) of the
                             signal buffer this op adds to, waits on or resets (its words are GIN
                             signals too, see TsGinForm); 0: none */
};

const char *ts_op_name(TsOpKind k);
const char *ts_reduce_name(TsReduceKind k);
const char *ts_comm_name(int comm); /* a TsCommKind's name */
const char *ts_coll_name(int coll); /* a TsCollKind's name */

/* X(enum, name): the tile-level collectives (TS_OP_COLL) */
#define TS_COLL_KINDS(X)                                                              \
    X(TS_COLL_ALLREDUCE, "allreduce") X(TS_COLL_ALLGATHER, "allgather")               \
    X(TS_COLL_REDUCE_SCATTER, "reduce_scatter") X(TS_COLL_ALL_TO_ALL, "all_to_all")

typedef enum TsCollKind {
#define X(e, n) e,
    TS_COLL_KINDS(X)
#undef X
    TS_COLL_COUNT
} TsCollKind;

/* X(enum, name) */
#define TS_COMM_KINDS(X)                                                         \
    X(TS_COMM_PUT, "put") X(TS_COMM_GET, "get") X(TS_COMM_COPY, "remote_copy")  \
    X(TS_COMM_ST, "st") X(TS_COMM_LD, "ld") X(TS_COMM_WAIT, "wait")              \
    X(TS_COMM_ATOM_ADD, "atom_add") X(TS_COMM_SIGNAL, "signal_op")               \
    X(TS_COMM_FENCE, "fence") X(TS_COMM_BARRIER_BLOCKS, "barrier_blocks")        \
    X(TS_COMM_BARRIER_ALL, "barrier_all") X(TS_COMM_LANES, "lanes")

typedef enum TsCommKind {
#define X(e, n) e,
    TS_COMM_KINDS(X)
#undef X
    TS_COMM_COUNT
} TsCommKind;

/* Comparisons of waits; the values are TileScale's BinaryRelation. */
typedef enum TsCommCmp {
    TS_CMP_EQ = 0, TS_CMP_NE = 1, TS_CMP_GE = 2, TS_CMP_LE = 3, TS_CMP_GT = 4, TS_CMP_LT = 5
} TsCommCmp;

/* Signal updates (NVSHMEM_SIGNAL_SET = 9 and _ADD = 10 in NVSHMEM). */
typedef enum TsCommSigOp { TS_SIG_SET = 0, TS_SIG_ADD = 1 } TsCommSigOp;

/* Memory semantics; values are TileScale's (weak 0 ... relaxed 4), plus acq_rel. */
typedef enum TsCommSem {
    TS_SEM_WEAK = 0, TS_SEM_VOLATILE = 1, TS_SEM_ACQUIRE = 2, TS_SEM_RELEASE = 3,
    TS_SEM_RELAXED = 4, TS_SEM_ACQ_REL = 5
} TsCommSem;

/* How NCCL's GIN carries a primitive to or for a rank of another node
 * (IrTileOp.gin; pass lower_comm decides, doc/DISTRIBUTED.md says what
 * each guarantees).  A signal buffer is a heap tensor that ranks of other
 * nodes add to (T.signal_op add, a put's adding signal, T.atom_add of an
 * integer): element i of it is also GIN signal ts_gin_sig[slot] + i, and
 * its value in a world of several nodes is the heap word plus what that
 * signal grew by since this rank last reset the word. */
typedef enum TsGinForm {
    TS_GIN_NONE = 0,
    TS_GIN_PUT = 1,        /* PUT from a heap tensor: one GIN put per row (a registered window); with
                              an adding signal, ncclGin_SignalAdd on the last one */
    TS_GIN_PUT_VALUES = 2, /* PUT from a tile (not in a window): a putValue per element, the adding
                              signal on the last one */
    TS_GIN_VALUE = 3,      /* ST: one putValue (data: no order with other puts promised) */
    TS_GIN_SIGNAL_ADD = 4, /* SIGNAL add, integer ATOM_ADD: signal(ncclGin_SignalAdd) on the word's
                              GIN signal, after the context's earlier puts to that peer */
    TS_GIN_WAIT_SIGNAL = 5, /* WAIT on this rank's word of a signal buffer: heap word + GIN signal -
                               shadow */
    TS_GIN_RESET = 6,      /* SIGNAL set / ST on this rank's own word of a signal buffer: shadow =
                              the GIN signal, then the heap word = the value */
    TS_GIN_FLUSH = 7,      /* FENCE: flush (this thread's puts have read their sources; NOT remote
                              completion, no order at the peer) */
    TS_GIN_BARRIER = 8     /* BARRIER_ALL: GIN signal 0 to and from every rank */
} TsGinForm;
const char *ts_gin_form_name(int form); /* "put", "put_values", ... */

/* Scopes (TileScale's values). */
typedef enum TsCommScope { TS_SCOPE_CTA = 0, TS_SCOPE_GPU = 1, TS_SCOPE_SYS = 2 } TsCommScope;

#endif
