/*
 * mbar_cuda.c — mbarrier objects and named barriers in the generated CUDA.
 *
 * An mbarrier (T.alloc_barrier) is an 8-byte word of shared memory placed by
 * plan_smem; the IR says who does what (IR_S_MBAR: partition_threads gives
 * the init to one thread, insert_sync puts the block barrier between it and
 * the first use), so these helpers are one PTX instruction each (PTX ISA,
 * "mbarrier"):
 *   init       mbarrier.init.shared.b64 [a], count                (sm_80)
 *   arrive     mbarrier.arrive.shared.b64 state, [a]  -- release, CTA scope
 *   expect_tx  mbarrier.expect_tx.relaxed.cta.shared::cta.b64     (sm_90 only:
 *              transaction counts exist from sm_90 on)
 *   arrive_async  cp.async.mbarrier.arrive.shared.b64 [a], then arrive (sm_80):
 *              the first raises the phase's pending count by one and takes it
 *              off again once every cp.async the thread issued before has
 *              completed (no net change: the init counts stay those of plain
 *              arrives); the second is the thread's own arrival, a release
 *              for its ordinary stores as before.
 *   arrive_async_noinc  cp.async.mbarrier.arrive.noinc.shared.b64 [a] alone
 *              (IrStmt.mbar.noinc): the arrival made once the thread's
 *              cp.async have completed is the thread's one arrival (the init
 *              count includes it, PTX ISA), with no release of the thread's
 *              other stores: pass ws_async_copy uses it only where the
 *              thread has none.  compute-sanitizer's synccheck (2025.3 and
 *              before, code from CUDA 13.0 compilers) takes every
 *              cp.async.mbarrier.arrive for a plain arrive, so the form
 *              above looks like two arrivals of one thread in a phase
 *              ("Missing wait"; its 2025.4 release notes call that a false
 *              positive, fixed with 13.1 compilers); this one does not.
 *   wait       a loop on mbarrier.try_wait.parity (sm_90: the instruction
 *              itself suspends the thread for a while) or test_wait.parity
 *              (sm_80), acquire at CTA scope: what the arriving threads wrote
 *              before their arrive is visible after the wait.
 * Named barriers (T.sync_threads(id, count), insert_sync's barrier inside a
 * T.ws role) are `bar.sync id, count` (count a multiple of 32): that is
 * barrier.sync.aligned, whose threads must all execute the same barrier
 * instruction.  One that IR_S_BARRIER marks `unaligned` (reached from
 * different instructions: each unit's copy of a block barrier in the unit
 * collectives, a run-time id) is the plain `barrier.sync id, count`
 * (ts_bar_sync_any); compute-sanitizer's synccheck reports the aligned form
 * there ("Divergent thread(s) in block").
 */
#include "target/cuda/mbar_cuda.h"

void ts_cuda_mbar_prelude(TsBuf *o, int sm) {
    ts_buf_puts(o,
                "TS_DEV ts_u32 ts_smem_addr(const void *p) { return (ts_u32)__cvta_generic_to_shared(p); }\n"
                "TS_DEV void ts_mbar_init(ts_u64 *b, ts_u32 count) {\n"
                "    asm volatile(\"mbarrier.init.shared.b64 [%0], %1;\" :: \"r\"(ts_smem_addr(b)), \"r\"(count) : \"memory\");\n"
                "}\n"
                "TS_DEV void ts_mbar_arrive(ts_u64 *b) {\n"
                "    asm volatile(\"{\\n.reg .b64 st;\\nmbarrier.arrive.shared.b64 st, [%0];\\n}\" :: \"r\"(ts_smem_addr(b)) : \"memory\");\n"
                "}\n");
    if (sm >= 80)
        ts_buf_puts(o,
                    "TS_DEV void ts_mbar_arrive_async(ts_u64 *b) {\n"
                    "    asm volatile(\"cp.async.mbarrier.arrive.shared.b64 [%0];\" :: \"r\"(ts_smem_addr(b)) : \"memory\");\n"
                    "    ts_mbar_arrive(b);\n"
                    "}\n"
                    "TS_DEV void ts_mbar_arrive_async_noinc(ts_u64 *b) {\n"
                    "    asm volatile(\"cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\" :: \"r\"(ts_smem_addr(b)) : \"memory\");\n"
                    "}\n");
    if (sm >= 90)
        ts_buf_puts(o,
                    "TS_DEV void ts_mbar_expect_tx(ts_u64 *b, ts_u32 bytes) {\n"
                    "    asm volatile(\"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\" :: \"r\"(ts_smem_addr(b)), \"r\"(bytes) : \"memory\");\n"
                    "}\n");
    ts_buf_printf(o,
                  "TS_DEV void ts_mbar_wait(ts_u64 *b, ts_u32 parity) {\n"
                  "    ts_u32 a = ts_smem_addr(b), done;\n"
                  "    do {\n"
                  "        asm volatile(\"{\\n.reg .pred p;\\nmbarrier.%s.parity.shared.b64 p, [%%1], %%2;\\nselp.u32 %%0, 1, 0, p;\\n}\"\n"
                  "                     : \"=r\"(done) : \"r\"(a), \"r\"(parity) : \"memory\");\n"
                  "    } while (!done);\n"
                  "}\n",
                  sm >= 90 ? "try_wait" : "test_wait");
    ts_buf_puts(o,
                "TS_DEV void ts_bar_sync(ts_u32 id, ts_u32 count) {\n"
                "    asm volatile(\"bar.sync %0, %1;\" :: \"r\"(id), \"r\"(count) : \"memory\");\n"
                "}\n"
                "TS_DEV void ts_bar_sync_any(ts_u32 id, ts_u32 count) {\n"
                "    asm volatile(\"barrier.sync %0, %1;\" :: \"r\"(id), \"r\"(count) : \"memory\");\n"
                "}\n\n");
}
