/* A fake libcuda.so.1 for the CPU tests of libsgcap: a handful of driver
 * entry points (legacy and _ptsz flavours, old and new ABIs) that record
 * which exported function was really called, a cuGetProcAddress that picks
 * by (version, flags) like the driver does, and enough stream-capture state
 * to give the shim's trace something to report. Not a driver. */
#define _GNU_SOURCE 1
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static _Thread_local char fake_last_name[64];
static atomic_int fake_counts[64];
static _Thread_local CUstreamCaptureMode fake_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
static atomic_int fake_query_mode = -1;
static atomic_int fake_reentered;

static const char *const fake_counted[] = {"cuLaunchKernel",
                                           "cuLaunchKernel_ptsz",
                                           "cuEventRecord",
                                           "cuEventRecord_ptsz",
                                           "cuStreamWaitEvent",
                                           "cuStreamGetCaptureInfo_v3",
                                           "cuMemAlloc",
                                           "cuMemAlloc_v2",
                                           "cuThreadExchangeStreamCaptureMode",
                                           NULL};

static void fake_hit(const char *name)
{
    /* The shim's own queries (trace) must not hide what the program called. */
    if (strcmp(name, "cuThreadExchangeStreamCaptureMode") != 0 &&
        strcmp(name, "cuStreamGetCaptureInfo_v3") != 0)
        strncpy(fake_last_name, name, sizeof fake_last_name - 1);
    for (int i = 0; fake_counted[i]; i++)
        if (strcmp(fake_counted[i], name) == 0) atomic_fetch_add(&fake_counts[i], 1);
}

EXPORT const char *fake_last(void)
{
    return fake_last_name;
}

EXPORT int fake_count(const char *name)
{
    for (int i = 0; fake_counted[i]; i++)
        if (strcmp(fake_counted[i], name) == 0) return atomic_load(&fake_counts[i]);
    return -1;
}

EXPORT int fake_query_mode_seen(void)
{
    return atomic_load(&fake_query_mode);
}

EXPORT int fake_reentered_count(void)
{
    return atomic_load(&fake_reentered);
}

/* ---- capture state: a few streams ---- */
struct fake_stream {
    CUstream s;
    int capturing;
    cuuint64_t id;
};
static struct fake_stream fake_streams[16];
static atomic_ulong fake_capture_ids;

static struct fake_stream *fake_find(CUstream s, int create)
{
    for (int i = 0; i < 16; i++)
        if (fake_streams[i].s == s) return &fake_streams[i];
    if (!create) return NULL;
    for (int i = 0; i < 16; i++)
        if (fake_streams[i].s == NULL) {
            fake_streams[i].s = s;
            return &fake_streams[i];
        }
    return NULL;
}

static CUstream canon(CUstream s, int ptsz)
{
    return s ? s : ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
}

static CUresult fake_begin(CUstream s)
{
    struct fake_stream *f = fake_find(s, 1);
    if (f == NULL || f->capturing) return CUDA_ERROR_ILLEGAL_STATE;
    f->capturing = 1;
    f->id = atomic_fetch_add(&fake_capture_ids, 1) + 1;
    return CUDA_SUCCESS;
}

static CUresult fake_end(CUstream s, CUgraph *g)
{
    struct fake_stream *f = fake_find(s, 0);
    if (f == NULL || !f->capturing) return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    f->capturing = 0;
    if (g) *g = (CUgraph)(uintptr_t)(0x6000 + f->id);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuInit(unsigned int flags)
{
    fake_hit("cuInit");
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
    fake_hit("cuDriverGetVersion");
    *v = 13000;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    fake_hit("cuDeviceGet");
    *d = ordinal;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                               unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
                               CUstream s, void **params, void **extra)
{
    fake_hit("cuLaunchKernel");
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                    unsigned int bx, unsigned int by, unsigned int bz,
                                    unsigned int smem, CUstream s, void **params, void **extra)
{
    fake_hit("cuLaunchKernel_ptsz");
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc(CUdeviceptr_v1 *p, unsigned int size)
{
    fake_hit("cuMemAlloc");
    *p = 0x1000;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size)
{
    fake_hit("cuMemAlloc_v2");
    *p = 0x7f0000001000ull;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
    fake_hit("cuStreamBeginCapture_v2");
    return fake_begin(canon(s, 0));
}

EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode)
{
    fake_hit("cuStreamBeginCapture_v2_ptsz");
    return fake_begin(canon(s, 1));
}

EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
    fake_hit("cuStreamEndCapture");
    return fake_end(canon(s, 0), g);
}

EXPORT CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *g)
{
    fake_hit("cuStreamEndCapture_ptsz");
    return fake_end(canon(s, 1), g);
}

EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
    fake_hit("cuEventRecord");
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord_ptsz(CUevent e, CUstream s)
{
    fake_hit("cuEventRecord_ptsz");
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
    fake_hit("cuStreamWaitEvent");
    struct fake_stream *f = fake_find(canon(s, 0), 0);
    (void)f;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    fake_hit("cuThreadExchangeStreamCaptureMode");
    CUstreamCaptureMode old = fake_mode;
    fake_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id,
                                          CUgraph *g, const CUgraphNode **deps,
                                          const CUgraphEdgeData **edges, size_t *n)
{
    fake_hit("cuStreamGetCaptureInfo_v3");
    atomic_store(&fake_query_mode, (int)fake_mode);
    if (getenv("FAKE_REENTER") != NULL) {
        /* What a driver calling back into an exported entry point looks like:
         * the global lookup finds libsgcap's wrapper. */
        CUresult (*rec)(CUevent, CUstream) =
            (CUresult(*)(CUevent, CUstream))dlsym(RTLD_DEFAULT, "cuEventRecord");
        if (rec != NULL && rec != cuEventRecord) {
            rec((CUevent)0x99, s);
            atomic_fetch_add(&fake_reentered, 1);
        }
    }
    struct fake_stream *f = fake_find(canon(s, 0), 0);
    *st = f && f->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    if (id) *id = f && f->capturing ? f->id : 0;
    return CUDA_SUCCESS;
}

/* Not exported: what a driver might hand out for an internal entry point. */
static CUresult fake_internal(void)
{
    fake_hit("fake_internal");
    return CUDA_SUCCESS;
}

EXPORT void *fake_self_addr(const char *name)
{
    if (strcmp(name, "cuDeviceGet") == 0) return (void *)cuDeviceGet;
    if (strcmp(name, "internal") == 0) return (void *)fake_internal;
    return NULL;
}

struct fake_map {
    const char *symbol;
    int version;
    int per_thread;
    void *fn;
};

CUresult cuGetProcAddress_v2(const char *, void **, int, cuuint64_t,
                             CUdriverProcAddressQueryResult *);
CUresult cuGetProcAddress(const char *, void **, int, cuuint64_t);

static const struct fake_map fake_maps[] = {
    {"cuInit", 2000, 0, (void *)cuInit},
    {"cuDriverGetVersion", 2020, 0, (void *)cuDriverGetVersion},
    {"cuDeviceGet", 2000, 0, (void *)cuDeviceGet},
    {"cuLaunchKernel", 4000, 0, (void *)cuLaunchKernel},
    {"cuLaunchKernel", 7000, 1, (void *)cuLaunchKernel_ptsz},
    {"cuMemAlloc", 2000, 0, (void *)cuMemAlloc},
    {"cuMemAlloc", 3020, 0, (void *)cuMemAlloc_v2},
    {"cuStreamBeginCapture", 10010, 0, (void *)cuStreamBeginCapture_v2},
    {"cuStreamBeginCapture", 10010, 1, (void *)cuStreamBeginCapture_v2_ptsz},
    {"cuStreamEndCapture", 10000, 0, (void *)cuStreamEndCapture},
    {"cuStreamEndCapture", 10000, 1, (void *)cuStreamEndCapture_ptsz},
    {"cuEventRecord", 2000, 0, (void *)cuEventRecord},
    {"cuEventRecord", 7000, 1, (void *)cuEventRecord_ptsz},
    {"cuStreamWaitEvent", 3020, 0, (void *)cuStreamWaitEvent},
    {"cuThreadExchangeStreamCaptureMode", 10010, 0, (void *)cuThreadExchangeStreamCaptureMode},
    {"cuStreamGetCaptureInfo", 12030, 0, (void *)cuStreamGetCaptureInfo_v3},
    {"cuGetProcAddress", 11030, 0, (void *)cuGetProcAddress},
    {"cuGetProcAddress", 12000, 0, (void *)cuGetProcAddress_v2},
    {"cuInternalThing", 2000, 0, (void *)fake_internal},
};

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *status)
{
    fake_hit("cuGetProcAddress_v2");
    int want_pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    const struct fake_map *best = NULL;
    for (size_t i = 0; i < sizeof fake_maps / sizeof fake_maps[0]; i++) {
        const struct fake_map *m = &fake_maps[i];
        if (strcmp(m->symbol, symbol) != 0 || m->version > version) continue;
        if (m->per_thread && !want_pt) continue;
        if (best == NULL || m->version > best->version ||
            (m->version == best->version && m->per_thread))
            best = m;
    }
    *pfn = best ? best->fn : NULL;
    if (status) *status = best ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    fake_hit("cuGetProcAddress");
    return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
