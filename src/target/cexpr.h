/*
 * cexpr.h — the expression emitter shared by the C and CUDA code generators.
 *
 * Both targets print IR expressions as C-family source with the same
 * compute-type rules (see the essay of codegen_c.c): the same literals,
 * index arithmetic, operator helpers, casts and intrinsic calls.  They
 * differ only in spelling (int64_t vs ts_i64, NAN vs TS_NAN_F, an
 * intrinsic's name), in a few CUDA-only conversions that keep overloads
 * unambiguous, and in the variables and loads that are really theirs
 * (thread indices, atomic or volatile loads, grid-extent checks).  So the
 * emitter here is parameterized by a constant TsCxDialect carrying the
 * spellings and two hooks, and by a TsCxGen, the per-kernel state it
 * writes through.  Everything a target does beyond expressions stays in
 * the target.
 */
#ifndef TS_TARGET_CEXPR_H
#define TS_TARGET_CEXPR_H

#include "ir/ir.h"

typedef struct TsCxGen TsCxGen;

/* How one target spells what the shared emitter prints. */
typedef struct TsCxDialect {
    const char *who;                 /* error-message prefix: "C codegen" */
    const char *i64, *u32, *u64;     /* compute types of categories 'i', 'u', 'U' */
    const char *int_fn_sfx;          /* appended to the 'i' division, modulo, min and max helpers
                                        (ts_fdiv_i32, ...); NULL: none */
    const char *int_sfx;             /* suffix of 'i' literals; NULL: "LL" ("" where 'i' is
                                        32-bit: IrKernel.index32 on the CUDA target) */
    const char *const *storage;      /* storage type per dtype; NULL: ts_dtype_info's ctype */
    const char *nan_f, *nan_d;       /* quiet NaN of float / double */
    const char *inf_f, *inf_d;       /* +infinity of float / double */
    const char *rank, *nranks;       /* this rank and the rank count, as compute-type ints */
    const char *rpn;                 /* ranks per node (IR_VAR_RANK axis 2), as a compute-type int */
    const char *grid_ws;             /* IR_GRID_WS: the launch's grid workspace address, an int64 */
    const char *cluster_rank;        /* IR_CLUSTER_RANK: the block's rank in its cluster, an int32
                                        (NULL: a target without clusters, where lower_cluster removed it) */
    const char *const (*intrin)[2];  /* per IrIntrinsic: float and double function names;
                                        RSQRT NULL: printed as 1 / sqrt */
    const char *const (*intrin_over)[2]; /* NULL, or names that replace intrin's where
                                            set (the CUDA target's fast math) */
    const char *fdiv_f;              /* float (not double) division as this helper; NULL: '/' */
    const char *const (*bitcast)[2]; /* T.reinterpret of the 32/64-bit floats: the text before
                                        and after an operand for [0] float -> its uint32 bits,
                                        [1] uint32 -> float, [2] double -> uint64, [3] uint64 ->
                                        double (C: a union, CUDA: __float_as_uint and friends) */
    int cast_helper_args;            /* convert operands of ts_* helpers to the helper's
                                        type (C++ overloads must not be ambiguous) */
    int (*var)(TsCxGen *x, const IrExpr *e);   /* target variables: 1 if it printed e,
                                                  0 to let the shared code do it */
    void (*load)(TsCxGen *x, const IrExpr *e); /* prints a buffer load (IR_E_LOAD) */
    /* prints an external call's value or an element's address for one
     * (IR_EXTERN_CALL, IR_EXTERN_ADDR); NULL: the target has none (the C
     * target refuses such kernels before printing) */
    void (*ext)(TsCxGen *x, const IrExpr *e);
} TsCxDialect;

/* What the emitter writes through; lives in the target's generator state. */
struct TsCxGen {
    const TsCxDialect *dl; /* the target's spellings and hooks */
    TsDiag *d;             /* where errors go */
    TsArena *a;            /* the kernel's arena, for names and conversions */
    const IrKernel *k;     /* the kernel (shape variables and parameters) */
    TsBuf *o;              /* output; NULL during a dry run */
    void *user;            /* the target's generator, for the hooks */
};

/* `<name>_<id>` with every non-identifier character replaced. */
const char *ts_cx_name(TsArena *a, const char *name, int id);
/* Compute category of a dtype: 'b' bool, 'i' 64-bit signed, 'u' 32-bit
 * unsigned, 'U' 64-bit unsigned, 'f' float, 'd' double. */
char ts_cx_cat(TsCxGen *x, TsDType dt, TsLoc loc);
/* The compute type of a category / of a dtype. */
const char *ts_cx_cat_ctype(const TsCxDialect *dl, char c);
const char *ts_cx_compute_ctype(TsCxGen *x, TsDType dt, TsLoc loc);
/* How a dtype is stored in memory. */
const char *ts_cx_storage(const TsCxDialect *dl, TsDType dt);
/* Conversion of a stored value to its compute type (prefix; close with ")"). */
const char *ts_cx_load_conv(TsCxGen *x, TsDType dt);
/* Conversion of a computed value to the storage type (prefix; close with "))"). */
const char *ts_cx_store_conv(TsCxGen *x, TsDType dt);
/* The text around an element's lvalue that reads its stored bits as the
 * unsigned integer of its width (load.bits), and around a value of such
 * bits stored into it (store.bits). */
void ts_cx_bits_load(TsCxGen *x, TsDType sd, const char **open, const char **close);
void ts_cx_bits_store(TsCxGen *x, TsDType sd, const char **open, const char **close);
/* A C string literal; no byte of s can end it early or form a trigraph. */
void ts_cx_string(TsCxGen *x, const char *s);
/* Element offset of buf[idx] in 64-bit arithmetic, constant terms folded.
 * global: strides are run-time `<name>_s<i>`; else the constant `strides`. */
void ts_cx_index(TsCxGen *x, const IrBuffer *b, const char *name, int global, const int64_t *strides,
                 IrExpr *const *idx, int nidx, TsLoc loc);
/* An expression. */
void ts_cx_expr(TsCxGen *x, const IrExpr *e);

/* Which LET variables are declared in the C scopes open at the moment,
 * so a LET re-binding a variable in the same scope assigns instead of
 * redeclaring.  Both code generators keep one. */
typedef struct TsCxScopes {
    TS_VEC(const IrVar *) declared; /* declared variables, innermost scope last */
    TS_VEC(int) start;              /* `declared.n` at the start of each open scope */
} TsCxScopes;
void ts_cx_scope_open(TsArena *a, TsCxScopes *sc);
void ts_cx_scope_close(TsCxScopes *sc);
/* Declared in the innermost open scope? */
bool ts_cx_declared_here(const TsCxScopes *sc, const IrVar *v);
void ts_cx_declare(TsArena *a, TsCxScopes *sc, const IrVar *v);

#endif
