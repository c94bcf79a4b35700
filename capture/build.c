/* build.c: a real CUgraph -> model graph: structure and streams through
 * assemble.c with the graph's capture record, then every node's payload
 * read back from the driver (kernel identity, parameter layout and bytes,
 * geometry and attributes; copies, sets, host calls, external events,
 * graph memory; child and conditional bodies recursively), buffers from the
 * device memory map for every pointer-sized parameter word and every copy
 * or set, and the code image of every kernel.
 *
 * Runs under the hot lock (the record and the memory map must not change
 * under it), in relaxed capture mode. */
#include "shim.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assemble.h"
#include "graph/bundle.h"
#include "graph/views.h"
#include "arena.h"
#include "extents.h"
#include "graph/plural.h"

#define ADDRESS_RANGE_BUDGET 64 /* cuMemGetAddressRange lookups per graph */

typedef struct bufmap {
    uint64_t range; /* memmap range id (graph allocations: their own map's ids) */
    uint32_t buffer;
    UT_hash_handle hh;
} bufmap_t;

/* A range of pageable host memory some copy of this graph reads or writes. */
typedef struct {
    uint64_t start, end;
    uint32_t buffer;
} host_range_t;

typedef struct {
    sg_graph_t *root;
    bufmap_t *bufs;
    host_range_t *host; /* pageable host buffers, by start */
    uint32_t n_host, cap_host;
    sg_memmap_t graph_allocs; /* this graph's mem_alloc nodes */
    bufmap_t *alloc_bufs;
    const sg_override_t *ov; /* in-place changes of the exec being recorded */
    bool want_root_nodes;    /* fill root_nodes: */
    uint64_t *root_nodes;    /* the CUgraphNode of each root node, by model id */
    uint32_t n_root_nodes;
    uint32_t range_budget;
    uint32_t unreadable; /* nodes whose payload could not be read */
    int oom;
} bctx_t;

/* ---- buffers and accesses ----------------------------------------------------------------- */

static uint32_t buffer_of_range(bctx_t *b, bufmap_t **map, const sg_memrange_t *r)
{
    bufmap_t *m = NULL;
    HASH_FIND(hh, *map, &r->id, sizeof r->id, m);
    if (m) return m->buffer;
    uint32_t idx;
    if (sg_graph_add_buffer(b->root, r->kind, r->start, r->size, &idx)) return SG_NONE;
    m = calloc(1, sizeof *m);
    if (!m) return idx;
    m->range = r->id;
    m->buffer = idx;
    HASH_ADD(hh, *map, range, sizeof m->range, m);
    return idx;
}

/* Buffer holding addr and the offset of addr in it, or SG_NONE. */
static uint32_t find_buffer(bctx_t *b, uint64_t addr, uint64_t *offset, uint64_t *size,
                            bool allow_lookup)
{
    if (addr < 4096) return SG_NONE;
    const sg_memrange_t *r = sg_memmap_find(&b->graph_allocs, addr);
    bufmap_t **map = &b->alloc_bufs;
    if (!r) {
        r = sg_memmap_find(&sg_shim.mem, addr);
        map = &b->bufs;
    }
    if (!r && allow_lookup && b->range_budget > 0) {
        /* Memory we did not see allocated (before the shim, or by a path we
         * do not hook): ask the driver, a few times per graph. */
        b->range_budget--;
        CUdeviceptr base = 0;
        size_t len = 0;
        CUresult res = CUDA_ERROR_NOT_FOUND;
        __typeof__(&cuMemGetAddressRange_v2) get = SG_REAL(cuMemGetAddressRange_v2);
        if (get) res = get(&base, &len, (CUdeviceptr)addr); /* relaxed: see sg_shim_build */
        if (res == CUDA_SUCCESS && len > 0 &&
            sg_memmap_add(&sg_shim.mem, base, len, SG_BUFFER_UNKNOWN, 0, false, NULL) == SG_OK)
            r = sg_memmap_find(&sg_shim.mem, addr);
    }
    if (!r) return SG_NONE;
    uint32_t idx = buffer_of_range(b, map, r);
    if (idx == SG_NONE) return SG_NONE;
    *offset = addr - r->start;
    *size = r->size - *offset;
    return idx;
}

static bool access_at(bctx_t *b, sg_graph_t *g, sg_node_id_t id, uint64_t addr, uint64_t bytes,
                      sg_access_mode_t mode, bool allow_lookup)
{
    uint64_t off = 0, rest = 0;
    uint32_t buf = find_buffer(b, addr, &off, &rest, allow_lookup);
    if (buf == SG_NONE) return false;
    if (bytes == 0 || bytes > rest) bytes = rest;
    sg_node_t *n = sg_graph_node(g, id);
    for (uint32_t i = 0; i < n->n_accesses; i++) { /* one entry per (buffer, offset) */
        sg_access_t *a = &n->accesses[i];
        if (a->buffer == buf && a->offset == off) {
            if (bytes > a->size) a->size = bytes;
            a->mode |= mode;
            return true;
        }
    }
    sg_node_add_access(g, id, buf, off, bytes, mode);
    return true;
}

/* A unified address the memory map does not know: plain host memory when
 * the driver says it is no CUDA memory at all (a copy with
 * cudaMemcpyDefault from a stack variable). */
static bool pageable_host(uint64_t addr)
{
    __typeof__(&cuPointerGetAttribute) get = SG_REAL(cuPointerGetAttribute);
    if (!get) return false;
    CUmemorytype t = 0;
    return get(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)addr) == CUDA_ERROR_INVALID_VALUE;
}

/* The host side of a copy. Pinned memory is in the memory map; anything
 * else is pageable memory of the program (a variable on its stack, a heap
 * block), recorded as exactly the bytes copied: one buffer per range, grown
 * when a later copy of the graph reaches past its end. */
static void host_access(bctx_t *b, sg_graph_t *g, sg_node_id_t id, uint64_t addr, uint64_t len,
                        sg_access_mode_t mode)
{
    uint64_t off = 0, rest = 0;
    if (!addr || !len || addr + len < addr) return;
    if (find_buffer(b, addr, &off, &rest, false) != SG_NONE) {
        access_at(b, g, id, addr, len, mode, false);
        return;
    }
    for (uint32_t i = 0; i < b->n_host; i++) {
        host_range_t *h = &b->host[i];
        if (addr < h->start || addr > h->end) continue;
        if (addr + len > h->end) {
            h->end = addr + len;
            sg_graph_buffer(b->root, h->buffer)->size = h->end - h->start;
        }
        sg_node_add_access(g, id, h->buffer, addr - h->start, len, mode);
        return;
    }
    uint32_t idx;
    if (sg_graph_add_buffer(b->root, SG_BUFFER_HOST_PAGEABLE, addr, len, &idx)) return;
    if (sg_array_grow((void **)&b->host, &b->cap_host, b->n_host + 1, sizeof *b->host) == SG_OK)
        b->host[b->n_host++] = (host_range_t){addr, addr + len, idx};
    sg_node_add_access(g, id, idx, 0, len, mode);
}

/* Bytes a 3-D copy or set spans from its first byte. */
static uint64_t extent(uint64_t width, uint64_t height, uint64_t depth, uint64_t pitch,
                       uint64_t slice_height)
{
    if (height <= 1 && depth <= 1) return width;
    if (pitch == 0) pitch = width;
    if (slice_height == 0) slice_height = height;
    uint64_t d = depth ? depth - 1 : 0, h = height ? height - 1 : 0;
    return d * pitch * slice_height + h * pitch + width;
}

/* ---- node payloads -----------------------------------------------------------------------------
 */

static sg_node_type_t model_type(CUgraphNodeType t)
{
    switch (t) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        return SG_NODE_KERNEL;
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        return SG_NODE_MEMCPY;
    case CU_GRAPH_NODE_TYPE_MEMSET:
        return SG_NODE_MEMSET;
    case CU_GRAPH_NODE_TYPE_HOST:
        return SG_NODE_HOST;
    case CU_GRAPH_NODE_TYPE_GRAPH:
        return SG_NODE_CHILD_GRAPH;
    case CU_GRAPH_NODE_TYPE_EMPTY:
        return SG_NODE_EMPTY;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        return SG_NODE_EVENT_WAIT;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        return SG_NODE_EVENT_RECORD;
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
        return SG_NODE_MEM_ALLOC;
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
        return SG_NODE_MEM_FREE;
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
        return SG_NODE_CONDITIONAL;
    default:
        return SG_NODE_OPAQUE;
    }
}

static const char *cuda_type_name(CUgraphNodeType t)
{
    switch (t) {
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
        return "external semaphore signal";
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT:
        return "external semaphore wait";
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
        return "batch memory operation";
    default:
        return "unknown node type";
    }
}

static void unreadable(bctx_t *b, sg_graph_t *g, sg_node_id_t id, const char *what, CUresult r)
{
    char note[160];
    snprintf(note, sizeof note, "%s unreadable (CUDA error %d)", what, (int)r);
    sg_node_set_label(g, id, note);
    b->unreadable++;
}

typedef CUresult (*param_info_fn)(void *f, size_t i, size_t *off, size_t *size);

static void fill_kernel(bctx_t *b, sg_graph_t *g, sg_node_id_t id, CUgraphNode h)
{
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    memset(&p, 0, sizeof p);
    CUresult r;
    const sg_override_t *ovr =
        sg_execs_override(b->ov, (uint64_t)(uintptr_t)h, CU_GRAPH_NODE_TYPE_KERNEL);
    if (ovr) {
        p = *sg_override_kernel(ovr); /* the exec was changed in place: what it runs now */
        r = CUDA_SUCCESS;
    } else {
        __typeof__(&cuGraphKernelNodeGetParams_v2) get = SG_REAL(cuGraphKernelNodeGetParams_v2);
        r = get ? get(h, &p) : CUDA_ERROR_NOT_FOUND;
    }
    if (r != CUDA_SUCCESS) {
        unreadable(b, g, id, "kernel parameters", r);
        sg_node_set_kernel_name(g, id, "");
        return;
    }
    /* A kernel may come as a CUfunction, a CUkernel (func == NULL), or a
     * CUkernel cast to CUfunction (context-independent launches); kinfo
     * knows which, and everything else the driver says about it. */
    CUfunction func = p.func;
    CUkernel kern = p.kern;
    const sg_kinfo_t *ki = sg_kinfo_get(func, kern);
    if (func && ki->kernel_api) kern = (CUkernel)func;
    const char *name = ki->name;
    sg_node_set_kernel_name(g, id, name ? name : "");

    const uint32_t *offs = ki->offs, *sizes = ki->sizes;
    uint32_t n_params = ki->n_params, total = ki->total;
    uint8_t *bytes = calloc(1, total ? total : 1);
    bool has_extra = false;
    if (bytes && p.kernelParams) {
        for (uint32_t i = 0; i < n_params; i++)
            if (p.kernelParams[i]) memcpy(bytes + offs[i], p.kernelParams[i], sizes[i]);
    } else if (bytes && p.extra) {
        has_extra = true;
        void *buf = NULL;
        size_t len = 0;
        for (int i = 0; i < 64 && p.extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (p.extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buf = p.extra[i + 1];
            if (p.extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && p.extra[i + 1])
                len = *(size_t *)p.extra[i + 1];
        }
        if (buf && len) {
            if (n_params == 0 && len <= SG_BUNDLE_MAX_PARAM_BYTES) {
                free(bytes);
                bytes = malloc(len);
                total = bytes ? (uint32_t)len : 0;
            }
            if (bytes) memcpy(bytes, buf, len < total ? len : total);
        }
    }
    if (bytes) sg_node_set_kernel_params(g, id, n_params, offs, sizes, bytes, total);

    sg_node_t *n = sg_graph_node(g, id);
    sg_kernel_t *k = &n->u.kernel;
    k->grid[0] = p.gridDimX, k->grid[1] = p.gridDimY, k->grid[2] = p.gridDimZ;
    k->block[0] = p.blockDimX, k->block[1] = p.blockDimY, k->block[2] = p.blockDimZ;
    k->shared_bytes = p.sharedMemBytes;
    k->has_extra = has_extra;
    k->func_handle = (uint64_t)(uintptr_t)(func ? (void *)func : (void *)kern);
    __typeof__(&cuGraphKernelNodeGetAttribute) attr = SG_REAL(cuGraphKernelNodeGetAttribute);
    if (attr) {
        CUkernelNodeAttrValue v;
        memset(&v, 0, sizeof v);
        if (attr(h, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v) == CUDA_SUCCESS) k->priority = v.priority;
        memset(&v, 0, sizeof v);
        if (attr(h, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v) == CUDA_SUCCESS)
            k->cooperative = v.cooperative != 0;
        memset(&v, 0, sizeof v);
        if (attr(h, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v) == CUDA_SUCCESS &&
            v.clusterDim.x * v.clusterDim.y * v.clusterDim.z > 1) {
            k->cluster[0] = v.clusterDim.x;
            k->cluster[1] = v.clusterDim.y;
            k->cluster[2] = v.clusterDim.z;
        }
    }
    char why[160] = "";
    uint32_t image = sg_code_image_for_kernel(b->root, func, kern, name, why, sizeof why);
    n = sg_graph_node(g, id);
    n->u.kernel.image = image;
    if (image == SG_NONE && why[0]) sg_node_set_label(g, id, why);

    /* Every pointer-sized, pointer-aligned word of the arguments that lands
     * in a known allocation: the kernel may touch that buffer from there on.
     * (A heuristic: integers can alias pointers, and pointers stored in
     * device memory are invisible here.) */
    if (bytes) {
        /* A pointer-to-const parameter (from the mangled signature) is read
         * through, unless the kernel casts const away: record a read. */
        const bool *ro = ki->ro;
        for (uint32_t i = 0; i < n_params; i++) {
            sg_access_mode_t mode = ro && ro[i] && sizes[i] == 8 ? SG_ACCESS_READ
                                                                 : SG_ACCESS_UNKNOWN;
            for (uint32_t o = offs[i]; o + 8 <= offs[i] + sizes[i]; o += 8) {
                if (o % 8) continue;
                uint64_t word;
                memcpy(&word, bytes + o, 8);
                access_at(b, g, id, word, 0, mode, true);
            }
        }
    }
    free(bytes);
}

static uint64_t copy_address(CUmemorytype t, const void *host, CUdeviceptr dev, size_t x, size_t y,
                             size_t z, size_t pitch, size_t height)
{
    uint64_t base;
    if (t == CU_MEMORYTYPE_HOST)
        base = (uint64_t)(uintptr_t)host;
    else if (t == CU_MEMORYTYPE_DEVICE || t == CU_MEMORYTYPE_UNIFIED)
        base = dev;
    else
        return 0; /* CUDA arrays have no address */
    return base + z * pitch * height + y * pitch + x;
}

static void fill_memcpy(bctx_t *b, sg_graph_t *g, sg_node_id_t id, CUgraphNode h)
{
    CUDA_MEMCPY3D p;
    memset(&p, 0, sizeof p);
    CUresult r = CUDA_SUCCESS;
    const sg_override_t *o =
        sg_execs_override(b->ov, (uint64_t)(uintptr_t)h, CU_GRAPH_NODE_TYPE_MEMCPY);
    if (o) {
        p = *sg_override_memcpy(o);
    } else {
        __typeof__(&cuGraphMemcpyNodeGetParams) get = SG_REAL(cuGraphMemcpyNodeGetParams);
        r = get ? get(h, &p) : CUDA_ERROR_NOT_FOUND;
    }
    if (r != CUDA_SUCCESS) {
        unreadable(b, g, id, "copy parameters", r);
        return;
    }
    sg_memcpy_t *c = &sg_graph_node(g, id)->u.memcpy;
    c->src = copy_address(p.srcMemoryType, p.srcHost, p.srcDevice, p.srcXInBytes, p.srcY, p.srcZ,
                          p.srcPitch, p.srcHeight);
    c->dst = copy_address(p.dstMemoryType, p.dstHost, p.dstDevice, p.dstXInBytes, p.dstY, p.dstZ,
                          p.dstPitch, p.dstHeight);
    c->width = p.WidthInBytes;
    c->height = p.Height ? p.Height : 1;
    c->depth = p.Depth ? p.Depth : 1;
    bool flat = c->height == 1 && c->depth == 1;
    c->src_pitch = flat ? 0 : p.srcPitch;
    c->dst_pitch = flat ? 0 : p.dstPitch;
    bool sh = p.srcMemoryType == CU_MEMORYTYPE_HOST, dh = p.dstMemoryType == CU_MEMORYTYPE_HOST;
    bool sd = p.srcMemoryType == CU_MEMORYTYPE_DEVICE || p.srcMemoryType == CU_MEMORYTYPE_ARRAY;
    bool dd = p.dstMemoryType == CU_MEMORYTYPE_DEVICE || p.dstMemoryType == CU_MEMORYTYPE_ARRAY;
    c->kind = sh && dd   ? SG_COPY_H2D
              : sd && dh ? SG_COPY_D2H
              : sd && dd ? SG_COPY_D2D
              : sh && dh ? SG_COPY_H2H
                         : SG_COPY_DEFAULT;
    uint64_t src = c->src, dst = c->dst;
    uint64_t src_len = extent(c->width, c->height, c->depth, p.srcPitch, p.srcHeight);
    uint64_t dst_len = extent(c->width, c->height, c->depth, p.dstPitch, p.dstHeight);
    if (src && sh)
        host_access(b, g, id, src, src_len, SG_ACCESS_READ);
    else if (src && !access_at(b, g, id, src, src_len, SG_ACCESS_READ, true) &&
             p.srcMemoryType == CU_MEMORYTYPE_UNIFIED && pageable_host(src))
        host_access(b, g, id, src, src_len, SG_ACCESS_READ);
    if (dst && dh)
        host_access(b, g, id, dst, dst_len, SG_ACCESS_WRITE);
    else if (dst && !access_at(b, g, id, dst, dst_len, SG_ACCESS_WRITE, true) &&
             p.dstMemoryType == CU_MEMORYTYPE_UNIFIED && pageable_host(dst))
        host_access(b, g, id, dst, dst_len, SG_ACCESS_WRITE);
}

static void fill_memset(bctx_t *b, sg_graph_t *g, sg_node_id_t id, CUgraphNode h)
{
    CUDA_MEMSET_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    CUresult r = CUDA_SUCCESS;
    const sg_override_t *o =
        sg_execs_override(b->ov, (uint64_t)(uintptr_t)h, CU_GRAPH_NODE_TYPE_MEMSET);
    if (o) {
        p = *sg_override_memset(o);
    } else {
        __typeof__(&cuGraphMemsetNodeGetParams) get = SG_REAL(cuGraphMemsetNodeGetParams);
        r = get ? get(h, &p) : CUDA_ERROR_NOT_FOUND;
    }
    if (r != CUDA_SUCCESS) {
        unreadable(b, g, id, "memset parameters", r);
        return;
    }
    sg_memset_t *s = &sg_graph_node(g, id)->u.memset;
    s->dst = p.dst;
    s->pitch = p.height > 1 ? p.pitch : 0;
    s->value = p.value;
    s->element_size = p.elementSize;
    s->width = p.width;
    s->height = p.height ? p.height : 1;
    uint64_t row = (uint64_t)p.width * p.elementSize;
    access_at(b, g, id, p.dst, extent(row, s->height, 1, p.pitch, 0), SG_ACCESS_WRITE, true);
}

static int build_into(bctx_t *b, sg_graph_t *g, CUgraph graph, int depth, char *why, size_t n);

static void fill_other(bctx_t *b, sg_graph_t *g, sg_node_id_t id, CUgraphNode h, CUgraphNodeType t,
                       int depth)
{
    CUresult r = CUDA_SUCCESS;
    switch (t) {
    case CU_GRAPH_NODE_TYPE_HOST: {
        CUDA_HOST_NODE_PARAMS p;
        memset(&p, 0, sizeof p);
        __typeof__(&cuGraphHostNodeGetParams) get = SG_REAL(cuGraphHostNodeGetParams);
        r = get ? get(h, &p) : CUDA_ERROR_NOT_FOUND;
        if (r == CUDA_SUCCESS) {
            sg_node_t *nd = sg_graph_node(g, id);
            nd->u.host.fn = (uint64_t)(uintptr_t)p.fn;
            nd->u.host.user_data = (uint64_t)(uintptr_t)p.userData;
        }
        break;
    }
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: {
        CUevent ev = NULL;
        if (t == CU_GRAPH_NODE_TYPE_EVENT_RECORD) {
            __typeof__(&cuGraphEventRecordNodeGetEvent) get =
                SG_REAL(cuGraphEventRecordNodeGetEvent);
            r = get ? get(h, &ev) : CUDA_ERROR_NOT_FOUND;
        } else {
            __typeof__(&cuGraphEventWaitNodeGetEvent) get = SG_REAL(cuGraphEventWaitNodeGetEvent);
            r = get ? get(h, &ev) : CUDA_ERROR_NOT_FOUND;
        }
        uint32_t idx = SG_NONE;
        if (r == CUDA_SUCCESS && sg_assemble_event(g, (uint64_t)(uintptr_t)ev, true, &idx) != 0)
            idx = SG_NONE;
        sg_graph_node(g, id)->u.event = idx;
        break;
    }
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
        CUDA_MEM_ALLOC_NODE_PARAMS p;
        memset(&p, 0, sizeof p);
        __typeof__(&cuGraphMemAllocNodeGetParams) get = SG_REAL(cuGraphMemAllocNodeGetParams);
        r = get ? get(h, &p) : CUDA_ERROR_NOT_FOUND;
        if (r != CUDA_SUCCESS) break;
        sg_memnode_t *m = &sg_graph_node(g, id)->u.mem;
        m->address = p.dptr;
        m->bytes = p.bytesize;
        m->buffer = SG_NONE;
        uint64_t range = 0;
        if (p.dptr && p.bytesize &&
            sg_memmap_add(&b->graph_allocs, p.dptr, p.bytesize, SG_BUFFER_GRAPH_ALLOC, 0, false,
                          &range) == SG_OK) {
            const sg_memrange_t *rr = sg_memmap_find(&b->graph_allocs, p.dptr);
            uint32_t buf = rr ? buffer_of_range(b, &b->alloc_bufs, rr) : SG_NONE;
            m->buffer = buf;
            /* alloc_node must name a node of the root graph */
            if (buf != SG_NONE && g == b->root) sg_graph_buffer(b->root, buf)->alloc_node = id;
        }
        break;
    }
    case CU_GRAPH_NODE_TYPE_MEM_FREE: {
        CUdeviceptr dptr = 0;
        __typeof__(&cuGraphMemFreeNodeGetParams) get = SG_REAL(cuGraphMemFreeNodeGetParams);
        r = get ? get(h, &dptr) : CUDA_ERROR_NOT_FOUND;
        if (r != CUDA_SUCCESS) break;
        uint64_t off = 0, rest = 0;
        sg_memnode_t *m = &sg_graph_node(g, id)->u.mem;
        m->address = dptr;
        m->buffer = SG_NONE;
        uint32_t buf = find_buffer(b, dptr, &off, &rest, false);
        sg_graph_node(g, id)->u.mem.buffer = buf;
        break;
    }
    case CU_GRAPH_NODE_TYPE_GRAPH: {
        CUgraph child = NULL;
        __typeof__(&cuGraphChildGraphNodeGetGraph) get = SG_REAL(cuGraphChildGraphNodeGetGraph);
        r = get ? get(h, &child) : CUDA_ERROR_NOT_FOUND;
        if (r != CUDA_SUCCESS) break;
        sg_graph_t *body = NULL;
        char why[160];
        if (depth + 1 >= SG_BUNDLE_MAX_DEPTH) {
            sg_node_set_label(g, id, "child graph nested too deep: body not recorded");
        } else if (sg_node_make_child_body(g, id, &body) == SG_OK &&
                   build_into(b, body, child, depth + 1, why, sizeof why) != SG_OK) {
            sg_node_set_label(g, id, why);
        }
        break;
    }
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: {
        uint64_t key = (uint64_t)(uintptr_t)h;
        sg_cond_info_t *ci = NULL;
        HASH_FIND(hh, sg_shim.conds, &key, sizeof key, ci);
        if (!ci) {
            sg_node_set_label(g, id,
                              "conditional made before sgcap watched (or cloned): bodies "
                              "unknown");
            break;
        }
        sg_conditional_t *c = &sg_graph_node(g, id)->u.cond;
        c->type = ci->type == CU_GRAPH_COND_TYPE_WHILE    ? SG_COND_WHILE
                  : ci->type == CU_GRAPH_COND_TYPE_SWITCH ? SG_COND_SWITCH
                                                          : SG_COND_IF;
        c->handle = ci->handle;
        sg_cond_handle_t *ch = NULL;
        HASH_FIND(hh, sg_shim.cond_handles, &ci->handle, sizeof ci->handle, ch);
        if (ch) c->default_value = ch->default_value;
        for (uint32_t i = 0; i < ci->n_bodies; i++) {
            sg_graph_t *body = NULL;
            char why[160];
            if (depth + 1 >= SG_BUNDLE_MAX_DEPTH) break;
            if (sg_node_add_cond_body(g, id, &body) != SG_OK) break;
            if (build_into(b, body, (CUgraph)(uintptr_t)ci->bodies[i], depth + 1, why,
                           sizeof why) != SG_OK)
                sg_node_set_label(g, id, why);
        }
        break;
    }
    case CU_GRAPH_NODE_TYPE_EMPTY:
        break;
    default:
        sg_node_set_opaque_note(g, id, cuda_type_name(t));
        break;
    }
    if (r != CUDA_SUCCESS) unreadable(b, g, id, "node parameters", r);
}

/* ---- one graph (root or body) -------------------------------------------------------------------
 */

static int build_into(bctx_t *b, sg_graph_t *g, CUgraph graph, int depth, char *why, size_t n)
{
    __typeof__(&cuGraphGetNodes) get_nodes = SG_REAL(cuGraphGetNodes);
    __typeof__(&cuGraphGetEdges_v2) get_edges = SG_REAL(cuGraphGetEdges_v2);
    __typeof__(&cuGraphNodeGetType) get_type = SG_REAL(cuGraphNodeGetType);
    if (!get_nodes || !get_edges || !get_type) {
        snprintf(why, n, "driver lacks cuGraphGetNodes/cuGraphGetEdges_v2/cuGraphNodeGetType");
        return SG_EUNSUPPORTED;
    }
    size_t nn = 0, ne = 0;
    CUresult r = get_nodes(graph, NULL, &nn);
    if (r == CUDA_SUCCESS) r = get_edges(graph, NULL, NULL, NULL, &ne);
    if (r != CUDA_SUCCESS) {
        snprintf(why, n, "cannot list the graph's nodes/edges (CUDA error %d)", (int)r);
        return SG_ECUDA;
    }
    if (nn > SG_BUNDLE_MAX_NODES || ne > SG_BUNDLE_MAX_EDGES) {
        snprintf(why, n, "graph too large (%zu nodes, %zu edges)", nn, ne);
        return SG_ELIMIT;
    }
    int rc = SG_ENOMEM;
    CUgraphNode *nodes = malloc((nn ? nn : 1) * sizeof *nodes);
    CUgraphNode *from = malloc((ne ? ne : 1) * sizeof *from);
    CUgraphNode *to = malloc((ne ? ne : 1) * sizeof *to);
    CUgraphEdgeData *ed = calloc(ne ? ne : 1, sizeof *ed);
    sg_asm_node_t *an = malloc((nn ? nn : 1) * sizeof *an);
    sg_asm_edge_t *ae = malloc((ne ? ne : 1) * sizeof *ae);
    sg_node_id_t *ids = malloc((nn ? nn : 1) * sizeof *ids);
    CUgraphNodeType *types = malloc((nn ? nn : 1) * sizeof *types);
    if (!nodes || !from || !to || !ed || !an || !ae || !ids || !types) {
        snprintf(why, n, "out of memory");
        goto out;
    }
    /* Asked again with arrays for a count of 0, the driver answers
     * CUDA_ERROR_INVALID_VALUE (graphs with no edges: single-node captures,
     * independent explicit nodes), so only list what exists. */
    size_t nn2 = nn, ne2 = ne;
    r = nn ? get_nodes(graph, nodes, &nn2) : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS && ne) r = get_edges(graph, from, to, ed, &ne2);
    if (r != CUDA_SUCCESS) {
        snprintf(why, n, "cannot list the graph's nodes/edges (CUDA error %d)", (int)r);
        rc = SG_ECUDA;
        goto out;
    }
    if (nn2 < nn) nn = nn2;
    if (ne2 < ne) ne = ne2;
    for (size_t i = 0; i < nn; i++) {
        types[i] = CU_GRAPH_NODE_TYPE_EMPTY;
        r = get_type(nodes[i], &types[i]);
        an[i].handle = (uint64_t)(uintptr_t)nodes[i];
        an[i].type = r == CUDA_SUCCESS ? model_type(types[i]) : SG_NODE_OPAQUE;
        an[i].cuda_type = (uint32_t)types[i];
    }
    for (size_t i = 0; i < ne; i++) {
        ae[i].from = (uint64_t)(uintptr_t)from[i];
        ae[i].to = (uint64_t)(uintptr_t)to[i];
        ae[i].from_port = ed[i].from_port;
        ae[i].to_port = ed[i].to_port;
        ae[i].type = ed[i].type;
    }
    const sg_capture_record_t *rec = sg_book_find_record(sg_shim.book, (uint64_t)(uintptr_t)graph);
    sg_asm_report_t rep;
    rc = sg_assemble(g, rec, an, (uint32_t)nn, ae, (uint32_t)ne, ids, &rep);
    if (rc) {
        snprintf(why, n, "assembling the model failed: %s", sg_strerror(rc));
        goto out;
    }
    if (depth == 0 && b->want_root_nodes) {
        uint64_t *h = calloc(g->n_nodes + 1, sizeof *h);
        if (!h) {
            snprintf(why, n, "out of memory");
            rc = SG_ENOMEM;
            goto out;
        }
        for (size_t i = 0; i < nn; i++)
            if (ids[i] < g->n_nodes) h[ids[i]] = (uint64_t)(uintptr_t)nodes[i];
        b->root_nodes = h;
        b->n_root_nodes = g->n_nodes;
    }
    if (depth == 0) {
        b->root->capture_id = rec ? rec->capture_id : 0;
        free(b->root->capture_mode);
        b->root->capture_mode = strdup(rec ? rec->mode : "explicit");
        b->root->crosscheck_done = true;
        b->root->cuda_node_count = (uint32_t)nn;
        b->root->cuda_edge_count = (uint32_t)ne;
        bool counts = sg_graph_node_count(g) == nn && sg_graph_edge_count(g) == ne;
        b->root->crosscheck_ok = counts && sg_asm_report_ok(&rep, rec != NULL);
        char note[400];
        sg_asm_report_note(&rep, rec != NULL, note, sizeof note);
        if (!counts) {
            size_t l = strlen(note);
            snprintf(note + l, sizeof note - l, "%smodel has %u %s and %u %s", l ? "; " : "",
                     sg_graph_node_count(g), sg_plural(sg_graph_node_count(g), "node", "nodes"),
                     sg_graph_edge_count(g), sg_plural(sg_graph_edge_count(g), "edge", "edges"));
        }
        free(b->root->crosscheck_note);
        b->root->crosscheck_note = note[0] ? strdup(note) : NULL;
    }
    /* Graph allocations first: kernels anywhere in the graph may use them. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < nn; i++) {
            bool alloc = types[i] == CU_GRAPH_NODE_TYPE_MEM_ALLOC;
            if ((pass == 0) != alloc) continue;
            switch (types[i]) {
            case CU_GRAPH_NODE_TYPE_KERNEL:
                fill_kernel(b, g, ids[i], nodes[i]);
                break;
            case CU_GRAPH_NODE_TYPE_MEMCPY:
                fill_memcpy(b, g, ids[i], nodes[i]);
                break;
            case CU_GRAPH_NODE_TYPE_MEMSET:
                fill_memset(b, g, ids[i], nodes[i]);
                break;
            default:
                fill_other(b, g, ids[i], nodes[i], types[i], depth);
                break;
            }
        }
    }
    rc = SG_OK;
out:
    free(nodes);
    free(from);
    free(to);
    free(ed);
    free(an);
    free(ae);
    free(ids);
    free(types);
    return rc;
}

/* ---- device -----------------------------------------------------------------------------------
 */

/* The device of the context current at instantiation (a process driving
 * several GPUs, ncclCommInitAll's way, instantiates each graph on its own
 * device), its facts asked once per device. Under the hot lock. */
#define DEVICES_CACHED 64
static void fill_device(sg_device_t *d)
{
    static sg_device_t cached[DEVICES_CACHED];
    static bool have[DEVICES_CACHED];
    CUdevice dev = 0;
    __typeof__(&cuCtxGetDevice) ctx_dev = SG_REAL(cuCtxGetDevice);
    if (!ctx_dev || ctx_dev(&dev) != CUDA_SUCCESS || dev < 0) return;
    sg_device_t one = {.ordinal = -1};
    sg_device_t *c = dev < DEVICES_CACHED ? &cached[dev] : &one;
    if (dev >= DEVICES_CACHED || !have[dev]) {
        char name[256] = "";
        __typeof__(&cuDeviceGetName) get_name = SG_REAL(cuDeviceGetName);
        __typeof__(&cuDeviceGetAttribute) attr = SG_REAL(cuDeviceGetAttribute);
        __typeof__(&cuDeviceTotalMem_v2) total = SG_REAL(cuDeviceTotalMem_v2);
        __typeof__(&cuDeviceGetUuid_v2) uuid = SG_REAL(cuDeviceGetUuid_v2);
        __typeof__(&cuDriverGetVersion) version = SG_REAL(cuDriverGetVersion);
        if (get_name) get_name(name, (int)sizeof name, dev);
        c->name = strdup(name);
        c->ordinal = (int32_t)dev;
        int v = 0;
        if (attr && attr(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == 0)
            c->cc_major = v;
        if (attr && attr(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == 0)
            c->cc_minor = v;
        if (attr && attr(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) == 0)
            c->sm_count = (uint32_t)v;
        int clock = 0, bus = 0;
        if (attr && attr(&clock, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev) == 0 &&
            attr(&bus, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev) == 0)
            c->mem_bandwidth_gbs = 2.0 * clock * 1e3 * (bus / 8.0) / 1e9; /* DDR */
        size_t bytes = 0;
        if (total && total(&bytes, dev) == CUDA_SUCCESS) c->total_memory = bytes;
        if (version) version(&c->driver_version);
        CUuuid u;
        if (uuid && uuid(&u, dev) == CUDA_SUCCESS) {
            const unsigned char *x = (const unsigned char *)u.bytes;
            /* The model holds 39 characters: the plain 36-character UUID
             * (nvidia-smi shows it with a "GPU-" prefix). */
            snprintf(c->uuid, sizeof c->uuid,
                     "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", x[0],
                     x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12],
                     x[13], x[14], x[15]);
        }
        if (dev < DEVICES_CACHED) have[dev] = true;
    }
    *d = *c;
    d->name = c->name ? strdup(c->name) : NULL;
    if (c == &one) free(one.name);
}

bool sg_shim_many_devices(void)
{
    static atomic_int count = -1; /* -1: not asked yet */
    int n = atomic_load(&count);
    if (n < 0) {
        __typeof__(&cuDeviceGetCount) get = SG_REAL(cuDeviceGetCount);
        if (!get || get(&n) != CUDA_SUCCESS) n = 0;
        atomic_store(&count, n);
    }
    return n > 1;
}

/* ---- entry -------------------------------------------------------------------------------------
 */

sg_graph_t *sg_shim_build(CUgraph graph, const sg_override_t *ov, char *why, size_t n)
{
    return sg_shim_build_mapped(graph, ov, NULL, NULL, NULL, why, n);
}

sg_graph_t *sg_shim_build_mapped(CUgraph graph, const sg_override_t *ov, uint64_t **root_nodes,
                                 uint32_t *n_root_nodes, uint32_t *unreadable, char *why, size_t n)
{
    if (root_nodes) *root_nodes = NULL;
    if (n_root_nodes) *n_root_nodes = 0;
    if (unreadable) *unreadable = 0;
    sg_graph_t *g = sg_graph_create();
    if (!g) {
        snprintf(why, n, "out of memory");
        return NULL;
    }
    bctx_t b;
    memset(&b, 0, sizeof b);
    b.root = g;
    b.ov = ov;
    b.want_root_nodes = root_nodes != NULL;
    b.range_budget = ADDRESS_RANGE_BUDGET;
    sg_memmap_init(&b.graph_allocs);
    /* Relaxed: another thread may hold a global-mode capture, and some of
     * the calls below (cuKernelGetFunction may load a module) are not pure
     * queries. */
    sg_relaxed_t relaxed;
    sg_inject_relaxed_begin(&relaxed);
    pthread_mutex_lock(&sg_shim.hot);
    int rc = build_into(&b, g, graph, 0, why, n);
    if (rc == SG_OK) rc = sg_capture_segment_extents(g);
    char arena_note[256] = "";
    if (rc == SG_OK) {
        sg_arena_limits_t lim = {sg_shim.cfg.arena_bytes, sg_shim.cfg.arena_open_bytes, 2u << 20};
        int split = sg_capture_split_arenas(g, &lim, arena_note, sizeof arena_note);
        if (split < 0) rc = split;
    }
    fill_device(&g->device);
    (void)sg_shim_many_devices(); /* asked here, in relaxed mode, before the name needs it */
    pthread_mutex_unlock(&sg_shim.hot);
    sg_inject_relaxed_end(&relaxed);
    bufmap_t *m, *tmp;
    HASH_ITER(hh, b.bufs, m, tmp)
    {
        HASH_DEL(b.bufs, m);
        free(m);
    }
    HASH_ITER(hh, b.alloc_bufs, m, tmp)
    {
        HASH_DEL(b.alloc_bufs, m);
        free(m);
    }
    sg_memmap_clear(&b.graph_allocs);
    free(b.host);
    if (rc) {
        free(b.root_nodes);
        sg_graph_destroy(g);
        return NULL;
    }
    if (root_nodes) {
        *root_nodes = b.root_nodes;
        *n_root_nodes = b.n_root_nodes;
    }
    if (unreadable) *unreadable = b.unreadable;
    if (arena_note[0]) sg_graph_log_pass(g, "capture", arena_note);
    if (b.unreadable) {
        char line[120];
        snprintf(line, sizeof line, "%u %s with unreadable parameters (see node labels)",
                 b.unreadable, sg_plural(b.unreadable, "node", "nodes"));
        sg_graph_log_pass(g, "capture", line);
    }
    return g;
}
