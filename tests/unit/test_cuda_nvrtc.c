/*
 * test_cuda_nvrtc.c — the CUDA backend without a GPU (CI) and with one.
 *
 * Everywhere NVRTC can be loaded (CI has the toolkit but no GPU):
 *   - the CUDA code generated for every example kernel (with the -D
 *     values of tests/run/example_*.sh, naive references included) and
 *     for primitive kernels written here (reductions and cumsum, atomics
 *     of several dtypes, narrow floats and integer arithmetic, math
 *     intrinsics, uniform read-modify-writes of shared memory, gemm in
 *     all transpose combinations (on tensor cores, mma.sync, for float16
 *     and bfloat16 tiles of several shapes and warp counts, padded rows,
 *     a two-stage buffer indexed at run time, clear_accum; the source of
 *     every eligible gemm is checked to call the tensor-core function),
 *     scalars and run-time shapes, tile copies on the 16-byte vector
 *     path and its scalar fallbacks (partial tiles, misaligned rows and
 *     shared offsets, float32/float16/int8, column-major X), strided
 *     and aliased tensors, T.print, while loops, a kernel whose blocks
 *     wait on each other) compiles with NVRTC for sm_80 and for sm_90a;
 *   - a kernel with more than 1024 threads per block is refused at
 *     compile time;
 *   - a kernel asking ptxas for a register-usage level on its second
 *     line gets it (NVRTC 13 on: the option is in the cubin), one that
 *     does not, or asks for one outside 0..10, gets no level; ptxas's
 *     fast-compile level asked for after it (TS_CUDA_PTXAS_FAST) is given;
 *   - building the same kernel twice finds the cubin in the disk cache;
 *   - with the driver made unfindable ($TILESCALE_LIBCUDA pointing
 *     nowhere), a CUDA kernel still compiles, and launching it returns
 *     TS_ERR_RUNTIME "no CUDA driver found" instead of crashing.
 * Where a CUDA device is present (the lent H200), additionally:
 *   - every kernel above marked runnable is launched on the CUDA target
 *     and on the C target with the same random inputs (outputs poisoned
 *     first) and every tensor is compared;
 *   - the kernel whose blocks wait on each other produces the chained
 *     sums computed here naively;
 *   - a kernel needing more shared memory than the device has fails to
 *     build with a message saying so.
 * TS_TEST_CUDA_SELFCHECK=1 runs the comparison harness C against C where
 * there is no GPU; TS_TEST_CUDA_QUICK=1 runs only the comparisons (for
 * compute-sanitizer).
 * If libnvrtc cannot be loaded the test exits 77 (CMake: SKIP_RETURN_CODE),
 * reported as skipped, not passed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#include "target/cuda/cuda_target.h"
#include "test.h"
#include "tilescale.h"

#define PRE "import tilelang\nimport tilelang.language as T\n\n"

/* ---- primitive kernels -------------------------------------------------------------------- */

static const char *SRC_REDUCE = PRE
    "@tilelang.jit(out_idx=[1, 2, 3, 4, 5])\n"
    "def red(M, N, blk):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), Smax: T.Tensor((M,), \"float32\"),\n"
    "             Ssum: T.Tensor((M,), \"float32\"), Cmin: T.Tensor((T.ceildiv(M, blk), N), \"float32\"),\n"
    "             Cabs: T.Tensor((M,), \"float32\"), Cs: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(M, blk), threads=96) as bx:\n"
    "            a = T.alloc_fragment((blk, N), \"float32\")\n"
    "            r = T.alloc_fragment((blk,), \"float32\")\n"
    "            c = T.alloc_fragment((N,), \"float32\")\n"
    "            s = T.alloc_shared((blk, N), \"float32\")\n"
    "            T.copy(A[bx * blk, 0], a)\n"
    "            T.reduce_max(a, r, dim=1)\n"
    "            T.copy(r, Smax[bx * blk])\n"
    "            T.reduce_sum(a, r, dim=1)\n"
    "            T.copy(r, Ssum[bx * blk])\n"
    "            T.reduce_absmax(a, r, dim=1)\n"
    "            T.copy(r, Cabs[bx * blk])\n"
    "            T.reduce_min(a, c, dim=0)\n"
    "            T.copy(c, Cmin[bx, 0])\n"
    "            T.copy(A[bx * blk, 0], s)\n"
    "            T.cumsum(s, dim=1, reverse=True)\n"
    "            T.copy(s, Cs[bx * blk, 0])\n"
    "    return main\n";

static const char *SRC_ATOMIC = PRE
    "@tilelang.jit\n"
    "def atom(M, N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), S: T.Tensor((N,), \"float32\"),\n"
    "             H: T.Tensor((N,), \"float16\"), I: T.Tensor((N,), \"int32\"), B8: T.Tensor((N,), \"int8\"),\n"
    "             D: T.Tensor((N,), \"float64\"), Tot: T.Tensor((4,), \"float32\")):\n"
    "        with T.Kernel(M, threads=64) as bx:\n"
    "            for j in T.Parallel(N):\n"
    "                T.atomic_add(S[j], A[bx, j])\n"
    "                T.atomic_add(H[j], A[bx, j] * 0.125)\n"
    "                T.atomic_add(I[j], T.cast(A[bx, j] * 4.0, \"int32\"))\n"
    "                T.atomic_add(B8[j], 1)\n"
    "                T.atomic_add(D[j], T.cast(A[bx, j], \"float64\"))\n"
    "            T.atomic_add(Tot[bx % 4], A[bx, 0])\n"
    "    return main\n";

static const char *SRC_DTYPES = PRE
    "@tilelang.jit(out_idx=[2, 3, 4, 5, 6])\n"
    "def dt(N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), \"float32\"), I: T.Tensor((N,), \"int32\"),\n"
    "             Bf: T.Tensor((N,), \"bfloat16\"), F8: T.Tensor((N,), \"float8_e4m3\"),\n"
    "             F5: T.Tensor((N,), \"float8_e5m2\"), D: T.Tensor((N,), \"float64\"),\n"
    "             J: T.Tensor((N, 6), \"int64\")):\n"
    "        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:\n"
    "            for i in T.Parallel(64):\n"
    "                if bx * 64 + i < N:\n"
    "                    Bf[bx * 64 + i] = A[bx * 64 + i] * 3.0\n"
    "                    F8[bx * 64 + i] = A[bx * 64 + i] * 100.0\n"
    "                    F5[bx * 64 + i] = A[bx * 64 + i] * 1000.0\n"
    "                    D[bx * 64 + i] = T.cast(A[bx * 64 + i], \"float64\") * 1.0000001\n"
    "                    J[bx * 64 + i, 0] = I[bx * 64 + i] // 3\n"
    "                    J[bx * 64 + i, 1] = I[bx * 64 + i] % 3\n"
    "                    J[bx * 64 + i, 2] = I[bx * 64 + i] // -5\n"
    "                    J[bx * 64 + i, 3] = (I[bx * 64 + i] << 2) ^ 5\n"
    "                    J[bx * 64 + i, 4] = I[bx * 64 + i] * I[bx * 64 + i] * I[bx * 64 + i]\n"
    "                    J[bx * 64 + i, 5] = T.max(I[bx * 64 + i], 2) - T.min(I[bx * 64 + i], -3)\n"
    "    return main\n";

static const char *SRC_MATH = PRE
    "@tilelang.jit(out_idx=[1])\n"
    "def mth(N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), \"float32\"), O: T.Tensor((N, 12), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:\n"
    "            for i in T.Parallel(128):\n"
    "                if bx * 128 + i < N:\n"
    "                    O[bx * 128 + i, 0] = T.exp(A[bx * 128 + i])\n"
    "                    O[bx * 128 + i, 1] = T.log(T.abs(A[bx * 128 + i]) + 0.1)\n"
    "                    O[bx * 128 + i, 2] = T.sqrt(T.abs(A[bx * 128 + i]))\n"
    "                    O[bx * 128 + i, 3] = T.rsqrt(T.abs(A[bx * 128 + i]) + 0.5)\n"
    "                    O[bx * 128 + i, 4] = T.tanh(A[bx * 128 + i])\n"
    "                    O[bx * 128 + i, 5] = T.sigmoid(A[bx * 128 + i])\n"
    "                    O[bx * 128 + i, 6] = T.erf(A[bx * 128 + i])\n"
    "                    O[bx * 128 + i, 7] = T.exp2(A[bx * 128 + i])\n"
    "                    O[bx * 128 + i, 8] = T.floor(A[bx * 128 + i] * 10.0)\n"
    "                    O[bx * 128 + i, 9] = T.round(A[bx * 128 + i] * 10.0)\n"
    "                    O[bx * 128 + i, 10] = T.sin(A[bx * 128 + i]) + T.cos(A[bx * 128 + i])\n"
    "                    O[bx * 128 + i, 11] = T.if_then_else(A[bx * 128 + i] > 0, 1.0, -1.0)\n"
    "    return main\n";

/* Uniform (serial) code on 128 threads: read-modify-writes of shared
 * memory must be done once, not 128 times. */
static const char *SRC_SERIAL = PRE
    "@tilelang.jit(out_idx=[1])\n"
    "def ser(M, N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), \"float32\"), B: T.Tensor((M, 4), \"float32\")):\n"
    "        with T.Kernel(M, threads=128) as r:\n"
    "            s = T.alloc_shared((4,), \"float32\")\n"
    "            acc = T.alloc_var(\"float32\")\n"
    "            cnt = T.alloc_var(\"int32\")\n"
    "            for t in T.serial(4):\n"
    "                s[t] = 0.0\n"
    "            acc = 0.0\n"
    "            for j in T.serial(N):\n"
    "                acc = acc + A[r, j]\n"
    "                s[0] = s[0] + A[r, j]\n"
    "                if A[r, j] > 0:\n"
    "                    s[1] = s[1] + 1.0\n"
    "            cnt = 0\n"
    "            while cnt < 5:\n"
    "                s[2] = s[2] + cnt\n"
    "                cnt += 1\n"
    "            B[r, 0] = acc\n"
    "            B[r, 1] = s[0]\n"
    "            B[r, 2] = s[1]\n"
    "            B[r, 3] = s[2] + s[0] * 0.5\n"
    "    return main\n";

static const char *SRC_GEMM = PRE
    "@tilelang.jit(out_idx=[2])\n"
    "def gm(M, N, K, ta, tb, dtype):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((K, M) if ta else (M, K), dtype), B: T.Tensor((N, K) if tb else (K, N), dtype),\n"
    "             C: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 32), threads=128) as (bx, by):\n"
    "            As = T.alloc_shared((16, 32) if ta else (32, 16), dtype)\n"
    "            Bs = T.alloc_shared((32, 16) if tb else (16, 32), dtype)\n"
    "            Cf = T.alloc_fragment((32, 32), \"float32\")\n"
    "            T.clear(Cf)\n"
    "            for k in T.Pipelined(T.ceildiv(K, 16), num_stages=2):\n"
    "                if ta:\n"
    "                    T.copy(A[k * 16, by * 32], As)\n"
    "                else:\n"
    "                    T.copy(A[by * 32, k * 16], As)\n"
    "                if tb:\n"
    "                    T.copy(B[bx * 32, k * 16], Bs)\n"
    "                else:\n"
    "                    T.copy(B[k * 16, bx * 32], Bs)\n"
    "                T.gemm(As, Bs, Cf, transpose_A=ta, transpose_B=tb)\n"
    "            T.copy(Cf, C[by * 32, bx * 32])\n"
    "    return main\n";

/* Tensor-core gemms (fp16/bf16 in shared memory, fp32 fragment): tile
 * shapes, warp counts, padded rows (pad=4: 16-bit fragment loads; pad=8:
 * ldmatrix on padded rows), a two-stage buffer indexed at run time, and
 * clear_accum; partial tiles at the tensor's edges. */
static const char *SRC_GEMMX = PRE
    "@tilelang.jit(out_idx=[2])\n"
    "def gmx(M, N, K, bm, bn, bk, ta, tb, dtype, threads, pad, clear):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((K, M) if ta else (M, K), dtype), B: T.Tensor((N, K) if tb else (K, N), dtype),\n"
    "             C: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):\n"
    "            As = T.alloc_shared((2, bk, bm + pad) if ta else (2, bm, bk + pad), dtype)\n"
    "            Bs = T.alloc_shared((2, bn, bk + pad) if tb else (2, bk, bn + pad), dtype)\n"
    "            Cf = T.alloc_fragment((bm, bn + pad), \"float32\")\n"
    "            T.clear(Cf)\n"
    "            for k in T.serial(T.ceildiv(K, bk)):\n"
    "                s = k % 2\n"
    "                if ta:\n"
    "                    T.copy(A[k * bk, by * bm], As[s, :, 0:bm])\n"
    "                else:\n"
    "                    T.copy(A[by * bm, k * bk], As[s, :, 0:bk])\n"
    "                if tb:\n"
    "                    T.copy(B[bx * bn, k * bk], Bs[s, :, 0:bk])\n"
    "                else:\n"
    "                    T.copy(B[k * bk, bx * bn], Bs[s, :, 0:bn])\n"
    "                T.gemm(As[s, :, 0:bm] if ta else As[s, :, 0:bk], Bs[s, :, 0:bk] if tb else Bs[s, :, 0:bn],\n"
    "                       Cf[:, 0:bn], transpose_A=ta, transpose_B=tb, clear_accum=clear)\n"
    "            T.copy(Cf[:, 0:bn], C[by * bm, bx * bn])\n"
    "    return main\n";

static const char *SRC_SCALAR = PRE
    "@tilelang.jit(out_idx=[-1])\n"
    "def scl(N):\n"
    "    n = T.dynamic(\"n\")\n"
    "\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((n, N), \"float32\"), alpha: T.float32, k: T.int32,\n"
    "             Y: T.Tensor((n, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(n, 8), threads=64) as bx:\n"
    "            for i, j in T.Parallel(8, N):\n"
    "                if bx * 8 + i < n:\n"
    "                    Y[bx * 8 + i, j] = X[bx * 8 + i, j] * alpha + k + n\n"
    "    return main\n";

/* Y = Y * 0.5 + X: run with X strided and with X aliasing Y. */
static const char *SRC_AXPY = PRE
    "@tilelang.jit\n"
    "def axpy(M, N):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), \"float32\"), Y: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(M, threads=32) as r:\n"
    "            for j in T.Parallel(N):\n"
    "                Y[r, j] = Y[r, j] * 0.5 + X[r, j]\n"
    "    return main\n";

static const char *SRC_PRINT = PRE
    "@tilelang.jit(out_idx=[1])\n"
    "def pr(N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), \"int32\"), B: T.Tensor((N,), \"int32\")):\n"
    "        with T.Kernel(2, threads=32) as bx:\n"
    "            buf = T.alloc_shared((N,), \"int32\")\n"
    "            T.copy(A, buf)\n"
    "            T.print(bx * 7 + 3, msg=\"value\")\n"
    "            if bx == 1:\n"
    "                T.print(buf, msg=\"tile\")\n"
    "            T.copy(buf, B)\n"
    "    return main\n";

static const char *SRC_CHAIN = PRE
    "def chain(n):\n"
    "    @T.prim_func\n"
    "    def main(flags: T.Tensor((n,), 'int32'), vals: T.Tensor((n,), 'int32'),\n"
    "             seed: T.Tensor((n,), 'int32')):\n"
    "        with T.Kernel(n, threads=32) as bx:\n"
    "            if bx < n - 1:\n"
    "                while flags[bx + 1] == 0:\n"
    "                    pass\n"
    "                vals[bx] = vals[bx + 1] + seed[bx]\n"
    "            else:\n"
    "                vals[bx] = seed[bx]\n"
    "            flags[bx] = 1\n"
    "    return main\n";

static const char *SRC_TOO_MANY_THREADS = PRE
    "@tilelang.jit(out_idx=[-1])\n"
    "def big(N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), \"float32\"), B: T.Tensor((N,), \"float32\")):\n"
    "        with T.Kernel(1, threads=2048) as bx:\n"
    "            for i in T.Parallel(N):\n"
    "                B[i] = A[i]\n"
    "    return main\n";

static const char *SRC_HUGE_SMEM = PRE
    "@tilelang.jit(out_idx=[-1])\n"
    "def huge(N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), \"float32\"), B: T.Tensor((N,), \"float32\")):\n"
    "        with T.Kernel(1, threads=128) as bx:\n"
    "            s = T.alloc_shared((256, 256), \"float32\")\n"
    "            for i in T.Parallel(N):\n"
    "                s[0, i] = A[i]\n"
    "            for i in T.Parallel(N):\n"
    "                B[i] = s[0, i]\n"
    "    return main\n";

/* Tile copies on the vector path (16-byte moves) and its fallbacks: partial
 * tiles (zero fill / skipped writes), rows not 16-byte aligned (odd N), a
 * shared tile read at a misaligned column offset (off), column-major X. */
static const char *SRC_VCOPY = PRE
    "@tilelang.jit(out_idx=[-1])\n"
    "def vcp(M, N, bm, bn, off, dtype):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=64) as (bx, by):\n"
    "            s = T.alloc_shared((bm, bn + off), dtype)\n"
    "            t = T.alloc_shared((bm, bn), dtype)\n"
    "            T.copy(X[by * bm, bx * bn], s[0:bm, off:off + bn])\n"
    "            T.copy(s[0:bm, off:off + bn], t)\n"
    "            T.copy(t, Y[by * bm, bx * bn])\n"
    "    return main\n";

/* Casting tile copies on the vector path: X (sdt) -> s (ddt, at column
 * offset off: misaligned when off is not a multiple of 8) -> t (sdt) ->
 * Y (ddt), each T.copy a cast, with partial tiles at the edges. */
static const char *SRC_VCAST = PRE
    "@tilelang.jit(out_idx=[-1])\n"
    "def vcc(M, N, bm, bn, off, sdt, ddt):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), sdt), Y: T.Tensor((M, N), ddt)):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=64) as (bx, by):\n"
    "            s = T.alloc_shared((bm, bn + off), ddt)\n"
    "            t = T.alloc_shared((bm, bn), sdt)\n"
    "            T.copy(X[by * bm, bx * bn], s[0:bm, off:off + bn])\n"
    "            T.copy(s[0:bm, off:off + bn], t)\n"
    "            T.copy(t, Y[by * bm, bx * bn])\n"
    "    return main\n";

/* Converting vector copies between register tiles and global memory
 * (float16 in, float32 registers, bfloat16 out, partial tiles) and T.cumsum
 * in registers (butterfly shuffles along warp rows), forward and reverse. */
static const char *SRC_VCFRAG = PRE
    "@tilelang.jit(out_idx=[-1])\n"
    "def vcf(M, N, bm, bn, rev):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), \"float16\"), Y: T.Tensor((M, N), \"bfloat16\")):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):\n"
    "            F = T.alloc_fragment((bm, bn), \"float32\")\n"
    "            T.copy(X[by * bm, bx * bn], F)\n"
    "            T.cumsum(F, dim=1, reverse=rev)\n"
    "            T.copy(F, Y[by * bm, bx * bn])\n"
    "    return main\n";

/* Software pipelines (pipeline_planning / inject_pipeline): a GEMM whose K
 * is a run-time shape (trip counts below the stage count, a K the 16-byte
 * vectors do not divide), and a column sum whose copy runs one stage ahead
 * of its consumer by order=/stage= annotations. */
static const char *SRC_PIPE = PRE
    "@tilelang.jit(out_idx=[-1])\n"
    "def mmdyn(M, N, bm, bn, bk, ns):\n"
    "    K = T.dynamic(\"K\")\n"
    "\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"), C: T.Tensor((M, N), \"float16\")):\n"
    "        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):\n"
    "            As = T.alloc_shared((bm, bk), \"float16\")\n"
    "            Bs = T.alloc_shared((bk, bn), \"float16\")\n"
    "            Cl = T.alloc_fragment((bm, bn), \"float32\")\n"
    "            T.clear(Cl)\n"
    "            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=ns):\n"
    "                T.copy(A[by * bm, k * bk], As)\n"
    "                T.copy(B[k * bk, bx * bn], Bs)\n"
    "                T.gemm(As, Bs, Cl)\n"
    "            T.copy(Cl, C[by * bm, bx * bn])\n"
    "    return main\n"
    "\n"
    "@tilelang.jit(out_idx=[-1])\n"
    "def csum(M, N, bm, bn, ns):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), \"float32\"), Y: T.Tensor((N,), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, bn), threads=64) as bx:\n"
    "            Xs = T.alloc_shared((bm, bn), \"float32\")\n"
    "            acc = T.alloc_shared((bn,), \"float32\")\n"
    "            T.clear(acc)\n"
    "            for k in T.Pipelined(T.ceildiv(M, bm), num_stages=ns, order=[1, 0], stage=[0, 1]):\n"
    "                T.copy(X[k * bm, bx * bn], Xs)\n"
    "                for j in T.Parallel(bn):\n"
    "                    for i in T.serial(bm):\n"
    "                        acc[j] += Xs[i, j]\n"
    "            T.copy(acc, Y[bx * bn])\n"
    "    return main\n";

/* ---- the kernels ------------------------------------------------------------------------------ */

/* TMEM_SHARED: compiled with TILESCALE_TMEM_SHARED=1 (a tensor-memory tile two thread roles
 * share kept in shared memory, pass lower_tmem; refused without it) */
enum { RUN = 1, STRIDED_X = 2, ALIAS_XY = 4, TMEM_SHARED = 8 };

typedef struct Spec {
    const char *file;   /* an example file, or NULL */
    const char *src;    /* source text when file is NULL */
    const char *entry;  /* entry name */
    const char *defs;   /* "-D" values, space separated */
    const char *shapes; /* run-time shape variables, "n=37" */
    const char *scalars;/* scalar parameters, "alpha=0.75 k=3" */
    int flags;          /* RUN: compare against the C target on a GPU; STRIDED_X, ALIAS_XY */
    double atol;        /* 0: by dtype */
} Spec;

static const Spec specs[] = {
    {"examples/elementwise_add.py", NULL, "elementwise_add", "M=100 N=200", NULL, NULL, RUN, 0},
    {"examples/elementwise_add.py", NULL, "elementwise_add", "M=64 N=64 in_dtype=float16 out_dtype=float16", NULL, NULL, RUN, 0},
    {"examples/elementwise_add.py", NULL, "elementwise_add_naive", "M=100 N=200", NULL, NULL, RUN, 0},
    {"examples/gemm.py", NULL, "matmul", "M=256 N=192 K=160 block_M=64 block_N=64 block_K=32", NULL, NULL, RUN, 0},
    {"examples/gemm.py", NULL, "matmul", "M=100 N=72 K=52 block_M=32 block_N=32 block_K=16", NULL, NULL, RUN, 0},
    {"examples/gemm.py", NULL, "matmul", "M=64 N=64 K=64 block_M=32 block_N=32 block_K=32 dtype=bfloat16", NULL, NULL, RUN, 0},
    {"examples/gemm.py", NULL, "matmul_eager", "M=96 N=80 K=72 block_M=32 block_N=32 block_K=16", NULL, NULL, RUN, 0},
    {"examples/gemm.py", NULL, "matmul_naive", "M=100 N=72 K=52", NULL, NULL, RUN, 0},
    {"examples/splitk_gemm.py", NULL, "splitk_gemm", "M=96 N=80 K=256 splits=4", NULL, NULL, RUN, 0},
    {"examples/splitk_gemm.py", NULL, "splitk_gemm_naive", "M=96 N=80 K=256 splits=4", NULL, NULL, RUN, 0},
    {"examples/rms_norm.py", NULL, "rms_norm", "M=96 N=320", NULL, NULL, RUN, 0},
    {"examples/rms_norm.py", NULL, "rms_norm", "M=50 N=100", NULL, NULL, RUN, 0},
    {"examples/rms_norm.py", NULL, "rms_norm_naive", "M=50 N=100", NULL, NULL, RUN, 0},
    {"examples/softmax.py", NULL, "softmax", "M=200 N=96", NULL, NULL, RUN, 0},
    {"examples/softmax.py", NULL, "softmax_naive", "M=200 N=96", NULL, NULL, RUN, 0},
    {"examples/flash_attention.py", NULL, "flashattn", "batch=1 heads=2 seq_len=128 dim=64 is_causal=False", NULL, NULL, RUN, 0},
    {"examples/flash_attention.py", NULL, "flashattn", "batch=2 heads=1 seq_len=96 dim=32 is_causal=True", NULL, NULL, RUN, 0},
    {"examples/flash_attention.py", NULL, "attention_naive", "batch=2 heads=1 seq_len=96 dim=32 is_causal=True", NULL, NULL, RUN, 0},
    /* software pipelines: 2 and 4 stages with partial tiles, FlashAttention with 2 and 3 */
    {"examples/gemm.py", NULL, "matmul", "M=100 N=72 K=52 block_M=32 block_N=32 block_K=16 num_stages=2", NULL, NULL, RUN, 0},
    {"examples/gemm.py", NULL, "matmul", "M=100 N=72 K=20 block_M=32 block_N=32 block_K=16 num_stages=4", NULL, NULL, RUN, 0},
    {"examples/flash_attention.py", NULL, "flashattn", "batch=1 heads=2 seq_len=200 dim=64 is_causal=True num_stages=2", NULL, NULL, RUN, 0},
    {"examples/flash_attention.py", NULL, "flashattn", "batch=2 heads=1 seq_len=200 dim=32 is_causal=False num_stages=3", NULL, NULL, RUN, 0},
    {NULL, NULL, "mmdyn", "M=70 N=48 bm=32 bn=32 bk=16 ns=3", "K=40", NULL, RUN, 0},
    {NULL, NULL, "mmdyn", "M=70 N=48 bm=32 bn=32 bk=16 ns=4", "K=16", NULL, RUN, 0},
    {NULL, NULL, "mmdyn", "M=70 N=48 bm=32 bn=32 bk=16 ns=2", "K=36", NULL, RUN, 0},
    {NULL, NULL, "csum", "M=100 N=128 bm=16 bn=64 ns=2", NULL, NULL, RUN, 0},
    {NULL, NULL, "red", "M=50 N=40 blk=16", NULL, NULL, RUN, 0},
    {NULL, NULL, "atom", "M=64 N=48", NULL, NULL, RUN, 2e-2},
    {NULL, NULL, "dt", "N=200", NULL, NULL, RUN, 0},
    {NULL, NULL, "mth", "N=300", NULL, NULL, RUN, 0},
    {NULL, NULL, "ser", "M=20 N=50", NULL, NULL, RUN, 0},
    {NULL, NULL, "gm", "M=70 N=50 K=40 ta=False tb=False dtype=float16", NULL, NULL, RUN, 0},
    {NULL, NULL, "gm", "M=70 N=50 K=40 ta=True tb=False dtype=float16", NULL, NULL, RUN, 0},
    {NULL, NULL, "gm", "M=70 N=50 K=40 ta=False tb=True dtype=bfloat16", NULL, NULL, RUN, 0},
    {NULL, NULL, "gm", "M=70 N=50 K=40 ta=True tb=True dtype=float32", NULL, NULL, RUN, 0},
    {NULL, NULL, "gmx", "M=96 N=80 K=96 bm=32 bn=16 bk=32 ta=False tb=False dtype=float16 threads=64 pad=0 clear=False", NULL, NULL, RUN, 0},
    {NULL, NULL, "gmx", "M=128 N=96 K=80 bm=64 bn=32 bk=16 ta=True tb=False dtype=bfloat16 threads=128 pad=8 clear=False", NULL, NULL, RUN, 0},
    {NULL, NULL, "gmx", "M=40 N=72 K=96 bm=16 bn=24 bk=48 ta=False tb=True dtype=float16 threads=32 pad=4 clear=True", NULL, NULL, RUN, 0},
    {NULL, NULL, "gmx", "M=100 N=90 K=70 bm=48 bn=40 bk=32 ta=True tb=True dtype=bfloat16 threads=96 pad=0 clear=False", NULL, NULL, RUN, 0},
    {NULL, NULL, "gmx", "M=256 N=256 K=64 bm=128 bn=128 bk=32 ta=False tb=False dtype=float16 threads=256 pad=8 clear=False", NULL, NULL, RUN, 0},
    {NULL, NULL, "gmx", "M=128 N=128 K=192 bm=64 bn=64 bk=64 ta=False tb=True dtype=bfloat16 threads=128 pad=0 clear=True", NULL, NULL, RUN, 0},
    {NULL, NULL, "gmx", "M=64 N=64 K=64 bm=32 bn=32 bk=32 ta=True tb=True dtype=float16 threads=128 pad=4 clear=False", NULL, NULL, RUN, 0},
    {NULL, NULL, "scl", "N=24", "n=37", "alpha=0.75 k=3", RUN, 0},
    {NULL, NULL, "axpy", "M=30 N=50", NULL, NULL, RUN | STRIDED_X, 0},
    {NULL, NULL, "axpy", "M=30 N=50", NULL, NULL, RUN | ALIAS_XY, 0},
    {NULL, NULL, "vcp", "M=64 N=128 bm=32 bn=64 off=0 dtype=float32", NULL, NULL, RUN, 0},
    {NULL, NULL, "vcp", "M=100 N=70 bm=32 bn=64 off=0 dtype=float32", NULL, NULL, RUN, 0},
    {NULL, NULL, "vcp", "M=50 N=136 bm=16 bn=64 off=0 dtype=float16", NULL, NULL, RUN, 0},
    {NULL, NULL, "vcp", "M=40 N=90 bm=16 bn=32 off=3 dtype=float16", NULL, NULL, RUN, 0},
    {NULL, NULL, "vcp", "M=33 N=80 bm=16 bn=64 off=16 dtype=int8", NULL, NULL, RUN, 0},
    {NULL, NULL, "vcp", "M=30 N=52 bm=16 bn=32 off=0 dtype=float32", NULL, NULL, RUN | STRIDED_X, 0},
    {NULL, NULL, "vcc", "M=64 N=128 bm=32 bn=64 off=0 sdt=float32 ddt=float16", NULL, NULL, RUN, 0},
    {NULL, NULL, "vcc", "M=64 N=128 bm=32 bn=64 off=0 sdt=float16 ddt=float32", NULL, NULL, RUN, 0},
    {NULL, NULL, "vcc", "M=100 N=70 bm=32 bn=64 off=0 sdt=float32 ddt=bfloat16", NULL, NULL, RUN, 0},
    {NULL, NULL, "vcc", "M=50 N=136 bm=16 bn=64 off=0 sdt=bfloat16 ddt=float32", NULL, NULL, RUN, 0},
    {NULL, NULL, "vcc", "M=40 N=90 bm=16 bn=32 off=3 sdt=float32 ddt=float16", NULL, NULL, RUN, 0},
    {NULL, NULL, "vcc", "M=30 N=52 bm=16 bn=32 off=0 sdt=float32 ddt=float16", NULL, NULL, RUN | STRIDED_X, 0},
    {NULL, NULL, "vcc", "M=36 N=44 bm=16 bn=4 off=2 sdt=float16 ddt=float32", NULL, NULL, RUN, 0},
    {NULL, NULL, "vcf", "M=40 N=200 bm=16 bn=128 rev=False", NULL, NULL, RUN, 0},
    {NULL, NULL, "vcf", "M=33 N=64 bm=16 bn=64 rev=True", NULL, NULL, RUN, 0},
    {NULL, NULL, "pr", "N=4", NULL, NULL, 0, 0},
    {NULL, NULL, "chain", "n=64", NULL, NULL, 0, 0},
    /* views of another dtype (resolve_views: stored bits, NaN patterns forced in bits_copy) */
    {"tests/run/kernels/view_dtype.py", NULL, "bits_copy", "M=64 N=64", NULL, NULL, RUN, 0},
    {"tests/run/kernels/view_dtype.py", NULL, "narrow_read", "M=32 N=48", NULL, NULL, RUN, 0},
    {"tests/run/kernels/view_dtype.py", NULL, "scratch_reuse", "M=64 K=32 N=64", NULL, NULL, RUN, 0},
    /* FullCol gemms with a register A operand (layout MMA_A) */
    {"tests/run/kernels/gemm_rs_fullcol.py", NULL, "decode_fullcol", "B=2 H=32 S=64 D=64", NULL, NULL, RUN, 0},
    {"tests/run/kernels/gemm_rs_fullcol.py", NULL, "decode_fullcol", "B=2 H=32 S=96 D=64 direct=1", NULL, NULL, RUN, 0},
    {"tests/run/kernels/gemm_rs_fullcol.py", NULL, "decode_over_budget", "B=2 H=32 S=64 D=512", NULL, NULL, RUN, 0},
    {"tests/run/kernels/gemm_rs_fullcol.py", NULL, "decode_over_budget", "B=2 H=32 S=64 D=512 annotate=1", NULL, NULL, RUN, 0},
    /* a nest at a fragment's shifted indices (shift_nest) */
    {"tests/run/kernels/shift_store.py", NULL, "split_store", "M=32 N=64 K=32", NULL, NULL, RUN, 0},
    /* tensor memory on targets without it (pass lower_tmem): tmem tiles as register fragments,
     * T.tcgen05_gemm as T.gemm plus one thread's mbarrier arrive; the 128 x 128 float32 tiles of
     * TileLang's sm100 examples (over the register budget, kept in registers) */
    {"tests/run/kernels/tmem.py", NULL, "tc_gemm", "M=200 N=136 K=264", NULL, NULL, RUN, 0},
    {"tests/run/kernels/tmem.py", NULL, "tc_gemm", "M=256 N=256 K=512 block_M=128 block_N=128 block_K=64 threads=256", NULL, NULL, RUN, 0},
    {"tests/run/kernels/tmem.py", NULL, "tc_gemm", "M=128 N=96 K=96 trans_B=False num_stages=1", NULL, NULL, RUN, 0},
    {"tests/run/kernels/tmem.py", NULL, "tc_gemm_two", "M=128 N=128 K=256", NULL, NULL, RUN, 0},
    {"tests/run/kernels/tmem.py", NULL, "tc_attn", "batch=1 heads=2 seq_len=200 dim=64 is_causal=True", NULL, NULL, RUN, 0},
    {"tests/run/kernels/tmem.py", NULL, "tc_attn", "batch=1 heads=2 seq_len=256 dim=128 is_causal=False block_M=128 block_N=128 variant=ts threads=256", NULL, NULL, RUN, 0},
    {"tests/run/kernels/tmem.py", NULL, "tc_attn", "batch=1 heads=2 seq_len=256 dim=128 is_causal=True block_M=128 block_N=128", NULL, NULL, RUN, 0},
    /* (O is float32 but P = bfloat16(S): where the two targets' S differ in the last float32 bits
     * (mma.sync's order of sums against the C loop's) one P element may round to the neighbouring
     * bfloat16, one ulp of |S| <= ~12, times |V| <= 1: up to ~0.05 on that row's outputs (the H200,
     * batch 2: 55 of 8192 off by at most 0.0076)) */
    {"tests/run/kernels/tmem.py", NULL, "tc_chain", "M=128 N=96 D=64", NULL, NULL, RUN, 0.1},
    /* tiles two T.ws roles share (in shared memory, TILESCALE_TMEM_SHARED=1): one role stages A, a
     * one-warp role multiplies, the first reads back; a producer warp and an mma warp over 3 slots,
     * T.tcgen05_mma_arrive for the block.  The mma warp's one arrives are each lane's
     * (partition_threads), which compute-sanitizer racecheck can follow */
    {"tests/run/kernels/tmem.py", NULL, "tc_roles", "M=256 N=128 K=64", NULL, NULL, RUN | TMEM_SHARED, 0},
    {"tests/run/kernels/tmem.py", NULL, "tc_ws", "M=256 N=192 K=320 stages=3", NULL, NULL, RUN | TMEM_SHARED, 0},
};

static const char *src_for(const char *entry) {
    static const struct { const char *entry; const char *const *src; } t[] = {
        {"red", &SRC_REDUCE}, {"atom", &SRC_ATOMIC}, {"dt", &SRC_DTYPES}, {"mth", &SRC_MATH},
        {"ser", &SRC_SERIAL}, {"gm", &SRC_GEMM}, {"gmx", &SRC_GEMMX}, {"scl", &SRC_SCALAR}, {"axpy", &SRC_AXPY}, {"vcp", &SRC_VCOPY}, {"vcc", &SRC_VCAST}, {"vcf", &SRC_VCFRAG},
        {"mmdyn", &SRC_PIPE}, {"csum", &SRC_PIPE},
        {"pr", &SRC_PRINT}, {"chain", &SRC_CHAIN},
    };
    for (int i = 0; i < TS_COUNTOF(t); i++)
        if (!strcmp(t[i].entry, entry)) return *t[i].src;
    return NULL;
}

/* ---- helpers ---------------------------------------------------------------------------------- */

static TsContext *ctx;
static char cache[512];
static uint64_t rng;

/* "a=1 b=2" -> defs (strings live in buf). */
static int split_defs(const char *s, char *buf, size_t cap, TsDefine *defs, int max) {
    int n = 0;
    if (!s) return 0;
    snprintf(buf, cap, "%s", s);
    for (char *tok = strtok(buf, " "); tok && n < max; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        if (!eq) continue;
        *eq = 0;
        defs[n].name = tok;
        defs[n].value = eq + 1;
        n++;
    }
    return n;
}

static const char *lookup(const char *list, const char *name, char *buf, size_t cap) {
    TsDefine d[16];
    int n = split_defs(list, buf, cap, d, 16);
    for (int i = 0; i < n; i++)
        if (!strcmp(d[i].name, name)) return d[i].value;
    return NULL;
}

static TsKernel *compile_in(const Spec *s, TsTarget target, int skip_build, const char *dir, TsStatus *st) {
    char buf[512];
    TsDefine defs[16];
    int nd = split_defs(s->defs, buf, sizeof buf, defs, 16);
    TsCompileOptions o = {0};
    o.target = target;
    o.cache_dir = dir;
    o.skip_build = skip_build;
    o.timing = 1;
    o.lenient_defines = 1;
    TsKernel *k = NULL;
    const char *was = getenv("TILESCALE_TMEM_SHARED");
    char saved[16] = "";
    if (was) snprintf(saved, sizeof saved, "%s", was);
    if (s->flags & TMEM_SHARED) setenv("TILESCALE_TMEM_SHARED", "1", 1);
    if (s->file) *st = ts_compile_file(ctx, s->file, s->entry, defs, nd, &o, &k);
    else *st = ts_compile_source(ctx, s->entry, src_for(s->entry), s->entry, defs, nd, &o, &k);
    if (s->flags & TMEM_SHARED) {
        if (was) setenv("TILESCALE_TMEM_SHARED", saved, 1);
        else unsetenv("TILESCALE_TMEM_SHARED");
    }
    return k;
}

static TsKernel *compile(const Spec *s, TsTarget target, int skip_build, TsStatus *st) {
    return compile_in(s, target, skip_build, cache, st);
}

static uint64_t splitmix(void) {
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rnd(TsDType dt) {
    uint64_t r = splitmix();
    switch (dt) {
    case TS_BOOL: return (double)(r & 1);
    case TS_UINT8: case TS_UINT16: case TS_UINT32: case TS_UINT64: return (double)(r % 17);
    case TS_INT8: case TS_INT16: case TS_INT32: case TS_INT64: return (double)(int)(r % 17) - 8;
    default: return 2.0 * (double)(r >> 11) / 9007199254740992.0 - 1.0;
    }
}

/* ---- compile with NVRTC for both architectures ------------------------------------------------ */

static void test_nvrtc_compiles(void) {
    for (int i = 0; i < TS_COUNTOF(specs); i++) {
        const Spec *s = &specs[i];
        TsStatus st;
        TsKernel *k = compile(s, TS_TARGET_CUDA, 1, &st);
        if (st) fprintf(stderr, "%s %s: %s", s->entry, s->defs, ts_last_error(ctx));
        CHECK_EQ_INT(TS_OK, st);
        if (!k) continue;
        CHECK_CONTAINS(ts_kernel_source(k), "extern \"C\" __global__");
        if (!strcmp(s->entry, "gmx") || (!strcmp(s->entry, "gm") && !strstr(s->defs, "float32")) ||
            !strcmp(s->entry, "matmul") || !strcmp(s->entry, "matmul_eager") || !strcmp(s->entry, "flashattn")) {
            /* the tensor-core function: mma.sync's, or wgmma's where the default
             * architecture is the device's sm_90a (a GPU machine) */
            const char *src = ts_kernel_source(k);
            CHECK(strstr(src, "ts_gemm_0(") || strstr(src, "ts_wgmma_0("));
        }
        /* pipelined loops issue cp.async and wait for their groups */
        if (!strcmp(s->entry, "mmdyn") || strstr(s->defs, "num_stages=2") || strstr(s->defs, "num_stages=3") ||
            strstr(s->defs, "num_stages=4")) {
            CHECK_CONTAINS(ts_kernel_source(k), "ts_cp_async<16>(");
            CHECK_CONTAINS(ts_kernel_source(k), "ts_cp_async_wait<");
        }
        /* plain copies out of shared memory are IR vector copies (partition_threads):
         * a global destination is written a vector at a time where aligned; a
         * compact parameter whose rows are whole vectors (N a multiple of the
         * lanes) is proven aligned (one move, no run-time test), other rows
         * (N = 70 float32: 4 lanes) are tested per vector */
        if (!strcmp(s->entry, "vcp")) {
            const char *src = ts_kernel_source(k);
            if (strstr(s->defs, "N=70 ")) {
                CHECK_CONTAINS(src, "if (ts_v && ts_p) *(");
                CHECK_CONTAINS(src, "{ if (ts_p) ts_d[ts_e * Y_1_s1]"); /* the global element-by-element path */
            }
            if (strstr(s->defs, "N=128 ") || strstr(s->defs, "N=136 ")) {
                CHECK(strstr(src, "ts_d[ts_e * Y_1_s1]") == NULL);
                CHECK_CONTAINS(src, "if (ts_p) *(uint4 *)ts_d = *(const uint4 *)ts_s;\n");
            }
        }
        if (!strcmp(s->entry, "vcf")) {
            /* registers <-> global as converting vectors, the scan by shuffles */
            CHECK_CONTAINS(ts_kernel_source(k), "ts_h2f((ts_u16)(ts_w");
            CHECK_CONTAINS(ts_kernel_source(k), "ts_f2bf2(");
            CHECK_CONTAINS(ts_kernel_source(k), "ts_shfl_xor_f(");
        }
        if (!strcmp(s->entry, "vcc")) {
            /* casting copies are converting vector copies where aligned: the
             * narrow side packed two per word by the paired conversion, or
             * unpacked lane by lane from one vector load; misaligned and
             * partial vectors element by element through the scalar ones */
            const char *src = ts_kernel_source(k);
            bool bf = strstr(s->defs, "bfloat16") != NULL;
            CHECK_CONTAINS(src, strstr(s->defs, "ddt=bfloat16") ? "ts_f2bf(" : strstr(s->defs, "ddt=float16") ? "ts_f2h(" : "ts_");
            CHECK_CONTAINS(src, bf ? "ts_f2bf2(" : "ts_f2h2(");
            if (strstr(s->defs, "off=0")) CHECK_CONTAINS(src, bf ? "ts_bf2f((ts_u16)(ts_w" : "ts_h2f((ts_u16)(ts_w");
        }
        static const char *const archs[] = {"sm_80", "sm_90a"};
        for (const TsKernel *part = k; part; part = ts_kernel_next(part))
        for (int a = 0; a < 2; a++) {
            /* a source printed for the device's sm_90a (a GPU machine's default) may hold
             * sm_90 instructions (mbarrier.try_wait.parity, wgmma): not for sm_80 */
            const char *psrc = ts_kernel_source(part);
            if (a == 0 && (strstr(psrc, "mbarrier.try_wait") || strstr(psrc, "wgmma.mma_async"))) continue;
            TsDiag d;
            memset(&d, 0, sizeof d);
            size_t size = 0;
            double t0 = ts_now_ms();
            unsigned char *img = ts_nvrtc_compile(&d, ts_kernel_source(part), archs[a], &size);
            if (!img) fprintf(stderr, "%s %s for %s:\n%s\n", s->entry, s->defs, archs[a], ts_buf_str(&d.msg));
            else printf("  nvrtc %-6s %-22s %-62s %7.1f ms, %zu bytes\n", archs[a], s->entry, s->defs,
                        ts_now_ms() - t0, size);
            CHECK(img != NULL);
            CHECK(size > 0);
            free(img);
            ts_buf_free(&d.msg);
        }
        ts_kernel_destroy(k);
    }
    /* a syntax error in generated code (impossible by construction) comes back with NVRTC's log */
    TsDiag d;
    memset(&d, 0, sizeof d);
    size_t size;
    unsigned char *img = ts_nvrtc_compile(&d, "this is not CUDA", "sm_80", &size);
    CHECK(img == NULL);
    CHECK_EQ_INT(TS_ERR_BUILD, d.status);
    CHECK_CONTAINS(ts_buf_str(&d.msg), "NVRTC could not compile");
    ts_buf_free(&d.msg);
}

/* ---- register hints by architecture (pass arch_hints) -------------------------------------- */

/* The warp-specialised GEMM with TileLang's register hints
 * (tests/run/kernels/reg_hints.py: ws_hinted) generated for sm_80, sm_90
 * and sm_90a, full and quick tier: setmaxnreg is in the source for sm_90a
 * only, printed without a preprocessor guard (pass arch_hints dropped it
 * from the IR elsewhere), and each source compiles with NVRTC for the
 * architecture it was generated for; sm_90a's PTX has both setmaxnreg. */
static void test_arch_hints(void) {
    static const char *const archs[] = {"sm_80", "sm_90", "sm_90a"};
    const char *was = getenv("TILESCALE_CUDA_ARCH");
    char saved[64] = "";
    if (was) snprintf(saved, sizeof saved, "%s", was);
    for (int a = 0; a < 3; a++)
        for (int tier = 0; tier < 2; tier++) {
            setenv("TILESCALE_CUDA_ARCH", archs[a], 1);
            TsCompileOptions o = {0};
            o.target = TS_TARGET_CUDA;
            o.cache_dir = cache;
            o.skip_build = 1;
            o.tiered = tier ? TS_TIERED_QUICK : TS_TIERED_OFF;
            TsKernel *k = NULL;
            TsStatus st = ts_compile_file(ctx, "tests/run/kernels/reg_hints.py", "ws_hinted", NULL, 0, &o, &k);
            CHECK_EQ_INT(TS_OK, st);
            if (st != TS_OK) {
                fprintf(stderr, "%s\n", ts_last_error(ctx));
                continue;
            }
            const char *src = ts_kernel_source(k);
            int keep = !strcmp(archs[a], "sm_90a");
            CHECK(strstr(src, "__CUDA_ARCH_FEAT") == NULL);
            CHECK_EQ_INT(keep, strstr(src, "setmaxnreg.dec.sync.aligned.u32 24;") != NULL);
            CHECK_EQ_INT(keep, strstr(src, "setmaxnreg.inc.sync.aligned.u32 240;") != NULL);
            if (!keep) CHECK(strstr(src, "setmaxnreg") == NULL);
            TsDiag d;
            memset(&d, 0, sizeof d);
            size_t size = 0;
            unsigned char *img = ts_nvrtc_emit(&d, src, NULL, archs[a], 1, NULL, &size);
            if (!img) fprintf(stderr, "ws_hinted for %s (tier %d):\n%s\n", archs[a], tier, ts_buf_str(&d.msg));
            CHECK(img != NULL);
            if (img) {
                int n = 0;
                for (size_t i = 0; i + 10 <= size; i++) n += !memcmp(img + i, "setmaxnreg", 10);
                CHECK_EQ_INT(keep ? 2 : 0, n);
                printf("  arch_hints %-6s %s tier: %d setmaxnreg in the PTX\n", archs[a], tier ? "quick" : "full", n);
            }
            free(img);
            ts_buf_free(&d.msg);
            ts_kernel_destroy(k);
        }
    if (was) setenv("TILESCALE_CUDA_ARCH", saved, 1);
    else unsetenv("TILESCALE_CUDA_ARCH");
}

/* The cubin holds ptxas's options (".nv.info"/string data: "-regUsageLevel N").
 * A kernel whose second line asks for a level (TS_CUDA_PTXAS_LEVEL, what
 * the code generator writes for tensor-core loops) gets it from NVRTC 13
 * on for sm_XY; one without the line, or a level outside 0..10, does not.
 * The fast-compile level (TS_CUDA_PTXAS_FAST after the level: min, the
 * only one the library passes) comes with a valid level only. */
static int image_has(const unsigned char *img, size_t n, const char *s) {
    size_t k = strlen(s);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(img + i, s, k)) return 1;
    return 0;
}

static void test_ptxas_level(void) {
    int vmaj = 0, vmin = 0;
    if (!ts_nvrtc_version(&vmaj, &vmin) || vmaj < 13) {
        printf("NVRTC %d.%d: the ptxas register-usage level is not passed (13.0 on)\n", vmaj, vmin);
        return;
    }
    static const char *const body = "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] += 1.0f; }\n";
    static const struct {
        const char *line; /* the second line */
        const char *want; /* in the cubin, or NULL: no level at all */
        int fast;         /* ptxas's fast-compile level asked for and given ("-Ofc min") */
    } cases[] = {
        {TS_CUDA_PTXAS_LEVEL "8 (tensor-core loops) */", "-regUsageLevel 8", 0},
        {TS_CUDA_PTXAS_LEVEL "10 */", "-regUsageLevel 10", 0},
        {TS_CUDA_PTXAS_LEVEL "8" TS_CUDA_PTXAS_FAST " (tensor-core loops) */", "-regUsageLevel 8", 1},
        {TS_CUDA_PTXAS_LEVEL "10" TS_CUDA_PTXAS_FAST " */", "-regUsageLevel 10", 1},
        {TS_CUDA_PTXAS_LEVEL "11" TS_CUDA_PTXAS_FAST " */", NULL, 0},
        {TS_CUDA_PTXAS_LEVEL "11 */", NULL, 0},
        {TS_CUDA_PTXAS_LEVEL "8 --Ofast-compile=max */", "-regUsageLevel 8", 0},
        {"/* nothing asked */", NULL, 0},
    };
    for (int c = 0; c < TS_COUNTOF(cases); c++) {
        TsBuf src = {0};
        ts_buf_printf(&src, "/* first line */\n%s\n%s", cases[c].line, body);
        TsDiag d;
        memset(&d, 0, sizeof d);
        size_t size = 0;
        unsigned char *img = ts_nvrtc_compile(&d, ts_buf_str(&src), "sm_90", &size);
        CHECK(img != NULL);
        if (img) {
            if (cases[c].want) CHECK(image_has(img, size, cases[c].want));
            else CHECK(!image_has(img, size, "-regUsageLevel"));
            CHECK_EQ_INT(cases[c].fast, image_has(img, size, "-Ofc min"));
            CHECK(!image_has(img, size, "-Ofc max"));
        }
        free(img);
        ts_buf_free(&d.msg);
        ts_buf_free(&src);
    }
}

static void test_refusals(void) {
    Spec s = {NULL, SRC_TOO_MANY_THREADS, "big", "N=64", NULL, NULL, 0, 0};
    TsKernel *k = NULL;
    TsCompileOptions o = {0};
    o.target = TS_TARGET_CUDA;
    o.skip_build = 1;
    TsDefine d = {"N", "64"};
    TsStatus st = ts_compile_source(ctx, "big.py", s.src, "big", &d, 1, &o, &k);
    CHECK(st == TS_ERR_UNSUPPORTED || st == TS_ERR_TYPE); /* the elaborator may refuse it first */
    CHECK_CONTAINS(ts_last_error(ctx), "1024");
    ts_kernel_destroy(k);
}

/* ---- external CUDA source (T.import_source + T.call_extern) ------------------------------- */

/* The call forms TileLang's dequantization examples use, on a device
 * function of our own: `T.call_extern(name, ptrs..., dtype=d)` (the gemv's
 * lop3 decode, a float16 output), the same with a count (the fp4 GEMMs',
 * bfloat16) and `T.call_extern("handle", name, ptrs...)` (bitnet's, int8). */
static const char *SRC_EXTFORMS = PRE
    "SRC = \"\"\"\n"
    "template <typename T1, typename T2>\n"
    "__device__ void t_widen(const T1 *in, T2 *out, const int n = 4) {\n"
    "  for (int i = 0; i < n; i++) out[i] = (T2)(unsigned short)(in[i] & 0x7f);\n"
    "}\n"
    "\"\"\"\n\n"
    "def extforms(M=64):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, 4), 'int8'), B: T.Tensor((M, 4), 'float16'), C: T.Tensor((M, 4), 'bfloat16'),\n"
    "             D: T.Tensor((M, 4), 'int8')):\n"
    "        with T.Kernel(1, threads=M) as bx:\n"
    "            T.import_source(SRC)\n"
    "            q = T.alloc_local((4,), 'int8')\n"
    "            h = T.alloc_local((4,), 'float16')\n"
    "            g = T.alloc_local((4,), 'bfloat16')\n"
    "            e = T.alloc_local((4,), 'int8')\n"
    "            t = T.get_thread_binding()\n"
    "            for v in T.vectorized(4):\n"
    "                q[v] = A[t, v]\n"
    "            T.import_source(SRC)\n"
    "            T.call_extern('t_widen', T.access_ptr(q, 'r'), T.access_ptr(h, 'w'), dtype='float16')\n"
    "            T.call_extern('t_widen', T.access_ptr(q, 'r'), T.access_ptr(g, 'w'), 4, dtype='bfloat16')\n"
    "            T.call_extern('handle', 't_widen', T.access_ptr(q, 'r'), T.access_ptr(e, 'w'))\n"
    "            for v in T.vectorized(4):\n"
    "                B[t, v] = h[v]\n"
    "                C[t, v] = g[v]\n"
    "                D[t, v] = e[v]\n"
    "    return main\n";

/* An external call without the source that defines it. */
static const char *SRC_EXTNONE = PRE
    "def nosrc(M=32):\n"
    "    @T.prim_func\n"
    "    def ghost(A: T.Tensor((M,), 'int32')):\n"
    "        with T.Kernel(1, threads=M) as bx:\n"
    "            a = T.alloc_local((1,), 'int32')\n"
    "            T.call_extern('handle', 'ts_no_such_fn', T.access_ptr(a, 'w'))\n"
    "            A[T.get_thread_binding()] = a[0]\n"
    "    return ghost\n";

/* Two kernels of one prim_func: the second calls what the first imported (TileLang's
 * import lands in the module, before both). */
static const char *SRC_EXTCHAIN = PRE
    "SRC = \"\"\"\n"
    "__device__ int twice(int x) { return 2 * x; }\n"
    "\"\"\"\n\n"
    "def chain(M=32):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M,), 'int32'), B: T.Tensor((M,), 'int32')):\n"
    "        with T.Kernel(1, threads=M) as bx:\n"
    "            t = T.get_thread_binding()\n"
    "            T.import_source(SRC)\n"
    "            A[t] = T.call_extern('int32', 'twice', A[t])\n"
    "        with T.Kernel(1, threads=M) as bx:\n"
    "            t = T.get_thread_binding()\n"
    "            B[t] = T.call_extern('int32', 'twice', A[t])\n"
    "    return main\n";

/* Value calls inside a T.Parallel nest (spread over the threads as any store),
 * T.address_of a T.alloc_var as a pointer. */
static const char *SRC_EXTPAR = PRE
    "SRC = \"\"\"\n"
    "__device__ int twice(int x) { return 2 * x; }\n"
    "__device__ void bump(int *p) { *p += 1; }\n"
    "\"\"\"\n\n"
    "def par(M=256):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M,), 'int32'), B: T.Tensor((M,), 'int32')):\n"
    "        with T.Kernel(1, threads=128) as bx:\n"
    "            T.import_source(SRC)\n"
    "            S = T.alloc_shared((M,), 'int32')\n"
    "            for i in T.Parallel(M):\n"
    "                S[i] = T.call_extern('int32', 'twice', A[i])\n"
    "            for i in T.Parallel(M):\n"
    "                B[i] = S[(i + 1) % M]\n"
    "            r = T.alloc_var('int32')\n"
    "            r = 5\n"
    "            T.call_extern('handle', 'bump', T.address_of(r))\n"
    "            if T.get_thread_binding() == 0:\n"
    "                B[0] = r\n"
    "    return main\n";

static int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* NVRTC compiles src for sm_80 (unless sm90_only: PTX of sm_90, such as the fp4 GEMMs'
 * mul.bf16x2) and sm_90a. */
static void nvrtc_both(const char *what, const char *src, bool sm90_only) {
    static const char *const archs[] = {"sm_80", "sm_90a"};
    for (int a = sm90_only ? 1 : 0; a < 2; a++) {
        TsDiag d;
        memset(&d, 0, sizeof d);
        size_t size = 0;
        unsigned char *img = ts_nvrtc_compile(&d, src, archs[a], &size);
        if (!img) fprintf(stderr, "%s for %s:\n%s\n", what, archs[a], ts_buf_str(&d.msg));
        else printf("  nvrtc %-6s %s: %zu bytes\n", archs[a], what, size);
        CHECK(img != NULL);
        free(img);
        ts_buf_free(&d.msg);
    }
}

static void test_extern(void) {
    /* our own functions: the source once (imported twice), calls as written, pointers to
     * aligned local arrays, a value call in its compute type; NVRTC compiles it */
    Spec own = {"tests/golden/ir_extern.py", NULL, "ext_demo", "M=64", NULL, NULL, 0, 0};
    TsStatus st;
    TsKernel *k = compile(&own, TS_TARGET_CUDA, 1, &st);
    if (st) fprintf(stderr, "ext_demo: %s", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, st);
    if (k) {
        const char *src = ts_kernel_source(k);
        CHECK_EQ_INT(1, count_of(src, "__device__ int mix3(int a, int b)"));
        CHECK(strstr(src, "__device__ int mix3") < strstr(src, "__global__"));
        CHECK_CONTAINS(src, "typedef unsigned int uint;");
        CHECK_CONTAINS(src, "__align__(16) ts_i32 a_");
        CHECK_CONTAINS(src, "add_pairs((&a_6[0]), (&b_7[0]), 2LL);");
        CHECK_CONTAINS(src, "add_pairs((&a_6[4]), (&b_7[2]), 2LL);");
        CHECK_CONTAINS(src, "(ts_i32)((((ts_i64)mix3(");
        nvrtc_both("ext_demo", src, false);
        ts_kernel_destroy(k);
    }
    TsKernel *kf = NULL;
    TsCompileOptions o = {0};
    o.target = TS_TARGET_CUDA;
    o.skip_build = 1;
    TsDefine dm = {"M", "64"};
    st = ts_compile_source(ctx, "extforms.py", SRC_EXTFORMS, "extforms", &dm, 1, &o, &kf);
    if (st) fprintf(stderr, "extforms: %s", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, st);
    if (kf) {
        const char *src = ts_kernel_source(kf);
        CHECK_EQ_INT(1, count_of(src, "__device__ void t_widen("));
        CHECK_CONTAINS(src, "__align__(16) ts_u16 h_"); /* float16 elements: their stored bits */
        CHECK_EQ_INT(3, count_of(src, "t_widen((&q_"));
        CHECK_CONTAINS(src, "[0]), 4LL);");
        nvrtc_both("extforms", src, false);
        ts_kernel_destroy(kf);
    }
    TsKernel *kp = NULL;
    TsDefine d256 = {"M", "256"};
    st = ts_compile_source(ctx, "par.py", SRC_EXTPAR, "par", &d256, 1, &o, &kp);
    if (st) fprintf(stderr, "par: %s", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, st);
    if (kp) {
        CHECK_CONTAINS(ts_kernel_source(kp), "bump((&r_");
        CHECK_CONTAINS(ts_kernel_source(kp), "twice((ts_i64)(A_0[");
        nvrtc_both("par", ts_kernel_source(kp), false);
        ts_kernel_destroy(kp);
    }
    TsKernel *kch = NULL;
    TsDefine d32c = {"M", "32"};
    st = ts_compile_source(ctx, "chain.py", SRC_EXTCHAIN, "chain", &d32c, 1, &o, &kch);
    if (st) fprintf(stderr, "chain: %s", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, st);
    int parts = 0;
    for (const TsKernel *part = kch; part; part = ts_kernel_next(part), parts++) {
        CHECK_EQ_INT(1, count_of(ts_kernel_source(part), "__device__ int twice(int x)"));
        nvrtc_both("chain part", ts_kernel_source(part), false);
    }
    CHECK_EQ_INT(2, parts);
    ts_kernel_destroy(kch);
    /* TileLang's examples themselves, where the checkout has them (bench/tilelang_examples.sh fetch),
     * at the measurement's values: their quantize package's source and calls compile */
    static const struct { const char *file, *entry, *defs; } ex[] = {
        {".tl-examples/dequantize_gemm/example_dequant_gemv_fp16xint4.py", "dequantize_gemv",
         "K=1024 M=1 N=1024 accum_dtype=float16 fast_decoding=True group_size=-1 in_dtype=float16 n_partition=4 "
         "num_bits=4 out_dtype=float16 reduce_thread=32 source_format=uint storage_dtype=int8"},
        {".tl-examples/dequantize_gemm/example_dequant_gemm_bf16_fp4_hopper.py", "matmul",
         "K=256 M=256 N=256 accum_dtype=float32 block_K=128 block_M=128 block_N=128 fast_dequant=True "
         "in_dtype=bfloat16 num_bits=4 num_stages=2 out_dtype=bfloat16 split=1 threads=256"},
        {".tl-examples/dequantize_gemm/example_dequant_gemm_bf16_mxfp4_hopper.py", "matmul",
         "K=256 M=256 N=256 accum_dtype=float32 block_K=128 block_M=128 block_N=128 fast_dequant=True "
         "in_dtype=bfloat16 num_bits=4 num_stages=2 out_dtype=bfloat16 scale_size=32 split=1 threads=256 "
         "with_bias=False"},
        {".tl-examples/bitnet-1.58b/kernel_benchmark/tilelang_bitnet_158_int8xint2_decode.py",
         "bitnet_158_int8xint2_decode", "K=256 M=1 N=256 accum_dtype=int32 fast_decoding=True in_dtype=int8 "
         "out_dtype=int32"},
    };
    for (int i = 0; i < TS_COUNTOF(ex); i++) {
        if (access(ex[i].file, R_OK) != 0) {
            printf("  (%s: not fetched, skipped)\n", ex[i].file);
            continue;
        }
        Spec s = {ex[i].file, NULL, ex[i].entry, ex[i].defs, NULL, NULL, 0, 0};
        TsKernel *ke = compile(&s, TS_TARGET_CUDA, 1, &st);
        if (st) fprintf(stderr, "%s: %s", ex[i].file, ts_last_error(ctx));
        CHECK_EQ_INT(TS_OK, st);
        if (!ke) continue;
        CHECK_CONTAINS(ts_kernel_source(ke), "/* imported source 1 */");
        nvrtc_both(ex[i].file, ts_kernel_source(ke), strstr(ex[i].file, "hopper") != NULL);
        ts_kernel_destroy(ke);
    }
    /* the C target refuses such a kernel at its first T.import_source, naming the kernel */
    TsKernel *kc = compile(&own, TS_TARGET_C, 1, &st);
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED, st);
    CHECK_CONTAINS(ts_last_error(ctx), "ir_extern.py:26:");
    CHECK_CONTAINS(ts_last_error(ctx), "kernel 'main' uses external CUDA source");
    ts_kernel_destroy(kc);
    /* a function nobody imported: NVRTC's error, naming the kernel and the function */
    TsKernel *kn = NULL;
    TsDefine d32 = {"M", "32"};
    st = ts_compile_source(ctx, "nosrc.py", SRC_EXTNONE, "nosrc", &d32, 1, &o, &kn);
    CHECK_EQ_INT(TS_OK, st);
    if (kn) {
        /* the kernel's name comes from the caller, not from the source's
         * first line: the source without its first line, named by the call */
        const char *src = ts_kernel_source(kn), *nl = strchr(src, '\n');
        CHECK(nl != NULL && strstr(src, "for kernel 'ghost'") < nl);
        TsDiag d;
        memset(&d, 0, sizeof d);
        size_t size = 0;
        unsigned char *img = ts_nvrtc_emit(&d, nl ? nl + 1 : src, "ghost", "sm_80", 1, NULL, &size);
        CHECK(img == NULL);
        CHECK_EQ_INT(TS_ERR_BUILD, d.status);
        CHECK_CONTAINS(ts_buf_str(&d.msg), "of kernel 'ghost'");
        CHECK_CONTAINS(ts_buf_str(&d.msg), "ts_no_such_fn");
        free(img);
        ts_buf_free(&d.msg);
        /* ts_nvrtc_compile's source is of no known kernel: none named */
        memset(&d, 0, sizeof d);
        img = ts_nvrtc_compile(&d, src, "sm_80", &size);
        CHECK(img == NULL);
        CHECK_EQ_INT(TS_ERR_BUILD, d.status);
        CHECK(strstr(ts_buf_str(&d.msg), "of kernel") == NULL);
        free(img);
        ts_buf_free(&d.msg);
        /* the library's way (ts_kernel_device_code): the kernel's name */
        void *out = NULL;
        CHECK_EQ_INT(TS_ERR_BUILD, ts_kernel_device_code(kn, "ptx", &out, &size));
        CHECK(out == NULL);
        CHECK_CONTAINS(ts_last_error(ctx), "of kernel 'ghost'");
        CHECK_CONTAINS(ts_last_error(ctx), "ts_no_such_fn");
        free(out);
        ts_kernel_destroy(kn);
    }
}

/* A second build of the same kernel comes from the disk cache. */
static void test_cache(void) {
    char dir[600], path[1200];
    snprintf(dir, sizeof dir, "%s/cache-test", cache);
    DIR *dd = opendir(dir); /* start empty: the first build must miss */
    for (struct dirent *e; dd && (e = readdir(dd)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (dd) closedir(dd);
    const Spec *s = &specs[0];
    TsStatus st;
    for (int round = 0; round < 2; round++) {
        TsKernel *k = compile_in(s, TS_TARGET_CUDA, 0, dir, &st);
        if (st) fprintf(stderr, "%s", ts_last_error(ctx));
        CHECK_EQ_INT(TS_OK, st);
        if (k) CHECK_CONTAINS(ts_kernel_timing(k), round ? "cache hit" : "nvrtc");
        if (k && !round) { /* a miss's NVRTC time split (NVRTC's --time table from 13.0 on) */
            CHECK_CONTAINS(ts_kernel_timing(k), "\nnvrtc open ");
            CHECK_CONTAINS(ts_kernel_timing(k), "\nnvrtc cpu ");
            int vmaj = 0, vmin = 0;
            CHECK(ts_nvrtc_version(&vmaj, &vmin));
            const char *t = ts_kernel_timing(k);
            if (vmaj >= 13) {
                CHECK_CONTAINS(t, "\nnvrtc front end ");
                CHECK_CONTAINS(t, "\nnvrtc nvvm ");
                CHECK_CONTAINS(t, "\nnvrtc ptxas ");
            }
            CHECK(strstr(t, "File name") == NULL); /* NVRTC's table itself is not passed on */
        }
        ts_kernel_destroy(k);
    }
}

/* The driver made unfindable: compiling works, launching says why it cannot run. */
static void test_no_driver(void) {
    const char *old = getenv("TILESCALE_LIBCUDA");
    char *saved = old ? strdup(old) : NULL;
    setenv("TILESCALE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    const Spec *s = &specs[0]; /* elementwise_add M=100 N=200 */
    TsStatus st;
    TsKernel *k = compile(s, TS_TARGET_CUDA, 0, &st);
    if (st) fprintf(stderr, "%s", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, st);
    if (k) {
        int64_t shape[2] = {100, 200};
        TsTensor t[3];
        for (int i = 0; i < 3; i++) ts_tensor_alloc(&t[i], TS_FLOAT32, 2, shape);
        st = ts_kernel_launch(k, t, 3);
        CHECK_EQ_INT(TS_ERR_RUNTIME, st);
        CHECK_CONTAINS(ts_last_error(ctx), "no CUDA driver found");
        /* argument checks still come first */
        st = ts_kernel_launch(k, t, 2);
        CHECK_EQ_INT(TS_ERR_ARGCOUNT, st);
        for (int i = 0; i < 3; i++) ts_tensor_free(&t[i]);
        ts_kernel_destroy(k);
    }
    char arch[24];
    CHECK_EQ_INT(0, ts_cuda_device_arch(arch, sizeof arch, NULL));
    if (saved) setenv("TILESCALE_LIBCUDA", saved, 1);
    else unsetenv("TILESCALE_LIBCUDA");
    free(saved);
}

/* ---- on a GPU: CUDA against C ------------------------------------------------------------------- */

static int compare(const char *what, const TsTensor *got, const TsTensor *want, double atol_over) {
    double atol, rtol;
    switch (got->dtype) {
    case TS_FLOAT16: atol = rtol = 1e-2; break;
    case TS_BFLOAT16: atol = rtol = 2e-2; break;
    case TS_FLOAT8_E4M3: case TS_FLOAT8_E5M2: atol = rtol = 1.3e-1; break;
    case TS_FLOAT32: atol = rtol = 1e-4; break;
    case TS_FLOAT64: atol = rtol = 1e-10; break;
    default: atol = rtol = 0; break;
    }
    if (atol_over > 0) atol = atol_over;
    int64_t n = ts_tensor_numel(got), bad = 0, first = -1;
    double maxerr = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = ts_tensor_get(got, i), b = ts_tensor_get(want, i);
        /* NaN fails even in both: outputs start as NaN (the poison), so
         * NaN on both sides is an element neither target wrote (issue 9 H) */
        if (isinf(a) && isinf(b) && (a > 0) == (b > 0)) continue;
        double e = fabs(a - b);
        if (isnan(e)) e = INFINITY;
        if (e > maxerr) maxerr = e;
        if (!(e <= atol + rtol * fabs(b))) {
            if (first < 0) first = i;
            bad++;
        }
    }
    if (bad)
        fprintf(stderr, "  %s: %lld of %lld differ (max abs err %g); first at %lld: cuda %g vs c %g\n", what,
                (long long)bad, (long long)n, maxerr, (long long)first, ts_tensor_get(got, first),
                ts_tensor_get(want, first));
    return bad == 0;
}

/* Arguments for k; the two sets have the same values (X strided / X
 * aliasing Y as the spec asks). */
static int make_args(const Spec *s, TsKernel *k, TsTensor *a, TsTensor *b) {
    int np = ts_kernel_num_params(k);
    char buf[512];
    for (int p = 0; p < np; p++) {
        TsParamInfo info;
        ts_kernel_param(k, p, &info);
        if (!info.is_tensor) {
            const char *v = lookup(s->scalars, info.name, buf, sizeof buf);
            if (!v) return 0;
            ts_tensor_alloc(&a[p], info.dtype, 0, NULL);
            ts_tensor_alloc(&b[p], info.dtype, 0, NULL);
            ts_tensor_set(&a[p], 0, atof(v));
            ts_tensor_set(&b[p], 0, atof(v));
            continue;
        }
        int64_t shape[8];
        for (int d = 0; d < info.ndim; d++) {
            shape[d] = info.shape[d];
            if (shape[d] < 0) {
                const char *v = lookup(s->shapes, info.shape_names[d], buf, sizeof buf);
                if (!v) return 0;
                shape[d] = atoll(v);
            }
        }
        ts_tensor_alloc(&a[p], info.dtype, info.ndim, shape);
        ts_tensor_alloc(&b[p], info.dtype, info.ndim, shape);
        int64_t n = ts_tensor_numel(&a[p]);
        for (int64_t i = 0; i < n; i++) {
            double v = info.is_output ? (info.dtype >= TS_FLOAT16 ? NAN : 123) : rnd(info.dtype);
            ts_tensor_set(&a[p], i, v);
            ts_tensor_set(&b[p], i, v);
        }
        if (p == 0 && (s->flags & STRIDED_X) && info.ndim == 2) {
            /* the same logical values, stored column-major (ts_tensor_free frees strides) */
            for (TsTensor *t = a; t; t = t == a ? b : NULL) {
                TsTensor c;
                ts_tensor_alloc(&c, info.dtype, 2, shape);
                for (int64_t i = 0; i < n; i++)
                    ts_tensor_set(&c, (i % shape[1]) * shape[0] + i / shape[1], ts_tensor_get(&t[0], i));
                ts_tensor_free(&t[0]);
                int64_t *st = malloc(2 * sizeof *st);
                if (!st) return 0;
                st[0] = 1;
                st[1] = shape[0];
                c.strides = st;
                t[0] = c;
            }
        }
    }
    return 1;
}

/* `target`: TS_TARGET_CUDA on a GPU; TS_TARGET_C checks this harness
 * itself on a machine without one (TS_TEST_CUDA_SELFCHECK=1). */
static void test_against_c(TsTarget target) {
    for (int i = 0; i < TS_COUNTOF(specs); i++) {
        const Spec *s = &specs[i];
        if (!(s->flags & RUN)) continue;
        TsStatus st1, st2;
        TsKernel *kc = compile(s, TS_TARGET_C, 0, &st1);
        if (st1) fprintf(stderr, "%s", ts_last_error(ctx));
        TsKernel *kg = compile(s, target, 0, &st2);
        if (st2) fprintf(stderr, "%s", ts_last_error(ctx));
        CHECK_EQ_INT(TS_OK, st1);
        CHECK_EQ_INT(TS_OK, st2);
        if (kc && kg) {
            int np = ts_kernel_num_params(kg);
            TsTensor a[16] = {{0}}, b[16] = {{0}};
            CHECK(np <= 16 && make_args(s, kg, a, b));
            TsTensor la[16], lb[16];
            memcpy(la, a, sizeof la);
            memcpy(lb, b, sizeof lb);
            if (s->flags & ALIAS_XY) {
                la[0] = la[1];
                lb[0] = lb[1];
            }
            double t0 = ts_now_ms();
            st1 = ts_kernel_launch(kg, la, np);
            if (st1) fprintf(stderr, "%s", ts_last_error(ctx));
            double t1 = ts_now_ms();
            st2 = ts_kernel_launch(kc, lb, np);
            if (st2) fprintf(stderr, "%s", ts_last_error(ctx));
            CHECK_EQ_INT(TS_OK, st1);
            CHECK_EQ_INT(TS_OK, st2);
            int ok = 1;
            for (int p = 0; p < np; p++) {
                TsParamInfo info;
                ts_kernel_param(kg, p, &info);
                if (!info.is_tensor) continue;
                char what[256];
                snprintf(what, sizeof what, "%s %s: %s", s->entry, s->defs, info.name);
                ok &= compare(what, &a[p], &b[p], s->atol);
            }
            CHECK(ok);
            printf("  %s %-22s %-62s %s %8.2f ms\n", ok ? "PASS" : "FAIL", s->entry, s->defs,
                   target == TS_TARGET_CUDA ? "cuda" : "c", t1 - t0);
            for (int p = 0; p < np; p++) {
                ts_tensor_free(&a[p]);
                ts_tensor_free(&b[p]);
            }
        }
        ts_kernel_destroy(kc);
        ts_kernel_destroy(kg);
    }
}

static void test_chain_on_gpu(void) {
    Spec s = {NULL, NULL, "chain", "n=64", NULL, NULL, 0, 0};
    TsStatus st;
    TsKernel *k = compile(&s, TS_TARGET_CUDA, 0, &st);
    if (st) fprintf(stderr, "%s", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, st);
    if (!k) return;
    enum { N = 64 };
    int64_t shape[1] = {N};
    TsTensor t[3];
    for (int i = 0; i < 3; i++) ts_tensor_alloc(&t[i], TS_INT32, 1, shape);
    for (int i = 0; i < N; i++) {
        ts_tensor_set(&t[0], i, 0);
        ts_tensor_set(&t[1], i, -7777);
        ts_tensor_set(&t[2], i, rnd(TS_INT32));
    }
    st = ts_kernel_launch(k, t, 3);
    if (st) fprintf(stderr, "%s", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, st);
    double acc = 0;
    int ok = 1;
    for (int i = N - 1; i >= 0; i--) {
        acc += ts_tensor_get(&t[2], i);
        ok &= ts_tensor_get(&t[1], i) == acc && ts_tensor_get(&t[0], i) == 1;
    }
    CHECK(ok);
    printf("  %s chain of %d blocks waiting on each other\n", ok ? "PASS" : "FAIL", N);
    for (int i = 0; i < 3; i++) ts_tensor_free(&t[i]);
    ts_kernel_destroy(k);
}

static void test_smem_limit_on_gpu(void) {
    TsKernel *k = NULL;
    TsCompileOptions o = {0};
    o.target = TS_TARGET_CUDA;
    o.cache_dir = cache;
    TsDefine d = {"N", "64"};
    TsStatus st = ts_compile_source(ctx, "huge.py", SRC_HUGE_SMEM, "huge", &d, 1, &o, &k);
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED, st); /* refused at compile time, before the driver sees it */
    CHECK_CONTAINS(ts_last_error(ctx), "bytes of shared memory per block");
    ts_kernel_destroy(k);
}

int main(void) {
    TsBuf why = {0};
    if (!ts_nvrtc_available(&why)) {
        printf("SKIP: %s\n", ts_buf_str(&why));
        ts_buf_free(&why);
        return 77;
    }
    ts_buf_free(&why);
    const char *seed = getenv("TS_TEST_SEED");
    rng = seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL);
    printf("seed %llu (TS_TEST_SEED replays it)\n", (unsigned long long)rng);
    const char *c = getenv("TILESCALE_CACHE_DIR");
    snprintf(cache, sizeof cache, "%s", c && *c ? c : "/tmp/tilescale-test-cuda-cache");
    ts_context_create(&ctx);

    /* TS_TEST_CUDA_QUICK=1 (for runs under compute-sanitizer): only the
     * comparisons with the C target, and no kernel whose blocks wait on
     * each other (a tool that serializes blocks would hang it). */
    int quick = getenv("TS_TEST_CUDA_QUICK") != NULL;
    if (!quick) {
        test_nvrtc_compiles();
        test_arch_hints();
        test_ptxas_level();
        test_refusals();
        test_extern();
        test_cache();
        test_no_driver();
    }
    char arch[24];
    TsBuf dwhy = {0};
    if (ts_cuda_device_arch(arch, sizeof arch, &dwhy)) {
        printf("CUDA device %s: running every kernel against the C target\n", arch);
        test_against_c(TS_TARGET_CUDA);
        if (!quick) {
            test_chain_on_gpu();
            test_smem_limit_on_gpu();
        }
    } else {
        printf("no CUDA device (%s): launches not tested here\n", ts_buf_str(&dwhy));
        if (getenv("TS_TEST_CUDA_SELFCHECK")) test_against_c(TS_TARGET_C);
    }
    ts_buf_free(&dwhy);
    ts_context_destroy(ctx);
    return test_done();
}
