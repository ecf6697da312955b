/*
 * lower_gemm_cuda.h — the CUDA target's instruction choice for T.gemm
 * (tensor cores or the generic loops); see lower_gemm_cuda.c.
 */
#ifndef TS_LOWER_GEMM_CUDA_H
#define TS_LOWER_GEMM_CUDA_H

#include "op/op.h"

/* The T.gemm statement s kept for the CUDA code generator, marked
 * TS_OP_INST_MMA_SYNC, when tensor cores can run it; NULL otherwise (the
 * generic lowering of op/gemm.c then runs).  Operand shapes that do not
 * agree are an error at s either way. */
IrStmt *ts_cuda_lower_gemm(TsLowerCtx *cx, const IrStmt *s);

#endif
