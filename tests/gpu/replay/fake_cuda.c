/* fake_cuda.c: a pretend libcuda.so.1 for running `sgcap replay` in CPU CI.
 *
 * It exports only cuGetProcAddress_v2 (all replay asks for) and answers
 * with host-memory versions of the calls replay makes: address reservations
 * are mmap'ed ranges (at the hint when it is free, like the driver), mapped
 * memory is host memory, a graph is its nodes in the order they were added
 * (replay adds them in a topological order) and a launch runs them on the
 * CPU, kernels through tests/gpu/replay/emulate.h. Events read the clock.
 * What it cannot do (conditional nodes, child graphs) fails cleanly.
 * Nothing here is a model of CUDA's semantics beyond what these tests need.
 */
#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "emulate.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#define GRANULE (2u << 20)

typedef struct {
    CUgraphNodeType type;
    const emu_kernel_t *kernel;
    uint8_t args[64];
    CUDA_MEMSET_NODE_PARAMS_v2 memset;
    CUDA_MEMCPY3D memcpy;
    void *allocation; /* mem_alloc: what the graph owns */
} fnode_t;

struct CUgraph_st {
    fnode_t *nodes;
    size_t n, cap;
};

struct CUgraphExec_st {
    struct CUgraph_st *g;
};

struct CUevent_st {
    double ms;
};

/* FAKE_CUDA_OCCUPY=ADDR:SIZE: at cuInit, take address space there the way a
 * driver takes some for itself (the address is a hint: elsewhere when it is
 * not free), so tests can see whether replay kept the range free. */
static CUresult f_cuInit(unsigned int flags)
{
    const char *occ = getenv("FAKE_CUDA_OCCUPY");
    if (occ) {
        char *end = NULL;
        unsigned long long addr = strtoull(occ, &end, 0), size = 0;
        if (end && *end == ':') size = strtoull(end + 1, NULL, 0);
        if (addr && size)
            mmap((void *)(uintptr_t)addr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    return CUDA_SUCCESS;
}
static CUresult f_cuDriverGetVersion(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}
static CUresult f_cuDeviceGetCount(int *n)
{
    *n = 1;
    return CUDA_SUCCESS;
}
static CUresult f_cuDeviceGet(CUdevice *d, int ordinal)
{
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}
static CUresult f_cuDeviceGetName(char *name, int len, CUdevice d)
{
    snprintf(name, (size_t)len, "%s", "sgcap fake GPU");
    return CUDA_SUCCESS;
}
static CUresult f_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *v = 9;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *v = 0;
        break;
    default:
        *v = 1;
        break;
    }
    return CUDA_SUCCESS;
}
static CUresult f_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    *c = (CUcontext)(uintptr_t)0x1000;
    return CUDA_SUCCESS;
}
static CUresult f_cuDevicePrimaryCtxRelease(CUdevice d)
{
    return CUDA_SUCCESS;
}
static CUresult f_cuCtxSetCurrent(CUcontext c)
{
    return CUDA_SUCCESS;
}
static CUresult f_cuGetErrorName(CUresult e, const char **s)
{
    static char buf[32];
    snprintf(buf, sizeof buf, "FAKE_ERROR_%d", (int)e);
    *s = buf;
    return CUDA_SUCCESS;
}
static CUresult f_cuGetErrorString(CUresult e, const char **s)
{
    *s = "an error of the fake driver";
    return CUDA_SUCCESS;
}

/* ---- memory ------------------------------------------------------------------------ */

static CUresult f_cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *p,
                                                CUmemAllocationGranularity_flags f)
{
    *g = GRANULE;
    return CUDA_SUCCESS;
}
static CUresult f_cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr,
                                      unsigned long long flags)
{
    void *p = MAP_FAILED;
    if (addr)
        p = mmap((void *)(uintptr_t)addr, size, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED || (addr && p != (void *)(uintptr_t)addr)) {
        if (p != MAP_FAILED) munmap(p, size);
        /* anywhere, aligned as asked: reserve more, trim both ends */
        size_t a = align ? align : GRANULE;
        uint8_t *q =
            mmap(NULL, size + a, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (q == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
        uint8_t *start = (uint8_t *)(((uintptr_t)q + a - 1) & ~(uintptr_t)(a - 1));
        if (start > q) munmap(q, (size_t)(start - q));
        if (start + size < q + size + a)
            munmap(start + size, (size_t)(q + size + a - (start + size)));
        p = start;
    }
    *ptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}
static CUresult f_cuMemAddressFree(CUdeviceptr p, size_t size)
{
    return munmap((void *)(uintptr_t)p, size) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
static CUresult f_cuMemCreate(CUmemGenericAllocationHandle *h, size_t size,
                              const CUmemAllocationProp *p, unsigned long long flags)
{
    if (size % GRANULE) return CUDA_ERROR_INVALID_VALUE;
    *h = (CUmemGenericAllocationHandle)size;
    return CUDA_SUCCESS;
}
static CUresult f_cuMemRelease(CUmemGenericAllocationHandle h)
{
    return CUDA_SUCCESS;
}
static CUresult f_cuMemMap(CUdeviceptr p, size_t size, size_t off, CUmemGenericAllocationHandle h,
                           unsigned long long flags)
{
    if ((p % GRANULE) || size != (size_t)h) return CUDA_ERROR_INVALID_VALUE;
    return mprotect((void *)(uintptr_t)p, size, PROT_READ | PROT_WRITE) ? CUDA_ERROR_INVALID_VALUE
                                                                        : CUDA_SUCCESS;
}
static CUresult f_cuMemUnmap(CUdeviceptr p, size_t size)
{
    return mprotect((void *)(uintptr_t)p, size, PROT_NONE) ? CUDA_ERROR_INVALID_VALUE
                                                           : CUDA_SUCCESS;
}
static CUresult f_cuMemSetAccess(CUdeviceptr p, size_t size, const CUmemAccessDesc *d, size_t n)
{
    return CUDA_SUCCESS;
}
static CUresult f_cuMemHostRegister(void *p, size_t size, unsigned int flags)
{
    return CUDA_SUCCESS;
}
static CUresult f_cuMemHostUnregister(void *p)
{
    return CUDA_SUCCESS;
}
static CUresult f_cuMemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned int flags)
{
    *d = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}
/* FAKE_CUDA_LAZY_HTOD=1: cuMemcpyHtoD behaves as the real one from pageable
 * memory may: it returns with the source taken (copied aside) but the bytes
 * land only when the legacy stream is next waited for (a NULL-stream or
 * context synchronize, or the next synchronous copy); a graph launched on
 * another stream does not wait for them. Tests see whether replay orders
 * its restores before its launch. */
typedef struct {
    CUdeviceptr dst;
    void *bytes;
    size_t n;
} lazy_copy_t;
static lazy_copy_t lazy[256];
static size_t n_lazy;
static void lazy_flush(void)
{
    for (size_t i = 0; i < n_lazy; i++) {
        memcpy((void *)(uintptr_t)lazy[i].dst, lazy[i].bytes, lazy[i].n);
        free(lazy[i].bytes);
    }
    n_lazy = 0;
}
static CUresult f_cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n)
{
    const char *lz = getenv("FAKE_CUDA_LAZY_HTOD");
    if (lz && *lz == '1' && n_lazy < sizeof lazy / sizeof lazy[0]) {
        void *copy = malloc(n ? n : 1);
        if (!copy) return CUDA_ERROR_OUT_OF_MEMORY;
        memcpy(copy, s, n);
        lazy[n_lazy++] = (lazy_copy_t){d, copy, n};
        return CUDA_SUCCESS;
    }
    lazy_flush();
    memcpy((void *)(uintptr_t)d, s, n);
    return CUDA_SUCCESS;
}
static CUresult f_cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n)
{
    lazy_flush(); /* the legacy stream: after the copies before it */
    memcpy(d, (const void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}
static CUresult f_cuMemsetD8(CUdeviceptr d, unsigned char v, size_t n)
{
    memset((void *)(uintptr_t)d, v, n);
    return CUDA_SUCCESS;
}
static CUresult f_cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    return CUDA_SUCCESS; /* graph allocations are freed with their graph here */
}

/* ---- code ----------------------------------------------------------------------------- */

static CUresult f_cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv,
                                    unsigned int nj, CUlibraryOption *lo, void **lv,
                                    unsigned int nl)
{
    *lib = (CUlibrary)(uintptr_t)0x2000;
    return CUDA_SUCCESS;
}
static CUresult f_cuLibraryUnload(CUlibrary lib)
{
    return CUDA_SUCCESS;
}
static CUresult f_cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
    const emu_kernel_t *e = emu_find(name);
    if (!e) return CUDA_ERROR_NOT_FOUND;
    *k = (CUkernel)(uintptr_t)e;
    return CUDA_SUCCESS;
}
static CUresult f_cuKernelGetFunction(CUfunction *f, CUkernel k)
{
    *f = (CUfunction)(uintptr_t)k;
    return CUDA_SUCCESS;
}
static CUresult f_cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size)
{
    const emu_kernel_t *e = (const emu_kernel_t *)(uintptr_t)f;
    if (i >= e->n_params) return CUDA_ERROR_INVALID_VALUE;
    *off = e->offsets[i];
    *size = e->sizes[i];
    return CUDA_SUCCESS;
}
static CUresult f_cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
    return CUDA_SUCCESS;
}

/* ---- graphs -------------------------------------------------------------------------- */

static CUresult f_cuGraphCreate(CUgraph *g, unsigned int flags)
{
    *g = calloc(1, sizeof **g);
    return *g ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult f_cuGraphDestroy(CUgraph g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->nodes[i].allocation);
    free(g->nodes);
    free(g);
    return CUDA_SUCCESS;
}
static CUresult f_cuGraphAddNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                 const CUgraphEdgeData *data, size_t n, CUgraphNodeParams *p)
{
    for (size_t i = 0; i < n; i++)
        if (!deps[i] || (uintptr_t)deps[i] > g->n) return CUDA_ERROR_INVALID_VALUE;
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 16;
        fnode_t *x = realloc(g->nodes, cap * sizeof *x);
        if (!x) return CUDA_ERROR_OUT_OF_MEMORY;
        g->nodes = x;
        g->cap = cap;
    }
    fnode_t *f = &g->nodes[g->n];
    memset(f, 0, sizeof *f);
    f->type = p->type;
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
        const emu_kernel_t *e = (const emu_kernel_t *)(uintptr_t)p->kernel.func;
        f->kernel = e;
        if (p->kernel.kernelParams) {
            for (uint32_t i = 0; i < e->n_params; i++)
                memcpy(f->args + e->offsets[i], p->kernel.kernelParams[i], e->sizes[i]);
        } else if (p->kernel.extra) {
            memcpy(f->args, p->kernel.extra[1], *(size_t *)p->kernel.extra[3]);
        }
        break;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET:
        f->memset = p->memset;
        break;
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        f->memcpy = p->memcpy.copyParams;
        break;
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
        /* a fresh address, as the driver picks one for the graph */
        void *m = aligned_alloc(256, (p->alloc.bytesize + 255) & ~(size_t)255);
        if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
        p->alloc.dptr = (CUdeviceptr)(uintptr_t)m;
        f->allocation = m;
        break;
    }
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
    case CU_GRAPH_NODE_TYPE_EMPTY:
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        break;
    default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    g->n++;
    *out = (CUgraphNode)(uintptr_t)g->n; /* 1-based index */
    return CUDA_SUCCESS;
}
static CUresult f_cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
    *e = calloc(1, sizeof **e);
    if (!*e) return CUDA_ERROR_OUT_OF_MEMORY;
    (*e)->g = g;
    return CUDA_SUCCESS;
}
static CUresult f_cuGraphExecDestroy(CUgraphExec e)
{
    free(e);
    return CUDA_SUCCESS;
}
static CUresult f_cuGraphLaunch(CUgraphExec e, CUstream s)
{
    for (size_t i = 0; i < e->g->n; i++) {
        fnode_t *f = &e->g->nodes[i];
        if (f->type == CU_GRAPH_NODE_TYPE_KERNEL) {
            f->kernel->run(f->args);
        } else if (f->type == CU_GRAPH_NODE_TYPE_MEMSET) {
            const CUDA_MEMSET_NODE_PARAMS_v2 *m = &f->memset;
            for (size_t r = 0; r < m->height; r++) {
                uint8_t *row = (uint8_t *)(uintptr_t)(m->dst + r * m->pitch);
                for (size_t x = 0; x < m->width; x++)
                    memcpy(row + x * m->elementSize, &m->value, m->elementSize);
            }
        } else if (f->type == CU_GRAPH_NODE_TYPE_MEMCPY) {
            const CUDA_MEMCPY3D *m = &f->memcpy;
            uintptr_t dst = m->dstMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)m->dstHost
                                                                    : (uintptr_t)m->dstDevice;
            uintptr_t src = m->srcMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)m->srcHost
                                                                    : (uintptr_t)m->srcDevice;
            for (size_t z = 0; z < m->Depth; z++)
                for (size_t y = 0; y < m->Height; y++)
                    memmove((void *)(dst + (z * m->dstHeight + y) * m->dstPitch),
                            (const void *)(src + (z * m->srcHeight + y) * m->srcPitch),
                            m->WidthInBytes);
        }
    }
    return CUDA_SUCCESS;
}
static CUresult f_cuGraphUpload(CUgraphExec e, CUstream s)
{
    return CUDA_SUCCESS;
}
static CUresult f_cuGraphConditionalHandleCreate(CUgraphConditionalHandle *h, CUgraph g,
                                                 CUcontext c, unsigned int v, unsigned int flags)
{
    return CUDA_ERROR_NOT_SUPPORTED;
}
static CUresult f_cuGraphKernelNodeSetAttribute(CUgraphNode n, CUkernelNodeAttrID a,
                                                const CUkernelNodeAttrValue *v)
{
    return CUDA_SUCCESS;
}

/* ---- streams and events --------------------------------------------------------------- */

static CUresult f_cuStreamCreate(CUstream *s, unsigned int flags)
{
    *s = (CUstream)(uintptr_t)0x3000;
    return CUDA_SUCCESS;
}
static CUresult f_cuStreamDestroy(CUstream s)
{
    return CUDA_SUCCESS;
}
static CUresult f_cuStreamSynchronize(CUstream s)
{
    if (!s) lazy_flush(); /* the legacy stream */
    return CUDA_SUCCESS;
}
static CUresult f_cuEventCreate(CUevent *e, unsigned int flags)
{
    *e = calloc(1, sizeof **e);
    return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult f_cuEventDestroy(CUevent e)
{
    free(e);
    return CUDA_SUCCESS;
}
static CUresult f_cuEventRecord(CUevent e, CUstream s)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    e->ms = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
    return CUDA_SUCCESS;
}
static CUresult f_cuEventSynchronize(CUevent e)
{
    return CUDA_SUCCESS;
}
static CUresult f_cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
    *ms = (float)(b->ms - a->ms);
    return CUDA_SUCCESS;
}

/* ---- the one export ---------------------------------------------------------------------- */

// clang-format off
#define FAKE(name) {#name, (void *)f_##name},
static const struct {
    const char *name;
    void *fn;
} table[] = {
    FAKE(cuInit)
    FAKE(cuDriverGetVersion)
    FAKE(cuDeviceGetCount)
    FAKE(cuDeviceGet)
    FAKE(cuDeviceGetName)
    FAKE(cuDeviceGetAttribute)
    FAKE(cuDevicePrimaryCtxRetain)
    FAKE(cuDevicePrimaryCtxRelease)
    FAKE(cuCtxSetCurrent)
    FAKE(cuGetErrorName)
    FAKE(cuGetErrorString)
    FAKE(cuMemGetAllocationGranularity)
    FAKE(cuMemAddressReserve)
    FAKE(cuMemAddressFree)
    FAKE(cuMemCreate)
    FAKE(cuMemRelease)
    FAKE(cuMemMap)
    FAKE(cuMemUnmap)
    FAKE(cuMemSetAccess)
    FAKE(cuMemHostRegister)
    FAKE(cuMemHostUnregister)
    FAKE(cuMemHostGetDevicePointer)
    FAKE(cuMemcpyHtoD)
    FAKE(cuMemcpyDtoH)
    FAKE(cuMemsetD8)
    FAKE(cuMemFreeAsync)
    FAKE(cuLibraryLoadData)
    FAKE(cuLibraryUnload)
    FAKE(cuLibraryGetKernel)
    FAKE(cuKernelGetFunction)
    FAKE(cuFuncGetParamInfo)
    FAKE(cuFuncSetAttribute)
    FAKE(cuGraphCreate)
    FAKE(cuGraphDestroy)
    FAKE(cuGraphAddNode)
    FAKE(cuGraphInstantiateWithFlags)
    FAKE(cuGraphExecDestroy)
    FAKE(cuGraphLaunch)
    FAKE(cuGraphUpload)
    FAKE(cuGraphConditionalHandleCreate)
    FAKE(cuGraphKernelNodeSetAttribute)
    FAKE(cuStreamCreate)
    FAKE(cuStreamDestroy)
    FAKE(cuStreamSynchronize)
    FAKE(cuEventCreate)
    FAKE(cuEventDestroy)
    FAKE(cuEventRecord)
    FAKE(cuEventSynchronize)
    FAKE(cuEventElapsedTime)
};
// clang-format on

__attribute__((visibility("default"))) CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                    CUdriverProcAddressQueryResult *status)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(table[i].name, symbol) != 0) continue;
        *pfn = table[i].fn;
        if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
        return CUDA_SUCCESS;
    }
    *pfn = NULL;
    if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
}
