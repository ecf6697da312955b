/*
 * ws_async_variants.cu — which form of a warp-specialised producer's
 * cp.async hand-over does compute-sanitizer's synccheck accept?
 *
 * Why this exists.  Pass ws_async_copy (src/pass/ws_async_copy.c) turns a
 * T.ws producer's global -> shared copies into cp.async and its mbarrier
 * arrive into cp.async.mbarrier.arrive (default form: the pending count is
 * raised by one and the arrive-on is triggered once the thread's earlier
 * cp.async have completed) followed by the thread's own mbarrier.arrive.
 * On the H200 that ran correct, racecheck/memcheck clean and 2.4x faster,
 * but synccheck reported "Barrier error detected. Missing wait" once per
 * producer thread.  This file builds the same producer/consumer protocol
 * (256 threads: consumer warp group 0-127, producer 128-255, a ring of
 * STAGES slots of 32 KB with one full and one free mbarrier each, as the
 * generated ws_matmul_ring) in a few variants of the hand-over, so that one
 * GPU call says which of them synccheck and racecheck accept, whether the
 * data arrive intact, and what each costs.
 *
 * Facts the variants rest on (PTX ISA, "cp.async.mbarrier.arrive"): the
 * instruction makes the mbarrier track every cp.async the thread issued
 * before; the system performs an arrive-on when they have completed,
 * asynchronously.  Without .noinc the pending count is first raised by one
 * (no net change within the phase, so the init count is that of the plain
 * arrives); with .noinc it is not, and the init count must include the
 * asynchronous arrivals.  CUTLASS's C++ PipelineAsync commits with the
 * default form and then the plain arrive (as we do); the CuTe DSL's cp.async
 * pipeline commits with .noinc alone (count = producer threads).  CUTLASS's
 * pipelines also give the producer a "tail" (waiting, before it exits, on
 * the phases still in flight) so that it does not leave early.  Compute
 * Sanitizer's 2025.4 release notes: synccheck used to report both forms of
 * cp.async.mbarrier.arrive as a plain arrive, and gave false positives for
 * the form without .noinc (fixed for code from CUDA 13.1 compilers).  So
 * with 2025.3 and CUDA 13.0 the expectation is: the variants where a
 * thread makes two arrivals a phase (1, 4, 6, 7, and 3 with .noinc)
 * reported, 0, 2, 5 and 8 clean.
 *
 * Variants (the producer's hand-over of each slot; count = init count of a
 * full barrier; P = 128 producer threads):
 *   0 plain          ld.global + st.shared, mbarrier.arrive; count P (control: the
 *                    default path of session 7, known synccheck clean)
 *   1 inc+arrive     cp.async, cp.async.mbarrier.arrive, mbarrier.arrive; count P
 *                    (what ws_async_copy prints now: reported "Missing wait")
 *   2 noinc          cp.async, cp.async.mbarrier.arrive.noinc only; count P
 *   3 noinc+arrive   cp.async, .noinc, then mbarrier.arrive; count 2P
 *   4 inc+arrive+fulltail   1, and before exiting the producer waits on each
 *                    full barrier's last phase (its own asynchronous arrivals)
 *   5 noinc+fulltail 2, with the same tail
 *   6 inc+arrive+freetail   1, and before exiting the producer waits on each
 *                    free barrier's last phase (CUTLASS's producer tail)
 *   7 inc+arrive+waitall    1, and cp.async.commit_group + wait_group 0 at the
 *                    producer's end (tried in session 7: still reported)
 *   8 waitall+arrive cp.async, commit_group, wait_group 0, mbarrier.arrive;
 *                    count P (the producer waits for its own copies: no
 *                    asynchronous arrive at all; the safe fallback)
 *
 *   ws_async_variants V check    one small run (2 blocks, 7 slot uses), checks
 *                                the data: prints "data ok" or "data BAD n"
 *   ws_async_variants V time     a large run (132 x 8 blocks, 128 slot uses
 *                                each), median of 20 launches: "ms X"
 *   ws_async_variants names      the variant names, one a line
 * Exit 77 without a GPU.  Driven by bench/ws_async_variants.sh.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>

#define STAGES 2
#define SLOT_BYTES 32768                /* one tile pair of ws_matmul_ring (128x64 + 64x128 fp16) */
#define CHUNKS (SLOT_BYTES / 16 / 128)   /* 16-byte copies per producer thread per slot: 16 */
#define WORDS (SLOT_BYTES / 4 / 128)     /* 32-bit words each consumer thread reads per slot: 64 */
#define NVAR 9

static const char *const names[NVAR] = {"plain", "inc+arrive", "noinc", "noinc+arrive", "inc+arrive+fulltail",
                                        "noinc+fulltail", "inc+arrive+freetail", "inc+arrive+waitall",
                                        "waitall+arrive"};

__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbar_init(unsigned long long *b, unsigned n) {
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(smem_addr(b)), "r"(n) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned long long *b) {
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared.b64 st, [%0];\n}" ::"r"(smem_addr(b)) : "memory");
}
__device__ __forceinline__ void mbar_arrive_cp(unsigned long long *b) {
    asm volatile("cp.async.mbarrier.arrive.shared.b64 [%0];" ::"r"(smem_addr(b)) : "memory");
}
__device__ __forceinline__ void mbar_arrive_cp_noinc(unsigned long long *b) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(smem_addr(b)) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned long long *b, unsigned parity) {
    unsigned done;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done)
                     : "r"(smem_addr(b)), "r"(parity)
                     : "memory");
    } while (!done);
}
__device__ __forceinline__ void cp_async16(void *dst, const void *src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(dst)), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_commit_wait_all() {
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
}

/* in: ntiles tiles of SLOT_BYTES; block b's use k reads tile (b + k) % ntiles;
 * out[b * 128 + t]: consumer thread t's running hash over its words. */
template <int V>
__global__ void __launch_bounds__(256) ws_kernel(const uint4 *in, unsigned *out, int ntiles, int uses) {
    extern __shared__ __align__(16) unsigned char smem[];
    unsigned long long *full = (unsigned long long *)(smem + STAGES * SLOT_BYTES);
    unsigned long long *free_ = full + STAGES;
    const int tid = threadIdx.x;
    const unsigned full_count = V == 3 ? 256u : 128u;
    if (tid == 0)
        for (int s = 0; s < STAGES; s++) {
            mbar_init(&full[s], full_count);
            mbar_init(&free_[s], 128u);
        }
    __syncthreads();
    if (tid >= 128) { /* producer */
        const int p = tid - 128;
        for (int k = 0; k < uses; k++) {
            const int s = k % STAGES;
            mbar_wait(&free_[s], ((k / STAGES) & 1) ^ 1);
            const uint4 *src = in + (size_t)((blockIdx.x + k) % ntiles) * (SLOT_BYTES / 16);
            uint4 *dst = (uint4 *)(smem + s * SLOT_BYTES);
            if (V == 0) {
#pragma unroll
                for (int i = 0; i < CHUNKS; i++) dst[p + 128 * i] = src[p + 128 * i];
            } else {
#pragma unroll
                for (int i = 0; i < CHUNKS; i++) cp_async16(dst + p + 128 * i, src + p + 128 * i);
            }
            if (V == 0) mbar_arrive(&full[s]);
            else if (V == 1 || V == 4 || V == 6 || V == 7) {
                mbar_arrive_cp(&full[s]);
                mbar_arrive(&full[s]);
            } else if (V == 2 || V == 5) mbar_arrive_cp_noinc(&full[s]);
            else if (V == 3) {
                mbar_arrive_cp_noinc(&full[s]);
                mbar_arrive(&full[s]);
            } else { /* V == 8 */
                cp_commit_wait_all();
                mbar_arrive(&full[s]);
            }
        }
        if (V == 4 || V == 5 || V == 6) /* the tail: each slot's last phase */
            for (int s = 0; s < STAGES && s < uses; s++) {
                const int last = s + ((uses - 1 - s) / STAGES) * STAGES; /* the slot's last use */
                mbar_wait(V == 6 ? &free_[s] : &full[s], (last / STAGES) & 1);
            }
        if (V == 7) cp_commit_wait_all();
    } else { /* consumer */
        unsigned acc = 0x9e3779b9u ^ (unsigned)tid;
        for (int k = 0; k < uses; k++) {
            const int s = k % STAGES;
            mbar_wait(&full[s], (k / STAGES) & 1);
            const unsigned *w = (const unsigned *)(smem + s * SLOT_BYTES);
#pragma unroll 8
            for (int j = 0; j < WORDS; j++) acc = acc * 31u + w[tid + 128 * j];
            mbar_arrive(&free_[s]);
        }
        out[blockIdx.x * 128 + tid] = acc;
    }
}

typedef void (*KernelFn)(const uint4 *, unsigned *, int, int);
static const KernelFn kernels[NVAR] = {ws_kernel<0>, ws_kernel<1>, ws_kernel<2>, ws_kernel<3>, ws_kernel<4>,
                                       ws_kernel<5>, ws_kernel<6>, ws_kernel<7>, ws_kernel<8>};

#define CK(x)                                                                                    \
    do {                                                                                         \
        cudaError_t e_ = (x);                                                                    \
        if (e_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            return 1;                                                                            \
        }                                                                                        \
    } while (0)

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "names")) {
        for (int v = 0; v < NVAR; v++) printf("%s\n", names[v]);
        return 0;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: %s VARIANT check|time | names\n", argv[0]);
        return 2;
    }
    const int v = atoi(argv[1]);
    const bool timing = !strcmp(argv[2], "time");
    if (v < 0 || v >= NVAR) return 2;
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("no GPU: SKIPPED\n");
        return 77;
    }
    const int ntiles = timing ? 64 : 3, uses = timing ? 128 : 7, blocks = timing ? 132 * 8 : 2;
    const size_t in_words = (size_t)ntiles * SLOT_BYTES / 4;
    std::vector<unsigned> h_in(in_words), h_out(blocks * 128), ref(blocks * 128);
    unsigned long long x = 0x243f6a8885a308d3ull ^ (unsigned long long)v; /* fresh data per variant */
    for (size_t i = 0; i < in_words; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        h_in[i] = (unsigned)(x >> 32);
    }
    for (int b = 0; b < blocks; b++)
        for (int t = 0; t < 128; t++) {
            unsigned acc = 0x9e3779b9u ^ (unsigned)t;
            for (int k = 0; k < uses; k++) {
                const unsigned *w = h_in.data() + (size_t)((b + k) % ntiles) * (SLOT_BYTES / 4);
                for (int j = 0; j < WORDS; j++) acc = acc * 31u + w[t + 128 * j];
            }
            ref[b * 128 + t] = acc;
        }
    uint4 *d_in;
    unsigned *d_out;
    CK(cudaMalloc(&d_in, in_words * 4));
    CK(cudaMalloc(&d_out, (size_t)blocks * 128 * 4));
    CK(cudaMemcpy(d_in, h_in.data(), in_words * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(d_out, 0xA5, (size_t)blocks * 128 * 4)); /* poison */
    const int smem = STAGES * SLOT_BYTES + 2 * STAGES * 8;
    CK(cudaFuncSetAttribute(kernels[v], cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    kernels[v]<<<blocks, 256, smem>>>(d_in, d_out, ntiles, uses);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h_out.data(), d_out, (size_t)blocks * 128 * 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < blocks * 128; i++) bad += h_out[i] != ref[i];
    if (!timing) {
        if (bad) printf("data BAD %d\n", bad);
        else printf("data ok\n");
        return bad ? 1 : 0;
    }
    std::vector<float> ms;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int r = 0; r < 23; r++) {
        CK(cudaEventRecord(e0));
        kernels[v]<<<blocks, 256, smem>>>(d_in, d_out, ntiles, uses);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float t;
        CK(cudaEventElapsedTime(&t, e0, e1));
        if (r >= 3) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    printf("ms %.4f%s\n", ms[ms.size() / 2], bad ? " (data BAD)" : "");
    return bad ? 1 : 0;
}
