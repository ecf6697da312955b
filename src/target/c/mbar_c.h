/*
 * mbar_c.h — the C target's mbarrier helpers (mbar_c.c has the essay).
 */
#ifndef TS_TARGET_C_MBAR_C_H
#define TS_TARGET_C_MBAR_C_H

#include "base/base.h"

/* The generated code's ts_mbar / ts_mbar_fail (after the prelude). */
void ts_c_mbar_prelude(TsBuf *o);

#endif
