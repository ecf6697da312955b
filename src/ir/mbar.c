/*
 * mbar.c — the mbarrier model of mbar.h (see there); one function so that
 * every sequential runner of IR_S_MBAR agrees.
 */
#include "ir/mbar.h"

const char *ir_mbar_step(IrMbarState *m, IrMbarOp op, int64_t value, int64_t arrivals) {
    if (op == IR_MBAR_INIT) {
        if (m->init) return "initialised twice";
        if (value <= 0 || value >= (1 << 20)) return "an arrive count outside [1, 2^20)";
        m->expected = m->pending = value;
        m->phase = 0;
        m->init = true;
        return NULL;
    }
    if (!m->init) return "used before it is initialised";
    switch (op) {
    case IR_MBAR_ARRIVE_ONE: arrivals = 1; /* fall through */
    case IR_MBAR_ARRIVE:
    case IR_MBAR_ARRIVE_ASYNC: /* (a sequential run's copies have landed) */
        if (arrivals > m->pending) return "more arrivals than its phase expects";
        m->pending -= arrivals;
        if (!m->pending) {
            m->phase++;
            m->pending = m->expected;
        }
        return NULL;
    case IR_MBAR_EXPECT_TX:
        if (value < 0) return "a negative transaction count";
        return NULL; /* the bytes of a sequential run's copies have already landed */
    case IR_MBAR_WAIT:
        if (value != 0 && value != 1) return "a parity other than 0 or 1";
        return (m->phase & 1) != value ? NULL : "would block";
    case IR_MBAR_INIT: break;
    }
    return NULL;
}
