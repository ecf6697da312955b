/*
 * local_cuda.c — the `local` backend: one process drives N ranks on the
 * GPUs it sees, rank r on GPU r mod G (the "mega-device"; with one GPU all
 * ranks share it, which is how multi-rank code runs on a one-GPU machine).
 * G is every visible GPU, at most N, or $TILESCALE_LOCAL_GPUS.
 *
 * Heaps: one device allocation per GPU holding the heaps of its ranks,
 * zeroed; rank r's heap is slice r / G of GPU r mod G's.  Every rank's
 * memory is device memory of this process (one unified address space), so
 * a kernel reaches a peer's heap with an ordinary pointer (what CUDA IPC or
 * NVSHMEM give across processes); between GPUs that takes peer access,
 * which creation enables between every pair (cuCtxEnablePeerAccess) and
 * refuses, with a message, where the driver says it is impossible; a pair
 * without native peer atomics gets a warning (ts_world_warnings).  The
 * table of bases goes to the module globals comm_cuda.c declares
 * (ts_comm_peer, ts_comm_heap, ts_comm_timeout_ns; ts_comm_abort,
 * ts_comm_err and ts_comm_sync are reset), once per kernel of a chain,
 * before any launch.
 *
 * Several GPUs: a module lives in one device's context, so each GPU runs
 * its own copy of every kernel (ts_cuda_module_clone, kept until the world
 * is destroyed; TsRankEnv.cumod tells the launch which), and module
 * globals are per GPU: T.barrier_all's counter and the abort word move to
 * rank 0's heap as in the ipc backend (ts_comm_sync_at, ts_comm_abort_at;
 * cleared before every launch), and the first failure is looked for in
 * every GPU's copy.  $TILESCALE_LOCAL_SPREAD=1 takes this path on one GPU
 * too (what the one-GPU machine can test of it).
 *
 * Launch: each rank's kernels go on the rank's own stream (non-blocking),
 * all queued before any is waited for, so they run concurrently.  Kernels
 * whose blocks wait on each other (IrKernel.may_block: all that
 * communicate) need every block of every rank resident at once; the
 * launch first asks the driver how many blocks fit
 * (cuOccupancyMaxActiveBlocksPerMultiprocessor times the SM count) and
 * refuses with a message saying so when they do not, instead of hanging.
 * After the streams finish, the first failure recorded by the kernels
 * (peer out of range, range outside its tensor, not on the heap, a wait
 * past the timeout) becomes the launch's error message.
 *
 * ipc (one process per rank, w->self >= 0): the same code drives the one
 * rank of this process.  Its heap is its own allocation, exported with
 * cuIpcGetMemHandle; world.c passes the handles around through the
 * rendezvous and each peer's heap is opened here with cuIpcOpenMemHandle
 * (which works between processes on one GPU as well as between GPUs of a
 * node).  Module globals are per process, so T.barrier_all's counter and
 * the abort word move to rank 0's heap (ts_comm_sync_at, ts_comm_abort_at
 * point there), which every process has mapped.  The GPU is device 0 of
 * the process: `tilescale launch` rotates CUDA_VISIBLE_DEVICES so that
 * device 0 is the rank's own GPU and the others stay visible for peer
 * access.
 *
 * ipc through NCCL ($TILESCALE_ENGINE=nccl): the bootstrap and the heap
 * go through NCCL (2.28), loaded with dlopen at run time ($TILESCALE_LIBNCCL,
 * libnccl.so.2; the library works without it): rank 0's ncclUniqueId goes
 * round through the rendezvous, ncclCommInitRank makes the communicator,
 * ncclMemAlloc the heap and ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC)
 * a symmetric window of it.  NCCL maps the heaps of the ranks of its LSA
 * team (those that reach each other's memory by load and store: a node)
 * into this process, one 4 GiB-aligned slot per LSA rank after the
 * window's lsaFlatBase (nccl_device/impl/core__types.h and core__funcs.h
 * of 2.28: ncclGetLsaPointer(w, off, p) = lsaFlatBase + p * stride4G *
 * 4 GiB + off); the window descriptor is read once on the host and the
 * peer-base table filled from it, so the generated kernels stay as they
 * are.  The flat range is a second mapping (this rank's own slot aliases
 * its heap, which creation checks by writing through one address and
 * reading through the other); the rank itself keeps its own address.
 * Where NCCL's symmetric memory is off for the communicator (no cuMem,
 * NCCL_WIN_ENABLE=0, no CUDA P2P between the node's GPUs) the "window" is
 * NCCL's plain registration record, in host memory: creation refuses it by
 * the pointer's memory type, with a message naming NCCL's conditions, and
 * checks the descriptor's fields (world rank, LSA rank) against NCCL's
 * host API besides.  Why not NCCL's device API in the generated code: its
 * headers (nccl_device.h, 2.28.9) do not compile under NVRTC (libc
 * headers, __host__ declarations refused in JIT mode, zero-length arrays
 * and packed bit fields of the GIN part), and an LSA pointer is the same
 * arithmetic on three fields, done here once.  Ranks outside this rank's
 * LSA team (other nodes) have no such address: their peer-base entries
 * are 0, and kernels compiled for several nodes (TsCompileOptions.
 * multinode) reach them through NCCL's GIN: here ncclDevCommCreate makes
 * a device communicator with one GIN context and $TILESCALE_GIN_SIGNALS
 * GIN signals (signal 0 the barrier across nodes, the others the signal
 * tensors' elements; ncclDevCommRequirements: ginForceEnable,
 * ginContextCount 1, ginSignalCount), and each launch writes it, the
 * heap's window, the ranks per node and the kernel's signal tensors'
 * first signals (gin_map) into the module's ts_gin_comm, ts_gin_win,
 * ts_comm_rpn and ts_gin_sig.  The LSA team must be a block of
 * consecutive ranks (a node's, as launchers number them) so that the
 * kernels' node = rank / ranks_per_node is NCCL's; a kernel compiled for
 * one node is refused in such a world.  NOT RUN: one host here.  A
 * kernel with GIN calls includes nccl_device.h and is built by nvcc at
 * run time (target/cuda/nvcc.c), see doc/DISTRIBUTED.md.
 *
 * The driver is loaded with dlopen ($TILESCALE_LIBCUDA, libcuda.so.1), as
 * target/cuda/cuda_drv.c does, so the library runs where CUDA is absent;
 * the primary context of device 0 is the one the CUDA target's modules
 * use.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/world.h"
#include "op/comm.h"
#include "runtime/launch.h"
#include "target/cuda/cuda_target.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct CUipcMemHandle { char reserved[64]; } CUipcMemHandle; /* the driver's opaque handle */
#define CU_IPC_LAZY_PEER 1       /* CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS */
#define CU_ATTR_PCI_BUS 33       /* CU_DEVICE_ATTRIBUTE_PCI_BUS_ID */
#define CU_ATTR_PCI_DEVICE 34    /* CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID */
#define CU_ATTR_PCI_DOMAIN 50    /* CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID */
#define CU_OK 0
#define CU_ATTR_SM_COUNT 16      /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
#define CU_STREAM_NON_BLOCKING 1
#define CU_PEER_ALREADY_ENABLED 704 /* CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED */
#define CU_PTR_MEMORY_TYPE 2     /* CU_POINTER_ATTRIBUTE_MEMORY_TYPE */
#define CU_MEMTYPE_DEVICE 2      /* CU_MEMORYTYPE_DEVICE */
#define LOCAL_MAXGPU 64             /* GPUs a local world spreads over, at most (one rank each) */

/* The driver entry points this backend uses. */
typedef struct LDrv {
    CUresult (*init)(unsigned);                                           /* cuInit */
    CUresult (*device_get)(int *, int);                                   /* cuDeviceGet */
    CUresult (*attr)(int *, int, int);                                    /* cuDeviceGetAttribute */
    CUresult (*ctx_retain)(void **, int);                                 /* cuDevicePrimaryCtxRetain */
    CUresult (*ctx_release)(int);                                         /* cuDevicePrimaryCtxRelease_v2 */
    CUresult (*ctx_set)(void *);                                          /* cuCtxSetCurrent */
    CUresult (*alloc)(CUdeviceptr *, size_t);                             /* cuMemAlloc_v2 */
    CUresult (*free_)(CUdeviceptr);                                       /* cuMemFree_v2 */
    CUresult (*memset8)(CUdeviceptr, unsigned char, size_t);              /* cuMemsetD8_v2 */
    CUresult (*h2d)(CUdeviceptr, const void *, size_t);                   /* cuMemcpyHtoD_v2 */
    CUresult (*d2h)(void *, CUdeviceptr, size_t);                         /* cuMemcpyDtoH_v2 */
    CUresult (*stream_create)(void **, unsigned);                         /* cuStreamCreate */
    CUresult (*stream_destroy)(void *);                                   /* cuStreamDestroy_v2 */
    CUresult (*stream_sync)(void *);                                      /* cuStreamSynchronize */
    CUresult (*global)(CUdeviceptr *, size_t *, void *, const char *);    /* cuModuleGetGlobal_v2 */
    CUresult (*occupancy)(int *, void *, int, size_t);                    /* cuOccupancyMaxActiveBlocksPerMultiprocessor */
    CUresult (*error_name)(CUresult, const char **);                      /* cuGetErrorName */
    CUresult (*device_count)(int *);                                      /* cuDeviceGetCount */
    CUresult (*ipc_get)(CUipcMemHandle *, CUdeviceptr);                   /* cuIpcGetMemHandle (optional) */
    CUresult (*ipc_open)(CUdeviceptr *, CUipcMemHandle, unsigned);        /* cuIpcOpenMemHandle_v2 (optional) */
    CUresult (*ipc_close)(CUdeviceptr);                                   /* cuIpcCloseMemHandle (optional) */
    CUresult (*can_peer)(int *, int, int);                                /* cuDeviceCanAccessPeer (optional) */
    CUresult (*p2p_attr)(int *, int, int, int);                           /* cuDeviceGetP2PAttribute (optional) */
    CUresult (*peer_enable)(void *, unsigned);                            /* cuCtxEnablePeerAccess (optional) */
    CUresult (*ptr_attr)(void *, int, CUdeviceptr);                       /* cuPointerGetAttribute (optional) */
} LDrv;

/* The NCCL entry points of the nccl engine (nccl.h, nccl_device/core.h of
 * NCCL 2.28; results are ncclResult_t, 0 success). */
typedef struct NTeam { int nRanks, rank, stride; } NTeam; /* ncclTeam_t */
typedef struct NDrv {
    int (*version)(int *);                                   /* ncclGetVersion */
    int (*unique_id)(void *);                                /* ncclGetUniqueId (128 bytes) */
    int (*init_rank)(void **, int, const void *, int);       /* ncclCommInitRank (id by value: see nccl_init) */
    int (*destroy)(void *);                                  /* ncclCommDestroy */
    int (*abort_)(void *);                                   /* ncclCommAbort */
    int (*mem_alloc)(void **, size_t);                       /* ncclMemAlloc */
    int (*mem_free)(void *);                                 /* ncclMemFree */
    int (*win_register)(void *, void *, size_t, void **, int); /* ncclCommWindowRegister */
    int (*win_deregister)(void *, void *);                   /* ncclCommWindowDeregister */
    const char *(*error_string)(int);                        /* ncclGetErrorString */
    NTeam (*team_world)(void *);                             /* ncclTeamWorld */
    NTeam (*team_lsa)(void *);                               /* ncclTeamLsa */
    int (*rank_to_lsa)(void *, NTeam, int);                  /* ncclTeamRankToLsa */
    int (*dev_comm_create)(void *, const void *, void *);    /* ncclDevCommCreate (optional: several nodes) */
    int (*dev_comm_destroy)(void *, const void *);           /* ncclDevCommDestroy (optional) */
} NDrv;
/* struct ncclDevCommRequirements of nccl_device/core.h (2.28), the same
 * fields in the same order (C's bool is C++'s). */
typedef struct NDevCommReq {
    void *resources;          /* resourceRequirementsList */
    void *teams;              /* teamRequirementsList */
    bool lsa_multimem;        /* lsaMultimem */
    int barrier_count;        /* barrierCount */
    int lsa_barrier_count;    /* lsaBarrierCount */
    int rail_gin_barrier_count; /* railGinBarrierCount */
    int lsa_a2a_blocks;       /* lsaLLA2ABlockCount */
    int lsa_a2a_slots;        /* lsaLLA2ASlotCount */
    bool gin_force_enable;    /* ginForceEnable */
    int gin_contexts;         /* ginContextCount */
    int gin_signals;          /* ginSignalCount */
    int gin_counters;         /* ginCounterCount */
} NDevCommReq;
/* Room for struct ncclDevComm (about 200 bytes in 2.28); a launch checks
 * the module's ts_gin_comm is not larger. */
#define NDEVCOMM_BYTES 2048
typedef struct { char internal[128]; } NUniqueId; /* ncclUniqueId, passed by value */
#define NCCL_WIN_SYMMETRIC 1 /* NCCL_WIN_COLL_SYMMETRIC */

/* A signal tensor of kernels compiled for several nodes (ir/tileop.h
 * TsGinForm): its heap bytes [off, off + bytes) are GIN signals base ..
 * base + elements - 1 on every rank. */
typedef struct LGinMap {
    long long off, bytes; /* where on the heap (symmetric: the same on every rank) */
    int base;             /* its first GIN signal */
} LGinMap;
/* GIN signals a device communicator asks for by default
 * ($TILESCALE_GIN_SIGNALS): signal 0 and the signal tensors' elements. */
#define LOCAL_GIN_SIGNALS 4096

/* A kernel's copy for one GPU of a spread world. */
typedef struct LClone {
    const TsModuleCuda *orig;  /* the kernel's own module (compared with its image too) */
    int gpu;                   /* which GPU */
    TsModuleCuda *m;           /* the copy, loaded there */
} LClone;

struct TsLocal {
    void *dl;          /* dlopen handle of libcuda */
    LDrv v;            /* its entry points */
    int dev;           /* CUdevice of GPU 0 */
    void *ctx;         /* its primary context */
    CUdeviceptr heap;  /* GPU 0's heaps (ipc: this rank's) */
    void **streams;    /* [nranks] CUstream (ipc: only this rank's) */
    CUdeviceptr *opened; /* ipc: [nranks] peers' heaps opened from their handles */
    int ngpu;          /* GPUs the ranks are spread over: rank r on GPU r % ngpu */
    int spread;        /* per-GPU module copies, barrier and abort words on rank 0's heap */
    int gdev[LOCAL_MAXGPU];           /* their CUdevices */
    void *gctx[LOCAL_MAXGPU];         /* their primary contexts (retained) */
    CUdeviceptr gheap[LOCAL_MAXGPU];  /* the heaps of each GPU's ranks, one allocation */
    LClone *clones;    /* kernels' copies for the GPUs (spread) */
    int nclones, capclones; /* used and allocated entries of clones */
    int nccl;          /* ipc through NCCL (TILESCALE_ENGINE=nccl) */
    void *nccl_dl;     /* dlopen handle of libnccl */
    NDrv nv;           /* its entry points */
    void *comm;        /* ncclComm_t */
    void *win;         /* ncclWindow_t of the heap */
    void *nccl_heap;   /* the heap, from ncclMemAlloc */
    int nccl_version;  /* the loaded NCCL's ncclGetVersion code (22809 for 2.28.9) */
    int gin;           /* the world spans nodes: GIN's device communicator below is made */
    int rpn;           /* ranks per node (NCCL's LSA team size; the world's size on one node) */
    _Alignas(16) unsigned char devcomm[NDEVCOMM_BYTES]; /* struct ncclDevComm from ncclDevCommCreate */
    int gin_nsig;      /* GIN signals the device communicator has (ginSignalCount; 0 is T.barrier_all's) */
    int gin_next;      /* the first GIN signal no signal tensor has yet */
    LGinMap *gin_maps; /* the signal tensors mapped so far (see gin_map) */
    int gin_nmaps, gin_capmaps; /* used and allocated entries of gin_maps */
    CUresult (*memcpy_)(CUdeviceptr, CUdeviceptr, size_t); /* cuMemcpy (unified addresses) */
};

static const char *ename(const TsLocal *L, CUresult r) {
    const char *s = NULL;
    if (L->v.error_name && L->v.error_name(r, &s) == CU_OK && s) return s;
    return "CUDA error";
}

static int load_driver(TsLocal *L) {
    const char *env = getenv("TILESCALE_LIBCUDA");
    L->dl = env && *env ? dlopen(env, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!L->dl && !(env && *env)) L->dl = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!L->dl && !(env && *env)) L->dl = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    if (!L->dl) return 0;
    struct { const char *name; void **fn; } syms[] = {
        {"cuInit", (void **)&L->v.init}, {"cuDeviceGet", (void **)&L->v.device_get},
        {"cuDeviceGetAttribute", (void **)&L->v.attr}, {"cuDevicePrimaryCtxRetain", (void **)&L->v.ctx_retain},
        {"cuDevicePrimaryCtxRelease_v2", (void **)&L->v.ctx_release}, {"cuCtxSetCurrent", (void **)&L->v.ctx_set},
        {"cuMemAlloc_v2", (void **)&L->v.alloc}, {"cuMemFree_v2", (void **)&L->v.free_},
        {"cuMemsetD8_v2", (void **)&L->v.memset8}, {"cuMemcpyHtoD_v2", (void **)&L->v.h2d},
        {"cuMemcpyDtoH_v2", (void **)&L->v.d2h}, {"cuStreamCreate", (void **)&L->v.stream_create},
        {"cuStreamDestroy_v2", (void **)&L->v.stream_destroy}, {"cuStreamSynchronize", (void **)&L->v.stream_sync},
        {"cuModuleGetGlobal_v2", (void **)&L->v.global},
        {"cuOccupancyMaxActiveBlocksPerMultiprocessor", (void **)&L->v.occupancy},
        {"cuGetErrorName", (void **)&L->v.error_name}, {"cuDeviceGetCount", (void **)&L->v.device_count},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        *syms[i].fn = dlsym(L->dl, syms[i].name);
        if (!*syms[i].fn) return 0;
    }
    *(void **)&L->v.ipc_get = dlsym(L->dl, "cuIpcGetMemHandle");
    *(void **)&L->v.ipc_open = dlsym(L->dl, "cuIpcOpenMemHandle_v2");
    if (!L->v.ipc_open) *(void **)&L->v.ipc_open = dlsym(L->dl, "cuIpcOpenMemHandle");
    *(void **)&L->v.ipc_close = dlsym(L->dl, "cuIpcCloseMemHandle");
    *(void **)&L->v.can_peer = dlsym(L->dl, "cuDeviceCanAccessPeer");
    *(void **)&L->v.p2p_attr = dlsym(L->dl, "cuDeviceGetP2PAttribute");
    *(void **)&L->v.peer_enable = dlsym(L->dl, "cuCtxEnablePeerAccess");
    *(void **)&L->v.ptr_attr = dlsym(L->dl, "cuPointerGetAttribute");
    return 1;
}

int ts_local_engine_nccl(void) {
    const char *e = getenv("TILESCALE_ENGINE");
    return e && !strcmp(e, "nccl");
}

static const char *nerr(const TsLocal *L, int r) {
    const char *s = L->nv.error_string ? L->nv.error_string(r) : NULL;
    return s ? s : "NCCL error";
}

/* libnccl and its entry points; 0 with a message in why. */
static int load_nccl(TsLocal *L, TsBuf *why) {
    const char *env = getenv("TILESCALE_LIBNCCL");
    static const char *const names[] = {"libnccl.so.2", "libnccl.so", "/usr/local/cuda/lib/libnccl.so.2",
                                        "/usr/local/cuda/lib64/libnccl.so.2", NULL};
    if (env && *env) L->nccl_dl = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    for (int i = 0; !L->nccl_dl && !(env && *env) && names[i]; i++) L->nccl_dl = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!L->nccl_dl) {
        ts_buf_printf(why, "cannot load %s (set TILESCALE_LIBNCCL to libnccl.so.2 of NCCL 2.28 or later)",
                      env && *env ? env : "libnccl.so.2");
        return 0;
    }
    struct { const char *name; void **fn; } syms[] = {
        {"ncclGetVersion", (void **)&L->nv.version}, {"ncclGetUniqueId", (void **)&L->nv.unique_id},
        {"ncclCommInitRank", (void **)&L->nv.init_rank}, {"ncclCommDestroy", (void **)&L->nv.destroy},
        {"ncclCommAbort", (void **)&L->nv.abort_}, {"ncclMemAlloc", (void **)&L->nv.mem_alloc},
        {"ncclMemFree", (void **)&L->nv.mem_free}, {"ncclCommWindowRegister", (void **)&L->nv.win_register},
        {"ncclCommWindowDeregister", (void **)&L->nv.win_deregister},
        {"ncclGetErrorString", (void **)&L->nv.error_string}, {"ncclTeamWorld", (void **)&L->nv.team_world},
        {"ncclTeamLsa", (void **)&L->nv.team_lsa}, {"ncclTeamRankToLsa", (void **)&L->nv.rank_to_lsa},
    };
    int v = 0;
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!(*syms[i].fn = dlsym(L->nccl_dl, syms[i].name))) {
            if (L->nv.version) L->nv.version(&v);
            ts_buf_printf(why, "the loaded NCCL (%d) has no %s: NCCL 2.28 or later is needed (its device API)", v,
                          syms[i].name);
            return 0;
        }
    /* several nodes only (GIN's device communicator): optional */
    *(void **)&L->nv.dev_comm_create = dlsym(L->nccl_dl, "ncclDevCommCreate");
    *(void **)&L->nv.dev_comm_destroy = dlsym(L->nccl_dl, "ncclDevCommDestroy");
    L->nv.version(&v);
    L->nccl_version = v;
    if (v < 22800) {
        ts_buf_printf(why, "the loaded NCCL is %d.%d: 2.28 or later is needed (its device API)", v / 10000, v / 100 % 100);
        return 0;
    }
    return 1;
}

TsStatus ts_local_nccl_id(TsWorld *w, unsigned char id[128]) {
    TsLocal *L = w->local;
    int r = L->nv.unique_id(id);
    if (r) return ts_world_fail(w->ctx, TS_ERR_RUNTIME, "world (ipc, NCCL): ncclGetUniqueId: %s", nerr(L, r));
    return TS_OK;
}

/* Calls ncclCommInitRank, whose ncclUniqueId argument is a 128-byte
 * struct passed by value. */
static int nccl_init(TsLocal *L, void **comm, int n, const unsigned char id[128], int rank) {
    int (*f)(void **, int, NUniqueId, int) = (int (*)(void **, int, NUniqueId, int))(void (*)(void))L->nv.init_rank;
    NUniqueId u;
    memcpy(u.internal, id, sizeof u.internal);
    return f(comm, n, u, rank);
}

/* The window descriptor's head: struct ncclWindow_vidmem of
 * nccl_device/impl/core__types.h, the same fields at the same offsets in
 * 2.28.3, 2.28.7, 2.28.9 and 2.29 (later members, GIN's, not read). */
typedef struct NWinHead {
    void *win_host;       /* winHost: NCCL's host-side record of the window */
    char *lsa_flat_base;  /* lsaFlatBase: rank 0 of the LSA team's first byte of this window */
    int lsa_rank;         /* lsaRank: this rank's index in its LSA team */
    int world_rank;       /* worldRank: this rank in the communicator */
    uint32_t stride4g;    /* stride4G: distance between LSA ranks' slots, in 4 GiB units */
} NWinHead;

/* NCCL's version code as text ("2.28.9"). */
static const char *nccl_vstr(const TsLocal *L, char buf[32]) {
    int v = L->nccl_version;
    snprintf(buf, 32, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
    return buf;
}

/* Rank p's heap base from the window, the way NCCL's device API computes
 * an LSA pointer (nccl_device/impl/core__funcs.h, ncclGetLsaPointer:
 * lsaFlatBase + lsaRank(p) * stride4G * 4 GiB + offset; add4G). */
static uint64_t lsa_slot(const NWinHead *h, int lsa_rank) {
    return (uint64_t)(uintptr_t)h->lsa_flat_base + (((uint64_t)h->stride4g * (uint64_t)lsa_rank) << 32);
}

/* Reads the window descriptor NCCL gave for the heap into *h after making
 * sure it is one.  ncclCommWindowRegister does not always make a symmetric
 * window: when NCCL's symmetric memory is off for the communicator
 * (comm->symmetricSupport: cuMem on, NCCL_WIN_ENABLE, CUDA P2P between the
 * node's ranks; src/init.cc and src/dev_runtime.cc of 2.28) it hands back
 * its plain buffer registration (struct ncclReg, host memory: begAddr,
 * endAddr, localRefs, ...) in the ncclWindow_t.  Read as a descriptor that
 * gave the H200's 13:24 and 14:06 failures ("LSA rank 1": localRefs; the
 * "flat base" was the heap's end).  The descriptor lives in device memory
 * (NCCL's shadow pool), the registration on the host: the pointer's memory
 * type tells them apart, and the fields are checked besides. */
static TsStatus nccl_window(TsWorld *w, NWinHead *h) {
    TsLocal *L = w->local;
    char vb[32];
    int mt = 0;
    CUresult cr = L->v.ptr_attr ? L->v.ptr_attr(&mt, CU_PTR_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)L->win) : CU_OK;
    /* NCCL 2.28.3 counts a node of one rank as "not all direct P2P"
     * (transport.cc: localRanks == 1), which turns symmetric memory off;
     * 2.28.7 and later look at CUDA P2P only (isAllCudaP2p) */
    int alone = L->nccl_version < 22807 && L->nv.team_lsa(L->comm).nRanks == 1;
    if (L->v.ptr_attr && (cr != CU_OK || mt != CU_MEMTYPE_DEVICE))
        return ts_world_fail(w->ctx, TS_ERR_UNSUPPORTED,
                             "world (ipc, NCCL): NCCL %s made no symmetric window of the heap: "
                             "ncclCommWindowRegister gave back a plain buffer registration (host memory), which NCCL "
                             "does when its symmetric memory is off for the communicator (it needs cuMem: "
                             "NCCL_CUMEM_ENABLE unset or 1 on a GPU with virtual memory management; NCCL_WIN_ENABLE "
                             "unset or 1; CUDA P2P between all ranks of the node%s); NCCL_DEBUG=INFO shows NCCL's view. "
                             "Without TILESCALE_ENGINE=nccl the ipc backend uses CUDA IPC instead",
                             nccl_vstr(L, vb),
                             alone ? "; and NCCL before 2.28.7 turns it off for a node of one rank, as here: "
                                     "TILESCALE_LIBNCCL can name a newer libnccl.so.2" : "");
    if (!L->memcpy_ || (cr = L->memcpy_((CUdeviceptr)(uintptr_t)h, (CUdeviceptr)(uintptr_t)L->win, sizeof *h)) != CU_OK)
        return ts_world_fail(w->ctx, TS_ERR_RUNTIME, "world (ipc, NCCL): reading the window descriptor: %s",
                             L->memcpy_ ? ename(L, cr) : "no cuMemcpy");
    NTeam world = L->nv.team_world(L->comm), lsa = L->nv.team_lsa(L->comm);
    int me_l = L->nv.rank_to_lsa(L->comm, world, w->self);
    if (h->world_rank != w->self || h->lsa_rank != me_l || h->lsa_rank < 0 || h->lsa_rank >= lsa.nRanks ||
        (void *)h->win_host == L->nccl_heap || !h->lsa_flat_base || (lsa.nRanks > 1 && !h->stride4g))
        return ts_world_fail(w->ctx, TS_ERR_RUNTIME,
                             "world (ipc, NCCL): the window descriptor NCCL %s gave is not laid out as this code reads "
                             "it (struct ncclWindow_vidmem of 2.28): world rank %d (this is rank %d), LSA rank %d "
                             "(NCCL says %d of %d), flat base %p, stride %u x 4 GiB",
                             nccl_vstr(L, vb), h->world_rank, w->self, h->lsa_rank, me_l, lsa.nRanks,
                             (void *)h->lsa_flat_base, (unsigned)h->stride4g);
    return TS_OK;
}

TsStatus ts_local_nccl_init(TsWorld *w, const unsigned char id[128]) {
    TsLocal *L = w->local;
    int n = w->opt.nranks, r;
    CUresult cr = L->v.ctx_set(L->ctx);
    if (cr != CU_OK) return ts_world_fail(w->ctx, TS_ERR_RUNTIME, "world (ipc, NCCL): cuCtxSetCurrent: %s", ename(L, cr));
    if ((r = nccl_init(L, &L->comm, n, id, w->self)) != 0) {
        L->comm = NULL;
        return ts_world_fail(w->ctx, TS_ERR_RUNTIME,
                             "world (ipc, NCCL): rank %d: ncclCommInitRank: %s (NCCL wants one GPU per rank: ranks "
                             "sharing a GPU are refused)", w->self, nerr(L, r));
    }
    size_t bytes = (size_t)w->opt.heap_bytes;
    if ((r = L->nv.mem_alloc(&L->nccl_heap, bytes)) != 0) {
        L->nccl_heap = NULL;
        return ts_world_fail(w->ctx, TS_ERR_NOMEM, "world (ipc, NCCL): ncclMemAlloc of %lld bytes: %s",
                             (long long)bytes, nerr(L, r));
    }
    if ((cr = L->v.memset8((CUdeviceptr)(uintptr_t)L->nccl_heap, 0, bytes)) != CU_OK)
        return ts_world_fail(w->ctx, TS_ERR_RUNTIME, "world (ipc, NCCL): clearing the heap: %s", ename(L, cr));
    if ((r = L->nv.win_register(L->comm, L->nccl_heap, bytes, &L->win, NCCL_WIN_SYMMETRIC)) != 0 || !L->win) {
        L->win = NULL;
        return ts_world_fail(w->ctx, TS_ERR_RUNTIME, "world (ipc, NCCL): ncclCommWindowRegister: %s",
                             r ? nerr(L, r) : "no window (NCCL has neither symmetric memory nor local registration "
                                              "here: NCCL_WIN_ENABLE, NCCL_CUMEM_ENABLE, NCCL_LOCAL_REGISTER)");
    }
    NTeam world = L->nv.team_world(L->comm), lsa = L->nv.team_lsa(L->comm);
    L->rpn = lsa.nRanks;
    if (lsa.nRanks != n) { /* several nodes: the others through GIN (see the essay) */
        int per = lsa.nRanks, node = w->self / (per > 0 ? per : 1);
        for (int p = 0; p < n && per > 0; p++) {
            int l = L->nv.rank_to_lsa(L->comm, world, p), in = l >= 0 && l < per;
            if (in != (p / per == node))
                return ts_world_fail(w->ctx, TS_ERR_UNSUPPORTED,
                                     "world (ipc, NCCL): rank %d's LSA team (%d ranks) is not the block of ranks %d .. %d "
                                     "(rank %d is %sin it): the kernels take rank / ranks per node as the node; "
                                     "number the ranks node by node, as torchrun and tilescale launch --nnodes do",
                                     w->self, per, node * per, node * per + per - 1, p, in ? "" : "not ");
        }
        /* GIN is supported since NCCL 2.28.7 (NCCL's device API documentation) */
        if (!L->nv.dev_comm_create || L->nccl_version < 22807) {
            char vb[32];
            return ts_world_fail(w->ctx, TS_ERR_UNSUPPORTED,
                                 "world (ipc, NCCL): rank %d reaches %d of the %d ranks by load and store (its LSA "
                                 "team: one node); the others need NCCL's GIN, which NCCL %s does not have (2.28.7 "
                                 "or later: TILESCALE_LIBNCCL can name one)", w->self, lsa.nRanks, n, nccl_vstr(L, vb));
        }
        /* NDevCommReq is 2.28's struct; later releases version it (size, magic and version first, new
         * members such as the connection type and, from 2.30.5, ginStrongSignalsRequired: zero would
         * make the signals weak, and the order every GIN signal here stands for would be gone) */
        if (L->nccl_version >= 22900) {
            char vb[32];
            return ts_world_fail(w->ctx, TS_ERR_UNSUPPORTED,
                                 "world (ipc, NCCL): rank %d reaches the ranks of other nodes through NCCL's GIN, and "
                                 "this build fills NCCL 2.28's ncclDevCommRequirements, which NCCL %s lays out "
                                 "differently (versioned, strong or weak signals): use NCCL 2.28.7 .. 2.28.x for "
                                 "worlds across nodes (TILESCALE_LIBNCCL can name one)", w->self, nccl_vstr(L, vb));
        }
        NDevCommReq req = {0};
        req.gin_force_enable = true;
        req.gin_contexts = 1;
        /* signal 0: T.barrier_all across nodes (target/cuda/comm_cuda.c, emit_barrier_all_gin); the
         * others: the elements of the kernels' signal tensors (gin_map) */
        const char *ns = getenv("TILESCALE_GIN_SIGNALS");
        long long want = ns && *ns ? atoll(ns) : LOCAL_GIN_SIGNALS;
        if (want < 1 || want > (1LL << 24))
            return ts_world_fail(w->ctx, TS_ERR_INVALID, "TILESCALE_GIN_SIGNALS=%s: GIN signals per device communicator, "
                                 "1 .. 16777216", ns);
        req.gin_signals = (int)want;
        if ((r = L->nv.dev_comm_create(L->comm, &req, L->devcomm)) != 0)
            return ts_world_fail(w->ctx, TS_ERR_UNSUPPORTED,
                                 "world (ipc, NCCL): rank %d: ncclDevCommCreate with a GIN context (the ranks of "
                                 "other nodes are reached through GIN): %s", w->self, nerr(L, r));
        L->gin = 1;
        L->gin_nsig = req.gin_signals;
        L->gin_next = 1;
    }
    NWinHead h;
    if (nccl_window(w, &h)) return w->ctx->diag.status;
    /* the flat LSA range is a mapping of its own (rank p's heap at slot p),
     * not the address ncclMemAlloc gave: this rank keeps its own address,
     * peers are reached at their slots; ranks of other nodes have none (0) */
    for (int p = 0; p < n; p++) {
        int l = L->nv.rank_to_lsa(L->comm, world, p);
        if ((l < 0 || l >= lsa.nRanks) && !L->gin)
            return ts_world_fail(w->ctx, TS_ERR_UNSUPPORTED, "world (ipc, NCCL): rank %d is not in rank %d's LSA team", p, w->self);
        w->base[p] = p == w->self ? L->nccl_heap : l < 0 || l >= lsa.nRanks ? NULL : (void *)(uintptr_t)lsa_slot(&h, l);
    }
    /* check the layout: a word written at our heap reads back at our slot */
    uint64_t own = lsa_slot(&h, h.lsa_rank);
    unsigned long long mark = 0x5453436f6d6d4e43ull ^ (unsigned long long)(uintptr_t)L->nccl_heap, got = 0;
    cr = L->v.h2d((CUdeviceptr)(uintptr_t)L->nccl_heap, &mark, sizeof mark);
    if (cr == CU_OK) cr = L->memcpy_((CUdeviceptr)(uintptr_t)&got, (CUdeviceptr)own, sizeof got);
    if (cr == CU_OK) cr = L->v.memset8((CUdeviceptr)(uintptr_t)L->nccl_heap, 0, sizeof mark);
    if (cr != CU_OK || got != mark) {
        char vb[32];
        return ts_world_fail(w->ctx, TS_ERR_RUNTIME,
                             "world (ipc, NCCL): the window's slot for this rank (%#llx) does not show its heap "
                             "(%p)%s%s: the window descriptor NCCL %s gave is not laid out as this code reads it",
                             (unsigned long long)own, L->nccl_heap, cr != CU_OK ? ": " : "",
                             cr != CU_OK ? ename(L, cr) : "", nccl_vstr(L, vb));
    }
    L->heap = (CUdeviceptr)(uintptr_t)L->nccl_heap;
    return TS_OK;
}

int ts_local_device_count(void) {
    TsLocal L;
    memset(&L, 0, sizeof L);
    int n = 0;
    if (load_driver(&L) && L.v.init(0) == CU_OK && L.v.device_count(&n) != CU_OK) n = 0;
    if (L.dl) dlclose(L.dl);
    return n;
}

/* How many GPUs a local world of n ranks spreads over: every visible one,
 * at most n, or $TILESCALE_LOCAL_GPUS; 0 after an error. */
static int local_gpus(TsWorld *w, int count, int n) {
    int g = count < n ? count : n;
    const char *e = getenv("TILESCALE_LOCAL_GPUS");
    if (e && *e) {
        char *end;
        long v = strtol(e, &end, 10);
        if (*end || v < 1 || v > count) {
            ts_world_fail(w->ctx, TS_ERR_INVALID, "world (local): TILESCALE_LOCAL_GPUS=%s: want 1 .. %d (the GPUs "
                                                  "this process sees)", e, count);
            return 0;
        }
        g = (int)v < n ? (int)v : n;
    }
    return g > LOCAL_MAXGPU ? LOCAL_MAXGPU : g < 1 ? 1 : g;
}

/* Peer access between every pair of the world's GPUs: an error where the
 * driver says there is none (the kernels could not reach those heaps), a
 * warning where peer atomics are not native. */
static TsStatus enable_peers(TsWorld *w) {
    TsLocal *L = w->local;
    for (int a = 0; a < L->ngpu; a++)
        for (int b = 0; b < L->ngpu; b++) {
            if (a == b) continue;
            int can = 0, atom = 1;
            if (!L->v.can_peer || !L->v.peer_enable || L->v.can_peer(&can, L->gdev[a], L->gdev[b]) != CU_OK || !can)
                return ts_world_fail(w->ctx, TS_ERR_UNSUPPORTED,
                                     "world (local): GPU %d cannot reach GPU %d's memory (no peer access between "
                                     "them), so ranks on one could not read or write the other's heaps: set "
                                     "TILESCALE_LOCAL_GPUS=1 to keep every rank on one GPU, or run a process per "
                                     "GPU (tilescale launch -n N ... --target cuda)", a, b);
            CUresult r = L->v.ctx_set(L->gctx[a]);
            if (r == CU_OK) r = L->v.peer_enable(L->gctx[b], 0);
            if (r != CU_OK && r != CU_PEER_ALREADY_ENABLED)
                return ts_world_fail(w->ctx, TS_ERR_RUNTIME, "world (local): enabling GPU %d's access to GPU %d: %s", a,
                                     b, ename(L, r));
            if (L->v.p2p_attr) L->v.p2p_attr(&atom, 3 /* CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED */, L->gdev[a], L->gdev[b]);
            if (!atom)
                ts_buf_printf(&w->warnings, "local world: no native peer atomics from GPU %d to GPU %d (not an NVLink "
                                            "mesh?): T.atom_add, signal adds and barriers across them are not atomic "
                                            "with the owner's own\n", a, b);
        }
    return TS_OK;
}

TsStatus ts_local_create(TsWorld *w) {
    TsLocal *L = calloc(1, sizeof *L);
    if (!L) return ts_world_fail(w->ctx, TS_ERR_NOMEM, "world: out of memory");
    w->local = L;
    int n = w->opt.nranks;
    if (!load_driver(L))
        return ts_world_fail(w->ctx, TS_ERR_RUNTIME,
                             "world (local): no CUDA driver found (libcuda.so.1; set TILESCALE_LIBCUDA)");
    CUresult r;
    int count = 0;
    if ((r = L->v.init(0)) != CU_OK || (r = L->v.device_count(&count)) != CU_OK || count < 1)
        return ts_world_fail(w->ctx, TS_ERR_RUNTIME, "world (local): no CUDA device: %s",
                             r != CU_OK ? ename(L, r) : "none visible");
    int ipc = w->self >= 0, mine = ipc ? 1 : n;
    L->ngpu = ipc ? 1 : local_gpus(w, count, n);
    if (!L->ngpu) return w->ctx->diag.status;
    const char *sp = getenv("TILESCALE_LOCAL_SPREAD");
    L->spread = !ipc && (L->ngpu > 1 || (sp && !strcmp(sp, "1")));
    for (int g = 0; g < L->ngpu; g++) {
        if ((r = L->v.device_get(&L->gdev[g], g)) != CU_OK)
            return ts_world_fail(w->ctx, TS_ERR_RUNTIME, "world (local): no CUDA device %d: %s", g, ename(L, r));
        if ((r = L->v.ctx_retain(&L->gctx[g], L->gdev[g])) != CU_OK) {
            L->gctx[g] = NULL;
            return ts_world_fail(w->ctx, TS_ERR_RUNTIME, "world (local): cannot use device %d's context: %s", g,
                                 ename(L, r));
        }
    }
    L->dev = L->gdev[0];
    L->ctx = L->gctx[0];
    if ((r = L->v.ctx_set(L->ctx)) != CU_OK)
        return ts_world_fail(w->ctx, TS_ERR_RUNTIME, "world (local): cannot use device 0's context: %s", ename(L, r));
    L->nccl = ipc && ts_local_engine_nccl();
    *(void **)&L->memcpy_ = dlsym(L->dl, "cuMemcpy");
    if (L->nccl) {
        TsBuf why = {0};
        if (!load_nccl(L, &why)) {
            TsStatus st = ts_world_fail(w->ctx, TS_ERR_UNSUPPORTED, "world (ipc, TILESCALE_ENGINE=nccl): %s",
                                        ts_buf_str(&why));
            ts_buf_free(&why);
            return st;
        }
    } else if (ipc && (!L->v.ipc_get || !L->v.ipc_open || !L->v.ipc_close))
        return ts_world_fail(w->ctx, TS_ERR_UNSUPPORTED, "world (ipc): this CUDA driver has no IPC entry points");
    for (int g = 0; g < L->ngpu && !L->nccl; g++) {
        int on = ipc ? 1 : (mine - g + L->ngpu - 1) / L->ngpu; /* ranks g, g + G, ... */
        size_t total = (size_t)on * (size_t)w->opt.heap_bytes;
        if ((r = L->v.ctx_set(L->gctx[g])) == CU_OK && (r = L->v.alloc(&L->gheap[g], total)) != CU_OK) L->gheap[g] = 0;
        if (r != CU_OK)
            return ts_world_fail(w->ctx, TS_ERR_NOMEM, "world (%s): cannot allocate %d heap%s of %lld bytes on GPU %d: %s",
                                 ipc ? "ipc" : "local", on, on > 1 ? "s" : "", (long long)w->opt.heap_bytes, g,
                                 ename(L, r));
        if ((r = L->v.memset8(L->gheap[g], 0, total)) != CU_OK)
            return ts_world_fail(w->ctx, TS_ERR_RUNTIME, "world (local): cuMemsetD8 failed: %s", ename(L, r));
    }
    L->heap = L->gheap[0];
    if (ipc && !L->nccl) w->base[w->self] = (void *)(uintptr_t)L->heap;
    else
        for (int i = 0; i < n; i++)
            w->base[i] = (void *)(uintptr_t)(L->gheap[i % L->ngpu] +
                                             (CUdeviceptr)(i / L->ngpu) * (CUdeviceptr)w->opt.heap_bytes);
    if (!ipc) {
        w->dev_share = (n + L->ngpu - 1) / L->ngpu;
        if (L->ngpu > 1 && enable_peers(w) != TS_OK) return w->ctx->diag.status;
    }
    size_t nr = n > 0 && n <= LOCAL_MAXGPU ? (size_t)n : (size_t)LOCAL_MAXGPU; /* worlds have 1 .. 64 ranks */
    L->streams = calloc(nr, sizeof *L->streams);
    L->opened = calloc(nr, sizeof *L->opened);
    if (!L->streams || !L->opened) return ts_world_fail(w->ctx, TS_ERR_NOMEM, "world: out of memory");
    for (int i = 0; i < n; i++) {
        if (ipc && i != w->self) continue;
        if ((r = L->v.ctx_set(L->gctx[ipc ? 0 : i % L->ngpu])) == CU_OK &&
            (r = L->v.stream_create(&L->streams[i], CU_STREAM_NON_BLOCKING)) != CU_OK)
            L->streams[i] = NULL;
        if (r != CU_OK)
            return ts_world_fail(w->ctx, TS_ERR_RUNTIME, "world (local): cuStreamCreate failed: %s", ename(L, r));
    }
    L->v.ctx_set(L->ctx);
    return TS_OK;
}

void ts_local_destroy(TsWorld *w) {
    TsLocal *L = w->local;
    if (!L) return;
    if (L->ctx) L->v.ctx_set(L->ctx);
    for (int i = 0; L->streams && i < w->opt.nranks; i++)
        if (L->streams[i]) L->v.stream_destroy(L->streams[i]);
    for (int i = 0; L->opened && i < w->opt.nranks; i++)
        if (L->opened[i]) L->v.ipc_close(L->opened[i]);
    free(L->streams);
    free(L->opened);
    if (L->comm) { /* collective calls: every rank is here after the world's last barrier */
        if (L->gin && w->ready && L->nv.dev_comm_destroy) L->nv.dev_comm_destroy(L->comm, L->devcomm);
        if (L->win && w->ready) L->nv.win_deregister(L->comm, L->win);
        if (w->ready) L->nv.destroy(L->comm);
        else L->nv.abort_(L->comm);
    }
    if (L->nccl_heap) L->nv.mem_free(L->nccl_heap);
    if (L->nccl_dl) dlclose(L->nccl_dl);
    for (int i = 0; i < L->nclones; i++) ts_cuda_module_free(L->clones[i].m);
    free(L->clones);
    free(L->gin_maps);
    for (int g = 0; g < LOCAL_MAXGPU; g++) {
        if (!L->gctx[g]) continue;
        L->v.ctx_set(L->gctx[g]);
        if (L->gheap[g]) L->v.free_(L->gheap[g]);
        L->v.ctx_release(L->gdev[g]);
    }
    if (L->dl) dlclose(L->dl);
    free(L);
    w->local = NULL;
}

TsStatus ts_local_copy(TsWorld *w, int to_device, void *dev, void *host, int64_t bytes) {
    TsLocal *L = w->local;
    /* in the context of the GPU whose heaps hold dev (rank r's is on GPU r % ngpu) */
    int g = 0;
    for (int r = 0; w->self < 0 && r < w->opt.nranks; r++) {
        uintptr_t b = (uintptr_t)w->base[r], p = (uintptr_t)dev;
        if (p >= b && p - b < (uintptr_t)w->opt.heap_bytes) g = r % L->ngpu;
    }
    CUresult r = L->v.ctx_set(L->gctx[g] ? L->gctx[g] : L->ctx);
    if (r == CU_OK)
        r = to_device ? L->v.h2d((CUdeviceptr)(uintptr_t)dev, host, (size_t)bytes)
                      : L->v.d2h(host, (CUdeviceptr)(uintptr_t)dev, (size_t)bytes);
    if (r != CU_OK)
        return ts_world_fail(w->ctx, TS_ERR_RUNTIME, "world (local): copy %s the device failed: %s",
                             to_device ? "to" : "from", ename(L, r));
    return TS_OK;
}

static uint64_t device_key(TsLocal *L, int dev) {
    int bus = 0, devid = 0, dom = 0;
    L->v.attr(&bus, CU_ATTR_PCI_BUS, dev);
    L->v.attr(&devid, CU_ATTR_PCI_DEVICE, dev);
    L->v.attr(&dom, CU_ATTR_PCI_DOMAIN, dev);
    return ((uint64_t)(uint32_t)dom << 32) | ((uint64_t)(uint32_t)bus << 8) | (uint64_t)(uint32_t)devid;
}

void ts_local_topology(TsWorld *w, const uint64_t *keys, TsBuf *warn) {
    TsLocal *L = w->local;
    int n = w->opt.nranks, count = 0;
    uint64_t mine = keys[w->self];
    if (L->v.device_count(&count) != CU_OK) return;
    for (int r = 0; r < n; r++) {
        if (keys[r] == mine) continue;
        int peer = -1;
        for (int d = 0; d < count && peer < 0; d++) {
            int dev;
            if (L->v.device_get(&dev, d) == CU_OK && device_key(L, dev) == keys[r]) peer = dev;
        }
        unsigned bus = (unsigned)((keys[r] >> 8) & 0xff);
        if (peer < 0) {
            ts_buf_printf(warn, "rank %d: rank %d's GPU (PCI bus %02x) is not visible in this process: its heap is "
                                "reached without a direct peer mapping (keep every GPU in CUDA_VISIBLE_DEVICES)\n",
                          w->self, r, bus);
            continue;
        }
        int can = 1, atom = 1;
        if (L->v.can_peer) L->v.can_peer(&can, L->dev, peer);
        if (L->v.p2p_attr) L->v.p2p_attr(&atom, 3 /* CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED */, L->dev, peer);
        if (!can)
            ts_buf_printf(warn, "rank %d: no peer access from this GPU to rank %d's (PCI bus %02x): remote loads and "
                                "stores to it will fail or go through host memory\n",
                          w->self, r, bus);
        else if (!atom)
            ts_buf_printf(warn, "rank %d: no native peer atomics to rank %d's GPU (PCI bus %02x; not an NVLink "
                                "mesh?): T.atom_add, signal adds and barriers to it are not atomic with its own\n",
                          w->self, r, bus);
    }
}

TsStatus ts_local_export(TsWorld *w, unsigned char handle[64], uint64_t *dev_key) {
    TsLocal *L = w->local;
    if (L->nccl) { /* the heap comes later, from NCCL */
        *dev_key = device_key(L, L->dev);
        return TS_OK;
    }
    CUipcMemHandle h;
    CUresult r = L->v.ipc_get(&h, L->heap);
    if (r != CU_OK)
        return ts_world_fail(w->ctx, TS_ERR_RUNTIME, "world (ipc): rank %d cannot export its heap (cuIpcGetMemHandle): %s",
                             w->self, ename(L, r));
    memcpy(handle, h.reserved, 64);
    *dev_key = device_key(L, L->dev);
    return TS_OK;
}

TsStatus ts_local_open(TsWorld *w, int rank, const unsigned char handle[64]) {
    TsLocal *L = w->local;
    CUipcMemHandle h;
    memcpy(h.reserved, handle, 64);
    CUdeviceptr p = 0;
    CUresult r = L->v.ctx_set(L->ctx);
    if (r == CU_OK) r = L->v.ipc_open(&p, h, CU_IPC_LAZY_PEER);
    if (r != CU_OK)
        return ts_world_fail(w->ctx, TS_ERR_RUNTIME,
                             "world (ipc): rank %d cannot map rank %d's heap (cuIpcOpenMemHandle): %s (is peer access "
                             "between their GPUs possible?)",
                             w->self, rank, ename(L, r));
    L->opened[rank] = p;
    w->base[rank] = (void *)(uintptr_t)p;
    return TS_OK;
}

/* Writes a module global if the module has it; 0 when it has not. */
static int set_global(TsLocal *L, void *module, const char *name, const void *src, size_t n, CUresult *r) {
    CUdeviceptr p;
    size_t size;
    if (L->v.global(&p, &size, module, name) != CU_OK) return 0;
    *r = L->v.h2d(p, src, n < size ? n : size);
    return 1;
}

/* The first failure record of a kernel's module (loaded on one GPU), as a
 * message (or none: 0). */
static int failure(TsWorld *w, TsKernel *c, const TsModuleCuda *m, TsBuf *msg) {
    TsLocal *L = w->local;
    CUdeviceptr p;
    size_t size;
    int abort_ = 0;
    long long e[6] = {0};
    if (L->v.ctx_set(m->ctx) != CU_OK || L->v.global(&p, &size, m->module, "ts_comm_abort") != CU_OK) return 0;
    L->v.d2h(&abort_, p, sizeof abort_);
    if (!abort_) return 0;
    if (L->v.global(&p, &size, m->module, "ts_comm_err") == CU_OK) L->v.d2h(e, p, sizeof e);
    int what = (int)(e[0] / 16), sub = (int)(e[0] % 16);
    const char *name = ts_comm_name(what);
    ts_buf_printf(msg, "error: rank %lld: kernel '%s': T.%s: ", e[1], c->ir->name, name);
    switch (sub) {
    case 1:
        ts_buf_printf(msg, "%lld bytes at byte %lld of a tensor are outside it (%lld bytes)\n", e[4], e[3], e[5]);
        break;
    case 2: ts_buf_printf(msg, "peer rank %lld is out of range (%lld ranks)\n", e[2], e[3]); break;
    case 3: ts_buf_printf(msg, "a tensor that is not on the symmetric heap, so rank %lld has no copy of it\n", e[2]); break;
    case 4:
        if (what == TS_COMM_WAIT)
            ts_buf_printf(msg, "timed out after %lld ms waiting for element %lld to be %s %lld; it is %lld\n",
                          (long long)w->opt.wait_timeout_ms, e[2], ts_comm_cmp_text((int)e[5]), e[4], e[3]);
        else if (what == TS_COMM_BARRIER_BLOCKS)
            ts_buf_printf(msg, "timed out after %lld ms waiting for rank %lld (its word is %lld)\n",
                          (long long)w->opt.wait_timeout_ms, e[2], e[3]);
        else
            ts_buf_printf(msg, "timed out after %lld ms: %lld of the %lld blocks of all ranks arrived\n",
                          (long long)w->opt.wait_timeout_ms, e[2], e[3]);
        break;
    case 5: /* several nodes: a signal buffer's words as GIN signals (comm_cuda.c ts_gin_sid) */
        ts_buf_printf(msg, "signal buffer %lld (element %lld) has no GIN signals: the world maps them at launch "
                      "(%lld signals)\n", e[2], e[3], e[4]);
        break;
    default: ts_buf_printf(msg, "failed (record %lld)\n", e[0]); break;
    }
    return 1;
}

/* The GIN signals of kernel c's signal tensors (IrKernel.gin_sig_param,
 * pass lower_comm) in this rank's arguments a, into base[slot]: a tensor
 * keeps the signals it got at its first launch (so kernels that share it
 * share them), a new one takes the next free ones.  Every rank maps in the
 * order of its launches, so ranks that launch the same kernels on the same
 * tensors (SPMD) agree.  0 on success. */
static int gin_map(TsWorld *w, const TsKernel *c, const TsTensor *a, unsigned base[IR_GIN_MAX_SIG]) {
    TsLocal *L = w->local;
    for (int k = 0; k < c->ir->gin_nsig; k++) {
        const TsTensor *t = &a[c->ir->gin_sig_param[k]];
        long long n = 1, esz = (ts_dtype_bits(t->dtype) + 7) / 8;
        for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
        long long off = (long long)((const char *)t->data - (const char *)L->nccl_heap), bytes = n * esz;
        const char *pname = c->ir->params.v[c->ir->gin_sig_param[k]].name;
        if (!t->data || off < 0 || off + bytes > w->opt.heap_bytes)
            return ts_world_fail(w->ctx, TS_ERR_INVALID, "%s: '%s', which ranks of other nodes add to, is not on the "
                                 "symmetric heap", c->ir->name, pname);
        int i = 0;
        for (; i < L->gin_nmaps; i++) {
            const LGinMap *g = &L->gin_maps[i];
            if (g->off == off && g->bytes == bytes) break;
            if (off < g->off + g->bytes && g->off < off + bytes)
                return ts_world_fail(w->ctx, TS_ERR_UNSUPPORTED,
                                     "%s: signal tensor '%s' (heap bytes %lld .. %lld) overlaps another one mapped onto "
                                     "GIN signals (bytes %lld .. %lld): signal tensors of kernels compiled for several "
                                     "nodes must be the same tensors or apart", c->ir->name, pname, off, off + bytes,
                                     g->off, g->off + g->bytes);
        }
        if (i == L->gin_nmaps) {
            if (n > (long long)L->gin_nsig - L->gin_next)
                return ts_world_fail(w->ctx, TS_ERR_UNSUPPORTED,
                                     "%s: signal tensor '%s' needs %lld GIN signals, and %d of the device communicator's "
                                     "%d are left (TILESCALE_GIN_SIGNALS sets how many)", c->ir->name, pname, n,
                                     L->gin_nsig - L->gin_next, L->gin_nsig);
            if (L->gin_nmaps == L->gin_capmaps) {
                int cap = L->gin_capmaps ? 2 * L->gin_capmaps : 8;
                LGinMap *m = realloc(L->gin_maps, (size_t)cap * sizeof *m);
                if (!m) return ts_world_fail(w->ctx, TS_ERR_NOMEM, "world: out of memory");
                L->gin_maps = m;
                L->gin_capmaps = cap;
            }
            L->gin_maps[L->gin_nmaps++] = (LGinMap){off, bytes, L->gin_next};
            L->gin_next += (int)n;
        }
        base[k] = (unsigned)L->gin_maps[i].base;
    }
    return 0;
}

/* Kernel c's module for GPU g: its own when the world is not spread, else
 * a copy loaded there (made once, kept until the world goes). */
static TsModuleCuda *module_on(TsWorld *w, TsKernel *c, int g, TsDiag *d) {
    TsLocal *L = w->local;
    if (!L->spread) return c->cumod;
    const TsModuleCuda *o = c->cumod;
    for (int i = 0; i < L->nclones; i++) {
        const LClone *x = &L->clones[i];
        /* the same image: a module freed and another made at its address is not reused */
        if (x->orig == o && x->gpu == g && x->m->image_size == o->image_size &&
            !memcmp(x->m->image, o->image, o->image_size))
            return x->m;
    }
    if (L->nclones == L->capclones) {
        int cap = L->capclones ? 2 * L->capclones : 8;
        LClone *nc = realloc(L->clones, (size_t)cap * sizeof *nc);
        if (!nc) return NULL;
        L->clones = nc;
        L->capclones = cap;
    }
    TsModuleCuda *m = ts_cuda_module_clone(o, g);
    if (!m) return NULL;
    if (ts_cuda_module_load(d, m, TS_ERR_RUNTIME, NULL) != TS_OK) {
        ts_cuda_module_free(m);
        return NULL;
    }
    L->clones[L->nclones++] = (LClone){o, g, m};
    return m;
}

TsStatus ts_local_launch(TsWorld *w, TsKernel *k, const TsTensor *args, int nargs) {
    TsLocal *L = w->local;
    TsContext *ctx = w->ctx;
    int n = w->opt.nranks;
    CUresult r = L->v.ctx_set(L->ctx);
    if (r != CU_OK) return ts_world_fail(ctx, TS_ERR_RUNTIME, "world (local): cuCtxSetCurrent failed: %s", ename(L, r));
    unsigned long long table[64] = {0};
    for (int i = 0; i < n && i < 64; i++) table[i] = (unsigned long long)(uintptr_t)w->base[i];
    long long heap = w->opt.heap_bytes, tmo = w->opt.wait_timeout_ms * 1000000LL, zero[6] = {0};
    int ipc = w->self >= 0, lo = ipc ? w->self : 0, hi = ipc ? w->self + 1 : n, ci = 0;
    int ngl = ipc ? 1 : L->ngpu; /* GPUs with modules to set up */
    for (TsKernel *c = k; c; c = c->next, ci++) {
        TsDiag d = {0};
        if (ts_cuda_module_load(&d, c->cumod, TS_ERR_RUNTIME, NULL) != TS_OK) {
            TsStatus st = ts_world_fail(ctx, d.status ? d.status : TS_ERR_RUNTIME, "world (local): %s",
                                        ts_buf_str(&d.msg));
            ts_buf_free(&d.msg);
            return st;
        }
        for (int g = 0; g < ngl; g++) {
            TsModuleCuda *m = module_on(w, c, g, &d);
            if (!m) {
                TsStatus st = ts_world_fail(ctx, d.status ? d.status : TS_ERR_NOMEM, "world (local): loading '%s' on GPU %d: %s",
                                            c->ir->name, g, d.msg.n ? ts_buf_str(&d.msg) : "out of memory");
                ts_buf_free(&d.msg);
                return st;
            }
            void *mod = m->module;
            r = L->v.ctx_set(L->gctx[ipc ? 0 : g]);
            if (r == CU_OK && set_global(L, mod, "ts_comm_peer", table, sizeof table, &r) && r == CU_OK) {
                set_global(L, mod, "ts_comm_heap", &heap, sizeof heap, &r);
                if (r == CU_OK) set_global(L, mod, "ts_comm_timeout_ns", &tmo, sizeof tmo, &r);
                if (r == CU_OK) set_global(L, mod, "ts_comm_abort", zero, sizeof(int), &r);
                if (r == CU_OK) set_global(L, mod, "ts_comm_err", zero, sizeof zero, &r);
                if (r == CU_OK) set_global(L, mod, "ts_comm_sync", zero, sizeof(long long), &r);
                /* ipc and spread worlds: the counter and the abort word every process and GPU
                 * sees, on rank 0's heap */
                unsigned long long at[2] = {0, 0};
                if (ipc || L->spread) {
                    at[0] = table[0] + 8ull * (unsigned long long)(ci % TS_WORLD_MAX_CHAIN);
                    at[1] = table[0] + TS_WORLD_ABORT_AT;
                }
                if (r == CU_OK) set_global(L, mod, "ts_comm_sync_at", &at[0], sizeof at[0], &r);
                if (r == CU_OK) set_global(L, mod, "ts_comm_abort_at", &at[1], sizeof at[1], &r);
                if (r == CU_OK && L->gin) { /* several nodes: GIN's communicator, the window, the nodes */
                    CUdeviceptr gp;
                    size_t gsize = 0;
                    int rpn = L->rpn;
                    if (L->v.global(&gp, &gsize, mod, "ts_gin_comm") != CU_OK || gsize > sizeof L->devcomm)
                        return ts_world_fail(ctx, TS_ERR_UNSUPPORTED,
                                             "%s: this world spans nodes (%d ranks per node), but the kernel was "
                                             "compiled for one: compile it for several nodes (multinode) so that its "
                                             "accesses to other nodes go through NCCL's GIN",
                                             c->ir->name, L->rpn);
                    r = L->v.h2d(gp, L->devcomm, gsize);
                    if (r == CU_OK) set_global(L, mod, "ts_gin_win", &L->win, sizeof L->win, &r);
                    if (r == CU_OK) set_global(L, mod, "ts_comm_rpn", &rpn, sizeof rpn, &r);
                    /* the signal tensors' GIN signals (ipc: this rank's arguments) */
                    unsigned base[IR_GIN_MAX_SIG] = {0}, nsig = (unsigned)L->gin_nsig;
                    if (c->ir->gin_nsig > 0 && gin_map(w, c, args + (size_t)lo * (size_t)nargs, base))
                        return ctx->diag.status;
                    if (r == CU_OK) set_global(L, mod, "ts_gin_sig", base, sizeof base, &r);
                    if (r == CU_OK) set_global(L, mod, "ts_gin_nsig", &nsig, sizeof nsig, &r);
                }
            }
            if (r != CU_OK)
                return ts_world_fail(ctx, TS_ERR_RUNTIME, "world (local): setting the heap table failed: %s", ename(L, r));
        }
        ts_buf_free(&d.msg);
        L->v.ctx_set(L->ctx);
        /* blocks that wait on each other must all be resident */
        int64_t grid[3];
        int threads;
        ts_kernel_grid(c, grid, &threads);
        /* (a cooperative kernel's grid workspace is each launch's own, cuda_drv.c:
         * ranks sharing a GPU need only all their blocks resident together) */
        if ((c->ir->may_block || c->ir->cooperative) && grid[0] > 0 && grid[1] > 0 && grid[2] > 0) {
            int per_sm = 0, sms = 0;
            if (L->v.occupancy(&per_sm, c->cumod->fn, threads, (size_t)c->cumod->info.smem_bytes) == CU_OK &&
                L->v.attr(&sms, CU_ATTR_SM_COUNT, L->dev) == CU_OK) {
                long long need = (long long)w->dev_share * grid[0] * grid[1] * grid[2], have = (long long)per_sm * sms;
                if (need > have)
                    return ts_world_fail(ctx, TS_ERR_UNSUPPORTED,
                                         "%s: %d ranks x %lld blocks = %lld blocks must be resident at once on %s "
                                         "(its blocks wait on each other), but it holds at most %lld "
                                         "(%d per SM x %d SMs at %d threads and %lld bytes of shared memory): "
                                         "use fewer ranks or blocks",
                                         c->ir->name, w->dev_share, (long long)(grid[0] * grid[1] * grid[2]), need,
                                         L->ngpu > 1 ? "each GPU" : "GPU 0", have, per_sm,
                                         sms, threads, (long long)c->cumod->info.smem_bytes);
            }
        }
    }
    /* spread: rank 0's reserved head (the barrier counters and the abort word) cleared */
    if (L->spread && (r = L->v.memset8((CUdeviceptr)table[0], 0, TS_WORLD_SYS_BYTES)) != CU_OK)
        return ts_world_fail(ctx, TS_ERR_RUNTIME, "world (local): clearing rank 0's barrier words: %s", ename(L, r));
    /* queue every rank's chain on its stream, then wait for all */
    TsStatus st = TS_OK;
    TsBuf msg = {0};
    for (int i = lo; i < hi && st == TS_OK; i++) {
        TsRankEnv env = {i, n, w->base, w->opt.heap_bytes, NULL, &w->sink, w->opt.wait_timeout_ms, 0, L->streams[i], NULL,
                         0, NULL, NULL, 0};
        TsDiag d = {0};
        for (TsKernel *c = k; c && st == TS_OK; c = c->next) {
            env.cumod = L->spread ? module_on(w, c, i % L->ngpu, &d) : NULL;
            st = ts_launch_env(c, args + (size_t)i * (size_t)nargs, nargs, &d, &env);
            if (st) ts_buf_printf(&msg, "rank %d: %s", i, ts_buf_str(&d.msg));
        }
        ts_buf_free(&d.msg);
    }
    for (int i = lo; i < hi; i++) {
        L->v.ctx_set(L->gctx[ipc ? 0 : i % L->ngpu]);
        CUresult rs = L->v.stream_sync(L->streams[i]);
        if (rs != CU_OK && st == TS_OK) {
            st = TS_ERR_RUNTIME;
            ts_buf_printf(&msg, "error: rank %d: the kernel failed on the GPU: %s\n", i, ename(L, rs));
        }
    }
    if (st == TS_OK)
        for (TsKernel *c = k; c && st == TS_OK; c = c->next)
            for (int g = 0; g < ngl && st == TS_OK; g++) {
                TsDiag d = {0};
                TsModuleCuda *m = module_on(w, c, g, &d);
                ts_buf_free(&d.msg);
                if (m && failure(w, c, m, &msg)) st = TS_ERR_RUNTIME;
            }
    L->v.ctx_set(L->ctx);
    ctx->diag.msg.n = 0;
    if (ctx->diag.msg.s) ctx->diag.msg.s[0] = 0;
    if (st) ts_buf_puts(&ctx->diag.msg, ts_buf_str(&msg));
    ctx->diag.status = st;
    ts_buf_free(&msg);
    return st;
}
