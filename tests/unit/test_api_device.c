/*
 * test_api_device.c — the device-pointer entry points of the public API
 * (ts_kernel_launch_device, ts_kernel_shared_bytes, ts_kernel_target)
 * that the Python layer uses for torch CUDA tensors.  CI has no GPU, so
 * this checks what can be checked without one: a C-target kernel and a
 * CUDA kernel compiled without a build refuse device launches with a
 * status and a message (never a crash), and the queries answer.  The
 * launch itself is covered on the device by bench/py_launch_overhead.py.
 */
#include <stdlib.h>

#include "test.h"
#include "tilescale.h"

static const char *SRC =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "@tilelang.jit(out_idx=[-1])\n"
    "def add(N):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), \"float32\"), B: T.Tensor((N,), \"float32\"), C: T.Tensor((N,), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, 32), threads=32) as bx:\n"
    "            for i in T.Parallel(32):\n"
    "                if bx * 32 + i < N:\n"
    "                    C[bx * 32 + i] = A[bx * 32 + i] + B[bx * 32 + i]\n"
    "    return main\n";

int main(void) {
    TsContext *ctx;
    CHECK_EQ_INT(TS_OK, ts_context_create(&ctx));
    TsDefine defs[] = {{"N", "64"}};
    float a[64], b[64], c[64];
    int64_t shape[1] = {64};
    for (int i = 0; i < 64; i++) a[i] = (float)rand() / RAND_MAX, b[i] = (float)rand() / RAND_MAX, c[i] = -1;
    TsTensor args[3] = {{a, TS_FLOAT32, 1, shape, NULL}, {b, TS_FLOAT32, 1, shape, NULL}, {c, TS_FLOAT32, 1, shape, NULL}};

    /* C target: device launches are refused; host launches still work */
    TsKernel *k = NULL;
    CHECK_EQ_INT(TS_OK, ts_compile_source(ctx, "add.py", SRC, "add", defs, 1, NULL, &k));
    CHECK_EQ_INT(TS_TARGET_C, ts_kernel_target(k));
    CHECK_EQ_INT(-1, ts_kernel_shared_bytes(k));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_launch_device(k, args, 3, NULL));
    CHECK_CONTAINS(ts_last_error(ctx), "CUDA target");
    CHECK_EQ_INT(TS_OK, ts_kernel_launch(k, args, 3));
    int ok = 1;
    for (int i = 0; i < 64; i++) ok &= c[i] == a[i] + b[i];
    CHECK(ok);
    ts_kernel_destroy(k);
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_launch_device(NULL, args, 3, NULL));
    CHECK_EQ_INT(-1, ts_kernel_shared_bytes(NULL));

    /* CUDA target without a build (no NVRTC needed): refused, not crashed */
    TsCompileOptions opt = {0};
    opt.target = TS_TARGET_CUDA;
    opt.skip_build = 1;
    k = NULL;
    CHECK_EQ_INT(TS_OK, ts_compile_source(ctx, "add.py", SRC, "add", defs, 1, &opt, &k));
    CHECK_EQ_INT(TS_TARGET_CUDA, ts_kernel_target(k));
    CHECK_EQ_INT(TS_ERR_INVALID, ts_kernel_launch_device(k, args, 3, NULL));
    CHECK_CONTAINS(ts_last_error(ctx), "without a build");
    ts_kernel_destroy(k);
    ts_context_destroy(ctx);
    return test_done();
}
