/*
 * test_coop_concurrent.c — two launches of one cooperative module at once.
 *
 * A cooperative kernel (tests/run/kernels/coop_ranks.py `fold`: a
 * T.allreduce between the grid's blocks in a loop, staged in the grid
 * workspace, grid barriers) is compiled once for the C target and launched
 * from two host threads at the same time, each on its own tensors, many
 * times.  The grid workspace (the barrier's count and the staging) must be
 * each launch's own: shared, the two launches' blocks would count towards
 * each other's barriers and fold each other's tiles, and Y would mix the
 * two threads' X (or a launch would time out at a barrier).  The C
 * scheduler allocates it per launch (sched_c.c); the CUDA launch does the
 * same on the launch's stream since session 9 (cuda_drv.c ws_acquire;
 * bench/blockcoll_gpu_check.sh runs two local ranks sharing the GPU).
 */
#include "core.h"
#include "runtime/launch.h"
#include "test.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

enum { NB = 5, R = 4, C = 16, STEPS = 12, REPS = 8 };

typedef struct Job {
    TsKernel *k;  /* the one module both threads launch */
    int seed;     /* this thread's data */
    int bad;      /* elements wrong, over all launches */
    int failed;   /* launches that failed */
    char msg[512]; /* the first failure's message */
} Job;

static void *run(void *arg) {
    Job *j = arg;
    float *x = malloc(sizeof(float) * NB * R * C), *y = malloc(sizeof(float) * NB * R * C);
    uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(j->seed + 1);
    for (int rep = 0; rep < REPS; rep++) {
        for (int i = 0; i < NB * R * C; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            /* each thread its own range, so a mix of the two shows */
            x[i] = (float)((s >> 40) % 1000) / 8.0f + 1000.0f * (float)j->seed;
            y[i] = NAN;
        }
        int64_t shape[3] = {NB, R, C};
        TsTensor args[2] = {{x, TS_FLOAT32, 3, shape, NULL}, {y, TS_FLOAT32, 3, shape, NULL}};
        TsDiag d = {0};
        TsStatus st = ts_launch_env(j->k, args, 2, &d, NULL);
        if (st) {
            if (!j->failed++) snprintf(j->msg, sizeof j->msg, "%s", ts_buf_str(&d.msg));
            ts_buf_free(&d.msg);
            continue;
        }
        ts_buf_free(&d.msg);
        /* the kernel: a = X[b]; steps times: a = max over blocks of a, then a += X[b];
         * so a = s * M + X[b] after s steps (M: the max over blocks of X) */
        for (int e = 0; e < R * C; e++) {
            float m = x[e];
            for (int b = 1; b < NB; b++) m = fmaxf(m, x[b * R * C + e]);
            for (int b = 0; b < NB; b++) {
                double want = (double)m * STEPS + x[b * R * C + e], got = y[b * R * C + e];
                if (!(fabs(got - want) <= 1e-3 * (1 + fabs(want)))) j->bad++;
            }
        }
    }
    free(x);
    free(y);
    return NULL;
}

int main(void) {
    TsContext *ctx = NULL;
    CHECK_EQ_INT(TS_OK, ts_context_create(&ctx));
    TsCompileOptions opt = {0};
    opt.target = TS_TARGET_C;
    opt.num_threads = 2;
    char nb[8], st[8], r[8], c[8];
    snprintf(nb, sizeof nb, "%d", NB);
    snprintf(st, sizeof st, "%d", STEPS);
    snprintf(r, sizeof r, "%d", R);
    snprintf(c, sizeof c, "%d", C);
    TsDefine defs[4] = {{"nb", nb}, {"steps", st}, {"R", r}, {"C", c}};
    TsKernel *k = NULL;
    TsStatus s = ts_compile_file(ctx, "tests/run/kernels/coop_ranks.py", "fold", defs, 4, &opt, &k);
    if (s) fprintf(stderr, "%s\n", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, s);
    if (k) {
        Job jobs[2] = {{k, 0, 0, 0, ""}, {k, 1, 0, 0, ""}};
        pthread_t t[2];
        int started[2];
        for (int i = 0; i < 2; i++) started[i] = pthread_create(&t[i], NULL, run, &jobs[i]) == 0;
        for (int i = 0; i < 2; i++)
            if (started[i]) pthread_join(t[i], NULL);
            else run(&jobs[i]);
        for (int i = 0; i < 2; i++) {
            if (jobs[i].failed) fprintf(stderr, "thread %d: %d launches failed: %s\n", i, jobs[i].failed, jobs[i].msg);
            if (jobs[i].bad) fprintf(stderr, "thread %d: %d elements wrong\n", i, jobs[i].bad);
            CHECK_EQ_INT(0, jobs[i].failed);
            CHECK_EQ_INT(0, jobs[i].bad);
        }
        ts_kernel_destroy(k);
    }
    ts_context_destroy(ctx);
    return test_done();
}
