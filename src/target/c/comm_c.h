/*
 * comm_c.h — the C target's emitter of communication primitives
 * (comm_c.c), called by codegen_c.c through two hooks: the helpers once
 * per generated file that uses communication, and one C block per kept
 * TS_OP_COMM tile op.
 */
#ifndef TS_TARGET_C_COMM_C_H
#define TS_TARGET_C_COMM_C_H

#include "target/cexpr.h"

/* Appends the communication helpers (after the prelude and ABI). */
void ts_c_comm_prelude(TsBuf *o);
/* Emits the kept communication op s (IR_S_TILEOP, TS_OP_INST_COMM) at
 * indentation ind, through the shared expression emitter x. */
void ts_c_comm_emit(TsCxGen *x, const IrStmt *s, int ind);

#endif
