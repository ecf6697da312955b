/*
 * lower_copy_cuda.h — the CUDA lowering of T.copy from global to shared
 * memory into thread-level IR (vector and cp.async copies); see
 * lower_copy_cuda.c.
 */
#ifndef TS_LOWER_COPY_CUDA_H
#define TS_LOWER_COPY_CUDA_H

#include "op/op.h"

/* The thread-level lowering of the T.copy statement s (an IR_S_TILEOP of
 * kind TS_OP_COPY), or NULL when it does not apply (not global -> shared,
 * a cast, a row that no 4-byte vector divides, vectors switched off): the
 * generic lowering then runs.  Copies marked async (pipeline producers)
 * become cp.async copies with no barrier around them; the others are
 * plain vector copies between two explicit barriers. */
IrStmt *ts_cuda_lower_copy(TsLowerCtx *cx, const IrStmt *s);

#endif
