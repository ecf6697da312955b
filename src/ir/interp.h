/*
 * interp.h — a reference evaluator for tile IR.
 *
 * Runs a kernel body (or any statement) for one block on host data, one
 * statement at a time, the way the C target runs a block: sequentially, on
 * one CPU thread, T.Parallel loops as plain loops.  It exists so tests can
 * check lowerings and passes by executing their output and comparing with
 * a naive computation, without going through a code generator and a C
 * compiler.  It is slow and careful: every access is bounds-checked, local
 * buffers start out as NaN (floats) or a poison value (ints) so reads of
 * uninitialized memory show up, and errors are reported as TS_ERR_RUNTIME
 * through the diagnostic context (ts_fail_at, so callers need ts_try).
 *
 * Numbers: every buffer element is held as a double (int64 values beyond
 * 2^53 are not exact); stores round to the buffer's dtype (float16,
 * bfloat16 and float8 included), integer results wrap to their dtype;
 * float arithmetic is done in at least float32 precision (half types are
 * computed in float32 and rounded when stored or cast, as on the C target).
 * Its arithmetic is written independently of the constant folder in ir.c
 * so each can check the other.
 */
#ifndef TS_IR_INTERP_H
#define TS_IR_INTERP_H

#include "ir/ir.h"

typedef struct IrInterp IrInterp;

/* An evaluator for kernel k; its state lives in arena a, errors go to d. */
IrInterp *ir_interp_new(TsArena *a, TsDiag *d, const IrKernel *k);
/* Host data for a global buffer: row-major by its shape, or laid out by its
 * strides when it has them.  Not copied: results are written through. */
void ir_interp_bind_buffer(IrInterp *in, const IrBuffer *b, double *data);
/* Storage of n elements for a non-global buffer, supplied by the caller
 * instead of IR_S_ALLOC (the thread-level interpreter gives each simulated
 * thread its own view); an IR_S_ALLOC run later re-poisons it in place. */
void ir_interp_bind_storage(IrInterp *in, const IrBuffer *b, double *data, int64_t n);
/* The value of a scalar parameter, shape variable, thread or rank var. */
void ir_interp_bind_var(IrInterp *in, const IrVar *v, double value);
/* Run the kernel body as block (bx, by, bz). */
void ir_interp_run_block(IrInterp *in, int64_t bx, int64_t by, int64_t bz);
/* Run every block of the grid, in order. */
void ir_interp_run_grid(IrInterp *in);
/* Run one statement / evaluate one expression with the current bindings. */
void ir_interp_run(IrInterp *in, const IrStmt *s);
double ir_interp_eval(IrInterp *in, const IrExpr *e);
/* x rounded to how a float buffer of dtype dt stores it (as a cast does). */
double ir_interp_round(double x, TsDType dt);
/* Text printed by IR_S_PRINT statements so far. */
const char *ir_interp_output(IrInterp *in);
/* Number of statements executed (a rough cost measure for tests). */
int64_t ir_interp_steps(const IrInterp *in);
/* Frees the print buffer; everything else lives in the arena. */
void ir_interp_free(IrInterp *in);

#endif
