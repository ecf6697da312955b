/*
 * mbar_cuda.h — the CUDA target's mbarrier and named-barrier helpers
 * (mbar_cuda.c has the essay).
 */
#ifndef TS_TARGET_CUDA_MBAR_CUDA_H
#define TS_TARGET_CUDA_MBAR_CUDA_H

#include "base/base.h"

/* Device functions ts_mbar_init/arrive/expect_tx/wait and ts_bar_sync,
 * spelled for architecture sm (80, 90, ...). */
void ts_cuda_mbar_prelude(TsBuf *o, int sm);

#endif
