/*
 * launch.h — running a compiled kernel on host tensors.
 *
 * ts_launch is the body of the public ts_kernel_launch: it checks the
 * arguments against the kernel's parameters (count, dtypes, ranks,
 * constant extents) and binds run-time shape variables from the tensors'
 * extents (consistently across parameters), for every target alike.  Then
 * it hands over to the kernel's target:
 *   C:    fills the ABI argument struct of target/c/c_target.h, asks the
 *         module for the grid and hands the blocks to the scheduler
 *         (ts_c_run);
 *   CUDA: evaluates the grid extents on the host and calls ts_cuda_run
 *         (target/cuda/cuda_target.h) with the TsLaunchArgs below.
 */
#ifndef TS_LAUNCH_H
#define TS_LAUNCH_H

#include "core.h"

/* The checked and bound arguments of one launch, as a target's runner
 * gets them.  All arrays are owned by the launcher and live for the call. */
typedef struct TsLaunchArgs {
    int nparams;                   /* IrKernel.params.n */
    void *const *data;             /* [nparams] tensor data, or a pointer to the
                                      scalar's value stored in the param's dtype */
    const int64_t *const *shape;   /* [nparams] extents (NULL for scalars) */
    const int64_t *const *strides; /* [nparams] element strides (NULL for scalars) */
    const int64_t *shape_vars;     /* values of IrKernel.shape_vars, in order */
    int nshape_vars;               /* IrKernel.shape_vars.n */
    int64_t grid[3];               /* grid extents x, y, z evaluated on the host */
    int rank, nranks;              /* distributed: this rank and the number of ranks
                                      (0 and 0 = rank 0 of 1 outside a world) */
} TsLaunchArgs;

/* Errors are appended to k->ctx->diag (no longjmp) and returned:
 * TS_ERR_ARGCOUNT, TS_ERR_DTYPE, TS_ERR_SHAPE, TS_ERR_INVALID (NULL data),
 * TS_ERR_RUNTIME / TS_ERR_NOMEM from running the blocks. */
TsStatus ts_launch(TsKernel *k, const TsTensor *args, int nargs);

/* The same checks, then a launch on device-resident tensors queued on
 * `stream` (CUDA target only; see ts_kernel_launch_device). */
TsStatus ts_launch_device(TsKernel *k, const TsTensor *args, int nargs, void *stream);

/* The same checks as ts_launch_device, then a prepared launch (the public
 * TsPlan, target/cuda/cuda_target.h's ts_cuda_plan_device) instead of a
 * launch: CUDA target, one kernel (not the rest of a chain). */
TsStatus ts_launch_prepare(TsKernel *k, const TsTensor *args, int nargs, struct TsPlan **plan);

/* T.alloc_global workspaces (IrBuffer.workspace) of a launch of k's chain:
 * the caller's arguments followed by one tensor per workspace (row-major,
 * not zero-filled, as TileLang's), in host memory or, `device` 1, in
 * device memory of k's module.  The chain's kernels all run on `args`
 * (their parameters are shared); ts_workspaces_free releases what was
 * allocated.  A kernel without workspaces, or a call with another argument
 * count (the launch then reports it), gets the caller's arguments back. */
typedef struct TsWorkspaces {
    const TsTensor *args;   /* what the chain is launched with */
    int nargs;              /* their count */
    TsTensor *own;          /* the array args points at when workspaces were added, else NULL */
    int64_t *shapes;        /* the workspaces' extents (8 per workspace) */
    void **mem;             /* per workspace: host memory, or a device address */
    int n;                  /* workspaces */
    TsKernel *k;            /* the kernel (its CUDA module for device memory) */
    int device;             /* 1: mem holds device addresses */
} TsWorkspaces;
TsStatus ts_workspaces_alloc(TsKernel *k, const TsTensor *args, int nargs, TsDiag *d, int device, TsWorkspaces *w);
void ts_workspaces_free(TsWorkspaces *w);
/* Parameters the caller passes (those before the workspaces). */
int ts_launch_user_params(const IrKernel *ir);

/* The same as one rank of a distributed launch (comm/world.h): errors go
 * to d, the kernel sees env's rank, heap table and failure sink.  env NULL:
 * rank 0 of 1 with a private sink (what ts_launch does). */
struct TsRankEnv;
TsStatus ts_launch_env(TsKernel *k, const TsTensor *args, int nargs, TsDiag *d,
                       const struct TsRankEnv *env);

#endif
