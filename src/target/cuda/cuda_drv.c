/*
 * cuda_drv.c — the CUDA driver API, opened at run time: the device's
 * architecture, loading a compiled image, and one launch on host tensors.
 *
 * libcuda.so.1 (or $TILESCALE_LIBCUDA, which tests use to simulate a
 * machine without a driver) is opened with dlopen, RTLD_NODELETE, by each
 * module that needs it; the handful of entry points used are declared
 * here with plain C types (CUresult is an int, handles are pointers,
 * CUdeviceptr a 64-bit integer), with the versioned symbol names the
 * CUDA 12/13 headers map to (cuMemAlloc_v2, ...).  The enum values used
 * are those of cuda.h and are named where they are used.
 *
 * A module retains device 0's primary context (the one the runtime API
 * and PyTorch use too, so device pointers could later be shared with
 * them) and makes it current on the calling thread before every
 * sequence of driver calls.
 *
 * A launch on host tensors (ts_cuda_run) is deliberately simple: device
 * memory is allocated per launch, every tensor is copied in and, after
 * the kernel, every tensor is copied back (any parameter may be an
 * output).  Benchmark mode, TILESCALE_CUDA_BENCH=N[,W] in the environment:
 * after that first launch, W more (warm-up, default max(N / 10, 3)) and N
 * timed launches run back to back on the buffers already on the device,
 * each between two CUDA events, and "cuda bench <median ms> ..." (mean
 * and min too) joins the timing lines (or goes to stderr without them);
 * the tensors copied back are those of the last launch, so only kernels
 * whose outputs do not depend on their old values give the same results.  A tensor is copied as the contiguous host span its strides
 * cover (negative strides included), and tensors whose spans overlap
 * (in-place kernels, views of one array) share one device allocation, so
 * aliasing on the host is aliasing on the device.  Device-resident
 * tensors (ts_cuda_run_device, used by the Python layer for torch CUDA
 * tensors) skip all of that: their addresses go straight into the kernel
 * parameters and the launch is queued on the caller's stream, unwaited.
 */
#include "target/cuda/cuda_target.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

/* cuda.h values */
enum {
    CU_SUCCESS = 0,
    CU_ERR_OUT_OF_MEMORY = 2,        /* CUDA_ERROR_OUT_OF_MEMORY */
    CU_ERR_NOT_SUPPORTED = 801,      /* CUDA_ERROR_NOT_SUPPORTED */
    CU_ATTR_MAX_SHARED_OPTIN = 97,   /* CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
    CU_ATTR_CC_MAJOR = 75,           /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
    CU_ATTR_CC_MINOR = 76,           /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR */
    CU_FUNC_SHARED_SIZE = 1,         /* CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES (static) */
    CU_FUNC_MAX_DYN_SHARED = 8,      /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
    CU_ATTR_SM_COUNT = 16,           /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
    CU_ATTR_COOP_LAUNCH = 95,        /* CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH */
    DEFAULT_DYN_SHARED = 48 * 1024,  /* dynamic shared memory allowed without opting in */
};

struct TsCuDriver {
    void *dl;                                                        /* dlopen handle */
    CUresult (*init)(unsigned flags);                                /* cuInit */
    CUresult (*device_count)(int *n);                                /* cuDeviceGetCount */
    CUresult (*device_get)(CUdevice *dev, int ordinal);              /* cuDeviceGet */
    CUresult (*device_attr)(int *v, int attr, CUdevice dev);         /* cuDeviceGetAttribute */
    CUresult (*ctx_retain)(void **ctx, CUdevice dev);                /* cuDevicePrimaryCtxRetain */
    CUresult (*ctx_release)(CUdevice dev);                           /* cuDevicePrimaryCtxRelease_v2 */
    CUresult (*ctx_set)(void *ctx);                                  /* cuCtxSetCurrent */
    CUresult (*ctx_get)(void **ctx);                                 /* cuCtxGetCurrent (optional) */
    CUresult (*ctx_sync)(void);                                      /* cuCtxSynchronize */
    CUresult (*module_load)(void **mod, const void *image);          /* cuModuleLoadData */
    CUresult (*module_unload)(void *mod);                            /* cuModuleUnload */
    CUresult (*module_fn)(void **fn, void *mod, const char *name);   /* cuModuleGetFunction */
    CUresult (*fn_get)(int *v, int attr, void *fn);                  /* cuFuncGetAttribute */
    CUresult (*fn_set)(void *fn, int attr, int v);                   /* cuFuncSetAttribute */
    CUresult (*launch)(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned smem, void *stream, void **params, void **extra); /* cuLaunchKernel */
    CUresult (*launch_coop)(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned smem, void *stream, void **params); /* cuLaunchCooperativeKernel
                                                                        (cooperative kernels; may be missing) */
    CUresult (*occupancy)(int *n, void *fn, int threads, size_t smem); /* cuOccupancyMaxActiveBlocksPerMultiprocessor
                                                                        (cooperative kernels; may be missing) */
    CUresult (*mem_alloc)(CUdeviceptr *p, size_t n);                 /* cuMemAlloc_v2 */
    CUresult (*mem_free)(CUdeviceptr p);                             /* cuMemFree_v2 */
    /* stream-ordered allocation, for cooperative kernels' grid workspaces (may be missing) */
    CUresult (*mem_alloc_async)(CUdeviceptr *p, size_t n, void *stream);         /* cuMemAllocAsync */
    CUresult (*mem_free_async)(CUdeviceptr p, void *stream);                     /* cuMemFreeAsync */
    CUresult (*memset_async)(CUdeviceptr p, unsigned char c, size_t n, void *stream); /* cuMemsetD8Async */
    CUresult (*h2d)(CUdeviceptr dst, const void *src, size_t n);     /* cuMemcpyHtoD_v2 */
    CUresult (*d2h)(void *dst, CUdeviceptr src, size_t n);           /* cuMemcpyDtoH_v2 */
    CUresult (*module_global)(CUdeviceptr *p, size_t *n, void *mod, const char *name); /* cuModuleGetGlobal_v2
                                                                        (bounds checks; may be missing) */
    CUresult (*error_name)(CUresult r, const char **s);              /* cuGetErrorName */
    CUresult (*error_string)(CUresult r, const char **s);            /* cuGetErrorString */
    /* events, for TILESCALE_CUDA_BENCH only (may be missing) */
    CUresult (*event_create)(void **ev, unsigned flags);              /* cuEventCreate */
    CUresult (*event_record)(void *ev, void *stream);                 /* cuEventRecord */
    CUresult (*event_sync)(void *ev);                                 /* cuEventSynchronize */
    CUresult (*event_elapsed)(float *ms, void *start, void *end);     /* cuEventElapsedTime(_v2) */
    CUresult (*event_destroy)(void *ev);                              /* cuEventDestroy_v2 */
};

static void sym(void *dl, const char *name, void *fnptr) {
    void *p = dlsym(dl, name);
    memcpy(fnptr, &p, sizeof p);
}

static void drv_close(TsCuDriver *v) {
    if (!v) return;
    if (v->dl) dlclose(v->dl);
    free(v);
}

/* "CUDA_ERROR_X: text" for r. */
static const char *err(const TsCuDriver *v, CUresult r, char *buf, size_t n) {
    const char *name = NULL, *text = NULL;
    if (v && v->error_name) v->error_name(r, &name);
    if (v && v->error_string) v->error_string(r, &text);
    snprintf(buf, n, "%s%s%s", name ? name : "CUDA error", text ? ": " : "", text ? text : "");
    if (!name) snprintf(buf, n, "CUDA error %d%s%s", r, text ? ": " : "", text ? text : "");
    return buf;
}

/* Open the driver and cuInit; NULL with the reason in why (may be NULL). */
static TsCuDriver *drv_open(TsBuf *why) {
    const char *env = getenv("TILESCALE_LIBCUDA");
    const char *names[2] = {"libcuda.so.1", "libcuda.so"};
    int nn = 2;
    if (env && *env) {
        names[0] = env;
        nn = 1;
    }
    void *dl = NULL;
    const char *last = "";
    for (int i = 0; i < nn && !dl; i++) {
        dl = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!dl) {
            const char *e = dlerror();
            last = e ? e : "";
        }
    }
    if (!dl) {
        if (why) ts_buf_printf(why, "no CUDA driver found (%s)", last);
        return NULL;
    }
    TsCuDriver *v = calloc(1, sizeof *v);
    if (!v) {
        dlclose(dl);
        if (why) ts_buf_puts(why, "out of memory");
        return NULL;
    }
    v->dl = dl;
    sym(dl, "cuInit", &v->init);
    sym(dl, "cuDeviceGetCount", &v->device_count);
    sym(dl, "cuDeviceGet", &v->device_get);
    sym(dl, "cuDeviceGetAttribute", &v->device_attr);
    sym(dl, "cuDevicePrimaryCtxRetain", &v->ctx_retain);
    sym(dl, "cuDevicePrimaryCtxRelease_v2", &v->ctx_release);
    sym(dl, "cuCtxSetCurrent", &v->ctx_set);
    sym(dl, "cuCtxGetCurrent", &v->ctx_get);
    sym(dl, "cuCtxSynchronize", &v->ctx_sync);
    sym(dl, "cuModuleLoadData", &v->module_load);
    sym(dl, "cuModuleUnload", &v->module_unload);
    sym(dl, "cuModuleGetFunction", &v->module_fn);
    sym(dl, "cuFuncGetAttribute", &v->fn_get);
    sym(dl, "cuFuncSetAttribute", &v->fn_set);
    sym(dl, "cuLaunchKernel", &v->launch);
    sym(dl, "cuLaunchCooperativeKernel", &v->launch_coop);
    sym(dl, "cuOccupancyMaxActiveBlocksPerMultiprocessor", &v->occupancy);
    sym(dl, "cuMemAlloc_v2", &v->mem_alloc);
    sym(dl, "cuMemFree_v2", &v->mem_free);
    sym(dl, "cuMemAllocAsync", &v->mem_alloc_async);
    sym(dl, "cuMemFreeAsync", &v->mem_free_async);
    sym(dl, "cuMemsetD8Async", &v->memset_async);
    sym(dl, "cuMemcpyHtoD_v2", &v->h2d);
    sym(dl, "cuMemcpyDtoH_v2", &v->d2h);
    sym(dl, "cuModuleGetGlobal_v2", &v->module_global);
    sym(dl, "cuGetErrorName", &v->error_name);
    sym(dl, "cuGetErrorString", &v->error_string);
    sym(dl, "cuEventCreate", &v->event_create);
    sym(dl, "cuEventRecord", &v->event_record);
    sym(dl, "cuEventSynchronize", &v->event_sync);
    sym(dl, "cuEventElapsedTime_v2", &v->event_elapsed);
    if (!v->event_elapsed) sym(dl, "cuEventElapsedTime", &v->event_elapsed);
    sym(dl, "cuEventDestroy_v2", &v->event_destroy);
    if (!v->init || !v->device_count || !v->device_get || !v->device_attr || !v->ctx_retain ||
        !v->ctx_release || !v->ctx_set || !v->ctx_sync || !v->module_load || !v->module_unload ||
        !v->module_fn || !v->fn_get || !v->fn_set || !v->launch || !v->mem_alloc || !v->mem_free || !v->h2d ||
        !v->d2h) {
        if (why) ts_buf_puts(why, "the CUDA driver library lacks entry points this library needs (driver too old?)");
        drv_close(v);
        return NULL;
    }
    char eb[256];
    CUresult r = v->init(0);
    int n = 0;
    if (r == CU_SUCCESS) r = v->device_count(&n);
    if (r != CU_SUCCESS || n < 1) {
        if (why) {
            if (r != CU_SUCCESS) ts_buf_printf(why, "no CUDA device: cuInit failed with %s", err(v, r, eb, sizeof eb));
            else ts_buf_puts(why, "no CUDA device found");
        }
        drv_close(v);
        return NULL;
    }
    return v;
}

int ts_cuda_device_arch(char *arch, size_t n, TsBuf *why) {
    TsCuDriver *v = drv_open(why);
    if (!v) return 0;
    CUdevice dev;
    int maj = 0, min = 0;
    int ok = v->device_get(&dev, 0) == CU_SUCCESS && v->device_attr(&maj, CU_ATTR_CC_MAJOR, dev) == CU_SUCCESS &&
             v->device_attr(&min, CU_ATTR_CC_MINOR, dev) == CU_SUCCESS;
    drv_close(v);
    if (!ok) {
        if (why) ts_buf_puts(why, "cannot read the device's compute capability");
        return 0;
    }
    snprintf(arch, n, "sm_%d%d", maj, min);
    return 1;
}

/* Undo a partial or complete load (the lock is held or not needed). */
static void unload(TsModuleCuda *m) {
    TsCuDriver *v = m->drv;
    if (!v) return;
    if (m->ctx) {
        v->ctx_set(m->ctx);
        if (m->module) v->module_unload(m->module);
        v->ctx_release(m->device);
    }
    m->module = m->fn = m->ctx = NULL;
    drv_close(v);
    m->drv = NULL;
}

TS_PRINTF(3, 4) static TsStatus fail(TsDiag *d, TsStatus st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ts_diag_vadd(d, (TsLoc){0}, "error", fmt, ap);
    va_end(ap);
    d->status = st;
    return st;
}

static TsStatus load_locked(TsDiag *d, TsModuleCuda *m, TsStatus load_err, TsBuf *timing) {
    if (m->fn) return TS_OK;
    double t0 = ts_now_ms();
    TsBuf why = {0};
    TsCuDriver *v = drv_open(&why);
    if (!v) {
        TsStatus st = fail(d, TS_ERR_RUNTIME, "%s: cannot run on the CUDA target: %s", m->kname, ts_buf_str(&why));
        ts_buf_free(&why);
        return st;
    }
    m->drv = v;
    char eb[256];
    CUresult r = v->device_get(&m->device, m->ordinal);
    if (r == CU_SUCCESS) r = v->ctx_retain(&m->ctx, m->device);
    if (r != CU_SUCCESS) {
        m->ctx = NULL;
        unload(m);
        return fail(d, TS_ERR_RUNTIME, "%s: cannot open the CUDA device: %s", m->kname, err(v, r, eb, sizeof eb));
    }
    v->ctx_set(m->ctx);
    double t1 = ts_now_ms();
    r = v->module_load(&m->module, m->image);
    if (r != CU_SUCCESS) {
        m->module = NULL;
        int maj = 0, min = 0;
        v->device_attr(&maj, CU_ATTR_CC_MAJOR, m->device);
        v->device_attr(&min, CU_ATTR_CC_MINOR, m->device);
        fail(d, load_err, "%s: the CUDA driver rejected the kernel image built for %s (the device is sm_%d%d): %s",
             m->kname, m->arch, maj, min, err(v, r, eb, sizeof eb));
        unload(m);
        return load_err;
    }
    r = v->module_fn(&m->fn, m->module, TS_CUDA_ENTRY);
    if (r != CU_SUCCESS) {
        m->fn = NULL;
        fail(d, load_err, "%s: no %s in the kernel image: %s", m->kname, TS_CUDA_ENTRY, err(v, r, eb, sizeof eb));
        unload(m);
        return load_err;
    }
    int optin = 0, stat = 0;
    v->device_attr(&optin, CU_ATTR_MAX_SHARED_OPTIN, m->device);
    v->fn_get(&stat, CU_FUNC_SHARED_SIZE, m->fn);
    int64_t need = m->info.smem_bytes + stat;
    if (optin > 0 && need > optin) {
        fail(d, load_err,
             "%s needs %lld bytes of shared memory per block (%lld for shared and fragment buffers, %d static); "
             "the device allows %d",
             m->kname, (long long)need, (long long)m->info.smem_bytes, stat, optin);
        unload(m);
        return load_err;
    }
    if (m->info.smem_bytes > DEFAULT_DYN_SHARED) {
        r = v->fn_set(m->fn, CU_FUNC_MAX_DYN_SHARED, (int)m->info.smem_bytes);
        if (r != CU_SUCCESS) {
            fail(d, load_err, "%s: cannot raise the dynamic shared memory limit to %lld bytes: %s", m->kname,
                 (long long)m->info.smem_bytes, err(v, r, eb, sizeof eb));
            unload(m);
            return load_err;
        }
    }
    if (timing) ts_buf_printf(timing, "cuda context %.3f\nmodule load %.3f\n", t1 - t0, ts_now_ms() - t1);
    return TS_OK;
}

TsStatus ts_cuda_module_load(TsDiag *d, TsModuleCuda *m, TsStatus load_err, TsBuf *timing) {
    if (!m) return fail(d, TS_ERR_INVALID, "no CUDA module");
    pthread_mutex_lock((pthread_mutex_t *)m->lock);
    TsStatus st = load_locked(d, m, load_err, timing);
    pthread_mutex_unlock((pthread_mutex_t *)m->lock);
    return st;
}

static void plans_free(struct TsPlan *p);

TsModuleCuda *ts_cuda_module_clone(const TsModuleCuda *m, int ordinal) {
    TsModuleCuda *c = calloc(1, sizeof *c);
    pthread_mutex_t *mu = malloc(sizeof *mu);
    unsigned char *img = malloc(m->image_size ? m->image_size : 1);
    char *kname = strdup(m->kname ? m->kname : "kernel");
    if (!c || !mu || !img || !kname || pthread_mutex_init(mu, NULL) != 0) {
        free(c);
        free(mu);
        free(img);
        free(kname);
        return NULL;
    }
    memcpy(img, m->image, m->image_size);
    c->image = img;
    c->image_size = m->image_size;
    c->is_ptx = m->is_ptx;
    memcpy(c->arch, m->arch, sizeof c->arch);
    c->info = m->info;
    c->kname = kname;
    c->ordinal = ordinal;
    c->lock = mu;
    c->lock_init = 1;
    return c;
}

void ts_cuda_module_free(TsModuleCuda *m) {
    if (!m) return;
    plans_free(m->plans);
    m->plans = NULL;
    unload(m);
    if (m->lock_init) {
        pthread_mutex_destroy((pthread_mutex_t *)m->lock);
        free(m->lock);
    }
    free(m->image);
    free((void *)m->kname);
    free(m);
}

/* ---- one launch ------------------------------------------------------------------ */

/* A tensor's host bytes and the device buffer they go to. */
typedef struct Span {
    unsigned char *lo, *hi; /* host bytes [lo, hi) its elements cover (lo == hi: empty) */
    unsigned char *elem0;   /* host address of element 0 */
    int group;              /* index of the span that owns the device buffer */
    CUdeviceptr dev;        /* device buffer (owners only) */
} Span;

typedef struct Run {
    TsDiag *d;              /* where errors go */
    TsModuleCuda *m;        /* the loaded module */
    int np;                 /* number of kernel parameters */
    Span *span;             /* [nparams] */
    CUdeviceptr *dptr;      /* [nparams] device address of element 0 */
    void **kp;              /* kernel parameter pointers */
    int nk;                 /* entries of kp */
    int one[2];             /* rank 0, nranks 1 */
} Run;

static void run_free(Run *R) {
    TsCuDriver *v = R->m->drv;
    for (int p = 0; R->span && p < R->np; p++)
        if (R->span[p].group == p && R->span[p].dev) v->mem_free(R->span[p].dev);
    free(R->span);
    free(R->dptr);
    free(R->kp);
}

static TsStatus cu_fail(Run *R, CUresult r, const char *what) {
    char eb[256];
    return fail(R->d, TS_ERR_RUNTIME, "%s: %s failed: %s", R->m->kname, what, err(R->m->drv, r, eb, sizeof eb));
}

static int cmp_float(const void *x, const void *y) {
    float a = *(const float *)x, b = *(const float *)y;
    return a < b ? -1 : a > b;
}

int ts_cuda_coop_check(const char *kname, const int64_t grid[3], int coop_attr, int per_sm, int sms, int threads,
                       int64_t smem_bytes, TsBuf *why) {
    if (!coop_attr) {
        ts_buf_printf(why,
                      "%s: the kernel needs a cooperative launch (its blocks wait for each other at T.sync_grid or a "
                      "collective between blocks), which the device does not support "
                      "(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0)", kname);
        return 0;
    }
    long long blocks = (long long)grid[0] * grid[1] * grid[2], have = (long long)per_sm * sms;
    if (blocks <= have) return 1;
    ts_buf_printf(why,
                  "%s: a grid of %lld x %lld x %lld = %lld blocks must be resident at once (its blocks wait for each "
                  "other at T.sync_grid or a collective between blocks: a cooperative launch), but the device holds "
                  "at most %lld (%d per SM x %d SMs at %d threads and %lld bytes of dynamic shared memory): use at "
                  "most %lld blocks (a persistent kernel looping over the work)",
                  kname, (long long)grid[0], (long long)grid[1], (long long)grid[2], blocks, have, per_sm, sms, threads,
                  (long long)smem_bytes, have);
    return 0;
}

/* A cooperative launch's own grid workspace (the kernel's last parameter,
 * TsCudaCodeInfo.grid_ws_bytes): allocated from the device's default
 * memory pool on the launch's stream (cuMemAllocAsync: cheap once the pool
 * holds memory), zeroed there before the kernel, and freed there after it
 * (ws_release), so that two launches of one module at once (two streams,
 * two ranks of a local world sharing a GPU) never share one, and no launch
 * depends on what an earlier one left.  Where the driver or the device has
 * no stream-ordered allocation: cuMemAlloc, zeros copied in, and the free
 * after the context synchronizes (*sync set). */
static TsStatus ws_acquire(TsDiag *d, TsModuleCuda *m, void *stream, CUdeviceptr *ws, int *sync) {
    TsCuDriver *v = m->drv;
    char eb[256];
    size_t n = (size_t)(m->info.grid_ws_bytes > 0 ? m->info.grid_ws_bytes : 64);
    n = (n + 63) / 64 * 64;
    *ws = 0;
    *sync = 0;
    CUresult r = CU_ERR_NOT_SUPPORTED;
    if (v->mem_alloc_async && v->mem_free_async && v->memset_async) r = v->mem_alloc_async(ws, n, stream);
    if (r == CU_SUCCESS) {
        r = v->memset_async(*ws, 0, n, stream);
        if (r == CU_SUCCESS) return TS_OK;
        v->mem_free_async(*ws, stream);
        *ws = 0;
        return fail(d, TS_ERR_RUNTIME, "%s: zeroing the grid workspace failed: %s", m->kname, err(v, r, eb, sizeof eb));
    }
    /* no stream-ordered allocation here: a plain one, waited for */
    *sync = 1;
    r = v->mem_alloc(ws, n);
    if (r != CU_SUCCESS) {
        *ws = 0;
        return fail(d, TS_ERR_RUNTIME, "%s: allocating its %zu-byte grid workspace failed: %s", m->kname, n,
                    err(v, r, eb, sizeof eb));
    }
    void *zeros = calloc(1, n);
    r = zeros ? v->h2d(*ws, zeros, n) : CU_ERR_OUT_OF_MEMORY;
    free(zeros);
    if (r != CU_SUCCESS) {
        v->mem_free(*ws);
        *ws = 0;
        return fail(d, TS_ERR_RUNTIME, "%s: zeroing the grid workspace failed: %s", m->kname, err(v, r, eb, sizeof eb));
    }
    return TS_OK;
}

/* After the launch was queued (or failed to be): the workspace goes back. */
static TsStatus ws_release(TsDiag *d, TsModuleCuda *m, void *stream, CUdeviceptr ws, int sync, TsStatus st) {
    TsCuDriver *v = m->drv;
    char eb[256];
    if (!ws) return st;
    if (!sync) {
        CUresult r = v->mem_free_async(ws, stream);
        if (r != CU_SUCCESS && !st)
            st = fail(d, TS_ERR_RUNTIME, "%s: freeing the grid workspace failed: %s", m->kname, err(v, r, eb, sizeof eb));
        return st;
    }
    CUresult r = v->ctx_sync();
    if (r != CU_SUCCESS && !st) st = fail(d, TS_ERR_RUNTIME, "%s: the kernel failed: %s", m->kname, err(v, r, eb, sizeof eb));
    v->mem_free(ws);
    return st;
}

/* One launch of m on `stream` (kp: the nk parameters of cuda_target.h
 * without the grid workspace): cuLaunchKernel, or for a cooperative kernel
 * (TsCudaCodeInfo.cooperative) cuLaunchCooperativeKernel once the device
 * says it can run it and every block of the grid can be resident (else a
 * clear error, never a launch that would hang), with its own grid
 * workspace appended to the parameters (ws_acquire). */
static TsStatus launch(TsDiag *d, TsModuleCuda *m, const unsigned grid[3], void *stream, void **kp, int nk) {
    TsCuDriver *v = m->drv;
    char eb[256];
    CUresult r;
    if (!m->info.cooperative) {
        r = v->launch(m->fn, grid[0], grid[1], grid[2], (unsigned)m->info.threads, 1, 1, (unsigned)m->info.smem_bytes,
                      stream, kp, NULL);
        if (r != CU_SUCCESS) return fail(d, TS_ERR_RUNTIME, "%s: cuLaunchKernel failed: %s", m->kname, err(v, r, eb, sizeof eb));
        return TS_OK;
    }
    if (!v->launch_coop || !v->occupancy)
        return fail(d, TS_ERR_RUNTIME, "%s: the CUDA driver lacks cuLaunchCooperativeKernel / cuOccupancy"
                    "MaxActiveBlocksPerMultiprocessor, which this cooperative kernel needs", m->kname);
    int coop = 0, sms = 0, per_sm = 0;
    r = v->device_attr(&coop, CU_ATTR_COOP_LAUNCH, m->device);
    if (r == CU_SUCCESS) r = v->device_attr(&sms, CU_ATTR_SM_COUNT, m->device);
    if (r == CU_SUCCESS) r = v->occupancy(&per_sm, m->fn, m->info.threads, (size_t)m->info.smem_bytes);
    if (r != CU_SUCCESS)
        return fail(d, TS_ERR_RUNTIME, "%s: reading the device's residency limits failed: %s", m->kname,
                    err(v, r, eb, sizeof eb));
    int64_t g[3] = {grid[0], grid[1], grid[2]};
    TsBuf why = {0};
    if (!ts_cuda_coop_check(m->kname, g, coop, per_sm, sms, m->info.threads, m->info.smem_bytes, &why)) {
        TsStatus st = fail(d, TS_ERR_UNSUPPORTED, "%s", ts_buf_str(&why));
        ts_buf_free(&why);
        return st;
    }
    ts_buf_free(&why);
    void *kp_small[64];
    void **kp2 = nk < 64 ? kp_small : malloc((size_t)(nk + 1) * sizeof *kp2);
    if (!kp2) return fail(d, TS_ERR_NOMEM, "%s: out of memory", m->kname);
    CUdeviceptr ws = 0;
    int sync = 0;
    TsStatus st = ws_acquire(d, m, stream, &ws, &sync);
    if (!st) {
        memcpy(kp2, kp, (size_t)nk * sizeof *kp2);
        kp2[nk] = &ws;
        r = v->launch_coop(m->fn, grid[0], grid[1], grid[2], (unsigned)m->info.threads, 1, 1,
                           (unsigned)m->info.smem_bytes, stream, kp2);
        if (r != CU_SUCCESS)
            st = fail(d, TS_ERR_RUNTIME, "%s: cuLaunchCooperativeKernel failed: %s", m->kname, err(v, r, eb, sizeof eb));
        st = ws_release(d, m, stream, ws, sync, st);
    }
    if (kp2 != kp_small) free(kp2);
    return st;
}

/* TILESCALE_CUDA_BENCH=N[,W]: W warm-up and N timed launches of the kernel
 * on the arguments already on the device (see the essay). */
static TsStatus bench(Run *R, const TsLaunchArgs *a, const char *spec, TsBuf *timing) {
    TsModuleCuda *m = R->m;
    TsCuDriver *v = m->drv;
    char *end;
    long n = strtol(spec, &end, 10), w = -1;
    if (*end == ',') w = strtol(end + 1, &end, 10);
    if (n < 1 || n > 100000 || *end || w > 100000)
        return fail(R->d, TS_ERR_INVALID, "TILESCALE_CUDA_BENCH=%s: want N or N,W (launches, warm-up launches)", spec);
    if (w < 0) w = n / 10 > 3 ? n / 10 : 3;
    if (!v->event_create || !v->event_record || !v->event_sync || !v->event_elapsed || !v->event_destroy)
        return fail(R->d, TS_ERR_RUNTIME, "%s: the CUDA driver has no event API for TILESCALE_CUDA_BENCH", m->kname);
    void **ev = calloc((size_t)n + 1, sizeof *ev);
    float *ms = calloc((size_t)n, sizeof *ms);
    TsStatus st = TS_OK;
    CUresult r = CU_SUCCESS;
    long made = 0;
    if (!ev || !ms) st = fail(R->d, TS_ERR_NOMEM, "%s: out of memory", m->kname);
    for (; !st && made <= n; made++) {
        r = v->event_create(&ev[made], 0); /* CU_EVENT_DEFAULT: timing on */
        if (r != CU_SUCCESS) {
            st = cu_fail(R, r, "cuEventCreate");
            break;
        }
    }
    const unsigned grid[3] = {(unsigned)a->grid[0], (unsigned)a->grid[1], (unsigned)a->grid[2]};
    for (long i = 0; !st && i < w; i++) st = launch(R->d, m, grid, NULL, R->kp, R->nk);
    if (!st && (r = v->event_record(ev[0], NULL)) != CU_SUCCESS) st = cu_fail(R, r, "cuEventRecord");
    for (long i = 0; !st && i < n; i++) {
        if ((st = launch(R->d, m, grid, NULL, R->kp, R->nk))) break;
        if ((r = v->event_record(ev[i + 1], NULL)) != CU_SUCCESS) st = cu_fail(R, r, "cuEventRecord");
    }
    if (!st && (r = v->event_sync(ev[n])) != CU_SUCCESS) st = cu_fail(R, r, "the kernel (benchmark)");
    double total = 0;
    for (long i = 0; !st && i < n; i++) {
        if ((r = v->event_elapsed(&ms[i], ev[i], ev[i + 1])) != CU_SUCCESS) st = cu_fail(R, r, "cuEventElapsedTime");
        total += ms[i];
    }
    for (long i = 0; i < made && i <= n; i++) v->event_destroy(ev[i]);
    if (!st) {
        qsort(ms, (size_t)n, sizeof *ms, cmp_float);
        double med = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
        char line[256];
        snprintf(line, sizeof line,
                 "cuda bench %.4f (median of %ld launches after %ld warm-up; mean %.4f, min %.4f, max %.4f)\n", med, n, w,
                 total / (double)n, ms[0], ms[n - 1]);
        if (timing) ts_buf_puts(timing, line);
        else fputs(line, stderr);
    }
    free(ev);
    free(ms);
    return st;
}

/* Bounds-checked kernels (info.nsites > 0, --check-bounds): the device's
 * report slot (TS_CUDA_OOB_SYM), zeroed before each launch ... */
static TsStatus oob_reset(TsDiag *d, TsModuleCuda *m, CUdeviceptr *slot) {
    *slot = 0;
    if (!m->info.nsites) return TS_OK;
    TsCuDriver *v = m->drv;
    char eb[256];
    size_t n = 0;
    unsigned long long zero[8] = {0};
    if (!v->module_global)
        return fail(d, TS_ERR_RUNTIME, "%s: the CUDA driver has no cuModuleGetGlobal for bounds checks", m->kname);
    CUresult r = v->module_global(slot, &n, m->module, TS_CUDA_OOB_SYM);
    if (r == CU_SUCCESS && n >= sizeof zero) r = v->h2d(*slot, zero, sizeof zero);
    if (r != CU_SUCCESS || n < sizeof zero)
        return fail(d, TS_ERR_RUNTIME, "%s: the bounds-check slot: %s", m->kname,
                    r != CU_SUCCESS ? err(v, r, eb, sizeof eb) : "too small");
    return TS_OK;
}

/* ... and read after it (the kernel has finished): the first out-of-bounds
 * access becomes the launch's error, as on the C target. */
static TsStatus oob_report(TsDiag *d, TsModuleCuda *m, CUdeviceptr slot) {
    if (!m->info.nsites || !slot) return TS_OK;
    TsCuDriver *v = m->drv;
    char eb[256];
    unsigned long long o[8];
    CUresult r = v->d2h(o, slot, sizeof o);
    if (r != CU_SUCCESS) return fail(d, TS_ERR_RUNTIME, "%s: reading the bounds-check slot: %s", m->kname, err(v, r, eb, sizeof eb));
    if (!o[0]) return TS_OK;
    int site = o[1] < (unsigned long long)m->info.nsites ? (int)o[1] : 0;
    ts_buf_printf(&d->msg, "%s: index %lld of dimension %d is outside [0, %lld) in block (%llu, %llu, %llu)\n%s",
                  m->info.site_msg[site], (long long)o[3], (int)o[2], (long long)o[4], o[5], o[6], o[7],
                  m->info.site_src[site]);
    return d->status = TS_ERR_RUNTIME;
}

static TsStatus launch_once(Run *R, const IrKernel *ir, const TsLaunchArgs *a, TsBuf *timing) {
    TsModuleCuda *m = R->m;
    TsCuDriver *v = m->drv;
    int np = a->nparams;
    CUresult r;
    double t0 = ts_now_ms();
    if (np != ir->params.n) return fail(R->d, TS_ERR_INTERNAL, "%s: launch arguments do not match the kernel", m->kname);
    for (int i = 0; i < 3; i++)
        if (a->grid[i] <= 0) return TS_OK; /* an empty grid: nothing runs */
    if (a->grid[0] > 2147483647LL || a->grid[1] > 65535 || a->grid[2] > 65535)
        return fail(R->d, TS_ERR_SHAPE, "%s: grid (%lld, %lld, %lld) exceeds CUDA's limits (2^31-1, 65535, 65535)",
                    m->kname, (long long)a->grid[0], (long long)a->grid[1], (long long)a->grid[2]);
    r = v->ctx_set(m->ctx);
    if (r != CU_SUCCESS) return cu_fail(R, r, "cuCtxSetCurrent");

    /* host spans, grouped where they overlap */
    R->span = calloc((size_t)(np ? np : 1), sizeof *R->span);
    R->dptr = calloc((size_t)(np ? np : 1), sizeof *R->dptr);
    if (!R->span || !R->dptr) return fail(R->d, TS_ERR_NOMEM, "%s: out of memory", m->kname);
    for (int p = 0; p < np; p++) {
        Span *s = &R->span[p];
        s->group = -1;
        const IrBuffer *b = ir->params.v[p].buf;
        if (!b) continue;
        int64_t es = (ts_dtype_bits(b->dt) + 7) / 8, lo = 0, hi = 0, numel = 1;
        for (int i = 0; i < b->ndim; i++) numel *= a->shape[p][i];
        if (numel == 0 || !a->data[p]) continue;
        for (int i = 0; i < b->ndim; i++) {
            int64_t reach = (a->shape[p][i] - 1) * a->strides[p][i];
            if (reach < 0) lo += reach;
            else hi += reach;
        }
        s->elem0 = a->data[p];
        s->lo = s->elem0 + lo * es;
        s->hi = s->elem0 + (hi + 1) * es;
        s->group = p;
    }
    for (int p = 0; p < np; p++) { /* merge overlapping spans into the first owner */
        if (R->span[p].group != p) continue;
        for (int q = p + 1; q < np; q++) {
            Span *s = &R->span[p], *t = &R->span[q];
            if (t->group != q || t->hi <= s->lo || s->hi <= t->lo) continue;
            if (t->lo < s->lo) s->lo = t->lo;
            if (t->hi > s->hi) s->hi = t->hi;
            for (int u = 0; u < np; u++)
                if (R->span[u].group == q) R->span[u].group = p;
            q = p; /* the span grew: look again */
        }
    }
    for (int p = 0; p < np; p++) {
        Span *s = &R->span[p];
        if (s->group != p) continue;
        size_t bytes = (size_t)(s->hi - s->lo);
        r = v->mem_alloc(&s->dev, (bytes + 15) / 16 * 16);
        if (r != CU_SUCCESS) {
            s->dev = 0;
            return cu_fail(R, r, "cuMemAlloc");
        }
        r = v->h2d(s->dev, s->lo, bytes);
        if (r != CU_SUCCESS) return cu_fail(R, r, "cuMemcpyHtoD");
    }
    for (int p = 0; p < np; p++) {
        const Span *s = &R->span[p];
        if (s->group < 0) continue;
        const Span *o = &R->span[s->group];
        R->dptr[p] = o->dev + (CUdeviceptr)(s->elem0 - o->lo);
        /* a parameter the kernel reads with aligned vectors
         * (IrBuffer.contiguous) inside another's span at an odd offset */
        const IrBuffer *b = ir->params.v[p].buf;
        if (b->contiguous && b->align > 1 && R->dptr[p] % (CUdeviceptr)b->align)
            return fail(R->d, TS_ERR_INVALID,
                        "%s: %s shares memory with another argument at an offset that is not %d-byte aligned, "
                        "which the CUDA kernel's vector copies need: pass a copy",
                        m->kname, ir->params.v[p].name ? ir->params.v[p].name : "a tensor", b->align);
    }
    double t1 = ts_now_ms();

    /* kernel parameters, in the order of cuda_target.h */
    int nk = 2 + a->nshape_vars;
    for (int p = 0; p < np; p++) nk += ir->params.v[p].buf ? 1 + 2 * ir->params.v[p].buf->ndim : 1;
    R->kp = calloc((size_t)nk, sizeof *R->kp);
    R->nk = nk;
    if (!R->kp) return fail(R->d, TS_ERR_NOMEM, "%s: out of memory", m->kname);
    int j = 0;
    for (int p = 0; p < np; p++) {
        const IrBuffer *b = ir->params.v[p].buf;
        if (!b) {
            R->kp[j++] = a->data[p];
            continue;
        }
        R->kp[j++] = &R->dptr[p];
        for (int i = 0; i < b->ndim; i++) R->kp[j++] = (void *)&a->shape[p][i];
        for (int i = 0; i < b->ndim; i++) R->kp[j++] = (void *)&a->strides[p][i];
    }
    for (int i = 0; i < a->nshape_vars; i++) R->kp[j++] = (void *)&a->shape_vars[i];
    R->one[0] = a->rank;
    R->one[1] = a->nranks > 0 ? a->nranks : 1;
    R->kp[j++] = &R->one[0];
    R->kp[j++] = &R->one[1];

    CUdeviceptr oob;
    TsStatus ost = oob_reset(R->d, m, &oob);
    if (ost) return ost;
    const unsigned grid[3] = {(unsigned)a->grid[0], (unsigned)a->grid[1], (unsigned)a->grid[2]};
    if ((ost = launch(R->d, m, grid, NULL, R->kp, R->nk))) return ost;
    r = v->ctx_sync();
    if (r != CU_SUCCESS) return cu_fail(R, r, "the kernel");
    if ((ost = oob_report(R->d, m, oob))) return ost;
    double t2 = ts_now_ms();
    const char *bspec = getenv("TILESCALE_CUDA_BENCH");
    if (bspec && *bspec) {
        TsStatus st = bench(R, a, bspec, timing);
        if (st) return st;
    }
    double t3 = ts_now_ms();

    for (int p = 0; p < np; p++) {
        const Span *s = &R->span[p];
        if (s->group != p) continue;
        r = v->d2h(s->lo, s->dev, (size_t)(s->hi - s->lo));
        if (r != CU_SUCCESS) return cu_fail(R, r, "cuMemcpyDtoH");
    }
    if (timing) {
        ts_buf_printf(timing, "cuda alloc+h2d %.3f\n", t1 - t0);
        ts_buf_printf(timing, "cuda kernel %.3f\n", t2 - t1);
        ts_buf_printf(timing, "cuda d2h %.3f\n", ts_now_ms() - t3);
    }
    return TS_OK;
}

TsStatus ts_cuda_run(TsDiag *d, TsModuleCuda *m, const IrKernel *ir, const TsLaunchArgs *a, TsBuf *timing) {
    if (!m || !ir || !a) return fail(d, TS_ERR_INVALID, "ts_cuda_run: NULL argument");
    TsStatus st = ts_cuda_module_load(d, m, TS_ERR_RUNTIME, NULL);
    if (st) return st;
    Run R;
    memset(&R, 0, sizeof R);
    R.d = d;
    R.m = m;
    R.np = a->nparams;
    st = launch_once(&R, ir, a, timing);
    run_free(&R);
    return st;
}

/* ---- prepared launches (TsPlan) ---------------------------------------------------- */

/* One prepared launch: the kernel parameter array cuLaunchKernel reads,
 * pointing into the plan's own copies of the values (one allocation).
 *
 * A plan of a tiered build (ts_cuda_plan_tiered) is made on the quick
 * tier's module and moves to the full tier's once it is loaded: `m` is
 * behind an atomic, and a launch that finds it still equal to `quick`
 * asks the owner's `upgrade` for the module to run now (the owner, the
 * driver's kernel, lets one launching thread take and load the full tier,
 * as its own launches do).  The steady state costs two atomic loads (plain
 * reads on x86) and a compare, no lock.  Both modules live until the kernel is freed (the quick one
 * owns the plan), so a launch still reading the quick module is safe. */
struct TsPlan {
    struct TsPlan *next;  /* the quick (first) module's next plan */
    TsModuleCuda *_Atomic m; /* the module launched now (the full tier's once swapped in) */
    TsModuleCuda *_Atomic quick; /* tiered: the module the plan was made on while the full tier
                                    was not in yet (NULL: not tiered or moved, m never moves again) */
    TsModuleCuda *(*upgrade)(void *owner); /* tiered: the module to launch now (the full tier's
                                              once the owner swapped it in, else NULL) */
    void *owner;          /* its argument (the kernel) */
    TsDiag *d;            /* where launch errors go (the kernel's context) */
    unsigned grid[3];     /* grid extents; grid[0] == 0: an empty grid, nothing runs */
    int nk;               /* entries of kp */
    int np;               /* parameters (entries of slots) */
    void **kp;            /* kernel parameters, in the order of cuda_target.h */
    uint64_t *slots;      /* [nparams] device address of each tensor parameter (the caller writes) */
    int64_t *vals;        /* extents, strides, shape variables, rank and nranks kp points at */
    int one[2];           /* rank, nranks (the last two kernel parameters) */
};

TsStatus ts_cuda_plan_device(TsDiag *d, TsModuleCuda *m, const IrKernel *ir, const TsLaunchArgs *a,
                             struct TsPlan **out) {
    *out = NULL;
    if (!m || !ir || !a) return fail(d, TS_ERR_INVALID, "ts_cuda_plan_device: NULL argument");
    TsStatus st = ts_cuda_module_load(d, m, TS_ERR_RUNTIME, NULL);
    if (st) return st;
    return ts_cuda_plan_new(d, m, ir, a, out);
}

TsStatus ts_cuda_plan_new(TsDiag *d, TsModuleCuda *m, const IrKernel *ir, const TsLaunchArgs *a,
                          struct TsPlan **out) {
    *out = NULL;
    if (!m || !ir || !a) return fail(d, TS_ERR_INVALID, "ts_cuda_plan_new: NULL argument");
    if (a->nparams != ir->params.n) return fail(d, TS_ERR_INTERNAL, "%s: launch arguments do not match the kernel", m->kname);
    if (a->grid[0] > 2147483647LL || a->grid[1] > 65535 || a->grid[2] > 65535)
        return fail(d, TS_ERR_SHAPE, "%s: grid (%lld, %lld, %lld) exceeds CUDA's limits (2^31-1, 65535, 65535)",
                    m->kname, (long long)a->grid[0], (long long)a->grid[1], (long long)a->grid[2]);
    int np = a->nparams, nk = 2 + a->nshape_vars, nv = a->nshape_vars;
    for (int p = 0; p < np; p++) {
        const IrBuffer *b = ir->params.v[p].buf;
        if (!b) return fail(d, TS_ERR_UNSUPPORTED, "%s: a prepared launch takes no scalar parameters", m->kname);
        nk += 1 + 2 * b->ndim;
        nv += 2 * b->ndim;
    }
    size_t bytes = sizeof(struct TsPlan) + (size_t)nk * sizeof(void *) + (size_t)(np ? np : 1) * sizeof(uint64_t) +
                   (size_t)(nv ? nv : 1) * sizeof(int64_t);
    struct TsPlan *pl = calloc(1, bytes);
    if (!pl) return fail(d, TS_ERR_NOMEM, "%s: out of memory", m->kname);
    pl->m = m;
    pl->d = d;
    pl->kp = (void **)(pl + 1);
    pl->slots = (uint64_t *)(pl->kp + nk);
    pl->vals = (int64_t *)(pl->slots + (np ? np : 1));
    pl->nk = nk;
    pl->np = np;
    int empty = 0;
    for (int i = 0; i < 3; i++) {
        empty |= a->grid[i] <= 0;
        pl->grid[i] = empty ? 0 : (unsigned)a->grid[i];
    }
    if (empty) pl->grid[0] = 0;
    int j = 0, v = 0;
    for (int p = 0; p < np; p++) {
        const IrBuffer *b = ir->params.v[p].buf;
        pl->slots[p] = (uint64_t)(uintptr_t)a->data[p];
        pl->kp[j++] = &pl->slots[p]; /* (CUdeviceptr is 64 bits, as the slot) */
        for (int i = 0; i < b->ndim; i++) {
            pl->vals[v] = a->shape[p][i];
            pl->kp[j++] = &pl->vals[v++];
        }
        for (int i = 0; i < b->ndim; i++) {
            pl->vals[v] = a->strides[p][i];
            pl->kp[j++] = &pl->vals[v++];
        }
    }
    for (int i = 0; i < a->nshape_vars; i++) {
        pl->vals[v] = a->shape_vars[i];
        pl->kp[j++] = &pl->vals[v++];
    }
    pl->one[0] = a->rank;
    pl->one[1] = a->nranks > 0 ? a->nranks : 1;
    pl->kp[j++] = &pl->one[0];
    pl->kp[j++] = &pl->one[1];
    pthread_mutex_lock((pthread_mutex_t *)m->lock);
    pl->next = m->plans;
    m->plans = pl;
    pthread_mutex_unlock((pthread_mutex_t *)m->lock);
    *out = pl;
    return TS_OK;
}

uint64_t *ts_cuda_plan_slots(struct TsPlan *p) { return p ? p->slots : NULL; }

void ts_cuda_plan_tiered(struct TsPlan *p, TsModuleCuda *(*upgrade)(void *owner), void *owner) {
    /* before the plan is handed out: no launch reads these yet */
    p->upgrade = upgrade;
    p->owner = owner;
    atomic_store_explicit(&p->quick, atomic_load_explicit(&p->m, memory_order_relaxed), memory_order_relaxed);
}

TsModuleCuda *ts_cuda_plan_module(struct TsPlan *p) {
    /* quick first: it is cleared after m moved (release), so NULL here means m is the last one */
    TsModuleCuda *q = atomic_load_explicit(&p->quick, memory_order_acquire);
    TsModuleCuda *m = atomic_load_explicit(&p->m, memory_order_acquire);
    if (m != q) return m; /* not tiered, or on the full tier: the steady state (two loads of one
                             cache line, plain reads on x86) */
    TsModuleCuda *full = p->upgrade(p->owner);
    if (!full) return m; /* the full tier is not in yet (or failed: the quick one stays) */
    /* several launching threads may store the same values: harmless.  full == m: the
     * plan was bound to the full module as it was being swapped in: nothing to move */
    if (full != m) atomic_store_explicit(&p->m, full, memory_order_release);
    atomic_store_explicit(&p->quick, NULL, memory_order_release);
    return full;
}

static void plans_free(struct TsPlan *p) {
    while (p) {
        struct TsPlan *n = p->next;
        free(p);
        p = n;
    }
}

/* One launch of pl with the kernel parameter array kp (the plan's own, or
 * ts_cuda_plan_launch_packed's copy pointing at the caller's addresses). */
static TsStatus plan_launch(struct TsPlan *pl, void *stream, void **kp) {
    if (!pl->grid[0]) return TS_OK;
    TsModuleCuda *m = ts_cuda_plan_module(pl);
    TsCuDriver *v = m->drv;
    TsDiag *d = pl->d;
    char eb[256];
    /* the per-call path: the context is made current only where it is not
     * (reading the thread's current context is cheaper than setting it) */
    void *cur = NULL;
    CUresult r = CU_SUCCESS;
    if (!v->ctx_get || v->ctx_get(&cur) != CU_SUCCESS || cur != m->ctx) r = v->ctx_set(m->ctx);
    if (r != CU_SUCCESS) return fail(d, TS_ERR_RUNTIME, "%s: cuCtxSetCurrent failed: %s", m->kname, err(v, r, eb, sizeof eb));
    CUdeviceptr oob = 0;
    TsStatus st = oob_reset(d, m, &oob);
    if (st) return st;
    if ((st = launch(d, m, pl->grid, stream, kp, pl->nk))) return st;
    if (m->info.nsites) { /* a checked kernel is waited for, as in ts_cuda_run_device */
        r = v->ctx_sync();
        if (r != CU_SUCCESS) return fail(d, TS_ERR_RUNTIME, "%s: the kernel failed: %s", m->kname, err(v, r, eb, sizeof eb));
        return oob_report(d, m, oob);
    }
    return TS_OK;
}

TsStatus ts_cuda_plan_launch(struct TsPlan *pl, void *stream) {
    if (!pl) return TS_ERR_INVALID;
    return plan_launch(pl, stream, pl->kp);
}

int ts_cuda_plan_params(const struct TsPlan *pl, const uint64_t *addr, void **kp) {
    uintptr_t lo = (uintptr_t)pl->slots, hi = (uintptr_t)(pl->slots + pl->np);
    for (int i = 0; i < pl->nk; i++) {
        uintptr_t q = (uintptr_t)pl->kp[i];
        kp[i] = q >= lo && q < hi ? (void *)&addr[(q - lo) / sizeof *pl->slots] : pl->kp[i];
    }
    return pl->nk;
}

int ts_cuda_plan_nparams(const struct TsPlan *pl) { return pl ? pl->np : 0; }

TsStatus ts_cuda_plan_launch_packed(struct TsPlan *pl, const void *packed) {
    if (!pl || !packed) return TS_ERR_INVALID;
    if (!pl->grid[0]) return TS_OK;
    /* the caller's words copied (the buffer need not be aligned), the
     * parameter array rebuilt on them: nothing of the plan is written, so
     * launches of one plan from several threads need no lock */
    enum { SMALL = 64 };
    uint64_t w_small[SMALL + 1];
    void *kp_small[SMALL];
    int big = pl->np + 1 > SMALL + 1 || pl->nk > SMALL;
    uint64_t *w = big ? malloc((size_t)(pl->np + 1) * sizeof *w) : w_small;
    void **kp = big ? malloc((size_t)pl->nk * sizeof *kp) : kp_small;
    TsStatus st = TS_ERR_NOMEM;
    if (w && kp) {
        memcpy(w, packed, (size_t)(pl->np + 1) * sizeof *w);
        ts_cuda_plan_params(pl, w + 1, kp);
        st = plan_launch(pl, (void *)(uintptr_t)w[0], kp);
    } else {
        fail(pl->d, st, "%s: out of memory", ts_cuda_plan_module(pl)->kname);
    }
    if (big) {
        free(w);
        free(kp);
    }
    return st;
}

TsStatus ts_cuda_run_device(TsDiag *d, TsModuleCuda *m, const IrKernel *ir, const TsLaunchArgs *a, void *stream) {
    if (!m || !ir || !a) return fail(d, TS_ERR_INVALID, "ts_cuda_run_device: NULL argument");
    if (a->nparams != ir->params.n) return fail(d, TS_ERR_INTERNAL, "%s: launch arguments do not match the kernel", m->kname);
    TsStatus st = ts_cuda_module_load(d, m, TS_ERR_RUNTIME, NULL);
    if (st) return st;
    for (int i = 0; i < 3; i++)
        if (a->grid[i] <= 0) return TS_OK; /* an empty grid: nothing runs */
    if (a->grid[0] > 2147483647LL || a->grid[1] > 65535 || a->grid[2] > 65535)
        return fail(d, TS_ERR_SHAPE, "%s: grid (%lld, %lld, %lld) exceeds CUDA's limits (2^31-1, 65535, 65535)",
                    m->kname, (long long)a->grid[0], (long long)a->grid[1], (long long)a->grid[2]);
    TsCuDriver *v = m->drv;
    char eb[256];
    CUresult r = v->ctx_set(m->ctx);
    if (r != CU_SUCCESS) return fail(d, TS_ERR_RUNTIME, "%s: cuCtxSetCurrent failed: %s", m->kname, err(v, r, eb, sizeof eb));
    /* kernel parameters, in the order of cuda_target.h; small kernels need no heap */
    int np = a->nparams, nk = 2 + a->nshape_vars;
    for (int p = 0; p < np; p++) nk += ir->params.v[p].buf ? 1 + 2 * ir->params.v[p].buf->ndim : 1;
    void *kp_small[64];
    CUdeviceptr dp_small[16];
    void **kp = nk <= 64 ? kp_small : malloc((size_t)nk * sizeof *kp);
    CUdeviceptr *dptr = np <= 16 ? dp_small : malloc((size_t)np * sizeof *dptr);
    if (!kp || !dptr) {
        st = fail(d, TS_ERR_NOMEM, "%s: out of memory", m->kname);
        goto done;
    }
    int j = 0, one[2] = {a->rank, a->nranks > 0 ? a->nranks : 1};
    for (int p = 0; p < np; p++) {
        const IrBuffer *b = ir->params.v[p].buf;
        if (!b) {
            kp[j++] = a->data[p];
            continue;
        }
        dptr[p] = (CUdeviceptr)(uintptr_t)a->data[p];
        kp[j++] = &dptr[p];
        for (int i = 0; i < b->ndim; i++) kp[j++] = (void *)&a->shape[p][i];
        for (int i = 0; i < b->ndim; i++) kp[j++] = (void *)&a->strides[p][i];
    }
    for (int i = 0; i < a->nshape_vars; i++) kp[j++] = (void *)&a->shape_vars[i];
    kp[j++] = &one[0];
    kp[j++] = &one[1];
    CUdeviceptr oob = 0;
    if ((st = oob_reset(d, m, &oob))) goto done;
    const unsigned grid[3] = {(unsigned)a->grid[0], (unsigned)a->grid[1], (unsigned)a->grid[2]};
    st = launch(d, m, grid, stream, kp, nk);
    /* a checked kernel is waited for, so that its report can be read (unchecked ones stay asynchronous) */
    if (!st && m->info.nsites) {
        r = v->ctx_sync();
        if (r != CU_SUCCESS) st = fail(d, TS_ERR_RUNTIME, "%s: the kernel failed: %s", m->kname, err(v, r, eb, sizeof eb));
        else st = oob_report(d, m, oob);
    }
done:
    if (kp != kp_small) free(kp);
    if (dptr != dp_small) free(dptr);
    return st;
}

/* T.alloc_global workspaces of a device launch (driver/launch.c): device
 * memory in the module's context, freed by cuMemFree, which waits for the
 * work queued on it (NVIDIA's programming guide, implicit synchronization)
 * so that a launch queued and not waited for still owns its workspace. */
TsStatus ts_cuda_workspace_alloc(TsDiag *d, TsModuleCuda *m, size_t bytes, uint64_t *out) {
    *out = 0;
    TsStatus st = ts_cuda_module_load(d, m, TS_ERR_RUNTIME, NULL);
    if (st) return st;
    TsCuDriver *v = m->drv;
    char eb[256];
    CUresult r = v->ctx_set(m->ctx);
    if (r == CU_SUCCESS) {
        CUdeviceptr p = 0;
        r = v->mem_alloc(&p, bytes ? (bytes + 15) / 16 * 16 : 16);
        if (r == CU_SUCCESS) {
            *out = (uint64_t)p;
            return TS_OK;
        }
    }
    return fail(d, TS_ERR_RUNTIME, "%s: cannot allocate a %zu-byte T.alloc_global workspace on the device: %s",
                m->kname, bytes, err(v, r, eb, sizeof eb));
}

void ts_cuda_workspace_free(TsModuleCuda *m, uint64_t p) {
    if (!m || !p) return;
    TsCuDriver *v = m->drv;
    if (v->ctx_set(m->ctx) == CU_SUCCESS) v->mem_free((CUdeviceptr)p);
}
