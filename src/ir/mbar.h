/*
 * mbar.h — the meaning of an mbarrier object (IR_S_MBAR), as the C target,
 * the block-level interpreter and the thread-level interpreter run it.
 *
 * PTX ISA, "Parallel Synchronization and Communication Instructions:
 * mbarrier": an mbarrier counts the arrivals still pending in its current
 * phase; mbarrier.init sets the count expected per phase and phase 0; an
 * arrive takes one off; when the count reaches zero (and, on sm_90, the
 * transaction bytes announced by expect_tx have all completed) the phase
 * completes, its parity flips and the count starts again.  A wait on
 * parity p (test_wait/try_wait.parity) returns once the phase of parity p
 * has completed, i.e. while the current phase's parity differs from p (so
 * a wait on the parity of the phase before phase 0, 1, returns at once:
 * the producer's first "slot free" wait in the TileLang examples).
 *
 * The model here is that rule with counts that a caller may take several
 * at a time (a T.ws role of n threads arriving in uniform code is n
 * arrivals in one step) and with the errors a sequential run can prove:
 * use before init, a second init, more arrivals than a phase expects, and
 * a wait that cannot return because the phase it needs is not complete
 * (in a sequential run of the roles nothing else could complete it).
 * Transaction bytes complete at once: the C target's copies are done when
 * the statement ends.
 */
#ifndef TS_IR_MBAR_H
#define TS_IR_MBAR_H

#include "ir/ir.h"

typedef struct IrMbarState {
    int64_t expected;  /* arrivals per phase (the init count) */
    int64_t pending;   /* arrivals still missing in the current phase */
    int64_t phase;     /* phases completed so far (its low bit: the current phase's parity) */
    bool init;         /* mbarrier.init ran */
} IrMbarState;

/* One operation: `value` is INIT's count, EXPECT_TX's bytes or WAIT's
 * parity; `arrivals` is how many threads ARRIVE stands for.  Returns NULL,
 * or what is wrong (a static string): for WAIT, "would block" means the
 * phase of that parity has not completed. */
const char *ir_mbar_step(IrMbarState *m, IrMbarOp op, int64_t value, int64_t arrivals);

#endif
