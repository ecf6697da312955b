/*
 * elab.h — elaboration: from the syntax tree of a TileLang file to one
 * IrKernel.
 *
 * The file is a Python module.  Elaboration runs the part of it that
 * TileLang runs in Python — the kernel factory `def`, whose parameters are
 * compile-time values — with a small interpreter over constants (ints,
 * floats, bools, strings, dtypes, tuples, lists).  When the factory returns
 * its `@T.prim_func`, the prim_func's body is walked in "kernel mode":
 * statements there build IR instead of running, except that Python-level
 * constants still fold at compile time (an `if` on a constant picks a side,
 * arithmetic on constants is done here).
 */
#ifndef TS_ELAB_H
#define TS_ELAB_H

#include "front/ast.h"
#include "ir/ir.h"

/* Elaborate `entry` of module m with the given -D values into a new kernel
 * allocated in arena a.  User errors go through d (ts_fail_at).  With
 * lenient_defines, -D names the entry does not take are ignored (so one set
 * of -D values can serve a kernel and its naive reference). */
IrKernel *ts_elaborate(TsDiag *d, TsArena *a, const AstModule *m, const char *entry,
                       const TsDefine *defs, int ndefs, bool lenient_defines);
/* The same for a known target: caps (the compile's capabilities) answer the
 * host queries a factory may make (torch.cuda.get_device_capability(),
 * tilelang.carver's get_num_sms()); with NULL they are errors. */
struct TsCaps;
IrKernel *ts_elaborate_for(TsDiag *d, TsArena *a, const AstModule *m, const char *entry,
                           const TsDefine *defs, int ndefs, bool lenient_defines, const struct TsCaps *caps);

#endif
