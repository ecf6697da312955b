/*
 * codegen_cuda.c — lowered tile IR -> one CUDA C++ translation unit.
 *
 * This is the first, simple CUDA backend: plain SIMT code, correct before
 * fast.  It starts from the same lowered IR as the C target (every tile
 * op already a loop nest of loads and stores), so everything the C
 * target runs, this runs, with the same numerics.
 *
 * Execution model.  One CUDA thread block runs one block of the grid;
 * blockDim.x is threads[0] * threads[1] * threads[2] (threads are
 * numbered flat; T.get_thread_binding(axis) recovers the axis from the
 * flat id).  The IR it receives is entirely thread-level (the CUDA
 * passes decide, this file prints):
 *
 *   uniform code  every statement outside a thread range runs on every
 *                 thread with the same values (lets, private stores, uniform
 *                 loops and ifs, tensor-core gemm calls, communication
 *                 ops, async commits and waits); printed as it is;
 *   thread ranges IR_FOR_THREAD: `{ const int t = ts_tid; if (t in range)
 *                 { body } }`; partition_threads made them from T.Parallel
 *                 nests (cyclic over the threads, or IR vector copies),
 *                 from uniform stores (a one-thread role) and from
 *                 thread-dependent control flow; layout inference and the
 *                 copy lowering made the others;
 *   barriers      IR_S_BARRIER, placed by insert_sync only where threads
 *                 share data, printed as __syncthreads() (marked release,
 *                 in a blocking kernel, with a __threadfence() first: a
 *                 release of the block's global writes before a flag store).
 *
 * No uniformity analysis, thread guards or barrier placement happen here;
 * a T.Parallel loop outside a thread range is an internal error (the
 * passes did not run).  Even the blocking kernels' flag loops are IR
 * (partition_threads: one thread reads the flag into a shared word, the
 * block decides on it; a while marked `acquire` prints a fence after it).
 *
 * Memory.  Shared buffers, and fragments layout inference left without a
 * layout, live in dynamic shared memory at the offsets (and with the row
 * padding) the pass plan_smem recorded in the IR; its total is reported to the build,
 * which raises the kernel's dynamic shared-memory limit past 48 KB when
 * needed.  Local and var buffers are per-thread arrays (registers or
 * local memory).  Global buffers are kernel parameters: a pointer plus
 * one run-time stride per dimension (any strided view works), indexed in
 * 64-bit arithmetic.
 *
 * Types.  The same compute types as the C target (integers in 64 bits,
 * float16/bfloat16/float8 stored as raw bits and computed in float), so
 * both targets round the same way.  No CUDA header is included: the
 * prelude below defines fixed-width types and the conversions, with
 * inline PTX for float16 (cvt.f32.f16 / cvt.rn.f16.f32) and bfloat16
 * (a shift to widen; cvt.rn.bf16.f32 on sm_80 and later).  Math uses
 * CUDA's built-in functions (expf, exp2f, __frsqrt_rn, ...).  Atomics use
 * atomicAdd where the hardware has it and a compare-and-swap loop on the
 * enclosing 32-bit word for 8- and 16-bit types.
 *
 * Blocking kernels (IrKernel.may_block: blocks that wait for each other
 * through global memory), as pass poll_marks marked them: loads marked
 * acquire (global loads inside while loops) are volatile, and a
 * __threadfence() follows a loop partition_threads marked acquire (its
 * condition reads global memory); stores marked release (global stores)
 * are volatile and preceded by __threadfence(), and so are block barriers
 * marked release (a flag one thread stores after insert_sync's barrier
 * follows the block's data).  partition_threads also makes a uniform polling loop
 * one thread's read broadcast through a shared word, so every thread
 * leaves the loop in the same iteration.  Such kernels need every
 * block they wait on to be resident: the launch does not guarantee it.
 *
 * Tensor cores.  A T.gemm that tensor cores can run (op/gemm.c decides:
 * float16/bfloat16 A and B, float32 C, all in shared or fragment buffers,
 * M % 16, N % 8, K % 16, whole warps) is not lowered to loops: it arrives
 * here as a tile op marked TS_OP_INST_MMA_SYNC.  emit_tileop calls a
 * device function emitted before the kernel (ts_cuda_mma_emit), one per
 * distinct shape/stride/alignment (insert_sync orders it with the
 * accesses around it, as a collective of the whole block): C is cut into
 * sub-tiles handed to the warps round-robin (ts_cuda_mma_plan); a warp
 * loads its sub-tile's accumulators from shared memory into registers,
 * runs the K loop with mma.sync.m16n8k16 (fragments by ldmatrix, .trans
 * where the stored layout is the transpose of the fragment's, or by
 * 16-bit loads when rows are not 16-byte aligned), and stores them back;
 * clear_accum starts from zero instead of loading.  Before sm_80 the same
 * function takes a scalar path.  C stays in shared memory between calls:
 * register-resident fragments wait for layout inference.
 *
 * Where later work goes.  The generator is organised per statement kind
 * (emit_for / emit_thread_range / emit_if / emit_while / emit_store /
 * emit_atomic / emit_let / emit_print / emit_tileop), so each faster path
 * replaces one of them or is tried first:
 *   - tensor cores, next steps: accumulators kept in registers across
 *     T.gemm calls (layout inference), swizzled shared tiles (ldmatrix
 *     without bank conflicts), cp.async pipelining, wgmma on sm_90a;
 *   - layout inference: fragments with an IrLayout become per-thread
 *     register arrays (done: layout_inference.c writes the thread-level
 *     code, `bufs` gives those buffers local storage);
 *   - swizzle (IrBuffer.swizzle): emit_index applies the XOR to shared
 *     offsets;
 *   - cp.async / TMA and pipelining: T.Pipelined loops become a prologue
 *     and steady state with multi-buffered shared tiles (IrBuffer.stages
 *     is already honoured in the size computation), copies become async
 *     copy statements and the barriers here become mbarrier waits;
 *   - vectorized accesses beyond plain copies (casts, fills, elementwise
 *     bodies): today partition_threads makes IR vector copies of plain
 *     same-dtype copy nests only (casting copies move element by element).
 *
 * Names are `<ir name>_<id>` for IR variables and buffers and `ts_*` for
 * the generator's own, as in the C target.
 */
#include "op/comm.h"
#include "target/cuda/comm_cuda.h"
#include "target/cuda/mbar_cuda.h"
#include "ir/layout.h"
#include "ir/walk.h"
#include "target/cuda/cuda_target.h"
#include "target/cexpr.h"

#include "op/op.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the prelude: types and helpers every generated file carries -------- */

#define CP_ASYNC_CG "cp.async.cg.shared.global"
static const char *const prelude[] = {
    "typedef signed char ts_i8;\ntypedef unsigned char ts_u8;\n",
    "typedef short ts_i16;\ntypedef unsigned short ts_u16;\n",
    "typedef int ts_i32;\ntypedef unsigned int ts_u32;\n",
    "typedef long long ts_i64;\ntypedef unsigned long long ts_u64;\n",
    "#define TS_DEV static __device__ __forceinline__\n",
    "#define TS_INF_F __int_as_float(0x7f800000)\n",
    "#define TS_NAN_F __int_as_float(0x7fffffff)\n",
    "#define TS_INF_D __longlong_as_double(0x7ff0000000000000LL)\n",
    "#define TS_NAN_D __longlong_as_double(0x7ff8000000000000LL)\n\n",
    /* async global -> shared copies (cp.async, sm_80+; a plain copy before):
     * src_ok false zero-fills the destination without reading (src-size 0) */
    "template <int N> TS_DEV void ts_cp_async(void *dst, const void *src, bool src_ok) {\n"
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
    "    unsigned d = (unsigned)__cvta_generic_to_shared(dst);\n"
    "    if (N == 16)\n"
    "        asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\" :: \"r\"(d), \"l\"(src), \"r\"(src_ok ? 16 : 0) : \"memory\");\n"
    "    else\n"
    "        asm volatile(\"cp.async.ca.shared.global [%0], [%1], %2, %3;\" :: \"r\"(d), \"l\"(src), \"n\"(N), \"r\"(src_ok ? N : 0) : \"memory\");\n"
    "#else\n"
    "    for (int i = 0; i < N; i++) ((unsigned char *)dst)[i] = src_ok ? ((const unsigned char *)src)[i] : 0;\n"
    "#endif\n"
    "}\n"
    "TS_DEV void ts_cp_async_commit() {\n"
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
    "    asm volatile(\"cp.async.commit_group;\" ::: \"memory\");\n"
    "#endif\n"
    "}\n"
    "template <int N> TS_DEV void ts_cp_async_wait() {\n"
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
    "    asm volatile(\"cp.async.wait_group %0;\" :: \"n\"(N) : \"memory\");\n"
    "#endif\n"
    "}\n"
    /* warp shuffles (IR_SHFL_XOR; the lane mask arrives as a float) */
    "TS_DEV float ts_shfl_xor_f(float v, float m) { return __shfl_xor_sync(0xffffffffu, v, (int)m); }\n"
    "TS_DEV double ts_shfl_xor_d(double v, double m) { return __shfl_xor_sync(0xffffffffu, v, (int)m); }\n"
    /* 16-byte-chunk XOR swizzle of a shared-memory element offset (IrSwizzle:
     * bits [M, M+B) are XORed with bits [M+S, M+S+B)) */
    "#define TS_SWZ(o, B, M, S) ((o) ^ ((((o) >> ((M) + (S))) & ((1 << (B)) - 1)) << (M)))\n\n",
    /* float16 and bfloat16 */
    "TS_DEV float ts_h2f(ts_u16 h) {\n"
    "    float f;\n"
    "    asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h));\n"
    "    return f;\n"
    "}\n"
    "TS_DEV ts_u16 ts_f2h(float f) {\n"
    "    ts_u16 h;\n"
    "    asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f));\n"
    "    return h;\n"
    "}\n"
    "TS_DEV float ts_bf2f(ts_u16 h) { return __uint_as_float((ts_u32)h << 16); }\n"
    "TS_DEV ts_u16 ts_f2bf(float f) {\n"
    "#if __CUDA_ARCH__ >= 800\n"
    "    ts_u16 h;\n"
    "    asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f));\n"
    "    return h;\n"
    "#else\n"
    "    ts_u32 x = __float_as_uint(f);\n"
    "    if ((x & 0x7fffffffu) > 0x7f800000u) return (ts_u16)((x >> 16) | 0x40u);\n"
    "    return (ts_u16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);\n"
    "#endif\n"
    "}\n"
    /* two floats to a 32-bit word of two 16-bit values, lo in the low half
     * (converting vector copies; cvt's f16x2/bf16x2 forms put their first
     * operand in the upper half) */
    "TS_DEV ts_u32 ts_f2h2(float lo, float hi) {\n"
    "#if __CUDA_ARCH__ >= 800\n"
    "    ts_u32 r;\n"
    "    asm(\"cvt.rn.f16x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo));\n"
    "    return r;\n"
    "#else\n"
    "    return (ts_u32)ts_f2h(lo) | ((ts_u32)ts_f2h(hi) << 16);\n"
    "#endif\n"
    "}\n"
    "TS_DEV ts_u32 ts_f2bf2(float lo, float hi) {\n"
    "#if __CUDA_ARCH__ >= 800\n"
    "    ts_u32 r;\n"
    "    asm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo));\n"
    "    return r;\n"
    "#else\n"
    "    return (ts_u32)ts_f2bf(lo) | ((ts_u32)ts_f2bf(hi) << 16);\n"
    "#endif\n"
    "}\n",
    /* float8: exact decode; encode rounds to nearest even and saturates to
     * the largest finite value (CUDA's satfinite), NaN stays NaN */
    "TS_DEV float ts_fp8_dec(ts_u8 v, int mbits, int bias, int ieee) {\n"
    "    int e = (v & 0x7f) >> mbits, m = v & ((1 << mbits) - 1), emax = 0x7f >> mbits;\n"
    "    float f;\n"
    "    if (ieee && e == emax) f = m ? TS_NAN_F : TS_INF_F;\n"
    "    else if (!ieee && e == emax && m == (1 << mbits) - 1) f = TS_NAN_F;\n"
    "    else if (e == 0) f = ldexpf((float)m, 1 - bias - mbits);\n"
    "    else f = ldexpf((float)(m + (1 << mbits)), e - bias - mbits);\n"
    "    return (v & 0x80) ? -f : f;\n"
    "}\n"
    "TS_DEV ts_u8 ts_fp8_enc(float f, int mbits, int bias, float maxv, ts_u8 nan) {\n"
    "    ts_u8 s = (__float_as_uint(f) >> 31) ? 0x80 : 0;\n"
    "    float a = fabsf(f), v;\n"
    "    int ex, code;\n"
    "    if (f != f) return (ts_u8)(s | nan);\n"
    "    if (a >= maxv) v = maxv;\n"
    "    else {\n"
    "        frexpf(a, &ex);\n"
    "        ex -= 1;\n"
    "        if (ex < 1 - bias) ex = 1 - bias;\n"
    "        float q = ldexpf(1.0f, ex - mbits);\n"
    "        v = rintf(a / q) * q;\n"
    "        if (v > maxv) v = maxv;\n"
    "    }\n"
    "    if (v < ldexpf(1.0f, 1 - bias)) code = (int)(v / ldexpf(1.0f, 1 - bias - mbits));\n"
    "    else {\n"
    "        frexpf(v, &ex);\n"
    "        ex -= 1;\n"
    "        code = ((ex + bias) << mbits) | (int)(ldexpf(v, mbits - ex) - (float)(1 << mbits));\n"
    "    }\n"
    "    return (ts_u8)(s | code);\n"
    "}\n"
    "TS_DEV float ts_e4m3_2f(ts_u8 v) { return ts_fp8_dec(v, 3, 7, 0); }\n"
    "TS_DEV ts_u8 ts_f2e4m3(float f) { return ts_fp8_enc(f, 3, 7, 448.0f, 0x7f); }\n"
    "TS_DEV float ts_e5m2_2f(ts_u8 v) { return ts_fp8_dec(v, 2, 15, 1); }\n"
    "TS_DEV ts_u8 ts_f2e5m2(float f) { return ts_fp8_enc(f, 2, 15, 57344.0f, 0x7f); }\n",
    /* integer division: C (`/`) and Python (`//`, `%`); zero divisor -> 0 */
    "TS_DEV ts_i64 ts_div_i(ts_i64 a, ts_i64 b) {\n"
    "    if (b == 0) return 0;\n"
    "    if (b == -1) return (ts_i64)(0ull - (ts_u64)a);\n"
    "    return a / b;\n"
    "}\n"
    "TS_DEV ts_i64 ts_fdiv_i(ts_i64 a, ts_i64 b) {\n"
    "    if (b == 0) return 0;\n"
    "    if (b == -1) return (ts_i64)(0ull - (ts_u64)a);\n"
    "    ts_i64 q = a / b;\n"
    "    if (a % b != 0 && ((a < 0) != (b < 0))) q--;\n"
    "    return q;\n"
    "}\n"
    "TS_DEV ts_i64 ts_fmod_i(ts_i64 a, ts_i64 b) {\n"
    "    if (b == 0 || b == -1) return 0;\n"
    "    ts_i64 r = a % b;\n"
    "    if (r != 0 && ((r < 0) != (b < 0))) r += b;\n"
    "    return r;\n"
    "}\n"
    /* the same in 32 bits, for index32 kernels (IrKernel.index32) */
    "TS_DEV int ts_div_i32(int a, int b) {\n"
    "    if (b == 0) return 0;\n"
    "    if (b == -1) return (int)(0u - (unsigned)a);\n"
    "    return a / b;\n"
    "}\n"
    "TS_DEV int ts_fdiv_i32(int a, int b) {\n"
    "    if (b == 0) return 0;\n"
    "    if (b == -1) return (int)(0u - (unsigned)a);\n"
    "    int q = a / b;\n"
    "    if (a % b != 0 && ((a < 0) != (b < 0))) q--;\n"
    "    return q;\n"
    "}\n"
    "TS_DEV int ts_fmod_i32(int a, int b) {\n"
    "    if (b == 0 || b == -1) return 0;\n"
    "    int r = a % b;\n"
    "    if (r != 0 && ((r < 0) != (b < 0))) r += b;\n"
    "    return r;\n"
    "}\n"
    "TS_DEV int ts_min_i32(int a, int b) { return a < b ? a : b; }\n"
    "TS_DEV int ts_max_i32(int a, int b) { return a > b ? a : b; }\n"
    "TS_DEV ts_u32 ts_div_u(ts_u32 a, ts_u32 b) { return b ? a / b : 0u; }\n"
    "TS_DEV ts_u32 ts_mod_u(ts_u32 a, ts_u32 b) { return b ? a % b : 0u; }\n"
    "TS_DEV ts_u64 ts_div_U(ts_u64 a, ts_u64 b) { return b ? a / b : 0ull; }\n"
    "TS_DEV ts_u64 ts_mod_U(ts_u64 a, ts_u64 b) { return b ? a % b : 0ull; }\n"
    "TS_DEV float ts_fdiv_f(float a, float b) { return floorf(a / b); }\n"
    "TS_DEV double ts_fdiv_d(double a, double b) { return floor(a / b); }\n"
    "TS_DEV float ts_fmod_f(float a, float b) { return a - floorf(a / b) * b; }\n"
    "TS_DEV double ts_fmod_d(double a, double b) { return a - floor(a / b) * b; }\n",
    "TS_DEV ts_i64 ts_shl_i(ts_i64 a, ts_i64 b) { return (ts_i64)((ts_u64)a << (b & 63)); }\n"
    "TS_DEV ts_i64 ts_shr_i(ts_i64 a, ts_i64 b) { return a >> (b & 63); }\n"
    "TS_DEV ts_i64 ts_pow_i(ts_i64 a, ts_i64 b) {\n"
    "    ts_u64 r = 1, x = (ts_u64)a;\n"
    "    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;\n"
    "    for (; b; b >>= 1, x *= x)\n"
    "        if (b & 1) r *= x;\n"
    "    return (ts_i64)r;\n"
    "}\n"
    "TS_DEV ts_i64 ts_abs_i(ts_i64 a) { return a < 0 ? (ts_i64)(0ull - (ts_u64)a) : a; }\n"
    "TS_DEV ts_i64 ts_min_i(ts_i64 a, ts_i64 b) { return a < b ? a : b; }\n"
    "TS_DEV ts_i64 ts_max_i(ts_i64 a, ts_i64 b) { return a > b ? a : b; }\n"
    "TS_DEV ts_u32 ts_min_u(ts_u32 a, ts_u32 b) { return a < b ? a : b; }\n"
    "TS_DEV ts_u32 ts_max_u(ts_u32 a, ts_u32 b) { return a > b ? a : b; }\n"
    "TS_DEV ts_u64 ts_min_U(ts_u64 a, ts_u64 b) { return a < b ? a : b; }\n"
    "TS_DEV ts_u64 ts_max_U(ts_u64 a, ts_u64 b) { return a > b ? a : b; }\n"
    "TS_DEV float ts_min_f(float a, float b) { return fminf(a, b); }\n"
    "TS_DEV float ts_max_f(float a, float b) { return fmaxf(a, b); }\n"
    "TS_DEV double ts_min_d(double a, double b) { return fmin(a, b); }\n"
    "TS_DEV double ts_max_d(double a, double b) { return fmax(a, b); }\n"
    "TS_DEV float ts_sigmoid_f(float x) { return 1.0f / (1.0f + expf(-x)); }\n"
    /* fast math (IrKernel.fast_math): the MUFU approximation alone, subnormal
     * results flushed to zero (exp2f spends a compare and two multiplies per
     * call to keep them; PTX ISA, ex2.approx) */
    "TS_DEV float ts_ex2_ftz(float x) {\n"
    "    float y;\n"
    "    asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x));\n"
    "    return y;\n"
    "}\n"
    "TS_DEV float ts_exp_ftz(float x) { return ts_ex2_ftz(x * 1.44269504088896341f); }\n"
    /* float division as a times the approximate reciprocal of b (2 ulp, as
     * div.approx; the reciprocal is an ordinary asm value, so dividing many
     * values by one denominator computes it once) */
    "TS_DEV float ts_rcp_ftz(float x) {\n"
    "    float y;\n"
    "    asm(\"rcp.approx.ftz.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x));\n"
    "    return y;\n"
    "}\n"
    "TS_DEV float ts_fdiv_ftz(float a, float b) { return a * ts_rcp_ftz(b); }\n"
    "TS_DEV double ts_sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }\n"
    "TS_DEV bool ts_isnan_f(float x) { return x != x; }\n"
    "TS_DEV bool ts_isnan_d(double x) { return x != x; }\n"
    "TS_DEV bool ts_isinf_f(float x) { return fabsf(x) == TS_INF_F; }\n"
    "TS_DEV bool ts_isinf_d(double x) { return fabs(x) == TS_INF_D; }\n",
    /* atomic adds: the hardware's where it has one, else a compare-and-swap
     * loop on the aligned 32-bit word that holds the element */
    "TS_DEV void ts_atomic_add_f32(float *p, float v) { atomicAdd(p, v); }\n"
    "TS_DEV void ts_atomic_add_f64(double *p, double v) { atomicAdd(p, v); }\n"
    "TS_DEV void ts_atomic_add_i32(ts_i32 *p, ts_i64 v) { atomicAdd((int *)p, (int)v); }\n"
    "TS_DEV void ts_atomic_add_u32(ts_u32 *p, ts_u32 v) { atomicAdd((unsigned *)p, v); }\n"
    "TS_DEV void ts_atomic_add_i64(ts_i64 *p, ts_i64 v) {\n"
    "    atomicAdd((unsigned long long *)p, (unsigned long long)v);\n"
    "}\n"
    "TS_DEV void ts_atomic_add_u64(ts_u64 *p, ts_u64 v) { atomicAdd((unsigned long long *)p, v); }\n"
    "#define TS_ID(x) (x)\n"
    "#define TS_ATOMIC_NARROW(N, T, C, BITS, DEC, ENC) \\\n"
    "    TS_DEV void ts_atomic_add_##N(T *p, C v) { \\\n"
    "        ts_u64 a = (ts_u64)p; \\\n"
    "        unsigned *w = (unsigned *)(a & ~(ts_u64)3); \\\n"
    "        unsigned sh = (unsigned)(a & 3) * 8u, mask = ((1u << BITS) - 1u) << sh; \\\n"
    "        unsigned old = *(volatile unsigned *)w, prev; \\\n"
    "        do { \\\n"
    "            prev = old; \\\n"
    "            T cur = (T)((prev & mask) >> sh); \\\n"
    "            unsigned nw = (prev & ~mask) | (((unsigned)(ENC(DEC(cur) + v)) << sh) & mask); \\\n"
    "            old = atomicCAS(w, prev, nw); \\\n"
    "        } while (old != prev); \\\n"
    "    }\n"
    "TS_ATOMIC_NARROW(i8, ts_i8, ts_i64, 8, TS_ID, (ts_i8))\n"
    "TS_ATOMIC_NARROW(u8, ts_u8, ts_i64, 8, TS_ID, (ts_u8))\n"
    "TS_ATOMIC_NARROW(i16, ts_i16, ts_i64, 16, TS_ID, (ts_i16))\n"
    "TS_ATOMIC_NARROW(u16, ts_u16, ts_i64, 16, TS_ID, (ts_u16))\n"
    "TS_ATOMIC_NARROW(f16, ts_u16, float, 16, ts_h2f, ts_f2h)\n"
    "TS_ATOMIC_NARROW(bf16, ts_u16, float, 16, ts_bf2f, ts_f2bf)\n"
    "TS_ATOMIC_NARROW(e4m3, ts_u8, float, 8, ts_e4m3_2f, ts_f2e4m3)\n"
    "TS_ATOMIC_NARROW(e5m2, ts_u8, float, 8, ts_e5m2_2f, ts_f2e5m2)\n\n",
    NULL};

/*
 * What kernels with tensor-core gemms carry besides: the PTX wrappers the
 * gemm functions call.  Fragment layouts are those of the PTX ISA
 * ("Matrix Fragments for mma.m16n8k16 with floating point type";
 * "ldmatrix"), with g = lane / 4 and t = lane % 4:
 *   A (16 x 16, row-major, 4 regs of 2 halves, low half first):
 *     a0 = A[g][2t..2t+1], a1 = A[g+8][2t..], a2 = A[g][2t+8..], a3 = A[g+8][2t+8..]
 *   B (16 x 8, "col": 2 regs):  b0 = B[2t..2t+1][g], b1 = B[2t+8..2t+9][g]
 *   C, D (16 x 8 fp32, 4 regs): c0, c1 = C[g][2t], C[g][2t+1]; c2, c3 = row g+8
 *   ldmatrix .x4: lanes 8j..8j+7 give the 8 row addresses (16 bytes each)
 *     of 8x8 matrix j, and register j of lane l receives row l/4, elements
 *     2(l%4), 2(l%4)+1 of it; with .trans, of its transpose.
 * TS_HAS_MMA is 0 before sm_80 (no bf16 mma there): the gemm functions then
 * take a scalar path with the same data distribution.
 */
static const char mma_prelude[] =
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
    "#define TS_HAS_MMA 1\n"
    "#else\n"
    "#define TS_HAS_MMA 0\n"
    "#endif\n"
    "typedef struct __align__(8) { float x, y; } ts_f2;\n"
    "TS_DEV ts_u32 ts_pack2(ts_u16 lo, ts_u16 hi) { return (ts_u32)lo | ((ts_u32)hi << 16); }\n"
    "#if TS_HAS_MMA\n"
    "TS_DEV ts_u32 ts_smem_u32(const void *p) {\n"
    "    ts_u32 a;\n"
    "    asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\" : \"=r\"(a) : \"l\"(p));\n"
    "    return a;\n"
    "}\n"
    "TS_DEV void ts_ldsm_x4(ts_u32 *r, const ts_u16 *p) {\n"
    "    asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\"\n"
    "                 : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(ts_smem_u32(p)) : \"memory\");\n"
    "}\n"
    "TS_DEV void ts_ldsm_x4_t(ts_u32 *r, const ts_u16 *p) {\n"
    "    asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\"\n"
    "                 : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(ts_smem_u32(p)) : \"memory\");\n"
    "}\n"
    "TS_DEV void ts_ldsm_x2(ts_u32 *r, const ts_u16 *p) {\n"
    "    asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\"\n"
    "                 : \"=r\"(r[0]), \"=r\"(r[1]) : \"r\"(ts_smem_u32(p)) : \"memory\");\n"
    "}\n"
    "TS_DEV void ts_ldsm_x2_t(ts_u32 *r, const ts_u16 *p) {\n"
    "    asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\"\n"
    "                 : \"=r\"(r[0]), \"=r\"(r[1]) : \"r\"(ts_smem_u32(p)) : \"memory\");\n"
    "}\n"
    "#define TS_LDSM_U(NAME, SUFFIX) \\\n"
    "    TS_DEV void NAME(ts_u32 *r, ts_u32 addr) { \\\n"
    "        asm volatile(\"ldmatrix.sync.aligned.m8n8.x4\" SUFFIX \".shared.b16 {%0, %1, %2, %3}, [%4];\" \\\n"
    "                     : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(addr) : \"memory\"); \\\n"
    "    }\n"
    "TS_LDSM_U(ts_ldsm_x4_u, \"\")\n"
    "TS_LDSM_U(ts_ldsm_x4_tu, \".trans\")\n"
    "TS_DEV void ts_ldsm_x2_u(ts_u32 *r, ts_u32 addr) {\n"
    "    asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\" : \"=r\"(r[0]), \"=r\"(r[1]) : \"r\"(addr) : \"memory\");\n"
    "}\n"
    "TS_DEV void ts_ldsm_x2_tu(ts_u32 *r, ts_u32 addr) {\n"
    "    asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\" : \"=r\"(r[0]), \"=r\"(r[1]) : \"r\"(addr) : \"memory\");\n"
    "}\n"
    "TS_DEV void ts_mma_f16(float *d, const ts_u32 *a, const ts_u32 *b) {\n"
    "    asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, \"\n"
    "                 \"{%8, %9}, {%0, %1, %2, %3};\"\n"
    "                 : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
    "                 : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
    "}\n"
    "TS_DEV void ts_mma_bf16(float *d, const ts_u32 *a, const ts_u32 *b) {\n"
    "    asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, \"\n"
    "                 \"{%8, %9}, {%0, %1, %2, %3};\"\n"
    "                 : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
    "                 : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
    "}\n"
    "#endif\n\n";

/* ---- tensor-core gemm functions ------------------------------------------ */

/*
 * The plan: C (m x n) is cut into cm x cn sub-tiles, handed to the warps
 * round-robin; a warp keeps one sub-tile's accumulators in registers
 * (cm * cn / 32 floats per thread, at most 128) while it runs the whole
 * K loop over it.  The cost model per 16-deep K step of one round is the
 * larger of the tensor-core time (about 8 cycles per m16n8k16 per warp
 * scheduler) and the shared-memory time of the fragment loads (one
 * 512-byte ldmatrix.x4 per 16 rows of A and per 16 columns of B, at
 * 128 bytes per cycle shared by the block's warps, taken as 4); ties go
 * to the plan that loads fewer fragments.  FullRow/FullCol policies are
 * not needed: C is in shared memory, any split is correct.
 */
void ts_cuda_mma_plan(TsCudaMma *p) {
    int64_t best = -1, best_traffic = 0;
    p->cm = 16;
    p->cn = 8;
    int nw = p->nwarps > 0 ? p->nwarps : 1;
    for (int cm = 16; cm <= p->m && cm <= 128; cm += 16) {
        if (p->m % cm) continue;
        for (int cn = 8; cn <= p->n && cn <= 256; cn += 8) {
            if (p->n % cn) continue;
            int64_t mi = cm / 16, ni = cn / 8;
            if (mi * ni > 32) continue;
            int64_t chunks = (int64_t)(p->m / cm) * (p->n / cn), rounds = (chunks + nw - 1) / nw;
            int64_t frag = mi + (ni + 1) / 2, mma = 8 * mi * ni, lds = 16 * frag;
            int64_t cost = rounds * (mma > lds ? mma : lds), traffic = rounds * frag;
            if (best < 0 || cost < best || (cost == best && traffic < best_traffic)) {
                best = cost;
                best_traffic = traffic;
                p->cm = cm;
                p->cn = cn;
            }
        }
    }
}

/* The B fragments of one k16 step, b[0..NI)[2], for both emitters: two n8
 * tiles per ldmatrix.x4 (matrices (k lo, n lo), (k hi, n lo), (k lo, n hi),
 * (k hi, n hi)) and an .x2 for an odd last tile, or 16-bit loads where rows
 * are not 16-byte aligned.  `in` is the loop body's indentation; `u32`: the
 * register-mode spelling (32-bit shared addresses Bs, offsets through the
 * swizzle TS_OB) instead of pointers into B. */
static void emit_b_frags(TsBuf *o, const TsCudaMma *p, const char *in, int odd, bool u32) {
    if (!p->ldsm_b) {
        ts_buf_printf(o,
                      "#pragma unroll\n"
                      "%sfor (int j = 0; j < NI; j++) {\n"
                      "%s    const int n = n0 + j * 8 + g, r = k0 + 2 * t;\n"
                      "%s    b[j][0] = ts_pack2(B[TS_BI(r, n)], B[TS_BI(r + 1, n)]);\n"
                      "%s    b[j][1] = ts_pack2(B[TS_BI(r + 8, n)], B[TS_BI(r + 9, n)]);\n"
                      "%s}\n",
                      in, in, in, in, in);
        return;
    }
    const char *x4 = p->trans_b ? (u32 ? "ts_ldsm_x4_u" : "ts_ldsm_x4") : (u32 ? "ts_ldsm_x4_tu" : "ts_ldsm_x4_t");
    const char *x2 = p->trans_b ? (u32 ? "ts_ldsm_x2_u" : "ts_ldsm_x2") : (u32 ? "ts_ldsm_x2_tu" : "ts_ldsm_x2_t");
    const char *off4 = p->trans_b ? "(n0 + j * 8 + (lane & 7) + (lane >> 4) * 8) * LDB + k0 + ((lane >> 3) & 1) * 8"
                                  : "(k0 + (lane & 7) + ((lane >> 3) & 1) * 8) * LDB + n0 + j * 8 + (lane >> 4) * 8";
    const char *off2 = p->trans_b ? "(n0 + j * 8 + (lane & 7)) * LDB + k0 + ((lane >> 3) & 1) * 8"
                                  : "(k0 + (lane & 7) + ((lane >> 3) & 1) * 8) * LDB + n0 + j * 8";
    if (u32) { /* register mode: the thread's offsets xb / xb2 plus a constant (TS_LB) */
        off4 = p->trans_b ? "xb, j * 8 * LDB + k0" : "xb, k0 * LDB + j * 8";
        off2 = p->trans_b ? "xb2, j * 8 * LDB + k0" : "xb2, k0 * LDB + j * 8";
    }
    const char *pre = u32 ? "TS_LB(" : "B + ", *post = u32 ? ")" : "";
    ts_buf_printf(o,
                  "#pragma unroll\n"
                  "%sfor (int j = 0; j + 1 < NI; j += 2) {\n"
                  "%s    ts_u32 q[4];\n"
                  "%s    %s(q, %s%s%s);\n"
                  "%s    b[j][0] = q[0];\n"
                  "%s    b[j][1] = q[1];\n"
                  "%s    b[j + 1][0] = q[2];\n"
                  "%s    b[j + 1][1] = q[3];\n"
                  "%s}\n",
                  in, in, in, x4, pre, off4, post, in, in, in, in, in);
    if (odd)
        ts_buf_printf(o,
                      "%s{\n"
                      "%s    const int j = NI - 1;\n"
                      "%s    %s(b[j], %s%s%s);\n"
                      "%s}\n",
                      in, in, in, x2, pre, off2, post, in);
}

void ts_cuda_mma_emit(TsBuf *o, const char *name, const TsCudaMma *p) {
    const char *cvt = p->bf16 ? "ts_bf2f" : "ts_h2f";
    ts_buf_printf(o, "/* C[%d x %d] %s= A%s * B%s over K = %d (%s); warp sub-tiles %d x %d */\n", p->m, p->n,
                  p->clear ? "" : "+", p->trans_a ? "^T" : "", p->trans_b ? "^T" : "", p->k,
                  p->bf16 ? "bfloat16" : "float16", p->cm, p->cn);
    ts_buf_printf(o, "TS_DEV void %s(const ts_u16 *A, const ts_u16 *B, float *C, int tid) {\n", name);
    ts_buf_printf(o, "    enum { K = %d, LDA = %d, LDB = %d, LDC = %d, CM = %d, NWARPS = %d };\n", p->k, p->lda,
                  p->ldb, p->ldc, p->cm, p->nwarps);
    ts_buf_printf(o, "    enum { MI = %d, NI = %d, NCN = %d, NCHUNK = %d };\n", p->cm / 16, p->cn / 8, p->n / p->cn,
                  (p->m / p->cm) * (p->n / p->cn));
    /* element (row, col) of the logical A (m x k) and B (k x n) */
    ts_buf_printf(o, "#define TS_AI(r, c) (%s)\n", p->trans_a ? "(c) * LDA + (r)" : "(r) * LDA + (c)");
    ts_buf_printf(o, "#define TS_BI(r, c) (%s)\n", p->trans_b ? "(c) * LDB + (r)" : "(r) * LDB + (c)");
    ts_buf_puts(o,
                "    const int lane = tid & 31, g = lane >> 2, t = lane & 3;\n"
                "    (void)g; (void)t;\n"
                "    for (int ch = tid >> 5; ch < NCHUNK; ch += NWARPS) {\n"
                "        const int m0 = ch / NCN * CM, n0 = ch % NCN * (NI * 8);\n"
                "        float acc[MI][NI][4];\n"
                "#pragma unroll\n"
                "        for (int i = 0; i < MI; i++) {\n"
                "#pragma unroll\n"
                "            for (int j = 0; j < NI; j++) {\n");
    if (p->clear) {
        ts_buf_puts(o, "                acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;\n");
    } else {
        ts_buf_puts(o, "                const float *c = C + (m0 + i * 16 + g) * LDC + n0 + j * 8 + 2 * t;\n");
        if (p->c2)
            ts_buf_puts(o, "                const ts_f2 lo = *(const ts_f2 *)c, hi = *(const ts_f2 *)(c + 8 * LDC);\n"
                           "                acc[i][j][0] = lo.x;\n"
                           "                acc[i][j][1] = lo.y;\n"
                           "                acc[i][j][2] = hi.x;\n"
                           "                acc[i][j][3] = hi.y;\n");
        else
            ts_buf_puts(o, "                acc[i][j][0] = c[0];\n"
                           "                acc[i][j][1] = c[1];\n"
                           "                acc[i][j][2] = c[8 * LDC];\n"
                           "                acc[i][j][3] = c[8 * LDC + 1];\n");
    }
    ts_buf_puts(o, "            }\n"
                   "        }\n");
    if (p->rolled) ts_buf_puts(o, "#pragma unroll 1\n");
    else if (p->k / 16 <= 8) ts_buf_puts(o, "#pragma unroll\n");
    ts_buf_puts(o, "        for (int k0 = 0; k0 < K; k0 += 16) {\n"
                   "#if TS_HAS_MMA\n"
                   "            ts_u32 a[MI][4], b[NI][2];\n"
                   "#pragma unroll\n"
                   "            for (int i = 0; i < MI; i++) {\n");
    if (p->ldsm_a && !p->trans_a) {
        ts_buf_puts(o, "                ts_ldsm_x4(a[i], A + (m0 + i * 16 + (lane & 15)) * LDA + k0 + (lane >> 4) * 8);\n");
    } else if (p->ldsm_a) {
        ts_buf_puts(o, "                ts_ldsm_x4_t(a[i], A + (k0 + (lane & 7) + (lane >> 4) * 8) * LDA + m0 + i * 16 +\n"
                       "                                       ((lane >> 3) & 1) * 8);\n");
    } else {
        ts_buf_puts(o, "                const int r = m0 + i * 16 + g, c = k0 + 2 * t;\n"
                       "                a[i][0] = ts_pack2(A[TS_AI(r, c)], A[TS_AI(r, c + 1)]);\n"
                       "                a[i][1] = ts_pack2(A[TS_AI(r + 8, c)], A[TS_AI(r + 8, c + 1)]);\n"
                       "                a[i][2] = ts_pack2(A[TS_AI(r, c + 8)], A[TS_AI(r, c + 9)]);\n"
                       "                a[i][3] = ts_pack2(A[TS_AI(r + 8, c + 8)], A[TS_AI(r + 8, c + 9)]);\n");
    }
    ts_buf_puts(o, "            }\n");
    emit_b_frags(o, p, "            ", (p->cn / 8) % 2, false);
    ts_buf_printf(o,
                  "#pragma unroll\n"
                  "            for (int i = 0; i < MI; i++)\n"
                  "#pragma unroll\n"
                  "                for (int j = 0; j < NI; j++) %s(acc[i][j], a[i], b[j]);\n",
                  p->bf16 ? "ts_mma_bf16" : "ts_mma_f16");
    ts_buf_printf(o,
                  "#else\n"
                  "#pragma unroll\n"
                  "            for (int i = 0; i < MI; i++)\n"
                  "#pragma unroll\n"
                  "                for (int j = 0; j < NI; j++)\n"
                  "                    for (int e = 0; e < 4; e++) {\n"
                  "                        const int r = m0 + i * 16 + g + (e >> 1) * 8, c = n0 + j * 8 + 2 * t + (e & 1);\n"
                  "                        float s = acc[i][j][e];\n"
                  "                        for (int kk = k0; kk < k0 + 16; kk++) s += %s(A[TS_AI(r, kk)]) * %s(B[TS_BI(kk, c)]);\n"
                  "                        acc[i][j][e] = s;\n"
                  "                    }\n"
                  "#endif\n"
                  "        }\n",
                  cvt, cvt);
    ts_buf_puts(o, "#pragma unroll\n"
                   "        for (int i = 0; i < MI; i++) {\n"
                   "#pragma unroll\n"
                   "            for (int j = 0; j < NI; j++) {\n"
                   "                float *c = C + (m0 + i * 16 + g) * LDC + n0 + j * 8 + 2 * t;\n");
    if (p->c2)
        ts_buf_puts(o, "                ts_f2 lo, hi;\n"
                       "                lo.x = acc[i][j][0];\n"
                       "                lo.y = acc[i][j][1];\n"
                       "                hi.x = acc[i][j][2];\n"
                       "                hi.y = acc[i][j][3];\n"
                       "                *(ts_f2 *)c = lo;\n"
                       "                *(ts_f2 *)(c + 8 * LDC) = hi;\n");
    else
        ts_buf_puts(o, "                c[0] = acc[i][j][0];\n"
                       "                c[1] = acc[i][j][1];\n"
                       "                c[8 * LDC] = acc[i][j][2];\n"
                       "                c[8 * LDC + 1] = acc[i][j][3];\n");
    ts_buf_puts(o, "            }\n"
                   "        }\n"
                   "    }\n"
                   "#undef TS_AI\n"
                   "#undef TS_BI\n"
                   "}\n\n");
}

/*
 * Register mode: warp w owns the sub-tile at warp row w / wn, column w % wn
 * of C for the whole call (the MMA_C layout of layout.h), C lives in the
 * caller's registers as acc[i][j][e] flattened, and A/B offsets go through
 * the tiles' XOR swizzle (TS_SWZ) before every shared access, so ldmatrix
 * row addresses stay 16-byte chunks.  A register A operand is the MMA_C
 * layout of the m x k tile: n8 tiles 2s and 2s+1 of it are the a0..a3 of
 * k16 step s (PTX ISA, mma.m16n8k16 A and C fragment tables).
 */
/* Register mode, one load of k16 step `k0` (an expression) into fragment set
 * `set` of F (a[MI][4] then b[NI][2], MI * 4 + NI * 2 registers a set). */
static void emit_part_load(TsBuf *o, const TsCudaMma *p, const char *set, const char *k0) {
    ts_buf_printf(o,
                  "    {\n"
                  "        ts_u32 (*a)[4] = (ts_u32 (*)[4])(F + (%s) * FS);\n"
                  "        ts_u32 (*b)[2] = (ts_u32 (*)[2])(F + (%s) * FS + MI * 4);\n"
                  "        const int k0 = %s;\n"
                  "#pragma unroll\n"
                  "        for (int i = 0; i < MI; i++) {\n",
                  set, set, k0);
    if (p->ldsm_a && !p->trans_a)
        ts_buf_puts(o, "            ts_ldsm_x4_u(a[i], TS_LA(xa, i * 16 * LDA + k0));\n");
    else if (p->ldsm_a)
        ts_buf_puts(o, "            ts_ldsm_x4_tu(a[i], TS_LA(xa, k0 * LDA + i * 16));\n");
    else
        ts_buf_puts(o, "            const int r = m0 + i * 16 + g, c = k0 + 2 * t;\n"
                       "            a[i][0] = ts_pack2(A[TS_AI(r, c)], A[TS_AI(r, c + 1)]);\n"
                       "            a[i][1] = ts_pack2(A[TS_AI(r + 8, c)], A[TS_AI(r + 8, c + 1)]);\n"
                       "            a[i][2] = ts_pack2(A[TS_AI(r, c + 8)], A[TS_AI(r, c + 9)]);\n"
                       "            a[i][3] = ts_pack2(A[TS_AI(r + 8, c + 8)], A[TS_AI(r + 8, c + 9)]);\n");
    ts_buf_puts(o, "        }\n");
    int WN = p->n / p->wn;
    emit_b_frags(o, p, "        ", (WN / 8) % 2, true);
    ts_buf_puts(o, "    }\n");
}

/* Register mode, the multiplications of the k16 step held in fragment set `set`. */
static void emit_part_mma(TsBuf *o, const TsCudaMma *p, const char *set) {
    ts_buf_printf(o,
                  "    {\n"
                  "        ts_u32 (*a)[4] = (ts_u32 (*)[4])(F + (%s) * FS);\n"
                  "        ts_u32 (*b)[2] = (ts_u32 (*)[2])(F + (%s) * FS + MI * 4);\n"
                  "#pragma unroll\n"
                  "        for (int i = 0; i < MI; i++)\n"
                  "#pragma unroll\n"
                  "            for (int j = 0; j < NI; j++) %s(C + (i * NI + j) * 4, a[i], b[j]);\n"
                  "    }\n",
                  set, set, p->bf16 ? "ts_mma_bf16" : "ts_mma_f16");
}

/* Register mode, the body of one part of a split gemm (TsMmaPart): PRE and
 * TAIL load step 0 into set 0 (TAIL from the next stage, which its caller
 * passes as A and B) and TAIL multiplies the last step (set 1: K / 16 is
 * even); BODY loads step s + 1 into set (s + 1) % 2 before multiplying
 * step s; REST is BODY and then the last step's multiplication (set
 * (K / 16 - 1) % 2).  Without mma.sync BODY and REST compute the whole
 * product by scalar loops and PRE / TAIL do nothing. */
static void emit_reg_part(TsBuf *o, const TsCudaMma *p) {
    const char *cvt = p->bf16 ? "ts_bf2f" : "ts_h2f";
    ts_buf_puts(o, "    enum { FS = MI * 4 + NI * 2 };\n"
                   "    (void)F;\n"
                   "#if TS_HAS_MMA\n");
    if (p->part == TS_MMA_PRE) {
        emit_part_load(o, p, "0", "0");
    } else if (p->part == TS_MMA_TAIL) {
        emit_part_load(o, p, "0", "0");
        emit_part_mma(o, p, "1");
    } else {
        ts_buf_printf(o, "#pragma unroll%s\n"
                         "    for (int s = 0; s + 1 < K / 16; s++) {\n",
                      p->rolled ? " 1" : "");
        emit_part_load(o, p, "(s + 1) & 1", "(s + 1) * 16");
        emit_part_mma(o, p, "s & 1");
        ts_buf_puts(o, "    }\n");
        if (p->part == TS_MMA_REST) emit_part_mma(o, p, "(K / 16 - 1) & 1");
    }
    ts_buf_puts(o, "#else\n");
    if (p->part == TS_MMA_BODY || p->part == TS_MMA_REST)
        ts_buf_printf(o,
                      "    for (int k0 = 0; k0 < K; k0 += 16)\n"
                      "        for (int i = 0; i < MI; i++)\n"
                      "            for (int j = 0; j < NI; j++)\n"
                      "                for (int e = 0; e < 4; e++) {\n"
                      "                    const int r = m0 + i * 16 + g + (e >> 1) * 8, c = n0 + j * 8 + 2 * t + (e & 1);\n"
                      "                    float s = C[(i * NI + j) * 4 + e];\n"
                      "                    for (int kk = k0; kk < k0 + 16; kk++) s += %s(A[TS_AI(r, kk)]) * %s(B[TS_BI(kk, c)]);\n"
                      "                    C[(i * NI + j) * 4 + e] = s;\n"
                      "                }\n",
                      cvt, cvt);
    else
        ts_buf_puts(o, "    (void)C;\n");
    ts_buf_puts(o, "#endif\n");
}

void ts_cuda_mma_emit_reg(TsBuf *o, const char *name, const TsCudaMma *p) {
    int WM = p->m / p->wm, WN = p->n / p->wn;
    const char *cvt = p->bf16 ? "ts_bf2f" : "ts_h2f";
    ts_buf_printf(o, "/* C[%d x %d] %s= A%s%s * B%s over K = %d (%s); warps %d x %d, registers */\n", p->m, p->n,
                  p->clear ? "" : "+", p->trans_a ? "^T" : "", p->areg ? "(registers)" : "", p->trans_b ? "^T" : "", p->k,
                  p->bf16 ? "bfloat16" : "float16", p->wm, p->wn);
    if (p->part)
        ts_buf_printf(o, "TS_DEV void %s(const ts_u16 *A, int a_off, const ts_u16 *B, int b_off, float *C, ts_u32 *F, int tid) {\n",
                      name);
    else
        ts_buf_printf(o, "TS_DEV void %s(const ts_u16 *A, int a_off, const ts_u16 *B, int b_off, float *C, int tid) {\n", name);
    ts_buf_printf(o, "    enum { K = %d, LDA = %d, LDB = %d, WM = %d, WN = %d, MI = %d, NI = %d, WGN = %d, NK8 = %d };\n", p->k,
                  p->lda, p->ldb, WM, WN, WM / 16, WN / 8, p->wn, p->k / 8);
    if (p->swz_a) ts_buf_printf(o, "#define TS_SA(o) TS_SWZ(o, 3, 3, %d)\n", p->swz_a - 1);
    else ts_buf_puts(o, "#define TS_SA(o) (o)\n");
    if (p->swz_b) ts_buf_printf(o, "#define TS_SB(o) TS_SWZ(o, 3, 3, %d)\n", p->swz_b - 1);
    else ts_buf_puts(o, "#define TS_SB(o) (o)\n");
    /* OA(x) / OB(x): the element at offset x from the operand's start */
    if (p->per_a) ts_buf_puts(o, "    A += a_off;\n#define TS_OA(x) TS_SA(x)\n");
    else ts_buf_puts(o, "#define TS_OA(x) TS_SA(a_off + (x))\n");
    if (p->per_b) ts_buf_puts(o, "    B += b_off;\n#define TS_OB(x) TS_SB(x)\n");
    else ts_buf_puts(o, "#define TS_OB(x) TS_SB(b_off + (x))\n");
    ts_buf_printf(o, "#define TS_AI(r, c) TS_OA(%s)\n", p->trans_a ? "(c) * LDA + (r)" : "(r) * LDA + (c)");
    ts_buf_printf(o, "#define TS_BI(r, c) TS_OB(%s)\n", p->trans_b ? "(c) * LDB + (r)" : "(r) * LDB + (c)");
    /* ldmatrix row addresses: the offset of a fragment row is x + y, x the
     * thread's part (lane, warp, a_off / b_off), y a constant once the k
     * and tile loops are unrolled.  The swizzle leaves multiples of its
     * period P (8 << (3 + S) elements) alone, so y's multiple of P goes
     * outside it as an immediate of the ldmatrix address and only x + y % P
     * is swizzled: a few distinct values per call, not one per ldmatrix. */
    ts_buf_printf(o, "#define TS_PA %d\n#define TS_PB %d\n", p->swz_a ? 1 << (6 + p->swz_a - 1) : 1,
                  p->swz_b ? 1 << (6 + p->swz_b - 1) : 1);
    ts_buf_puts(o, "#define TS_LA(x, y) (As + 2u * (ts_u32)(TS_OA((x) + (y) % TS_PA) + ((y) - (y) % TS_PA)))\n"
                   "#define TS_LB(x, y) (Bs + 2u * (ts_u32)(TS_OB((x) + (y) % TS_PB) + ((y) - (y) % TS_PB)))\n");
    ts_buf_puts(o, "    const int lane = tid & 31, w = tid >> 5, g = lane >> 2, t = lane & 3;\n"
                   "    const int m0 = (w / WGN) * WM, n0 = (w % WGN) * WN;\n"
                   "    (void)g; (void)t; (void)a_off; (void)b_off;\n");
    /* 32-bit shared-memory addresses of the operands, converted once per call,
     * and the thread's parts of the fragment row offsets (TS_LA / TS_LB) */
    ts_buf_puts(o, "#if TS_HAS_MMA\n");
    if (!p->areg && p->ldsm_a) {
        ts_buf_puts(o, "    const ts_u32 As = ts_smem_u32(A);\n");
        ts_buf_puts(o, p->trans_a ? "    const int xa = ((lane & 7) + (lane >> 4) * 8) * LDA + m0 + ((lane >> 3) & 1) * 8;\n"
                                  : "    const int xa = (m0 + (lane & 15)) * LDA + (lane >> 4) * 8;\n");
    }
    if (p->ldsm_b) {
        ts_buf_puts(o, "    const ts_u32 Bs = ts_smem_u32(B);\n");
        ts_buf_puts(o, p->trans_b ? "    const int xb = (n0 + (lane & 7) + (lane >> 4) * 8) * LDB + ((lane >> 3) & 1) * 8;\n"
                                  : "    const int xb = ((lane & 7) + ((lane >> 3) & 1) * 8) * LDB + n0 + (lane >> 4) * 8;\n");
        if ((WN / 8) % 2)
            ts_buf_puts(o, p->trans_b ? "    const int xb2 = (n0 + (lane & 7)) * LDB + ((lane >> 3) & 1) * 8;\n"
                                      : "    const int xb2 = ((lane & 7) + ((lane >> 3) & 1) * 8) * LDB + n0;\n");
    }
    ts_buf_puts(o, "#endif\n");
    if (p->clear)
        ts_buf_puts(o, "#pragma unroll\n"
                       "    for (int i = 0; i < MI * NI * 4; i++) C[i] = 0.0f;\n");
    if (p->part) {
        emit_reg_part(o, p);
        ts_buf_puts(o, "#undef TS_PA\n#undef TS_PB\n#undef TS_LA\n#undef TS_LB\n#undef TS_SA\n#undef TS_SB\n"
                       "#undef TS_OA\n#undef TS_OB\n#undef TS_AI\n#undef TS_BI\n}\n\n");
        return;
    }
    ts_buf_printf(o, "#pragma unroll%s\n"
                     "    for (int k0 = 0; k0 < K; k0 += 16) {\n"
                     "#if TS_HAS_MMA\n"
                     "        ts_u32 a[MI][4], b[NI][2];\n"
                     "#pragma unroll\n"
                     "        for (int i = 0; i < MI; i++) {\n",
                  p->rolled ? " 1" : "");
    if (p->areg)
        ts_buf_puts(o, "            const int q = (i * NK8 + (k0 >> 3)) * 4;\n"
                       "            a[i][0] = ts_pack2(A[q], A[q + 1]);\n"
                       "            a[i][1] = ts_pack2(A[q + 2], A[q + 3]);\n"
                       "            a[i][2] = ts_pack2(A[q + 4], A[q + 5]);\n"
                       "            a[i][3] = ts_pack2(A[q + 6], A[q + 7]);\n");
    else if (p->ldsm_a && !p->trans_a)
        ts_buf_puts(o, "            ts_ldsm_x4_u(a[i], TS_LA(xa, i * 16 * LDA + k0));\n");
    else if (p->ldsm_a)
        ts_buf_puts(o, "            ts_ldsm_x4_tu(a[i], TS_LA(xa, k0 * LDA + i * 16));\n");
    else
        ts_buf_puts(o, "            const int r = m0 + i * 16 + g, c = k0 + 2 * t;\n"
                       "            a[i][0] = ts_pack2(A[TS_AI(r, c)], A[TS_AI(r, c + 1)]);\n"
                       "            a[i][1] = ts_pack2(A[TS_AI(r + 8, c)], A[TS_AI(r + 8, c + 1)]);\n"
                       "            a[i][2] = ts_pack2(A[TS_AI(r, c + 8)], A[TS_AI(r, c + 9)]);\n"
                       "            a[i][3] = ts_pack2(A[TS_AI(r + 8, c + 8)], A[TS_AI(r + 8, c + 9)]);\n");
    ts_buf_puts(o, "        }\n");
    emit_b_frags(o, p, "        ", (WN / 8) % 2, true);
    ts_buf_printf(o,
                  "#pragma unroll\n"
                  "        for (int i = 0; i < MI; i++)\n"
                  "#pragma unroll\n"
                  "            for (int j = 0; j < NI; j++) %s(C + (i * NI + j) * 4, a[i], b[j]);\n"
                  "#else\n",
                  p->bf16 ? "ts_mma_bf16" : "ts_mma_f16");
    if (p->areg)
        ts_buf_puts(o, "        asm volatile(\"trap;\"); /* register A operands need mma.sync (sm_80+) */\n");
    else
        ts_buf_printf(o,
                      "        for (int i = 0; i < MI; i++)\n"
                      "            for (int j = 0; j < NI; j++)\n"
                      "                for (int e = 0; e < 4; e++) {\n"
                      "                    const int r = m0 + i * 16 + g + (e >> 1) * 8, c = n0 + j * 8 + 2 * t + (e & 1);\n"
                      "                    float s = C[(i * NI + j) * 4 + e];\n"
                      "                    for (int kk = k0; kk < k0 + 16; kk++) s += %s(A[TS_AI(r, kk)]) * %s(B[TS_BI(kk, c)]);\n"
                      "                    C[(i * NI + j) * 4 + e] = s;\n"
                      "                }\n",
                      cvt, cvt);
    ts_buf_puts(o, "#endif\n"
                   "    }\n"
                   "#undef TS_PA\n"
                   "#undef TS_PB\n"
                   "#undef TS_LA\n"
                   "#undef TS_LB\n"
                   "#undef TS_SA\n"
                   "#undef TS_SB\n"
                   "#undef TS_OA\n"
                   "#undef TS_OB\n"
                   "#undef TS_AI\n"
                   "#undef TS_BI\n"
                   "}\n\n");
}

/* ---- generator state ----------------------------------------------------- */

/* Where a buffer lives in generated code. */
typedef struct CgBuf {
    const IrBuffer *buf; /* the IR buffer */
    const char *name;    /* C name of its base pointer / array */
    int param;           /* global: parameter index; else -1 */
    int64_t offset;      /* shared/fragment: byte offset in dynamic shared memory */
    int64_t elems;       /* non-global: elements (all stages) */
    int64_t *strides;    /* non-global: constant row-major element strides */
    /* 1: global memory, printed through `name`, `name_s<d>` (strides) and
     * `name_n<d>` (extents): a tensor parameter (param >= 0) or a
     * T.make_tensor buffer (IrBuffer.addr), whose three are declared where
     * its address is bound (emit_let) */
    int glob;
} CgBuf;

/* A tensor-core gemm call site and the function it calls. */
typedef struct CgMma {
    const IrTileOp *op;  /* the kept T.gemm (TS_OP_INST_MMA_SYNC) */
    int fn;              /* index into Cg.mma_fns: calls ts_gemm_<fn> */
    int lo;              /* the first thread of the gemm's warps (IrTileOp.mma_lo: a T.ws role's; 0: the block's) */
} CgMma;

/* A wgmma gemm call site (TS_OP_INST_WGMMA) and the function it calls. */
typedef struct CgWg {
    const IrTileOp *op;  /* the kept T.gemm */
    int fn;              /* index into Cg.wg_fns: calls ts_wgmma_<fn> */
} CgWg;

/* The context a statement is emitted in (see the essay). */
typedef enum CgCtx {
    CTX_UNIFORM, /* every thread runs it with the same values */
    CTX_THREAD,  /* per-thread code: inside a thread range */
} CgCtx;

typedef struct Cg {
    TsDiag *d;
    TsCxDialect dl;                  /* the spellings in use: fast math, 32-bit integers (index32) */
    const IrKernel *k;
    TsArena *a;                      /* the kernel's arena, for names and tables */
    TsBuf *o;                        /* output; NULL during a dry run */
    int ind;                         /* indentation level */
    int nthreads;                    /* threads per block */
    int single;                      /* nthreads == 1: no guards, no barriers */
    CgCtx ctx;                       /* context of the statement being emitted */
    int uid;                         /* counter for generated names */
    TS_VEC(CgBuf) bufs;              /* every buffer the kernel touches */
    TsCxScopes scopes;               /* LET vars declared in the open C scopes */
    TS_VEC(CgMma) mma_sites;         /* every tensor-core gemm of the kernel */
    TS_VEC(TsCudaMma) mma_fns;       /* distinct gemm functions, emitted before the kernel */
    TS_VEC(CgWg) wg_sites;           /* every wgmma gemm of the kernel */
    TS_VEC(TsCudaWgmma) wg_fns;      /* distinct wgmma functions, emitted before the kernel */
    TsCxGen x;                       /* the shared expression emitter's state (cx() syncs o) */
    const TsCaps *caps;              /* target capabilities and path switches */
    int check;                       /* bounds-checked element indices (--check-bounds) */
    TS_VEC(const char *) site_msg;   /* per checked site: its message head (see TsCudaCodeInfo) */
    TS_VEC(const char *) site_src;   /* ... and its source line with a caret */
    int role_lo, role_n;             /* inside a T.ws role (IR_S_ROLE): its threads; role_n 0 outside */
} Cg;

static void emit_expr(Cg *g, const IrExpr *e);
static void emit_stmt(Cg *g, const IrStmt *s);
static void emit_kind(Cg *g, const IrStmt *s);

static void out(Cg *g, const char *s) {
    if (g->o) ts_buf_puts(g->o, s);
}
TS_PRINTF(2, 3) static void outf(Cg *g, const char *fmt, ...) {
    if (!g->o) return;
    va_list ap;
    va_start(ap, fmt);
    ts_buf_vprintf(g->o, fmt, ap);
    va_end(ap);
}
static void line_start(Cg *g) {
    if (g->o) ts_buf_indent(g->o, g->ind);
}

/* ---- types and expressions: the shared emitter (target/cexpr.c) ---------- */

static const char *const cu_storage[TS_DTYPE_COUNT] = {
    [TS_BOOL] = "ts_u8", [TS_INT8] = "ts_i8", [TS_UINT8] = "ts_u8", [TS_INT16] = "ts_i16",
    [TS_UINT16] = "ts_u16", [TS_INT32] = "ts_i32", [TS_UINT32] = "ts_u32", [TS_INT64] = "ts_i64",
    [TS_UINT64] = "ts_u64", [TS_FLOAT16] = "ts_u16", [TS_BFLOAT16] = "ts_u16", [TS_FLOAT32] = "float",
    [TS_FLOAT64] = "double", [TS_FLOAT8_E4M3] = "ts_u8", [TS_FLOAT8_E5M2] = "ts_u8",
};

static const char *const cu_intrin[IR_INTRINSIC_COUNT][2] = {
    [IR_SHFL_XOR] = {"ts_shfl_xor_f", "ts_shfl_xor_d"},
    [IR_EXP] = {"expf", "exp"}, [IR_EXP2] = {"exp2f", "exp2"}, [IR_LOG] = {"logf", "log"},
    [IR_LOG2] = {"log2f", "log2"}, [IR_SQRT] = {"sqrtf", "sqrt"}, [IR_RSQRT] = {"__frsqrt_rn", "rsqrt"},
    [IR_ABS] = {"fabsf", "fabs"}, [IR_SIN] = {"sinf", "sin"}, [IR_COS] = {"cosf", "cos"},
    [IR_TANH] = {"tanhf", "tanh"}, [IR_FLOOR] = {"floorf", "floor"}, [IR_CEIL] = {"ceilf", "ceil"},
    [IR_ROUND] = {"rintf", "rint"}, [IR_SIGMOID] = {"ts_sigmoid_f", "ts_sigmoid_d"},
    [IR_LOG1P] = {"log1pf", "log1p"}, [IR_EXP10] = {"exp10f", "exp10"},
    [IR_ISINF] = {"ts_isinf_f", "ts_isinf_d"}, [IR_ISNAN] = {"ts_isnan_f", "ts_isnan_d"},
    [IR_FMOD] = {"fmodf", "fmod"}, [IR_POWF] = {"powf", "pow"}, [IR_ATAN2] = {"atan2f", "atan2"},
    [IR_ERF] = {"erff", "erf"}, [IR_TRUNC] = {"truncf", "trunc"},
};

/* What fast math (IrKernel.fast_math) prints instead: float exp2 and exp on
 * the approximation unit alone (ts_ex2_ftz); every other entry is cu_intrin's. */
static const char *const cu_intrin_fast[IR_INTRINSIC_COUNT][2] = {
    [IR_EXP] = {"ts_exp_ftz", NULL}, [IR_EXP2] = {"ts_ex2_ftz", NULL},
};

/* T.reinterpret of float / double: CUDA's bit-move intrinsics */
static const char *const cu_bitcast[4][2] = {
    {"__float_as_uint(", ")"},
    {"__uint_as_float(", ")"},
    {"((ts_u64)__double_as_longlong(", "))"},
    {"__longlong_as_double((long long)(", "))"},
};

static int cu_var(TsCxGen *x, const IrExpr *e);
static void cu_load(TsCxGen *x, const IrExpr *e);
static void cu_extern(TsCxGen *x, const IrExpr *e);

static const TsCxDialect cu_dialect = {
    .who = "CUDA codegen",
    .i64 = "ts_i64", .u32 = "ts_u32", .u64 = "ts_u64",
    .storage = cu_storage,
    .nan_f = "TS_NAN_F", .nan_d = "TS_NAN_D", .inf_f = "TS_INF_F", .inf_d = "TS_INF_D",
    .rank = "((ts_i64)ts_rank)", .nranks = "((ts_i64)ts_nranks)", .rpn = "((ts_i64)ts_comm_rpn)",
    .grid_ws = "((ts_i64)(ts_u64)ts_grid_ws)",
    .cluster_rank = "ts_cluster_rank()",
    .intrin = cu_intrin,
    .bitcast = cu_bitcast,
    .cast_helper_args = 1,
    .var = cu_var,
    .load = cu_load,
    .ext = cu_extern,
};

/* The shared emitter, writing where g writes now (nowhere in a dry run). */
static TsCxGen *cx(Cg *g) {
    g->x.o = g->o;
    return &g->x;
}
static void emit_expr(Cg *g, const IrExpr *e) { ts_cx_expr(cx(g), e); }
static char cat_of(Cg *g, TsDType dt, TsLoc loc) { return ts_cx_cat(cx(g), dt, loc); }
static const char *compute_ctype(Cg *g, TsDType dt, TsLoc loc) { return ts_cx_compute_ctype(cx(g), dt, loc); }
static const char *storage_ctype(TsDType dt) { return ts_cx_storage(&cu_dialect, dt); }

static int is_private(const IrBuffer *b) { return b->scope == IR_SCOPE_LOCAL || b->scope == IR_SCOPE_VAR; }

static CgBuf *find_buf(Cg *g, const IrBuffer *b, TsLoc loc) {
    for (int i = 0; i < g->bufs.n; i++)
        if (g->bufs.v[i].buf == b) return &g->bufs.v[i];
    ts_fail_at(g->d, TS_ERR_INTERNAL, loc, "CUDA codegen: buffer '%s' is not known to the kernel",
               b ? b->name : "?");
}

/* ---- expressions: what the shared emitter leaves to this target ------------- */

/* Thread indices, split out of the linear thread id (1: handled). */
static int cu_var(TsCxGen *x, const IrExpr *e) {
    Cg *g = x->user;
    const IrVar *v = e->var;
    if (v->kind != IR_VAR_THREAD_IDX) return 0;
    const int *t = g->k->threads;
    const char *it = g->dl.i64;
    if (v->axis == -1) outf(g, "((%s)ts_tid)", it); /* the flat index (ir_kernel_tid) */
    else if (v->axis == 0) outf(g, "((%s)(ts_tid %% %d))", it, t[0]);
    else if (v->axis == 1) outf(g, "((%s)((ts_tid / %d) %% %d))", it, t[0], t[1]);
    else if (v->axis == 2) outf(g, "((%s)(ts_tid / %d))", it, t[0] * t[1]);
    else ts_fail_at(g->d, TS_ERR_INTERNAL, e->loc, "CUDA codegen: thread index axis %d", v->axis);
    return 1;
}

/* A bounds-checked access site (see TsCudaCodeInfo); returns its number. */
static int new_site(Cg *g, const CgBuf *cb, TsLoc loc) {
    TsBuf m = {0}, src = {0};
    if (loc.src) ts_buf_printf(&m, "%s:%d:%d: ", loc.src->name, loc.line, loc.col);
    else ts_buf_puts(&m, "tilescale: ");
    ts_buf_printf(&m, "error: kernel '%s': out-of-bounds access to %s buffer '%s'", g->k->name ? g->k->name : "?",
                  ir_scope_name(cb->buf->scope), cb->buf->name && *cb->buf->name ? cb->buf->name : "?");
    ts_diag_source(&src, loc);
    ts_vec_push(g->a, g->site_msg, ts_strdup(g->a, ts_buf_str(&m)));
    ts_vec_push(g->a, g->site_src, ts_strdup(g->a, ts_buf_str(&src)));
    ts_buf_free(&m);
    ts_buf_free(&src);
    return g->site_msg.n - 1;
}

/* Element offset of buf[idx] in 64-bit arithmetic, constant terms folded.
 * Checked kernels wrap each index in ts_ck(index, extent, site, dim) (the
 * prelude's check_prelude): outside [0, extent) it is reported in ts_oob
 * and replaced by 0. */
static void emit_index_raw(Cg *g, const CgBuf *cb, IrExpr *const *idx, int nidx, TsLoc loc) {
    const IrBuffer *b = cb->buf;
    if (!g->check || b->ndim == 0 || nidx != b->ndim || (b->scope != IR_SCOPE_GLOBAL && !cb->strides)) {
        ts_cx_index(cx(g), b, cb->name, cb->glob, cb->strides, idx, nidx, loc);
        return;
    }
    int global = cb->glob, site = -1;
    for (int i = 0; i < b->ndim; i++) {
        int64_t ext = 0;
        if (!global && !ir_is_const_int(b->shape[i], &ext))
            ts_fail_at(g->d, TS_ERR_INTERNAL, loc, "CUDA codegen: buffer '%s' has a non-constant extent", b->name);
        if (site < 0) site = new_site(g, cb, loc);
        if (i) out(g, " + ");
        out(g, "ts_ck((ts_i64)(");
        emit_expr(g, idx[i]);
        if (global) outf(g, "), %s_n%d, %d, %d)", cb->name, i, site, i);
        else outf(g, "), %lldLL, %d, %d)", (long long)ext, site, i);
        if (global) outf(g, " * %s_s%d", cb->name, i);
        else if (cb->strides[i] != 1) outf(g, " * %lldLL", (long long)cb->strides[i]);
    }
}

/* The device side of bounds checks: the first failure's site, dimension,
 * index, extent and block go to ts_oob (read by the launch), the access
 * then uses index 0 so that the kernel runs on without touching memory
 * outside its buffers. */
/* Cooperative kernels (pass split_grid: T.sync_grid left in the body,
 * block-scale collectives).  The grid workspace is the launch's own
 * (session 9; before, a __device__ array of the module, which two
 * concurrent launches of the module, on two streams or by two local ranks
 * sharing a GPU, would have shared): the kernel's last parameter
 * ts_grid_ws, IrKernel.grid_ws_bytes allocated and zeroed on the launch's
 * stream by cuda_drv.c and freed on it after the kernel.  Its first two
 * words are the grid barrier's arrival count and generation, the rest the
 * collectives' staging.  ts_grid_sync is a generation barrier: the block's threads
 * meet (bar.sync), thread 0 reads the generation, fences and arrives with
 * an acq_rel atomic add at gpu scope; the last of the grid's blocks to
 * arrive puts the count back to 0 and publishes generation + 1 with a
 * release store, the others spin on an acquire load of the generation
 * until it moves; a fence, and the block's threads meet again.  So every
 * write of every block before the barrier happens before every read after
 * it (the PTX memory model: the arrivals form a release sequence the last
 * arriver acquires, and its release store is what the others acquire; the
 * bar.sync on either side carries the order to the block's other
 * threads).  The count is read after the generation (the add's release
 * half orders the load before it), so no block can miss its own round's
 * release.  A wait past 60 s (a block that never arrives: a branch on
 * data that some blocks skip) traps, so the launch fails instead of
 * hanging.  Facts from the CUDA programming guide (cooperative launch:
 * every block must be resident; memory fences) and the PTX ISA's memory
 * consistency model (ld.acquire / st.release / atom.acq_rel, scope gpu). */
static bool is_cluster_rank(const IrExpr *e, void *ctx) {
    (void)ctx;
    return e->kind == IR_E_CALL && e->call.fn == IR_CLUSTER_RANK;
}

static void emit_grid_prelude(TsBuf *o, const IrKernel *k) {
    (void)k;
    ts_buf_puts(o,
                "/* T.sync_grid: every block of the grid (ts_grid_ws: the launch's grid workspace) */\n"
                "__device__ __forceinline__ void ts_grid_sync(unsigned char *ts_grid_ws) {\n"
                "    __syncthreads();\n"
                "    if (threadIdx.x == 0) {\n"
                "        unsigned *ts_cnt = (unsigned *)ts_grid_ws, *ts_gen = ts_cnt + 1, ts_g0, ts_old, ts_g;\n"
                "        const unsigned ts_nb = gridDim.x * gridDim.y * gridDim.z;\n"
                "        asm volatile(\"ld.relaxed.gpu.global.u32 %0, [%1];\" : \"=r\"(ts_g0) : \"l\"(ts_gen) : \"memory\");\n"
                "        __threadfence();\n"
                "        asm volatile(\"atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;\" : \"=r\"(ts_old) : \"l\"(ts_cnt) : \"memory\");\n"
                "        if (ts_old == ts_nb - 1) {\n"
                "            asm volatile(\"st.relaxed.gpu.global.u32 [%0], 0;\" :: \"l\"(ts_cnt) : \"memory\");\n"
                "            asm volatile(\"st.release.gpu.global.u32 [%0], %1;\" :: \"l\"(ts_gen), \"r\"(ts_g0 + 1u) : \"memory\");\n"
                "        } else {\n"
                "            ts_u64 ts_t0, ts_t;\n"
                "            asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(ts_t0));\n"
                "            for (;;) {\n"
                "                asm volatile(\"ld.acquire.gpu.global.u32 %0, [%1];\" : \"=r\"(ts_g) : \"l\"(ts_gen) : \"memory\");\n"
                "                if (ts_g != ts_g0) break;\n"
                "                asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(ts_t));\n"
                "                if (ts_t - ts_t0 > 60000000000ull) __trap(); /* 60 s: a block that never arrives */\n"
                "            }\n"
                "        }\n"
                "        __threadfence();\n"
                "    }\n"
                "    __syncthreads();\n"
                "}\n");
}

static const char check_prelude[] =
    "__device__ unsigned long long ts_oob[8];\n"
    "__device__ __noinline__ ts_i64 ts_ck_fail(ts_i64 i, ts_i64 n, int site, int dim) {\n"
    "    if (atomicCAS(&ts_oob[0], 0ULL, 1ULL) == 0ULL) {\n"
    "        ts_oob[1] = (unsigned long long)site; ts_oob[2] = (unsigned long long)dim;\n"
    "        ts_oob[3] = (unsigned long long)i; ts_oob[4] = (unsigned long long)n;\n"
    "        ts_oob[5] = blockIdx.x; ts_oob[6] = blockIdx.y; ts_oob[7] = blockIdx.z;\n"
    "        __threadfence();\n"
    "    }\n"
    "    return 0;\n"
    "}\n"
    "__device__ __forceinline__ ts_i64 ts_ck(ts_i64 i, ts_i64 n, int site, int dim) {\n"
    "    return (unsigned long long)i < (unsigned long long)n ? i : ts_ck_fail(i, n, site, dim);\n"
    "}\n\n";

/* The element offset of buf[idx], through the buffer's swizzle. */
/* Split the sum e (an index of a dimension of stride `stride`) into the
 * terms whose contribution to the offset is a multiple of `period` (*ou)
 * and the rest (*in); either may stay NULL (nothing).  Constant terms whose
 * multiple is not a period's stay inside. */
static void split_swz_terms(TsArena *a, IrExpr *e, int64_t stride, int64_t period, IrExpr **in, IrExpr **ou) {
    int64_t c;
    if (e->kind == IR_E_BIN && e->bin.op == IR_ADD) {
        split_swz_terms(a, e->bin.a, stride, period, in, ou);
        split_swz_terms(a, e->bin.b, stride, period, in, ou);
        return;
    }
    int outer = 0;
    if (ir_is_const_int(e, &c)) outer = c != 0 && (c * stride) % period == 0;
    else if (e->kind == IR_E_BIN && e->bin.op == IR_MUL &&
             (ir_is_const_int(e->bin.b, &c) || ir_is_const_int(e->bin.a, &c)))
        outer = c != 0 && (c * stride) % period == 0;
    else
        outer = stride % period == 0;
    if (ir_is_const_int(e, &c) && c == 0) return;
    IrExpr **to = outer ? ou : in;
    *to = *to ? ir_bin(a, IR_ADD, *to, e) : e;
}

static void emit_index(Cg *g, const CgBuf *cb, IrExpr *const *idx, int nidx, TsLoc loc) {
    const IrSwizzle *z = &cb->buf->swizzle;
    if (z->kind != IR_SWIZZLE_XOR) {
        emit_index_raw(g, cb, idx, nidx, loc);
        return;
    }
    /* Terms of the offset that are multiples of the swizzle's period
     * (2^(base + shift + bits) elements: the bits the swizzle reads and
     * XORs lie below) add outside it, swz(P + x) = P + swz(x) in wrapping
     * arithmetic too: the stage of a multi-buffered tile, and the round
     * of a thread's vector copies (lower_copy_cuda.c), so that the
     * swizzled part is the same in every stage and round (hoisted by the
     * compiler) and the rest an add or an immediate offset. */
    int64_t period = ir_swizzle_period(z);
    int nout = 0;
    IrExpr *in[8], *ou[8];
    if (!g->check && cb->strides && nidx == cb->buf->ndim && nidx <= 8)
        for (int d = 0; d < nidx; d++) {
            in[d] = ou[d] = NULL;
            split_swz_terms(g->a, idx[d], cb->strides[d], period, &in[d], &ou[d]);
            nout += ou[d] != NULL;
            if (!in[d]) in[d] = ir_i32(g->a, 0);
            if (!ou[d]) ou[d] = ir_i32(g->a, 0);
        }
    if (nout) {
        out(g, "(");
        emit_index_raw(g, cb, ou, nidx, loc);
        out(g, ") + ");
        out(g, ts_cuda_swz_open(z));
        emit_index_raw(g, cb, in, nidx, loc);
        out(g, ts_cuda_swz_close(g->a, z));
        return;
    }
    out(g, ts_cuda_swz_open(z));
    emit_index_raw(g, cb, idx, nidx, loc);
    out(g, ts_cuda_swz_close(g->a, z));
}

const char *ts_cuda_swz_open(const IrSwizzle *z) { return z->lblk > 0 ? "TS_SWZ(ts_blk((" : "TS_SWZ(("; }

const char *ts_cuda_swz_close(TsArena *a, const IrSwizzle *z) {
    if (z->lblk > 0)
        return ts_sprintf(a, "), %d, %d, %lld), %d, %d, %d)", z->lblk, z->lcols, (long long)z->rows, z->bits, z->base,
                          z->shift);
    return ts_sprintf(a, "), %d, %d, %d)", z->bits, z->base, z->shift);
}

/* buf[idx] as an lvalue/rvalue of the storage type; volatile for the
 * polling loads and release stores of blocking kernels (pass poll_marks). */
static void emit_elem(Cg *g, const CgBuf *cb, IrExpr *const *idx, int nidx, TsLoc loc, int vol) {
    if (vol) outf(g, "(*(volatile %s *)&%s[", storage_ctype(cb->buf->dt), cb->name);
    else outf(g, "%s[", cb->name);
    emit_index(g, cb, idx, nidx, loc);
    out(g, vol ? "])" : "]");
}

/* The pointer to a global operand's element idx of vector copy s, as
 * `name + (offset)`; where the pass split_address wrote each index as
 * base + step (vcopy.split), as `name + (base offset) + (step offset)`:
 * two pointer additions, the first the same in every copy of a loop nest
 * (split_address marks only tensor parameters indexed in every dimension,
 * and nothing in bounds-checked builds, whose checks take each index whole). */
static void emit_gptr(Cg *g, const IrStmt *s, const CgBuf *cb, IrExpr *const *idx, int nidx) {
    /* split_address split the global side: a tensor parameter, every dimension, unchecked build */
    if (s->vcopy.split && cb->buf->scope == IR_SCOPE_GLOBAL) {
        if (g->check || !cb->glob || nidx != cb->buf->ndim || nidx > 8)
            ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: a split copy the printer cannot write as base + step");
        IrExpr *base[8], *step[8];
        for (int d = 0; d < nidx; d++) {
            if (idx[d]->kind != IR_E_BIN || idx[d]->bin.op != IR_ADD)
                ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: a split copy index is not base + step");
            base[d] = idx[d]->bin.a;
            step[d] = idx[d]->bin.b;
        }
        outf(g, "%s + (", cb->name);
        emit_index(g, cb, base, nidx, s->loc);
        out(g, ") + (");
        emit_index(g, cb, step, nidx, s->loc);
        out(g, ")");
        return;
    }
    outf(g, "%s + (", cb->name);
    emit_index(g, cb, idx, nidx, s->loc);
    out(g, ")");
}

static void cu_load(TsCxGen *x, const IrExpr *e) {
    Cg *g = x->user;
    const CgBuf *cb = find_buf(g, e->load.buf, e->loc);
    int vol = e->load.acquire && cb->glob; /* a polling load (pass poll_marks) */
    const char *open = ts_cx_load_conv(x, cb->buf->dt), *close = ")";
    if (e->load.bits) ts_cx_bits_load(x, cb->buf->dt, &open, &close); /* the stored bits, no conversion */
    out(g, open);
    emit_elem(g, cb, e->load.idx, e->load.nidx, e->loc, vol);
    out(g, close);
}

/* An external call (T.call_extern) as written: the name, then each
 * argument, an address (IR_EXTERN_ADDR) as `&element` (a pointer to the
 * element's storage type), any other in its compute type. */
static void emit_extern_call(Cg *g, const IrExpr *e) {
    outf(g, "%s(", e->call.args[0]->str);
    for (int i = 1; i < e->call.nargs; i++) {
        if (i > 1) out(g, ", ");
        emit_expr(g, e->call.args[i]);
    }
    out(g, ")");
}

static void cu_extern(TsCxGen *x, const IrExpr *e) {
    Cg *g = x->user;
    if (e->call.fn == IR_EXTERN_ADDR) {
        const IrExpr *ld = e->call.args[0];
        out(g, "(&");
        emit_elem(g, find_buf(g, ld->load.buf, ld->loc), ld->load.idx, ld->load.nidx, ld->loc, 0);
        out(g, ")");
        return;
    }
    /* a value: in the compute type of its dtype; a 16- or 8-bit float is
     * stored and passed as its bits here, so what such a function returns
     * could not be read as a number: verify_lowered refuses it (passes.c) */
    if (ts_dtype_is_float(e->dt) && e->dt != TS_FLOAT32 && e->dt != TS_FLOAT64)
        ts_fail_at(g->d, TS_ERR_INTERNAL, e->loc,
                   "CUDA codegen: T.call_extern('%s') returning %s used as a value (verify_lowered refuses it)",
                   e->call.args[0]->str, ts_dtype_name(e->dt));
    outf(g, "((%s)", compute_ctype(g, e->dt, e->loc));
    emit_extern_call(g, e);
    out(g, ")");
}

/* ---- scopes, blocks and barriers -------------------------------------------- */

static void scope_open(Cg *g) { ts_cx_scope_open(g->a, &g->scopes); }
static void scope_close(Cg *g) { ts_cx_scope_close(&g->scopes); }

static void emit_body(Cg *g, const IrStmt *s) {
    if (!s) return;
    if (s->kind == IR_S_SEQ) {
        for (int i = 0; i < s->seq.n; i++) emit_stmt(g, s->seq.v[i]);
    } else {
        emit_stmt(g, s);
    }
}

/* `{` body `}` as a new scope; the caller has written the header. */
static void emit_block(Cg *g, const IrStmt *s) {
    out(g, "{\n");
    g->ind++;
    scope_open(g);
    emit_body(g, s);
    scope_close(g);
    g->ind--;
    line_start(g);
    out(g, "}");
}

/* A block barrier (IR_S_BARRIER, placed by insert_sync).  Marked release
 * (pass poll_marks, blocking kernels) it is also a release fence: every
 * thread's global writes are visible (to other blocks) before any thread
 * passes it, so a flag stored after it by one thread follows the block's
 * data. */
static void emit_sync(Cg *g, bool release) {
    if (release) {
        line_start(g);
        out(g, "__threadfence();\n");
    }
    line_start(g);
    out(g, "__syncthreads();\n");
}

/* ---- statements, one function per kind -------------------------------------- */

/* A loop bound to a thread range (thread-level IR): the thread whose flat
 * index is in [min, min + extent) runs the body once with the loop variable
 * equal to that index. */
static void emit_thread_range(Cg *g, const IrStmt *s) {
    const IrVar *v = s->for_.var;
    const char *n = ts_cx_name(g->a, v->name, v->id);
    line_start(g);
    outf(g, "{\n");
    g->ind++;
    line_start(g);
    outf(g, "const %s %s = (%s)ts_tid;\n", compute_ctype(g, v->dt, s->loc), n, compute_ctype(g, v->dt, s->loc));
    line_start(g);
    int64_t lo, ext;
    if (!(ir_is_const_int(s->for_.min, &lo) && lo == 0 && ir_is_const_int(s->for_.extent, &ext) &&
          ext >= g->nthreads)) { /* (the whole block needs no test) */
        outf(g, "if (%s >= ", n);
        emit_expr(g, s->for_.min);
        outf(g, " && %s < (", n);
        emit_expr(g, s->for_.min);
        out(g, ") + (");
        emit_expr(g, s->for_.extent);
        out(g, ")) ");
    }
    emit_block(g, s->for_.body);
    out(g, "\n");
    g->ind--;
    line_start(g);
    out(g, "}\n");
}

static void emit_for(Cg *g, const IrStmt *s) {
    if (s->for_.kind == IR_FOR_THREAD) {
        CgCtx ctx = g->ctx;
        g->ctx = CTX_THREAD;
        emit_thread_range(g, s);
        g->ctx = ctx;
        return;
    }
    if (g->ctx == CTX_UNIFORM && s->for_.kind == IR_FOR_PARALLEL)
        ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: a T.Parallel loop outside a thread range "
                                                  "(partition_threads did not run)");
    const IrVar *v = s->for_.var;
    const char *n = ts_cx_name(g->a, v->name, v->id);
    int64_t c;
    if (s->for_.kind == IR_FOR_UNROLL && ir_is_const_int(s->for_.extent, &c)) {
        line_start(g);
        out(g, "#pragma unroll\n");
    }
    line_start(g);
    outf(g, "for (%s %s = ", compute_ctype(g, v->dt, s->loc), n);
    emit_expr(g, s->for_.min);
    outf(g, ", %s_end = %s + (", n, n);
    emit_expr(g, s->for_.extent);
    outf(g, "); %s < %s_end; %s++) ", n, n, n);
    emit_block(g, s->for_.body);
    out(g, "\n");
}

static void emit_if(Cg *g, const IrStmt *s) {
    line_start(g);
    out(g, "if (");
    emit_expr(g, s->if_.cond);
    out(g, ") ");
    emit_block(g, s->if_.then);
    if (s->if_.else_) {
        out(g, " else ");
        emit_block(g, s->if_.else_);
    }
    out(g, "\n");
}

static void emit_while(Cg *g, const IrStmt *s) {
    line_start(g);
    out(g, "while (");
    emit_expr(g, s->while_.cond);
    out(g, ") ");
    emit_block(g, s->while_.body);
    out(g, "\n");
    if (s->while_.acquire) { /* partition_threads: the loop waited on another block */
        line_start(g);
        out(g, "__threadfence(); /* acquire: see what the awaited block wrote */\n");
    }
}

/* The store itself, `buf[idx] = value;`, at the current indentation. */
static void emit_store_line(Cg *g, const IrStmt *s, const CgBuf *cb) {
    TsDType dt = cb->buf->dt;
    int vol = s->store.release && cb->glob; /* pass poll_marks: a release store */
    const IrExpr *v = s->store.value;
    if (v && v->kind == IR_E_CAST && v->dt == dt && !s->store.bits) v = v->un.a; /* the store converts like the cast */
    if (vol) {
        line_start(g);
        out(g, "__threadfence();\n");
    }
    line_start(g);
    emit_elem(g, cb, s->store.idx, s->store.nidx, s->loc, vol);
    out(g, " = ");
    if (v && v->kind == IR_E_LOAD && v->load.buf->dt == dt && !v->load.bits && !s->store.bits) {
        /* copying an element of the same dtype: move the stored bits */
        const CgBuf *src = find_buf(g, v->load.buf, v->loc);
        emit_elem(g, src, v->load.idx, v->load.nidx, v->loc, v->load.acquire && src->glob);
        out(g, ";\n");
        return;
    }
    const char *open = ts_cx_store_conv(cx(g), dt), *close = "))";
    if (s->store.bits) ts_cx_bits_store(cx(g), dt, &open, &close); /* bits as they are */
    out(g, open);
    emit_expr(g, v);
    out(g, close);
    out(g, ";\n");
}

static void emit_store(Cg *g, const IrStmt *s) { emit_store_line(g, s, find_buf(g, s->store.buf, s->loc)); }

/* buf[idx] += value: a plain update on private buffers, an atomic on
 * shared, fragment and global ones. */
static void emit_atomic_line(Cg *g, const IrStmt *s, const CgBuf *cb) {
    TsDType dt = cb->buf->dt;
    line_start(g);
    if (is_private(cb->buf)) {
        emit_elem(g, cb, s->store.idx, s->store.nidx, s->loc, 0);
        outf(g, " = %s%s", ts_cx_store_conv(cx(g), dt), ts_cx_load_conv(cx(g), dt));
        emit_elem(g, cb, s->store.idx, s->store.nidx, s->loc, 0);
        out(g, ") + (");
        emit_expr(g, s->store.value);
        out(g, ")));\n");
        return;
    }
    const char *fn, *arg;
    switch (dt) {
    case TS_BOOL: /* refused by verify_lowered (passes.c cuda_capability_pre) */
        ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: an atomic add on the bool buffer '%s'", cb->buf->name);
    case TS_FLOAT16: fn = "f16"; arg = "float"; break;
    case TS_BFLOAT16: fn = "bf16"; arg = "float"; break;
    case TS_FLOAT8_E4M3: fn = "e4m3"; arg = "float"; break;
    case TS_FLOAT8_E5M2: fn = "e5m2"; arg = "float"; break;
    case TS_FLOAT32: fn = "f32"; arg = "float"; break;
    case TS_FLOAT64: fn = "f64"; arg = "double"; break;
    case TS_INT8: fn = "i8"; arg = "ts_i64"; break;
    case TS_UINT8: fn = "u8"; arg = "ts_i64"; break;
    case TS_INT16: fn = "i16"; arg = "ts_i64"; break;
    case TS_UINT16: fn = "u16"; arg = "ts_i64"; break;
    case TS_INT32: fn = "i32"; arg = "ts_i64"; break;
    case TS_UINT32: fn = "u32"; arg = "ts_u32"; break;
    case TS_INT64: fn = "i64"; arg = "ts_i64"; break;
    default: fn = "u64"; arg = "ts_u64"; break;
    }
    outf(g, "ts_atomic_add_%s(&%s[", fn, cb->name);
    emit_index(g, cb, s->store.idx, s->store.nidx, s->loc);
    outf(g, "], (%s)(", arg);
    emit_expr(g, s->store.value);
    out(g, "));\n");
}

static void emit_atomic(Cg *g, const IrStmt *s) { emit_atomic_line(g, s, find_buf(g, s->store.buf, s->loc)); }

static void emit_let(Cg *g, const IrStmt *s) {
    const IrVar *v = s->let.var;
    const char *n = ts_cx_name(g->a, v->name, v->id);
    int fresh = !ts_cx_declared_here(&g->scopes, v);
    line_start(g);
    if (fresh) outf(g, "%s %s = ", compute_ctype(g, v->dt, s->loc), n);
    else outf(g, "%s = ", n);
    emit_expr(g, s->let.value);
    out(g, ";\n");
    if (fresh) ts_cx_declare(g->a, &g->scopes, v);
    for (int i = 0; i < g->bufs.n; i++) { /* T.make_tensor buffers at this address */
        const CgBuf *cb = &g->bufs.v[i];
        if (cb->buf->addr != v) continue;
        const char *st = storage_ctype(cb->buf->dt);
        if (!fresh)
            ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: the address of T.make_tensor '%s' bound twice",
                       cb->buf->name);
        line_start(g);
        outf(g, "%s *const %s = (%s *)(ts_u64)(%s); /* T.make_tensor */\n", st, cb->name, st, n);
        for (int d = 0; d < cb->buf->ndim; d++) {
            int64_t sd = 0, nd = 0;
            if (!ir_is_const_int(cb->buf->strides[d], &sd) || !ir_is_const_int(cb->buf->shape[d], &nd))
                ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: T.make_tensor '%s' of a non-constant shape",
                           cb->buf->name);
            line_start(g);
            outf(g, "const ts_i64 %s_s%d = %lldLL, %s_n%d = %lldLL;\n", cb->name, d, (long long)sd, cb->name, d,
                 (long long)nd);
            line_start(g);
            outf(g, "(void)%s_s%d; (void)%s_n%d;\n", cb->name, d, cb->name, d);
        }
    }
}

/* printf of "msg: block (x, y, z): ..." lines, like the C target's T.print. */
static void emit_print_body(Cg *g, const IrStmt *s) {
    const char *msg = s->print.msg ? s->print.msg : "";
    if (s->print.value) {
        const IrExpr *v = s->print.value;
        char c = cat_of(g, v->dt, v->loc);
        line_start(g);
        out(g, "printf(\"%s%sblock (%lld, %lld, %lld): ");
        out(g, c == 'f' || c == 'd' ? "%g" : c == 'u' || c == 'U' ? "%llu" : "%lld");
        out(g, "\\n\", ");
        ts_cx_string(cx(g), msg);
        outf(g, ", \"%s\", (long long)ts_bidx0, (long long)ts_bidx1, (long long)ts_bidx2, ", msg[0] ? ": " : "");
        out(g, c == 'f' || c == 'd' ? "(double)(" : c == 'u' || c == 'U' ? "(unsigned long long)(" : "(long long)(");
        emit_expr(g, v);
        out(g, "));\n");
        return;
    }
    if (!s->print.buf) ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: T.print of nothing");
    const CgBuf *cb = find_buf(g, s->print.buf, s->loc);
    const IrBuffer *b = cb->buf;
    line_start(g);
    out(g, "{\n");
    g->ind++;
    for (int i = 0; i < b->ndim; i++) {
        line_start(g);
        outf(g, "for (ts_i64 ts_p%d = 0; ts_p%d < ", i, i);
        if (cb->glob) outf(g, "%s_n%d", cb->name, i);
        else emit_expr(g, b->shape[i]);
        outf(g, "; ts_p%d++)\n", i);
        g->ind++;
    }
    char c = cat_of(g, b->dt, b->loc);
    line_start(g);
    out(g, "printf(\"%s%sblock (%lld, %lld, %lld): ");
    for (const char *p = b->name; *p; p++)
        if (*p != '%' && *p != '"' && *p != '\\' && *p != '?' && *p >= 32 && *p < 127) outf(g, "%c", *p);
    out(g, "[");
    for (int i = 0; i < b->ndim; i++) out(g, i ? ", %lld" : "%lld");
    outf(g, "] = %s\\n\", ", c == 'f' || c == 'd' ? "%g" : c == 'u' || c == 'U' ? "%llu" : "%lld");
    ts_cx_string(cx(g), msg);
    outf(g, ", \"%s\", (long long)ts_bidx0, (long long)ts_bidx1, (long long)ts_bidx2", msg[0] ? ": " : "");
    for (int i = 0; i < b->ndim; i++) outf(g, ", (long long)ts_p%d", i);
    out(g, c == 'f' || c == 'd' ? ", (double)" : c == 'u' || c == 'U' ? ", (unsigned long long)" : ", (long long)");
    outf(g, "%s%s[", ts_cx_load_conv(cx(g), b->dt), cb->name);
    for (int i = 0; i < b->ndim; i++) {
        if (i) out(g, " + ");
        if (cb->glob) outf(g, "ts_p%d * %s_s%d", i, cb->name, i);
        else outf(g, "ts_p%d * %lldLL", i, (long long)cb->strides[i]);
    }
    if (b->ndim == 0) out(g, "0");
    out(g, "]));\n");
    g->ind -= b->ndim + 1;
    line_start(g);
    out(g, "}\n");
}

/* (partition_threads gives a uniform T.print to one thread) */
static void emit_print(Cg *g, const IrStmt *s) { emit_print_body(g, s); }

/* A T.gemm kept for tensor cores: one call of its gemm function by every
 * thread of the block (uniform code only: mma.sync needs whole warps);
 * insert_sync placed the barriers its reads and writes need. */
static TsCudaCommBuf comm_buf(void *gv, const IrBuffer *b) {
    const CgBuf *cb = find_buf(gv, b, b->loc);
    return (TsCudaCommBuf){cb->name, cb->param, cb->strides};
}

/* A communication primitive (comm_cuda.c): in uniform code every thread
 * arrives (insert_sync puts barriers around it); in a thread range (a
 * partitioned T.Parallel, a divergent branch) done by the thread alone,
 * where the primitive allows it (not the block barriers). */
static void emit_comm(Cg *g, const IrStmt *s) {
    int per_thread = g->ctx != CTX_UNIFORM;
    if (per_thread && !ts_cuda_comm_per_thread_ok(s->op)) /* (verify_lowered refuses it: verify_target.c) */
        ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: T.%s in per-thread code", ts_comm_name(s->op->comm));
    TsCudaComm h = {cx(g), g->ind, g->nthreads, comm_buf, g, per_thread};
    ts_cuda_comm_emit(&h, s);
}

/* A tensor-core gemm in per-thread code: pass verify_lowered refuses it
 * (with the user's message), so here it is an internal error. */
static void require_uniform_gemm(Cg *g, const IrStmt *s) {
    if (g->ctx != CTX_UNIFORM)
        ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: a tensor-core gemm in per-thread code "
                                                  "(verify_lowered refuses it)");
}

/* A wgmma gemm: its function on the tiles' shared addresses (the regions'
 * starts, multiples of the swizzle's period: plan_wgmma) and the
 * accumulator's registers. */
static void emit_wgmma_call(Cg *g, const IrStmt *s) {
    const IrTileOp *op = s->op;
    const CgWg *site = NULL;
    for (int i = 0; i < g->wg_sites.n; i++)
        if (g->wg_sites.v[i].op == op) site = &g->wg_sites.v[i];
    if (!site) ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: a wgmma gemm was not planned");
    require_uniform_gemm(g, s);
    line_start(g);
    outf(g, "ts_wgmma_%d(", site->fn);
    for (int r = 0; r < 2; r++) {
        const CgBuf *cb = find_buf(g, op->r[r].buf, s->loc);
        outf(g, "ts_wg_smem(%s + (", cb->name);
        emit_index_raw(g, cb, op->r[r].start, op->r[r].ndim, s->loc);
        out(g, ")), ");
    }
    outf(g, "%s, ts_tid);\n", find_buf(g, op->r[2].buf, s->loc)->name);
}

static void emit_tileop(Cg *g, const IrStmt *s) {
    const IrTileOp *op = s->op;
    if (op->kind == TS_OP_COMM && op->inst == TS_OP_INST_COMM) {
        emit_comm(g, s);
        return;
    }
    if (op->kind == TS_OP_GEMM && op->inst == TS_OP_INST_WGMMA) {
        emit_wgmma_call(g, s);
        return;
    }
    if (op->kind != TS_OP_GEMM || op->inst != TS_OP_INST_MMA_SYNC)
        ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: a tile operator was not lowered");
    const CgMma *site = NULL;
    for (int i = 0; i < g->mma_sites.n; i++)
        if (g->mma_sites.v[i].op == op) site = &g->mma_sites.v[i];
    if (!site) ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: a tensor-core gemm was not planned");
    require_uniform_gemm(g, s);
    line_start(g);
    outf(g, "ts_gemm_%d(", site->fn);
    if (g->mma_fns.v[site->fn].creg) {
        for (int r = 0; r < 2; r++) {
            const CgBuf *cb = find_buf(g, op->r[r].buf, s->loc);
            if (is_private(cb->buf)) {
                outf(g, "%s, 0, ", cb->name);
                continue;
            }
            outf(g, "%s, (int)(", cb->name);
            emit_index_raw(g, cb, op->r[r].start, op->r[r].ndim, s->loc);
            out(g, "), ");
        }
        outf(g, "%s, ", find_buf(g, op->r[2].buf, s->loc)->name);
        if (op->mma_part) outf(g, "ts_fr%d, ", op->mma_frag);
        if (site->lo) outf(g, "ts_tid - %d);\n", site->lo);
        else out(g, "ts_tid);\n");
        return;
    }
    for (int r = 0; r < 3; r++) {
        const CgBuf *cb = find_buf(g, op->r[r].buf, s->loc);
        outf(g, "%s + (", cb->name);
        emit_index(g, cb, op->r[r].start, op->r[r].ndim, s->loc);
        out(g, "), ");
    }
    if (site->lo) outf(g, "ts_tid - %d);\n", site->lo);
    else out(g, "ts_tid);\n");
}

static bool named_barrier(const IrStmt *s, void *ctx) {
    (void)ctx;
    return (s->kind == IR_S_BARRIER && s->barrier.id) || s->kind == IR_S_MBAR;
}

/* The kernel needs mbar_cuda.c's helpers. */
static bool mbar_used(const IrKernel *k) { return ir_stmt_any(k->body, named_barrier, NULL); }

/* T.ws: only the role's threads run its body, as their uniform code. */
static void emit_role(Cg *g, const IrStmt *s) {
    int lo = g->role_lo, n = g->role_n;
    if (g->ctx != CTX_UNIFORM || n)
        ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: a T.ws role inside per-thread code or another role");
    g->role_lo = s->role.lo;
    g->role_n = s->role.n;
    line_start(g);
    outf(g, "if (ts_tid >= %d && ts_tid < %d) { /* T.ws role %d */\n", s->role.lo, s->role.lo + s->role.n, s->role.id);
    g->ind++;
    scope_open(g);
    emit_body(g, s->role.body);
    scope_close(g);
    g->ind--;
    line_start(g);
    out(g, "}\n");
    g->role_lo = lo;
    g->role_n = n;
}

/* An mbarrier operation (mbar_cuda.c): each thread that runs it does it. */
static void emit_mbar(Cg *g, const IrStmt *s) {
    const CgBuf *cb = find_buf(g, s->mbar.buf, s->loc); /* (expect_tx below sm_90: refused by verify_lowered) */
    static const char *const fn[] = {"ts_mbar_init", "ts_mbar_arrive", "ts_mbar_expect_tx", "ts_mbar_wait",
                                     "ts_mbar_arrive_async"};
    line_start(g);
    outf(g, "%s%s(&%s[", fn[s->mbar.op], s->mbar.noinc ? "_noinc" : "", cb->name);
    emit_expr(g, s->mbar.idx);
    out(g, "]");
    if (s->mbar.value) {
        out(g, ", (ts_u32)(");
        emit_expr(g, s->mbar.value);
        out(g, ")");
    }
    out(g, ");\n");
}

/* A thread-level vector copy: `lanes` consecutive elements along the last
 * dimension, whose byte size is 4, 8 or 16, as one move (cp.async for async
 * copies, zero-filling when the predicate is false), or element by element
 * otherwise.  A global operand's contiguity (last stride 1) and alignment
 * are run-time facts: they are tested here, and a vector that fails the test
 * moves element by element (an async copy then completes at once, which
 * its wait allows). */
/* A vector copy between a global tensor and a thread's registers (a
 * fragment's register array, layout_inference's copy nests): one vector
 * load or store through a register-sized vector type, whose parts go to
 * the array's elements one by one (their indices are constants once the
 * loops are unrolled, so the array stays in registers; taking its address
 * would put it in local memory).  The global side's contiguity and
 * alignment are tested as for the other copies; where they fail, or the
 * element type has no such vector type, element by element. */
static void emit_vreg_move(Cg *g, const IrStmt *s, const CgBuf *rb, IrExpr *const *ri, int load, const char *vt) {
    static const char *const part[4] = {"x", "y", "z", "w"};
    int lanes = s->vcopy.lanes;
    line_start(g);
    if (load) {
        outf(g, "const %s ts_w = ts_p ? *(const %s *)ts_g : make_%s(", vt, vt, vt);
        for (int e = 0; e < lanes; e++) out(g, e ? ", 0" : "0");
        out(g, ");\n");
        for (int e = 0; e < lanes; e++) {
            line_start(g);
            outf(g, "%s[(", rb->name);
            emit_index(g, rb, ri, 1, s->loc);
            outf(g, ") + %d] = ts_w.%s;\n", e, part[e]);
        }
    } else {
        outf(g, "if (ts_p) *(%s *)ts_g = make_%s(", vt, vt);
        for (int e = 0; e < lanes; e++) {
            outf(g, "%s%s[(", e ? ", " : "", rb->name);
            emit_index(g, rb, ri, 1, s->loc);
            outf(g, ") + %d]", e);
        }
        out(g, ");\n");
    }
}

/* ---- converting vector copies (IR_S_VCOPY between float32 and float16 /
 * bfloat16).  The source vector is read as one move of its packed type
 * (float2/float4 for float32; 32-bit words of two 16-bit values for the
 * half types), each lane widened to float, and the destination vector is
 * built from the lanes (two 16-bit values per word by one paired cvt,
 * ts_f2h2 / ts_f2bf2) and written as one move: a 4-lane float32 <->
 * float16 copy is one 16-byte and one 8-byte access and two conversions
 * instead of eight 2- and 4-byte accesses and four.  Element by element
 * where the global side is strided or misaligned, as for other copies. */

/* The packed vector type of `lanes` elements of dt, or NULL. */
static const char *cvt_vtype(TsDType dt, int lanes) {
    if (dt == TS_FLOAT32) return lanes == 4 ? "float4" : lanes == 2 ? "float2" : NULL;
    if (dt == TS_FLOAT16 || dt == TS_BFLOAT16) return lanes == 4 ? "uint2" : lanes == 2 ? "ts_u32" : NULL;
    return NULL;
}

static const char *cvt_vzero(const char *vt) {
    return !strcmp(vt, "float4")   ? "make_float4(0, 0, 0, 0)"
           : !strcmp(vt, "float2") ? "make_float2(0, 0)"
           : !strcmp(vt, "uint4")  ? "make_uint4(0u, 0u, 0u, 0u)"
           : !strcmp(vt, "uint2")  ? "make_uint2(0u, 0u)"
                                   : "0u";
}

/* Spellings around a stored element of dt that make it a float, and
 * around a float that make it the stored element. */
static const char *to_float_open(TsDType dt) {
    return dt == TS_FLOAT16 ? "ts_h2f(" : dt == TS_BFLOAT16 ? "ts_bf2f(" : "(";
}
static const char *from_float_open(TsDType dt) {
    return dt == TS_FLOAT16 ? "ts_f2h(" : dt == TS_BFLOAT16 ? "ts_f2bf(" : "(";
}

/* Lane e of the packed vector variable ts_w (dtype dt), as a float. */
static void put_lane(Cg *g, TsDType dt, int lanes, int e) {
    static const char *const part[4] = {"x", "y", "z", "w"};
    if (dt == TS_FLOAT32) outf(g, "ts_w.%s", part[e]);
    else if (lanes == 2) outf(g, "%s(ts_u16)(ts_w%s))", to_float_open(dt), e ? " >> 16" : "");
    else outf(g, "%s(ts_u16)(ts_w.%s%s))", to_float_open(dt), part[e / 2], e % 2 ? " >> 16" : "");
}

/* The source of a converting copy's lanes: the packed vector ts_w, or a
 * register array's elements rb[(ri) + e]. */
typedef struct CvtSrc {
    const CgBuf *rb;      /* register array, or NULL: ts_w */
    IrExpr *const *ri;    /* its index (one) */
    TsDType dt;           /* the source's dtype */
} CvtSrc;

static void put_src_lane(Cg *g, const IrStmt *s, const CvtSrc *c, int e) {
    if (!c->rb) {
        put_lane(g, c->dt, s->vcopy.lanes, e);
        return;
    }
    outf(g, "%s%s[(", to_float_open(c->dt), c->rb->name);
    emit_index(g, c->rb, c->ri, 1, s->loc);
    outf(g, ") + %d])", e);
}

/* The packed destination vector of dtype dt built from the source's lanes. */
static void put_pack(Cg *g, const IrStmt *s, TsDType dt, const CvtSrc *c) {
    int lanes = s->vcopy.lanes;
    if (dt == TS_FLOAT32) {
        outf(g, "make_float%d(", lanes);
        for (int e = 0; e < lanes; e++) {
            if (e) out(g, ", ");
            put_src_lane(g, s, c, e);
        }
        out(g, ")");
        return;
    }
    const char *f = dt == TS_FLOAT16 ? "ts_f2h2(" : "ts_f2bf2(";
    if (lanes == 4) out(g, "make_uint2(");
    for (int w = 0; w < lanes / 2; w++) {
        outf(g, "%s%s", w ? ", " : "", f);
        put_src_lane(g, s, c, 2 * w);
        out(g, ", ");
        put_src_lane(g, s, c, 2 * w + 1);
        out(g, ")");
    }
    if (lanes == 4) out(g, ")");
}

/* The opening of a register <-> global vector copy's block: the copy's
 * predicate as ts_p and the global element it starts at as ts_g (the
 * buffer's base when the predicate is false, so no address is formed out
 * of bounds); the caller closes the block. */
static void open_vcopy_global(Cg *g, const IrStmt *s, const CgBuf *gb, IrExpr *const *gi, int ng, const char *st,
                              int load) {
    line_start(g);
    out(g, "{\n");
    g->ind++;
    line_start(g);
    out(g, "const bool ts_p = ");
    if (s->vcopy.pred) emit_expr(g, s->vcopy.pred);
    else out(g, "true");
    out(g, ";\n");
    line_start(g);
    outf(g, "%s%s *const ts_g = ts_p ? ", load ? "const " : "", st);
    emit_gptr(g, s, gb, gi, ng);
    outf(g, " : %s;\n", gb->name);
}

/* A register <-> global vector copy, for the two halves of its block. */
typedef struct VregCopy {
    const IrStmt *s;      /* the vcopy */
    const CgBuf *gb;      /* the global side */
    IrExpr *const *gi;    /* its indices */
    int ng;               /* how many */
    const CgBuf *rb;      /* the register array */
    IrExpr *const *ri;    /* its index (one) */
    int load;             /* 1: global -> registers; 0: registers -> global */
    const char *vt;       /* the vector type of the move, or NULL: element by element only */
    int raw16;            /* same dtype, 2-byte elements: the move is emit_vreg_move16's */
} VregCopy;

/* The block of a register <-> global vector copy (open_vcopy_global, then
 * closed here).  Inside, vec() (the move through ts_w, which needs the
 * global side contiguous and aligned) and lanes() (element by element):
 * vec() alone where the lowering proved the global side contiguous and
 * aligned; without c->vt, lanes() alone; otherwise both, behind a run-time
 * test of the stride and alignment.  One shape for the copies that convert
 * and those that do not. */
static void emit_vreg_paths(Cg *g, const VregCopy *c, void (*vec)(Cg *, const VregCopy *),
                            void (*lanes)(Cg *, const VregCopy *)) {
    const IrStmt *s = c->s;
    const CgBuf *gb = c->gb;
    open_vcopy_global(g, s, gb, c->gi, c->ng, storage_ctype(gb->buf->dt), c->load);
    if (c->vt && s->vcopy.aligned) {
        vec(g, c);
    } else {
        line_start(g);
        if (c->vt) {
            outf(g, "if (%s_s%d == 1 && ((ts_u64)ts_g & %dULL) == 0) {\n", gb->name, gb->buf->ndim - 1,
                 s->vcopy.lanes * (ts_dtype_bits(gb->buf->dt) / 8) - 1);
            g->ind++;
            vec(g, c);
            g->ind--;
            line_start(g);
            out(g, "} else {\n");
        } else {
            out(g, "{\n");
        }
        g->ind++;
        lanes(g, c);
        g->ind--;
        line_start(g);
        out(g, "}\n");
    }
    g->ind--;
    line_start(g);
    out(g, "}\n");
}

/* The vector move of a converting register <-> global copy: the packed
 * global vector ts_w unpacked into the registers, or packed from them. */
static void emit_vreg_cvt_vec(Cg *g, const VregCopy *c) {
    const IrStmt *s = c->s;
    TsDType gdt = c->gb->buf->dt, rdt = c->rb->buf->dt;
    if (c->load) {
        line_start(g);
        outf(g, "const %s ts_w = ts_p ? *(const %s *)ts_g : %s;\n", c->vt, c->vt, cvt_vzero(c->vt));
        CvtSrc src = {NULL, NULL, gdt};
        for (int e = 0; e < s->vcopy.lanes; e++) {
            line_start(g);
            outf(g, "%s[(", c->rb->name);
            emit_index(g, c->rb, c->ri, 1, s->loc);
            outf(g, ") + %d] = %s", e, from_float_open(rdt));
            put_src_lane(g, s, &src, e);
            out(g, ");\n");
        }
    } else {
        CvtSrc src = {c->rb, c->ri, rdt};
        line_start(g);
        outf(g, "if (ts_p) *(%s *)ts_g = ", c->vt);
        put_pack(g, s, gdt, &src);
        out(g, ";\n");
    }
}

/* The element-by-element path of a converting register <-> global copy. */
static void emit_vreg_cvt_lanes(Cg *g, const VregCopy *c) {
    const IrStmt *s = c->s;
    const CgBuf *gb = c->gb, *rb = c->rb;
    TsDType gdt = gb->buf->dt, rdt = rb->buf->dt;
    int glast = gb->buf->ndim - 1;
    for (int e = 0; e < s->vcopy.lanes; e++) {
        line_start(g);
        if (c->load) {
            outf(g, "%s[(", rb->name);
            emit_index(g, rb, c->ri, 1, s->loc);
            outf(g, ") + %d] = %sts_p ? %sts_g[%d * %s_s%d]) : 0.0f);\n", e, from_float_open(rdt),
                 to_float_open(gdt), e, gb->name, glast);
        } else {
            outf(g, "if (ts_p) ts_g[%d * %s_s%d] = %s%s%s[(", e, gb->name, glast, from_float_open(gdt),
                 to_float_open(rdt), rb->name);
            emit_index(g, rb, c->ri, 1, s->loc);
            outf(g, ") + %d]));\n", e);
        }
    }
}

/* A converting copy between shared and global memory or within shared
 * memory (emit_vcopy's case). */
static void emit_vcopy_mem_cvt(Cg *g, const IrStmt *s, const CgBuf *db, const CgBuf *sb) {
    int lanes = s->vcopy.lanes;
    TsDType ddt = db->buf->dt, sdt = sb->buf->dt;
    int dglob = db->glob, sglob = sb->glob;
    const char *dvt = cvt_vtype(ddt, lanes), *svt = cvt_vtype(sdt, lanes);
    int dbytes = lanes * (ts_dtype_bits(ddt) / 8), sbytes = lanes * (ts_dtype_bits(sdt) / 8);
    line_start(g);
    out(g, "{\n");
    g->ind++;
    line_start(g);
    out(g, "const bool ts_p = ");
    if (s->vcopy.pred) emit_expr(g, s->vcopy.pred);
    else out(g, "true");
    out(g, ";\n");
    line_start(g);
    outf(g, "%s *const ts_d = ", storage_ctype(ddt));
    emit_gptr(g, s, db, s->vcopy.didx, s->vcopy.ndi);
    out(g, ";\n");
    line_start(g);
    outf(g, "const %s *const ts_s = ts_p ? ", storage_ctype(sdt));
    emit_gptr(g, s, sb, s->vcopy.sidx, s->vcopy.nsi);
    outf(g, " : %s;\n", sb->name);
    line_start(g);
    out(g, "const bool ts_v = ");
    if (!dvt || !svt) out(g, "false");
    else if (s->vcopy.aligned) out(g, "true");
    else {
        out(g, "true");
        if (dglob) outf(g, " && %s_s%d == 1 && ((ts_u64)ts_d & %dULL) == 0", db->name, db->buf->ndim - 1, dbytes - 1);
        if (sglob) outf(g, " && %s_s%d == 1 && ((ts_u64)ts_s & %dULL) == 0", sb->name, sb->buf->ndim - 1, sbytes - 1);
    }
    out(g, ";\n");
    if (dvt && svt) {
        CvtSrc c = {NULL, NULL, sdt};
        line_start(g);
        out(g, "if (ts_v) {\n");
        g->ind++;
        line_start(g);
        outf(g, "if (ts_p) {\n");
        g->ind++;
        line_start(g);
        outf(g, "const %s ts_w = *(const %s *)ts_s;\n", svt, svt);
        line_start(g);
        outf(g, "*(%s *)ts_d = ", dvt);
        put_pack(g, s, ddt, &c);
        out(g, ";\n");
        g->ind--;
        line_start(g);
        if (dglob) out(g, "}\n");
        else outf(g, "} else *(%s *)ts_d = %s;\n", dvt, cvt_vzero(dvt));
        g->ind--;
        line_start(g);
        out(g, "}\n");
    }
    char dst_el[64], src_el[64];
    if (dglob) snprintf(dst_el, sizeof dst_el, "ts_d[ts_e * %s_s%d]", db->name, db->buf->ndim - 1);
    else snprintf(dst_el, sizeof dst_el, "ts_d[ts_e]");
    if (sglob) snprintf(src_el, sizeof src_el, "ts_s[ts_e * %s_s%d]", sb->name, sb->buf->ndim - 1);
    else snprintf(src_el, sizeof src_el, "ts_s[ts_e]");
    line_start(g);
    outf(g, "if (!ts_v) for (int ts_e = 0; ts_e < %d; ts_e++) ", lanes);
    if (dglob) outf(g, "{ if (ts_p) %s = %s%s%s)); }\n", dst_el, from_float_open(ddt), to_float_open(sdt), src_el);
    else outf(g, "%s = %sts_p ? %s%s) : 0.0f);\n", dst_el, from_float_open(ddt), to_float_open(sdt), src_el);
    g->ind--;
    line_start(g);
    out(g, "}\n");
}

/* emit_vreg_move for 2-byte elements: `lanes` (2, 4 or 8) of them as 32-bit
 * words of two (the lower-indexed element in the low half), vt ts_u32 /
 * uint2 / uint4. */
static void emit_vreg_move16(Cg *g, const IrStmt *s, const CgBuf *rb, IrExpr *const *ri, int load, const char *vt) {
    static const char *const part[4] = {"x", "y", "z", "w"};
    int lanes = s->vcopy.lanes;
    const char *st = storage_ctype(rb->buf->dt);
    line_start(g);
    if (load) {
        outf(g, "const %s ts_w = ts_p ? *(const %s *)ts_g : %s;\n", vt, vt, cvt_vzero(vt));
        for (int e = 0; e < lanes; e++) {
            line_start(g);
            outf(g, "%s[(", rb->name);
            emit_index(g, rb, ri, 1, s->loc);
            if (lanes == 2) outf(g, ") + %d] = (%s)(ts_u16)(ts_w%s);\n", e, st, e ? " >> 16" : "");
            else outf(g, ") + %d] = (%s)(ts_u16)(ts_w.%s%s);\n", e, st, part[e / 2], e % 2 ? " >> 16" : "");
        }
        return;
    }
    outf(g, "if (ts_p) *(%s *)ts_g = ", vt);
    if (lanes > 2) outf(g, "make_uint%d(", lanes / 2);
    for (int w = 0; w < lanes / 2; w++) {
        for (int h = 0; h < 2; h++) {
            outf(g, "%s(ts_u32)(ts_u16)%s[(", h ? " | (" : w ? ", " : "", rb->name);
            emit_index(g, rb, ri, 1, s->loc);
            outf(g, ") + %d]%s", 2 * w + h, h ? " << 16)" : "");
        }
    }
    if (lanes > 2) out(g, ")");
    out(g, ";\n");
}

/* The vector move of a same-dtype register <-> global copy. */
static void emit_vreg_same_vec(Cg *g, const VregCopy *c) {
    (c->raw16 ? emit_vreg_move16 : emit_vreg_move)(g, c->s, c->rb, c->ri, c->load, c->vt);
}

/* The element-by-element path of a same-dtype register <-> global copy. */
static void emit_vreg_same_lanes(Cg *g, const VregCopy *c) {
    const IrStmt *s = c->s;
    const CgBuf *gb = c->gb, *rb = c->rb;
    int glast = gb->buf->ndim - 1;
    for (int e = 0; e < s->vcopy.lanes; e++) {
        line_start(g);
        if (c->load) {
            outf(g, "%s[(", rb->name);
            emit_index(g, rb, c->ri, 1, s->loc);
            outf(g, ") + %d] = ts_p ? ts_g[%d * %s_s%d] : (%s)0;\n", e, e, gb->name, glast,
                 storage_ctype(gb->buf->dt));
        } else {
            outf(g, "if (ts_p) ts_g[%d * %s_s%d] = %s[(", e, gb->name, glast, rb->name);
            emit_index(g, rb, c->ri, 1, s->loc);
            outf(g, ") + %d];\n", e);
        }
    }
}

static void emit_vcopy_reg(Cg *g, const IrStmt *s, const CgBuf *db, const CgBuf *sb) {
    int load = is_private(db->buf), lanes = s->vcopy.lanes;
    VregCopy c = {s,
                  load ? sb : db,
                  load ? s->vcopy.sidx : s->vcopy.didx,
                  load ? s->vcopy.nsi : s->vcopy.ndi,
                  load ? db : sb,
                  load ? s->vcopy.didx : s->vcopy.sidx,
                  load,
                  NULL,
                  0};
    TsDType dt = c.gb->buf->dt;
    if (db->buf->dt != sb->buf->dt) {
        /* a converting copy */
        c.vt = cvt_vtype(dt, lanes);
        emit_vreg_paths(g, &c, emit_vreg_cvt_vec, emit_vreg_cvt_lanes);
        return;
    }
    if (dt == TS_FLOAT32 && (lanes == 2 || lanes == 4)) c.vt = lanes == 4 ? "float4" : "float2";
    else if (dt == TS_INT32 && (lanes == 2 || lanes == 4)) c.vt = lanes == 4 ? "int4" : "int2";
    else if (dt == TS_UINT32 && (lanes == 2 || lanes == 4)) c.vt = lanes == 4 ? "uint4" : "uint2";
    c.raw16 = !c.vt && ts_dtype_bits(dt) == 16 && (lanes == 2 || lanes == 4 || lanes == 8);
    if (c.raw16) c.vt = lanes == 8 ? "uint4" : lanes == 4 ? "uint2" : "ts_u32";
    emit_vreg_paths(g, &c, emit_vreg_same_vec, emit_vreg_same_lanes);
}

static void emit_vcopy(Cg *g, const IrStmt *s) {
    const CgBuf *db = find_buf(g, s->vcopy.dst, s->loc), *sb = find_buf(g, s->vcopy.src, s->loc);
    if (!s->vcopy.async && s->vcopy.ndi >= 1 && s->vcopy.nsi >= 1 &&
        ((is_private(db->buf) && sb->glob) || (is_private(sb->buf) && db->glob))) {
        emit_vcopy_reg(g, s, db, sb);
        return;
    }
    if (db->buf->dt != sb->buf->dt) {
        if (s->vcopy.async)
            ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: an async copy that converts %s to %s",
                       ts_dtype_name(sb->buf->dt), ts_dtype_name(db->buf->dt));
        emit_vcopy_mem_cvt(g, s, db, sb);
        return;
    }
    int es = (ts_dtype_bits(s->vcopy.dst->dt) + 7) / 8, bytes = s->vcopy.lanes * es;
    int whole = bytes == 4 || bytes == 8 || bytes == 16;
    int dglob = db->glob, sglob = sb->glob;
    const char *st = storage_ctype(s->vcopy.dst->dt);
    const char *vt = bytes == 16 ? "uint4" : bytes == 8 ? "uint2" : "ts_u32";
    if (s->vcopy.async && (!whole || db->buf->scope != IR_SCOPE_SHARED || !sglob))
        ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: an async copy of %d bytes from %s to %s", bytes,
                   ir_scope_name(sb->buf->scope), ir_scope_name(db->buf->scope));
    line_start(g);
    out(g, "{\n");
    g->ind++;
    line_start(g);
    out(g, "const bool ts_p = ");
    if (s->vcopy.pred) emit_expr(g, s->vcopy.pred);
    else out(g, "true");
    out(g, ";\n");
    line_start(g);
    outf(g, "%s *const ts_d = ", st);
    emit_gptr(g, s, db, s->vcopy.didx, s->vcopy.ndi);
    out(g, ";\n");
    line_start(g);
    outf(g, "const %s *const ts_s = ts_p ? ", st);
    emit_gptr(g, s, sb, s->vcopy.sidx, s->vcopy.nsi);
    outf(g, " : %s;\n", sb->name);
    if (s->vcopy.aligned && whole) {
        /* the lowering proved it contiguous and aligned: one move */
        line_start(g);
        if (s->vcopy.async) outf(g, "ts_cp_async<%d>(ts_d, ts_s, ts_p);\n", bytes);
        else if (dglob) outf(g, "if (ts_p) *(%s *)ts_d = *(const %s *)ts_s;\n", vt, vt);
        else outf(g, "if (ts_p) *(%s *)ts_d = *(const %s *)ts_s; else *(%s *)ts_d = %s;\n", vt, vt, vt,
                  bytes == 16 ? "make_uint4(0u, 0u, 0u, 0u)" : bytes == 8 ? "make_uint2(0u, 0u)" : "0u");
        g->ind--;
        line_start(g);
        out(g, "}\n");
        return;
    }
    /* the vector move is legal: global operands contiguous and aligned */
    line_start(g);
    out(g, "const bool ts_v = true");
    if (whole) {
        if (dglob) outf(g, " && %s_s%d == 1 && ((ts_u64)ts_d & %dULL) == 0", db->name, db->buf->ndim - 1, bytes - 1);
        if (sglob) outf(g, " && %s_s%d == 1 && ((ts_u64)ts_s & %dULL) == 0", sb->name, sb->buf->ndim - 1, bytes - 1);
    } else {
        out(g, " && false");
    }
    out(g, ";\n");
    if (whole) line_start(g);
    if (!whole) {
        /* ts_v is false: the element loop below is the only path */
    } else if (s->vcopy.async) {
        outf(g, "if (ts_v) ts_cp_async<%d>(ts_d, ts_s, ts_p);\n", bytes);
    } else if (dglob) {
        outf(g, "if (ts_v && ts_p) *(%s *)ts_d = *(const %s *)ts_s;\n", vt, vt);
    } else {
        outf(g, "if (ts_v) { if (ts_p) *(%s *)ts_d = *(const %s *)ts_s; else *(%s *)ts_d = %s; }\n", vt, vt, vt,
             bytes == 16 ? "make_uint4(0u, 0u, 0u, 0u)" : bytes == 8 ? "make_uint2(0u, 0u)" : "0u");
    }
    /* element by element: strided or misaligned global views, odd sizes */
    line_start(g);
    outf(g, "if (!ts_v) for (int ts_e = 0; ts_e < %d; ts_e++) ", s->vcopy.lanes);
    char dst_el[64], src_el[64];
    if (dglob) snprintf(dst_el, sizeof dst_el, "ts_d[ts_e * %s_s%d]", db->name, db->buf->ndim - 1);
    else snprintf(dst_el, sizeof dst_el, "ts_d[ts_e]");
    if (sglob) snprintf(src_el, sizeof src_el, "ts_s[ts_e * %s_s%d]", sb->name, sb->buf->ndim - 1);
    else snprintf(src_el, sizeof src_el, "ts_s[ts_e]");
    if (dglob) outf(g, "{ if (ts_p) %s = %s; }\n", dst_el, src_el);
    else outf(g, "%s = ts_p ? %s : (%s)0;\n", dst_el, src_el, st);
    g->ind--;
    line_start(g);
    out(g, "}\n");
}

static void emit_stmt(Cg *g, const IrStmt *s) {
    if (s) emit_kind(g, s);
}

static void emit_kind(Cg *g, const IrStmt *s) {
    switch (s->kind) {
    case IR_S_SEQ: {
        line_start(g);
        out(g, "{\n");
        g->ind++;
        scope_open(g);
        emit_body(g, s);
        scope_close(g);
        g->ind--;
        line_start(g);
        out(g, "}\n");
        return;
    }
    case IR_S_FOR: emit_for(g, s); return;
    case IR_S_IF: emit_if(g, s); return;
    case IR_S_WHILE: emit_while(g, s); return;
    case IR_S_BREAK:
        line_start(g);
        out(g, "break;\n");
        return;
    case IR_S_CONTINUE: line_start(g); out(g, "continue;\n"); return;
    case IR_S_STORE: emit_store(g, s); return;
    case IR_S_ATOMIC_ADD: emit_atomic(g, s); return;
    case IR_S_LET: emit_let(g, s); return;
    case IR_S_ALLOC: return; /* declared up front */
    case IR_S_TILEOP: emit_tileop(g, s); return;
    case IR_S_EVAL:
        if (s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_THREAD_RETURN) {
            line_start(g);
            out(g, "return;\n");
            return;
        }
        if (s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_SYNC_GRID) {
            if (!g->k->cooperative)
                ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: T.sync_grid in a kernel not cooperative");
            line_start(g);
            out(g, "ts_grid_sync(ts_grid_ws);\n");
            return;
        }
        if (s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_WGMMA_WAIT) {
            /* T.wait_wgmma (arch_hints kept it: the kernel has wgmma gemms), then the
             * accumulators it completes (pass wgmma_waits) are the registers' again */
            int64_t n = 0;
            if (!ir_is_const_int(s->eval.e->call.args[0], &n) || !g->wg_fns.n)
                ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: a wgmma wait without wgmma gemms");
            line_start(g);
            outf(g, "ts_wgmma_wait<%lld>();\n", (long long)n);
            for (int i = 0; i < s->eval.ndone; i++) {
                const IrBuffer *c = s->eval.done[i];
                if (!c->layout)
                    ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: wgmma accumulator %s without a layout", c->name);
                line_start(g);
                outf(g, "ts_wgmma_regs(%s, %lld);\n", find_buf(g, c, s->loc)->name, (long long)c->layout->local_size);
            }
            return;
        }
        if (s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_FENCE_PROXY_ASYNC) {
            /* T.fence_proxy_async (arch_hints kept it: the kernel has wgmma gemms) */
            line_start(g);
            out(g, "asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");\n");
            return;
        }
        if (s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_SET_MAX_NREG) {
            /* setmaxnreg (PTX ISA 8.0, sm_90a): pass arch_hints left it only
             * where the target architecture has it */
            int64_t cnt = 0, inc = 0;
            if (!ir_is_const_int(s->eval.e->call.args[0], &cnt) || !ir_is_const_int(s->eval.e->call.args[1], &inc))
                ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: set_max_nreg of a non-constant count");
            line_start(g);
            outf(g, "asm volatile(\"setmaxnreg.%s.sync.aligned.u32 %lld;\\n\" ::: \"memory\");\n", inc ? "inc" : "dec",
                 (long long)cnt);
            return;
        }
        if (s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_EXTERN_CALL) {
            line_start(g); /* a call statement: its dtype and value unused, as TileLang's */
            emit_extern_call(g, s->eval.e);
            out(g, ";\n");
            return;
        }
        line_start(g);
        out(g, "(void)(");
        emit_expr(g, s->eval.e);
        out(g, ");\n");
        return;
    case IR_S_PRINT: emit_print(g, s); return;
    case IR_S_BARRIER:
        if (s->barrier.idv) { /* an id computed at run time (bar.sync takes a register) */
            line_start(g);
            out(g, s->barrier.unaligned ? "ts_bar_sync_any((int)(" : "ts_bar_sync((int)(");
            emit_expr(g, s->barrier.idv);
            outf(g, "), %d);\n", s->barrier.count);
            return;
        }
        if (s->barrier.id) {
            line_start(g);
            outf(g, "%s(%d, %d);\n", s->barrier.unaligned ? "ts_bar_sync_any" : "ts_bar_sync", s->barrier.id,
                 s->barrier.count);
            return;
        }
        if (s->barrier.async_fence) {
            /* shared memory this thread wrote (stores, landed cp.async: the generic proxy)
             * may be read by wgmma (the async proxy) after the barrier: the writer's
             * proxy fence, then the barrier (PTX ISA, "Async proxy"; pass arch_hints) */
            if (!g->wg_fns.n) ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: an async-proxy fence without wgmma");
            line_start(g);
            out(g, "ts_fence_proxy_async();\n");
        }
        emit_sync(g, s->barrier.release);
        return;
    case IR_S_MBAR: emit_mbar(g, s); return;
    case IR_S_ROLE: emit_role(g, s); return;
    case IR_S_ASYNC_COMMIT: line_start(g); out(g, "ts_cp_async_commit();\n"); return;
    case IR_S_ASYNC_WAIT:
        line_start(g);
        outf(g, "ts_cp_async_wait<%d>();\n", s->async_wait.pending);
        return;
    case IR_S_VCOPY: emit_vcopy(g, s); return;
    }
    ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: statement kind %d", (int)s->kind);
}

/* ---- buffers and shared-memory layout ------------------------------------------ */

static void add_buf(Cg *g, const IrBuffer *b) {
    for (int i = 0; i < g->bufs.n; i++)
        if (g->bufs.v[i].buf == b) return;
    CgBuf cb = {b, ts_cx_name(g->a, b->name, b->id), -1, 0, 0, NULL, b->scope == IR_SCOPE_GLOBAL};
    if (b->addr) {
        /* T.make_tensor: declared at its let (emit_let) */
    } else if (b->scope == IR_SCOPE_GLOBAL) {
        for (int i = 0; i < g->k->params.n; i++)
            if (g->k->params.v[i].buf == b) cb.param = i;
        if (cb.param < 0) /* (tensors, T.alloc_global workspaces and T.make_tensor are) */
            ts_fail_at(g->d, TS_ERR_INTERNAL, b->loc, "CUDA codegen: global buffer '%s' is not a kernel parameter",
                       b->name);
    } else {
        int64_t elems = 1;
        cb.strides = TS_NEWN(g->a, int64_t, b->ndim > 0 ? b->ndim : 1);
        for (int i = b->ndim - 1; i >= 0; i--) {
            int64_t ext; /* (the elaborator's extents: constants, at most 2^40 bytes in all) */
            if (!b->shape || !ir_is_const_int(b->shape[i], &ext))
                ts_fail_at(g->d, TS_ERR_INTERNAL, b->loc, "CUDA codegen: %s buffer '%s' without constant extents",
                           ir_scope_name(b->scope), b->name);
            if (ext < 0 || ext > ((int64_t)1 << 40) || elems > ((int64_t)1 << 40) / (ext ? ext : 1))
                ts_fail_at(g->d, TS_ERR_INTERNAL, b->loc, "CUDA codegen: %s buffer '%s' is too large",
                           ir_scope_name(b->scope), b->name);
            cb.strides[i] = elems;
            elems *= ext;
            if (i == b->ndim - 1) elems += b->row_pad; /* the row stride (plan_smem's padding) */
        }
        cb.elems = elems * (b->stages > 1 ? b->stages : 1);
        if (!is_private(b)) {
            /* plan_smem placed it (and checked the block's total) */
            if (!g->k->smem_planned || b->smem_offset < 0 ||
                b->smem_offset + cb.elems * ((ts_dtype_bits(b->dt) + 7) / 8) > g->k->smem_bytes)
                ts_fail_at(g->d, TS_ERR_INTERNAL, b->loc, "CUDA codegen: %s buffer '%s' has no place in shared memory",
                           ir_scope_name(b->scope), b->name);
            cb.offset = b->smem_offset;
        } else if (cb.elems > (1 << 20)) { /* (verify_lowered refuses it: verify_target.c) */
            ts_fail_at(g->d, TS_ERR_INTERNAL, b->loc, "CUDA codegen: %s buffer '%s' of %lld elements per thread",
                       ir_scope_name(b->scope), b->name, (long long)cb.elems);
        }
    }
    ts_vec_push(g->a, g->bufs, cb);
}

/* Row stride of the matrix held by region r (its last two axes) and
 * whether element (0, 0) and every row start are aligned to q elements
 * (constant starts are folded; a run-time start must have a stride that
 * is a multiple of q). */
static int region_ld(Cg *g, const IrRegion *r, TsLoc loc, int q, int *aligned) {
    const CgBuf *cb = find_buf(g, r->buf, loc);
    int nd = r->ndim;
    if (nd < 2 || cb->strides[nd - 1] != 1)
        ts_fail_at(g->d, TS_ERR_INTERNAL, loc, "CUDA codegen: gemm operand '%s' is not a row-major matrix", r->buf->name);
    int64_t konst = 0, c, ld = cb->strides[nd - 2];
    int ok = ld % q == 0;
    for (int d = 0; d < nd; d++) {
        if (ir_is_const_int(r->start[d], &c)) konst += c * cb->strides[d];
        else if (cb->strides[d] % q) ok = 0;
    }
    *aligned = ok && konst % q == 0;
    if (ld > (1 << 24)) /* (plan_smem's limit refuses shared tiles that large; registers have no row stride) */
        ts_fail_at(g->d, TS_ERR_INTERNAL, loc, "CUDA codegen: gemm operand '%s' with a row stride of %lld", r->buf->name,
                   (long long)ld);
    return (int)ld;
}

static int region_ext(Cg *g, const IrRegion *r, int axis, TsLoc loc) {
    int64_t e;
    if (!ir_is_const_int(r->extent[axis], &e) || e <= 0)
        ts_fail_at(g->d, TS_ERR_INTERNAL, loc, "CUDA codegen: gemm operand '%s' without a constant extent",
                   r->buf->name);
    /* (the fuzzer's block_M=100000 once came here; plan_smem's shared-memory
     * limit now refuses such tiles first, and a fragment that large stays
     * in shared memory: layout_inference's register budget) */
    if (e > (1 << 16))
        ts_fail_at(g->d, TS_ERR_INTERNAL, loc, "CUDA codegen: gemm operand '%s' with an extent of %lld", r->buf->name,
                   (long long)e);
    return (int)e;
}

/* The gemm function for a kept T.gemm: shapes, strides, alignment and
 * the warp split; call sites with the same parameters share a function. */
/* The operand's start offset is a multiple of its swizzle's period (the
 * XOR pattern repeats every 2^(base + shift + bits) elements), whatever
 * the run-time indices (a pipeline stage): then
 * swizzle(start + x) == start + swizzle(x). */
static int swizzle_periodic(Cg *g, const IrRegion *r, TsLoc loc) {
    const CgBuf *cb = find_buf(g, r->buf, loc);
    const IrSwizzle *z = &r->buf->swizzle;
    int64_t period = ir_swizzle_period(z), konst = 0, c;
    for (int d = 0; d < r->ndim; d++) {
        if (ir_is_const_int(r->start[d], &c)) konst += c * cb->strides[d];
        else if (cb->strides[d] % period) return 0;
    }
    return konst % period == 0;
}

static void plan_mma(Cg *g, const IrStmt *s) {
    const IrTileOp *op = s->op;
    for (int i = 0; i < g->mma_sites.n; i++)
        if (g->mma_sites.v[i].op == op) return;
    const IrRegion *A = &op->r[0], *B = &op->r[1], *C = &op->r[2];
    TsCudaMma p;
    memset(&p, 0, sizeof p);
    int na = A->ndim, nc = C->ndim;
    const IrLayout *cl = C->buf->layout, *al = A->buf->layout;
    if (cl) { /* register mode: C (and maybe A) in registers by their layouts */
        if (cl->kind != IR_LAYOUT_MMA_C || (al && al->kind != IR_LAYOUT_MMA_C && al->kind != IR_LAYOUT_MMA_A) ||
            (al && (al->p[0] != cl->p[0] || al->p[2] != cl->p[2] || (al->kind == IR_LAYOUT_MMA_A && al->p[3] != cl->p[3]))))
            ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: gemm registers without mma layouts");
        p.creg = 1;
        p.m = (int)cl->p[0];
        p.n = (int)cl->p[1];
        p.wm = (int)cl->p[2];
        p.wn = (int)cl->p[3];
        if (al) {
            p.areg = 1;
            p.k = (int)al->p[1];
        } else {
            p.k = region_ext(g, A, op->trans_a ? na - 2 : na - 1, s->loc);
            p.lda = region_ld(g, A, s->loc, 8, &p.ldsm_a);
            if (A->buf->swizzle.kind == IR_SWIZZLE_XOR) p.swz_a = 1 + A->buf->swizzle.shift;
            p.per_a = swizzle_periodic(g, A, s->loc);
        }
        p.ldb = region_ld(g, B, s->loc, 8, &p.ldsm_b);
        if (B->buf->swizzle.kind == IR_SWIZZLE_XOR) p.swz_b = 1 + B->buf->swizzle.shift;
        p.per_b = swizzle_periodic(g, B, s->loc);
    } else {
    /* the shared-accumulator form indexes A and B unswizzled (layout inference
     * leaves their tiles plain: op/gemm.c's ts_op_gemm_plain_operands) */
    if (A->buf->swizzle.kind != IR_SWIZZLE_NONE || B->buf->swizzle.kind != IR_SWIZZLE_NONE)
        ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: a gemm with its accumulator in shared memory "
                   "reads a swizzled operand (%s)", A->buf->swizzle.kind != IR_SWIZZLE_NONE ? A->buf->name : B->buf->name);
    p.m = region_ext(g, C, nc - 2, s->loc);
    p.n = region_ext(g, C, nc - 1, s->loc);
    p.k = region_ext(g, A, op->trans_a ? na - 2 : na - 1, s->loc);
    p.lda = region_ld(g, A, s->loc, 8, &p.ldsm_a);
    p.ldb = region_ld(g, B, s->loc, 8, &p.ldsm_b);
    p.ldc = region_ld(g, C, s->loc, 2, &p.c2);
    }
    p.trans_a = op->trans_a != 0;
    p.trans_b = op->trans_b != 0;
    p.bf16 = A->buf->dt == TS_BFLOAT16;
    p.clear = op->clear_accum != 0;
    /* the gemm's warps: a T.ws role's as the passes recorded them (layout_inference,
     * partition_threads), else the block's */
    if (g->role_n && (op->mma_lo != g->role_lo || op->mma_threads != g->role_n))
        ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: a tensor-core gemm in the T.ws role of threads "
                   "[%d, %d) without that role's warps recorded", g->role_lo, g->role_lo + g->role_n);
    int mlo = op->mma_threads ? op->mma_lo : 0, mn = op->mma_threads ? op->mma_threads : g->nthreads;
    p.nwarps = mn / 32;
    p.part = op->mma_part;
    p.rolled = g->k->gemm_k_rolled; /* the quick tier's (pass tier_plan) */
    if (p.part && (!p.creg || p.areg || op->mma_frag <= 0 ||
                   ((p.k / 16) % 2 && (p.part == TS_MMA_BODY || p.part == TS_MMA_TAIL))))
        ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: a split gemm needs C in registers, A and B in "
                   "shared memory and (split across a barrier) an even number of k16 steps");
    if (p.m % 16 || p.n % 8 || p.k % 16 || p.nwarps < 1 || g->nthreads % 32 || mn % 32 || mlo % 32)
        ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: gemm %dx%dx%d on %d threads is not for tensor cores",
                   p.m, p.n, p.k, g->nthreads);
    if (!p.creg) ts_cuda_mma_plan(&p);
    int fn = -1;
    for (int i = 0; i < g->mma_fns.n && fn < 0; i++)
        if (!memcmp(&g->mma_fns.v[i], &p, sizeof p)) fn = i;
    if (fn < 0) {
        fn = g->mma_fns.n;
        ts_vec_push(g->a, g->mma_fns, p);
    }
    CgMma site = {op, fn, mlo};
    ts_vec_push(g->a, g->mma_sites, site);
}

/* The function of a wgmma gemm: every field from the IR (op->wg, wg_ni,
 * C's WGMMA_C layout). */
static void plan_wgmma(Cg *g, const IrStmt *s) {
    const IrTileOp *op = s->op;
    for (int i = 0; i < g->wg_sites.n; i++)
        if (g->wg_sites.v[i].op == op) return;
    const IrRegion *A = &op->r[0], *C = &op->r[2];
    const IrLayout *cl = C->buf->layout;
    if (!cl || cl->kind != IR_LAYOUT_WGMMA_C || op->wg_ni <= 0 || op->mma_threads || op->mma_part ||
        cl->nthreads != g->nthreads)
        ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: a wgmma gemm without its accumulator layout");
    for (int r = 0; r < 2; r++) {
        const IrSwizzle *z = &op->r[r].buf->swizzle;
        if (op->r[r].buf->scope != IR_SCOPE_SHARED || z->kind != IR_SWIZZLE_XOR ||
            8 * op->wg[r].row_bytes != op->r[r].buf->smem_align || !swizzle_periodic(g, &op->r[r], s->loc))
            ts_fail_at(g->d, TS_ERR_INTERNAL, s->loc, "CUDA codegen: wgmma operand %s without its descriptor layout",
                       op->r[r].buf->name);
    }
    TsCudaWgmma p;
    memset(&p, 0, sizeof p);
    p.m = (int)cl->p[0];
    p.n = (int)cl->p[1];
    p.gm = (int)cl->p[2];
    p.gn = (int)cl->p[3];
    p.k = region_ext(g, A, op->trans_a ? A->ndim - 2 : A->ndim - 1, s->loc);
    p.ni = op->wg_ni;
    p.trans_a = op->trans_a != 0;
    p.trans_b = op->trans_b != 0;
    p.bf16 = A->buf->dt == TS_BFLOAT16;
    p.clear = op->clear_accum != 0;
    p.wait = op->wg_async ? -1 : op->wg_wait > 0 ? op->wg_wait : 0;
    p.wa = op->wg[0];
    p.wb = op->wg[1];
    int fn = -1;
    for (int i = 0; i < g->wg_fns.n && fn < 0; i++)
        if (!memcmp(&g->wg_fns.v[i], &p, sizeof p)) fn = i;
    if (fn < 0) {
        fn = g->wg_fns.n;
        ts_vec_push(g->a, g->wg_fns, p);
    }
    CgWg site = {op, fn};
    ts_vec_push(g->a, g->wg_sites, site);
}

/* The buffers and tensor-core call sites of the body, collected by the
 * shared visitor (ir/walk.h): every buffer accessed or allocated (tile-op
 * regions beyond the first three, a communication op's extra operands, are
 * the comm printer's), every mma.sync gemm with the T.ws role around it. */
typedef struct BufWalk {
    Cg *g;             /* the printer */
    int role_lo, role_n; /* the role outside the current one */
} BufWalk;

static void bufs_access(IrVisitor *v, const IrAccess *acc) {
    BufWalk *w = v->ctx;
    const IrStmt *s = v->frame ? v->frame->s : NULL;
    if (acc->region && s && s->kind == IR_S_TILEOP && acc->region - s->op->r >= 3) return;
    add_buf(w->g, acc->buf);
}

static bool bufs_pre(IrVisitor *v, const IrStmt *s) {
    BufWalk *w = v->ctx;
    if (s->kind == IR_S_ALLOC) add_buf(w->g, s->alloc.buf);
    if (s->kind == IR_S_ROLE) {
        w->role_lo = w->g->role_lo;
        w->role_n = w->g->role_n;
        w->g->role_lo = s->role.lo;
        w->g->role_n = s->role.n;
    }
    return true;
}

static void bufs_post(IrVisitor *v, const IrStmt *s) {
    BufWalk *w = v->ctx;
    if (s->kind == IR_S_TILEOP && s->op->kind == TS_OP_GEMM && s->op->inst == TS_OP_INST_MMA_SYNC) plan_mma(w->g, s);
    if (s->kind == IR_S_TILEOP && s->op->kind == TS_OP_GEMM && s->op->inst == TS_OP_INST_WGMMA) plan_wgmma(w->g, s);
    if (s->kind == IR_S_ROLE) { /* (roles do not nest: insert_sync refuses that) */
        w->g->role_lo = w->role_lo;
        w->g->role_n = w->role_n;
    }
}

static void walk_stmt_bufs(Cg *g, const IrStmt *s) {
    BufWalk w = {g, 0, 0};
    IrVisitor v = {.ctx = &w, .pre_stmt = bufs_pre, .post_stmt = bufs_post, .access = bufs_access};
    ir_visit_stmt(&v, s);
}

/* ---- the kernel function ----------------------------------------------------- */

/* The parameter list; the order is the ABI of cuda_target.h. */
static void emit_params(Cg *g) {
    const IrKernel *k = g->k;
    int first = 1;
#define SEP() (out(g, first ? "\n    " : ",\n    "), first = 0)
    for (int p = 0; p < k->params.n; p++) {
        const IrParam *pr = &k->params.v[p];
        if (pr->buf) {
            const CgBuf *cb = find_buf(g, pr->buf, pr->buf->loc);
            SEP();
            outf(g, "%s *%s", storage_ctype(pr->buf->dt), cb->name);
            for (int d = 0; d < pr->buf->ndim; d++) {
                SEP();
                outf(g, "const ts_i64 %s_n%d", cb->name, d);
            }
            /* a contiguous buffer's strides are the products of its
             * extents (emit_kernel); the launch still passes them */
            for (int d = 0; d < pr->buf->ndim; d++) {
                SEP();
                outf(g, "const ts_i64 %s_s%d%s", cb->name, d, pr->buf->contiguous ? "_arg" : "");
            }
        } else if (pr->var) {
            SEP();
            outf(g, "const %s ts_arg%d", storage_ctype(pr->var->dt), p);
        } else {
            ts_fail_at(g->d, TS_ERR_INTERNAL, (TsLoc){0}, "CUDA codegen: parameter %d is neither tensor nor scalar", p);
        }
    }
    for (int i = 0; i < k->shape_vars.n; i++) {
        SEP();
        outf(g, "const ts_i64 ts_sv%d", i);
    }
    SEP();
    out(g, "const int ts_rank");
    SEP();
    out(g, "const int ts_nranks");
    if (k->cooperative) { /* the launch's grid workspace (cuda_drv.c) */
        SEP();
        out(g, "unsigned char *const ts_grid_ws");
    }
#undef SEP
}

/* A contiguous parameter (IrBuffer.contiguous, checked at launch): its
 * strides as the products of its extents, constants where the shape is
 * static, so that index arithmetic folds. */
static void emit_compact_strides(Cg *g, const IrBuffer *b) {
    const CgBuf *cb = find_buf(g, b, b->loc);
    int64_t acc = 1, c;
    int known = 1;
    for (int d = b->ndim - 1; d >= 0; d--) {
        line_start(g);
        /* constant strides of an index32 kernel: offsets proven to fit */
        outf(g, "const %s %s_s%d = ", known && g->k->index32 ? "int" : "ts_i64", cb->name, d);
        if (known) {
            outf(g, g->k->index32 ? "%lld;\n" : "%lldLL;\n", (long long)acc);
        } else {
            for (int e = d + 1; e < b->ndim; e++) outf(g, "%s%s_n%d", e > d + 1 ? " * " : "", cb->name, e);
            out(g, ";\n");
        }
        line_start(g);
        outf(g, "(void)%s_s%d_arg;\n", cb->name, d);
        if (known && ir_is_const_int(b->shape[d], &c) && c >= 0 && (c == 0 || acc <= INT64_MAX / c)) acc *= c;
        else known = 0;
    }
}

static void emit_kernel(Cg *g) {
    const IrKernel *k = g->k;
    out(g, "extern \"C\" __global__ void ");
    if (k->cluster[0]) /* T.ClusterKernel (pass lower_cluster kept it for sm_90+) */
        outf(g, "__cluster_dims__(%d, %d, %d) ", k->cluster[0], k->cluster[1], k->cluster[2]);
    if (k->min_blocks > 0) /* pass arch_hints: ws_role_regs' number or the target's */
        outf(g, "__launch_bounds__(%d, %d) %s(", g->nthreads, k->min_blocks, TS_CUDA_ENTRY);
    else
        outf(g, "__launch_bounds__(%d) %s(", g->nthreads, TS_CUDA_ENTRY);
    emit_params(g);
    out(g, ") {\n");
    g->ind = 1;
    line_start(g);
    /* the largest alignment plan_smem gave a buffer (a wgmma operand's swizzle repeat) */
    int smem_al = TS_CUDA_SMEM_ALIGN;
    for (int i = 0; i < g->k->buffers.n; i++)
        if (g->k->buffers.v[i]->smem_align > smem_al) smem_al = g->k->buffers.v[i]->smem_align;
    outf(g, "extern __shared__ __align__(%d) unsigned char ts_smem[];\n", smem_al);
    line_start(g);
    out(g, "const int ts_tid = (int)threadIdx.x;\n");
    static const char xyz[] = "xyz";
    for (int i = 0; i < 3; i++) {
        line_start(g);
        outf(g, "const %s ts_bidx%d = (%s)blockIdx.%c;\n", g->dl.i64, i, g->dl.i64, xyz[i]);
    }
    for (int i = 0; i < k->shape_vars.n; i++) {
        const IrVar *v = k->shape_vars.v[i];
        const char *ct = compute_ctype(g, v->dt, (TsLoc){0});
        line_start(g);
        outf(g, "const %s %s = (%s)ts_sv%d;\n", ct, ts_cx_name(g->a, v->name, v->id), ct, i);
    }
    for (int p = 0; p < k->params.n; p++) {
        const IrVar *v = k->params.v[p].var;
        if (!v || k->params.v[p].buf) continue;
        line_start(g);
        outf(g, "const %s %s = %sts_arg%d);\n", compute_ctype(g, v->dt, (TsLoc){0}), ts_cx_name(g->a, v->name, v->id),
             ts_cx_load_conv(cx(g), v->dt), p);
    }
    for (int p = 0; p < k->params.n; p++)
        if (k->params.v[p].buf && k->params.v[p].buf->contiguous) emit_compact_strides(g, k->params.v[p].buf);
    for (int i = 0; i < g->bufs.n; i++) {
        const CgBuf *cb = &g->bufs.v[i];
        if (cb->glob) continue;
        const char *st = storage_ctype(cb->buf->dt);
        line_start(g);
        if (is_private(cb->buf) && cb->buf->align > 1) /* an external function reads it through a pointer */
            outf(g, "__align__(%d) %s %s[%lld]; /* %s */\n", cb->buf->align, st, cb->name,
                 (long long)(cb->elems ? cb->elems : 1), ir_scope_name(cb->buf->scope));
        else if (is_private(cb->buf))
            outf(g, "%s %s[%lld]; /* %s */\n", st, cb->name, (long long)(cb->elems ? cb->elems : 1),
                 ir_scope_name(cb->buf->scope));
        else
            outf(g, "%s *%s = (%s *)(ts_smem + %lld); /* %s */\n", st, cb->name, st, (long long)cb->offset,
                 ir_scope_name(cb->buf->scope));
    }
    /* the fragment registers of split gemms (two sets each), one array per split */
    for (int i = 0; i < g->mma_sites.n; i++) {
        const IrTileOp *op = g->mma_sites.v[i].op;
        if (op->mma_part != TS_MMA_PRE) continue;
        const TsCudaMma *p = &g->mma_fns.v[g->mma_sites.v[i].fn];
        int mi = p->m / p->wm / 16, ni = p->n / p->wn / 8;
        line_start(g);
        outf(g, "ts_u32 ts_fr%d[%d]; /* fragments of the split gemm %d */\n", op->mma_frag, 2 * (mi * 4 + ni * 2),
             op->mma_frag);
    }
    scope_open(g);
    g->ctx = CTX_UNIFORM;
    emit_body(g, k->body);
    scope_close(g);
    g->ind = 0;
    out(g, "}\n");
}

TsCudaCodeInfo ts_cuda_codegen(TsDiag *d, const IrKernel *k, const TsCaps *caps, TsBuf *o) {
    Cg g;
    memset(&g, 0, sizeof g);
    g.d = d;
    g.k = k;
    g.a = k->arena;
    g.o = o;
    g.caps = caps;
    g.check = caps->check_bounds;
    g.dl = cu_dialect;
    if (k->fast_math) { /* approximate exp2/exp and float division */
        g.dl.intrin_over = cu_intrin_fast;
        g.dl.fdiv_f = "ts_fdiv_ftz";
    }
    if (k->index32) {
        /* every signed integer fits in int32 (pass index_width) */
        g.dl.i64 = "int";
        g.dl.int_sfx = "";
        g.dl.int_fn_sfx = "32";
        g.dl.rank = "((int)ts_rank)";
        g.dl.nranks = "((int)ts_nranks)";
        g.dl.rpn = "((int)ts_comm_rpn)";
    }
    g.x = (TsCxGen){&g.dl, d, k->arena, k, o, &g};
    if (k->ngrid < 0 || k->ngrid > 3)
        ts_fail_at(d, TS_ERR_INTERNAL, (TsLoc){0}, "CUDA codegen: %d grid dimensions", k->ngrid);
    int64_t nt = 1;
    for (int i = 0; i < 3; i++) {
        if (k->threads[i] < 1)
            ts_fail_at(d, TS_ERR_INTERNAL, (TsLoc){0}, "CUDA codegen: threads[%d] = %d", i, k->threads[i]);
        nt *= k->threads[i];
        if (nt > 1024) break;
    }
    if (nt > 1024) /* (the elaborator refuses it at T.Kernel for CUDA targets) */
        ts_fail_at(d, TS_ERR_INTERNAL, (TsLoc){0}, "CUDA codegen: kernel %s: %d x %d x %d threads per block",
                   k->name ? k->name : "?", k->threads[0], k->threads[1], k->threads[2]);
    g.nthreads = (int)nt;
    g.single = nt == 1;

    /* Buffers: parameters first (in order), then everything else touched
     * (shared ones where plan_smem put them). */
    for (int i = 0; i < k->params.n; i++)
        if (k->params.v[i].buf) add_buf(&g, k->params.v[i].buf);
    for (int i = 0; i < k->buffers.n; i++) {
        const IrBuffer *b = k->buffers.v[i];
        /* a fragment with a layout was replaced by its register buffer */
        if (b->scope != IR_SCOPE_GLOBAL && !(b->scope == IR_SCOPE_FRAGMENT && b->layout)) add_buf(&g, b);
    }
    walk_stmt_bufs(&g, k->body);
    int64_t smem = k->smem_bytes;

    ts_buf_puts(o, "/* Generated by TileScale (CUDA target) for kernel '");
    for (const char *p = k->name ? k->name : "?"; *p; p++)
        if (*p != '*' && *p != '/') ts_buf_putn(o, p, 1);
    ts_buf_printf(o, "': %d threads, %lld bytes of dynamic shared memory.  Do not edit. */\n", g.nthreads,
                  (long long)smem);
    /* decided by layout_inference (IrKernel.ptxas_reg_level; 5 is ptxas's default) and
     * inject_pipeline (IrKernel.ptxas_fast_compile) */
    if (k->ptxas_reg_level || k->ptxas_fast_compile)
        ts_buf_printf(o, "%s%d%s (tensor-core loops) */\n", TS_CUDA_PTXAS_LEVEL,
                      k->ptxas_reg_level ? k->ptxas_reg_level : 5, k->ptxas_fast_compile ? TS_CUDA_PTXAS_FAST : "");
    if (k->nvrtc_fast_compile) ts_buf_printf(o, "%s\n", TS_CUDA_NVRTC_FAST); /* pass tier_plan */
    for (int i = 0; prelude[i]; i++) {
        /* the L2 prefetch-size qualifier of the 16-byte cp.async (PTX ISA, cp.async:
         * .level::prefetch_size, sm_80+), as inject_pipeline recorded it */
        const char *cg = strstr(prelude[i], CP_ASYNC_CG);
        if (cg && k->cp_async_l2_prefetch) {
            size_t at = (size_t)(cg - prelude[i]) + strlen(CP_ASYNC_CG);
            ts_buf_printf(o, "%.*s.L2::%dB%s", (int)at, prelude[i], k->cp_async_l2_prefetch, prelude[i] + at);
        } else {
            ts_buf_puts(o, prelude[i]);
        }
    }
    if (ts_comm_used(k->body)) ts_cuda_comm_prelude(o);
    if (k->multinode) ts_cuda_gin_prelude(o); /* lower_comm: accesses to other nodes through NCCL's GIN */
    if (mbar_used(k)) ts_cuda_mbar_prelude(o, caps->sm);
    if (ts_warp_used(k->body)) ts_cuda_warp_prelude(o);
    if (g.check) ts_buf_puts(o, check_prelude);
    if (k->cooperative) emit_grid_prelude(o, k);
    if (ir_stmt_any_expr(k->body, is_cluster_rank, NULL))
        ts_buf_puts(o, "/* T.block_rank_in_cluster (PTX ISA: %cluster_ctarank, sm_90+) */\n"
                       "__device__ __forceinline__ int ts_cluster_rank() {\n"
                       "    unsigned ts_r;\n"
                       "    asm volatile(\"mov.u32 %0, %%cluster_ctarank;\" : \"=r\"(ts_r));\n"
                       "    return (int)ts_r;\n"
                       "}\n");
    if (g.wg_fns.n) {
        ts_buf_puts(o, ts_cuda_wgmma_prelude);
        for (int i = 0; i < g.wg_fns.n; i++) {
            bool seen = false;
            for (int j = 0; j < i && !seen; j++) seen = ts_cuda_wgmma_same_wrapper(&g.wg_fns.v[i], &g.wg_fns.v[j]);
            if (!seen) ts_cuda_wgmma_wrapper(o, &g.wg_fns.v[i]);
        }
        for (int i = 0; i < g.wg_fns.n; i++) {
            char name[32];
            snprintf(name, sizeof name, "ts_wgmma_%d", i);
            ts_cuda_wgmma_emit(o, name, &g.wg_fns.v[i]);
        }
    }
    if (g.mma_fns.n) {
        ts_buf_puts(o, mma_prelude);
        for (int i = 0; i < g.mma_fns.n; i++) {
            char name[32];
            snprintf(name, sizeof name, "ts_gemm_%d", i);
            if (g.mma_fns.v[i].creg) ts_cuda_mma_emit_reg(o, name, &g.mma_fns.v[i]);
            else ts_cuda_mma_emit(o, name, &g.mma_fns.v[i]);
        }
    }
    if (k->extern_src.n) { /* T.import_source: the texts as given, once each, ahead of the kernel */
        /* the unsigned short names nvcc's host headers (sys/types.h) give the sources TileLang
         * compiles; NVRTC has none of them */
        ts_buf_puts(o, "\n/* T.import_source */\ntypedef unsigned short ushort;\ntypedef unsigned int uint;\n"
                       "typedef unsigned long ulong;\n");
        for (int i = 0; i < k->extern_src.n; i++) {
            size_t n = strlen(k->extern_src.v[i]);
            ts_buf_printf(o, "/* imported source %d */\n", i + 1);
            ts_buf_puts(o, k->extern_src.v[i]);
            if (!n || k->extern_src.v[i][n - 1] != '\n') ts_buf_puts(o, "\n");
        }
        ts_buf_puts(o, "\n");
    }
    emit_kernel(&g);

    TsCudaCodeInfo ci;
    memset(&ci, 0, sizeof ci);
    ci.smem_bytes = smem;
    ci.threads = g.nthreads;
    ci.nsites = g.check ? g.site_msg.n : 0;
    ci.cooperative = k->cooperative;
    ci.grid_ws_bytes = k->cooperative ? k->grid_ws_bytes : 0;
    ci.site_msg = g.site_msg.v;
    ci.site_src = g.site_src.v;
    return ci;
}
