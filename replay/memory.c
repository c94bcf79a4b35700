/* memory.c: put every recorded buffer back where the graph expects it.
 *
 * Device buffers: per region (recorded ranges rounded to the mapping
 * granularity, merged), cuMemAddressReserve at the recorded address, which
 * is only a hint, then cuMemCreate + cuMemMap + cuMemSetAccess. Where the
 * driver hands out another address, the region moves as a whole (so
 * pointers between its buffers keep their offsets) and the relocation map
 * says where each buffer went. Pinned host buffers: an anonymous mapping at
 * the recorded address (MAP_FIXED_NOREPLACE, so nothing is clobbered)
 * registered with the driver, whose device pointer is then the same
 * address. Graph allocations are left to the graph's own mem_alloc nodes. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "replay_private.h"
#include "graph/plural.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000 /* Linux 4.17; older kernels treat it as a hint */
#endif

static void logf_(sg_replay_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(sg_replay_t *r, const char *fmt, ...)
{
    if (!r->opt.log) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->opt.log, fmt, ap);
    va_end(ap);
}

static int place_device(sg_replay_t *r, uint32_t i, const CUmemAllocationProp *prop, size_t gran,
                        char *err, size_t errlen)
{
    const sg_replay_driver_t *drv = r->drv;
    const sg_region_t *reg = &r->regions[i];
    sg_region_state_t *s = &r->rs[i];
    CUdeviceptr hint = r->opt.relocate ? 0 : (CUdeviceptr)reg->base;
    /* Kept free since before CUDA loaded (reserve.c): give it back just now. */
    if (hint) sg_replay__unreserve(reg->base, reg->size);
    SG_CU_TRY(drv->cuMemAddressReserve(&s->va, reg->size, gran, hint, 0), "cuMemAddressReserve");
    s->reserved = true;
    if (r->opt.relocate && s->va == reg->base) {
        /* Asked to move but landed home by chance: keep this reservation
         * to block the address and take another. */
        s->extra_va = s->va;
        s->extra_size = reg->size;
        s->reserved = false;
        SG_CU_TRY(drv->cuMemAddressReserve(&s->va, reg->size, gran, 0, 0), "cuMemAddressReserve");
        s->reserved = true;
    }
    SG_CU_TRY(drv->cuMemCreate(&s->handle, reg->size, prop, 0), "cuMemCreate");
    s->created = true;
    SG_CU_TRY(drv->cuMemMap(s->va, reg->size, 0, s->handle, 0), "cuMemMap");
    s->mapped = true;
    CUmemAccessDesc acc = {.location = prop->location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    SG_CU_TRY(drv->cuMemSetAccess(s->va, reg->size, &acc, 1), "cuMemSetAccess");
    /* Fresh physical memory holds whatever it held: zero it so buffers
     * without a before-snapshot start the same way on every replay. */
    SG_CU_TRY(drv->cuMemsetD8(s->va, 0, reg->size), "cuMemsetD8");
    return SG_OK;
}

static int place_host(sg_replay_t *r, uint32_t i, char *err, size_t errlen)
{
    const sg_replay_driver_t *drv = r->drv;
    const sg_region_t *reg = &r->regions[i];
    sg_region_state_t *s = &r->rs[i];
    void *p = MAP_FAILED;
    if (!r->opt.relocate) {
        sg_replay__unreserve(reg->base, reg->size);
        p = mmap((void *)(uintptr_t)reg->base, reg->size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    }
    if (p == MAP_FAILED)
        p = mmap(NULL, reg->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return sg_replay__fail(err, errlen, SG_ENOMEM,
                               "cannot map %" PRIu64 " bytes of host memory", reg->size);
    s->host = p;
    if (reg->pageable) {
        /* The program's plain memory (a stack variable, a heap block): a
         * copy node reads or writes it as host memory, exactly as it did. */
        s->va = (CUdeviceptr)(uintptr_t)p;
        return SG_OK;
    }
    SG_CU_TRY(drv->cuMemHostRegister(p, reg->size,
                                      CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE),
              "cuMemHostRegister");
    s->host_registered = true;
    SG_CU_TRY(drv->cuMemHostGetDevicePointer(&s->va, p, 0), "cuMemHostGetDevicePointer");
    return SG_OK;
}

int sg_replay__place(sg_replay_t *r, char *err, size_t errlen)
{
    const sg_replay_driver_t *drv = r->drv;
    const sg_graph_t *g = r->g;
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = r->device;
    size_t gran = 0;
    SG_CU_TRY(drv->cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
              "cuMemGetAllocationGranularity");
    long page = sysconf(_SC_PAGESIZE);
    int rc = sg_replay_plan_regions(g, gran, page > 0 ? (uint64_t)page : 4096, &r->regions,
                                    &r->n_regions);
    if (rc)
        return sg_replay__fail(err, errlen, rc, "a recorded buffer's address range wraps around");
    r->rs = calloc(r->n_regions + 1, sizeof *r->rs);
    r->buf_addr = calloc(g->n_buffers + 1, sizeof *r->buf_addr);
    r->buf_place = calloc(g->n_buffers + 1, sizeof *r->buf_place);
    if (!r->rs || !r->buf_addr || !r->buf_place)
        return sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < r->n_regions; i++) {
        rc = r->regions[i].host ? place_host(r, i, err, errlen)
                                : place_device(r, i, &prop, gran, err, errlen);
        if (rc) return rc;
        if (r->rs[i].va != r->regions[i].base && !r->opt.relocate)
            logf_(r,
                  "memory: the recorded range 0x%" PRIx64 "+0x%" PRIx64 " (%u %s) is taken "
                  "here; placed at 0x%llx, pointers into it are relocated\n",
                  r->regions[i].base, r->regions[i].size, r->regions[i].n_buffers,
                  sg_plural(r->regions[i].n_buffers, "buffer", "buffers"),
                  (unsigned long long)r->rs[i].va);
    }
    for (uint32_t b = 0; b < g->n_buffers; b++) {
        const sg_buffer_t *buf = &g->buffers[b];
        if (buf->kind == SG_BUFFER_GRAPH_ALLOC) {
            r->buf_place[b] = SG_PLACE_GRAPH;
            continue;
        }
        if (buf->size == 0) continue;
        bool host = sg_buffer_kind_is_host(buf->kind);
        uint32_t k = sg_region_find(r->regions, r->n_regions, buf->address, buf->size, host);
        if (k == SG_NONE)
            return sg_replay__fail(err, errlen, SG_EINVAL, "buffer %s lies in no region (bug)",
                                   buf->label);
        CUdeviceptr now = r->rs[k].va + (buf->address - r->regions[k].base);
        r->buf_addr[b] = now;
        r->buf_place[b] = now == buf->address ? SG_PLACE_SAME : SG_PLACE_MOVED;
        rc = sg_reloc_map_add(&r->map, b, buf->address, buf->size, now);
        if (rc) return sg_replay__fail(err, errlen, rc, "out of memory");
    }
    return SG_OK;
}

/* Host buffers live in our own mapping: their bytes, or NULL for others. */
static uint8_t *host_bytes(sg_replay_t *r, uint32_t i)
{
    const sg_buffer_t *b = &r->g->buffers[i];
    if (!sg_buffer_kind_is_host(b->kind)) return NULL;
    uint32_t k = sg_region_find(r->regions, r->n_regions, b->address, b->size, true);
    if (k == SG_NONE || !r->rs[k].host) return NULL;
    return (uint8_t *)r->rs[k].host + (b->address - r->regions[k].base);
}

int sg_replay__read_buffer(sg_replay_t *r, uint32_t i, void *dst, size_t size, char *err,
                           size_t errlen)
{
    if (!size) return SG_OK;
    const sg_replay_driver_t *drv = r->drv;
    uint8_t *h = host_bytes(r, i);
    if (h) {
        memcpy(dst, h, size);
        return SG_OK;
    }
    SG_CU_TRY(drv->cuMemcpyDtoH(dst, r->buf_addr[i], size), "reading a buffer back");
    return SG_OK;
}

int sg_replay__write_buffer(sg_replay_t *r, uint32_t i, const void *src, size_t size, char *err,
                            size_t errlen)
{
    if (!size) return SG_OK;
    const sg_replay_driver_t *drv = r->drv;
    uint8_t *h = host_bytes(r, i);
    if (h) {
        memcpy(h, src, size);
        return SG_OK;
    }
    SG_CU_TRY(drv->cuMemcpyHtoD(r->buf_addr[i], src, size), "restoring a snapshot");
    return SG_OK;
}

void *sg_replay__host_pointer(const sg_replay_t *r, uint64_t addr)
{
    for (uint32_t k = 0; k < r->n_regions; k++)
        if (r->regions[k].host && r->rs[k].va && r->rs[k].host && addr >= r->rs[k].va &&
            addr < r->rs[k].va + r->regions[k].size)
            return (uint8_t *)r->rs[k].host + (addr - r->rs[k].va);
    return NULL;
}

void sg_replay_region_placement(const sg_replay_t *r, uint32_t *same, uint32_t *total)
{
    *same = 0;
    *total = r->n_regions;
    for (uint32_t i = 0; r->rs && i < r->n_regions; i++)
        if (r->rs[i].va == r->regions[i].base) (*same)++;
}

void sg_replay__release_memory(sg_replay_t *r)
{
    const sg_replay_driver_t *drv = r->drv;
    for (uint32_t i = 0; r->rs && i < r->n_regions; i++) {
        sg_region_state_t *s = &r->rs[i];
        uint64_t size = r->regions[i].size;
        if (r->regions[i].host) {
            if (s->host_registered) drv->cuMemHostUnregister(s->host);
            if (s->host) munmap(s->host, size);
            continue;
        }
        if (s->mapped) drv->cuMemUnmap(s->va, size);
        if (s->created) drv->cuMemRelease(s->handle);
        if (s->reserved) drv->cuMemAddressFree(s->va, size);
        if (s->extra_va) drv->cuMemAddressFree(s->extra_va, s->extra_size);
    }
    free(r->rs);
    r->rs = NULL;
    free(r->regions);
    r->regions = NULL;
    r->n_regions = 0;
}
