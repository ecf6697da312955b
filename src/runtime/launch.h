/*
 * launch.h — running a compiled kernel on host tensors (CPU target).
 *
 * ts_launch is the body of the public ts_kernel_launch: it checks the
 * arguments against the kernel's parameters (count, dtypes, ranks,
 * constant extents), binds run-time shape variables from the tensors'
 * extents (consistently across parameters), fills the ABI argument struct
 * of target/c/c_target.h, asks the module for the grid and hands the
 * blocks to the scheduler (ts_c_run).
 */
#ifndef TS_LAUNCH_H
#define TS_LAUNCH_H

#include "core.h"

/* Errors are appended to k->ctx->diag (no longjmp) and returned:
 * TS_ERR_ARGCOUNT, TS_ERR_DTYPE, TS_ERR_SHAPE, TS_ERR_INVALID (NULL data),
 * TS_ERR_RUNTIME / TS_ERR_NOMEM from running the blocks. */
TsStatus ts_launch(TsKernel *k, const TsTensor *args, int nargs);

#endif
