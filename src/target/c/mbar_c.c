/*
 * mbar_c.c — mbarrier objects and T.ws roles on the C target.
 *
 * The C target runs a block as one thread of control (doc/ARCHITECTURE.md):
 * a T.ws role's body is run once, as the uniform code of its threads, and
 * its tile ops are the role's collective work, so running the roles one
 * after another in program order is exact as long as no wait has to let
 * another role run first.  The TileLang producer/consumer pipelines have
 * that shape (in each iteration the producer's role comes first, and its
 * "slot free" wait on the phase before phase 0 returns at once), so they
 * run here unchanged.  A wait whose phase is not complete when it is
 * reached could only be released by code later in program order: the
 * block stops with an error naming the mbarrier, its parity and the
 * source line.  Kernels whose roles wait on each other that way are run
 * with the block's threads as coroutines (IrKernel.thread_coro, chosen by
 * thread_loops_c for roles that wait on mbarriers; target/c/threads_c.c):
 * each role's block-level code is run by its first thread, and a wait
 * spins (ts_mbar's arrivals argument -1: "" while the phase is not
 * complete), yielding, up to the wait timeout.
 *
 * Each mbarrier's state is packed into its own 8-byte element of the
 * barrier buffer (the scratch area, zeroed at the buffer's allocation):
 * the count per phase, the count still pending and the phases completed,
 * 21 bits each, and an "initialised" bit -- the rules are ir/mbar.c's
 * (ir_mbar_step), written out again in C here because the generated code
 * cannot call into the library.  An arrive in uniform code stands for
 * every thread that runs it: the role's (or the block's) thread count.
 */
#include "target/c/mbar_c.h"

void ts_c_mbar_prelude(TsBuf *o) {
    ts_buf_puts(o,
                "/* mbarrier state: count per phase | pending << 21 | phases done << 42 | init << 63 */\n"
                "TS_INL const char *ts_mbar(uint64_t *m, int op, int64_t v, int64_t n) {\n"
                "    uint64_t s = *m, ex = s & 0x1fffffu, pe = (s >> 21) & 0x1fffffu, ph = (s >> 42) & 0x1fffffu;\n"
                "    if (op == 0) {\n"
                "        if (s >> 63) return \"initialised twice\";\n"
                "        if (v <= 0 || v >= (1 << 20)) return \"an arrive count outside [1, 2^20)\";\n"
                "        ex = pe = (uint64_t)v;\n"
                "        ph = 0;\n"
                "    } else if (!(s >> 63)) {\n"
                "        return \"used before it is initialised\";\n"
                "    } else if (op == 1) {\n"
                "        if ((uint64_t)n > pe) return \"more arrivals than its phase expects\";\n"
                "        pe -= (uint64_t)n;\n"
                "        if (!pe) { ph = (ph + 1) & 0x1fffffu; pe = ex; }\n"
                "    } else if (op == 2) {\n"
                "        if (v < 0) return \"a negative transaction count\";\n"
                "    } else {\n"
                "        if (v != 0 && v != 1) return \"a parity other than 0 or 1\";\n"
                "        if ((int64_t)(ph & 1) == v && n < 0) return \"\"; /* thread_coro: not yet, spin */\n"
                "        if ((int64_t)(ph & 1) == v)\n"
                "            return \"the wait would block: its phase is not complete, and the C target runs \"\n"
                "                   \"T.ws roles one after another, in program order\";\n"
                "    }\n"
                "    *m = ex | pe << 21 | ph << 42 | (uint64_t)1 << 63;\n"
                "    return 0;\n"
                "}\n"
                "static void ts_mbar_fail(const TsCArgs *ts_a, const TsCBlock *ts_b, const char *site, const char *src,\n"
                "                         int64_t i, const char *why) __attribute__((noinline, cold));\n"
                "static void ts_mbar_fail(const TsCArgs *ts_a, const TsCBlock *ts_b, const char *site, const char *src,\n"
                "                         int64_t i, const char *why) {\n"
                "    char m[768];\n"
                "    snprintf(m, sizeof m, \"%s[%lld]: %s\", site, (long long)i, why);\n"
                "    if (ts_a->fault) ts_a->fault(ts_a->fault_ctx, m, src, -1, 0, 0, ts_b->idx);\n"
                "}\n\n");
}
