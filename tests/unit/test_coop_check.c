/*
 * test_coop_check.c — the residency check before a cooperative launch
 * (ts_cuda_coop_check, src/target/cuda/cuda_drv.c): a kernel whose blocks
 * wait for each other (IrKernel.cooperative) runs only where the device
 * supports cooperative launches and every block of its grid can be resident
 * at once (blocks per SM from the occupancy query x SMs); otherwise the
 * launch fails with a message naming the kernel, the grid and the limit
 * instead of hanging.  No GPU needed: the driver's numbers are arguments.
 */
#include "target/cuda/cuda_target.h"

#include "test.h"

static int fits(const char *k, int64_t x, int64_t y, int64_t z, int coop, int per_sm, int sms, TsBuf *why) {
    const int64_t g[3] = {x, y, z};
    ts_buf_free(why);
    return ts_cuda_coop_check(k, g, coop, per_sm, sms, 256, 49152, why);
}

int main(void) {
    TsBuf why = {0};
    /* 132 SMs x 2 blocks = 264 resident: 264 fit, 265 do not */
    CHECK_EQ_INT(1, fits("k", 264, 1, 1, 1, 2, 132, &why));
    CHECK_EQ_INT(0, ts_buf_str(&why)[0]);
    CHECK_EQ_INT(0, fits("stencil", 265, 1, 1, 1, 2, 132, &why));
    CHECK(strstr(ts_buf_str(&why), "stencil: a grid of 265 x 1 x 1 = 265 blocks must be resident at once") != NULL);
    CHECK(strstr(ts_buf_str(&why), "at most 264 (2 per SM x 132 SMs at 256 threads and 49152 bytes") != NULL);
    /* every axis counts: 11 x 12 x 2 = 264 fit, 11 x 12 x 3 = 396 do not */
    CHECK_EQ_INT(1, fits("k", 11, 12, 2, 1, 2, 132, &why));
    CHECK_EQ_INT(0, fits("k", 11, 12, 3, 1, 2, 132, &why));
    CHECK(strstr(ts_buf_str(&why), "11 x 12 x 3 = 396 blocks") != NULL);
    /* no block fits (too much shared memory per block): every grid refused */
    CHECK_EQ_INT(0, fits("big", 1, 1, 1, 1, 0, 132, &why));
    CHECK(strstr(ts_buf_str(&why), "holds at most 0") != NULL);
    /* products beyond 32 bits are not wrapped */
    CHECK_EQ_INT(0, fits("k", 2147483647, 65535, 65535, 1, 32, 132, &why));
    /* the device cannot launch cooperatively at all */
    CHECK_EQ_INT(0, fits("k", 1, 1, 1, 0, 2, 132, &why));
    CHECK(strstr(ts_buf_str(&why), "k: the kernel needs a cooperative launch") != NULL);
    CHECK(strstr(ts_buf_str(&why), "CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0") != NULL);
    ts_buf_free(&why);
    return test_done();
}
