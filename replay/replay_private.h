/* replay_private.h: what the GPU half of replay/ shares and nobody else
 * sees: the CUPTI and NVRTC entry points (loaded at run time by
 * code/nvlib.c, so no sgcap binary needs libcuda to start), the gpu and
 * replay objects, and helpers. The driver's entry points are not here: they
 * come from the caller, in the table of driver.h. */
#ifndef SGCAP_REPLAY_PRIVATE_H
#define SGCAP_REPLAY_PRIVATE_H

#include <cuda.h>
#include <cupti.h>
#include <nvrtc.h>

#include "code/nvlib.h"
#include "driver.h"
#include "replay.h"

/* CUPTI and NVRTC come from the one loader (code/nvlib.h); these are its
 * tables once sg_replay__load_cupti/_nvrtc succeeded, else NULL. */
extern const sg_cupti_api_t *sg_cupti;
extern const sg_nvrtc_api_t *sg_nvrtc;

/* Load each library once; later calls return the first result. */
int sg_replay__load_cupti(char *err, size_t errlen);
int sg_replay__load_nvrtc(char *err, size_t errlen);

/* Format a message into err (may be NULL) and return code. */
int sg_replay__fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "what: CUDA_ERROR_NAME (description)" and SG_ECUDA (the names from drv). */
int sg_replay__cu_fail(const sg_replay_driver_t *drv, char *err, size_t errlen, CUresult rc,
                       const char *what);

/* A driver call that returns on failure; `drv`, `err` and `errlen` must be
 * in scope (every function that calls the driver has its table as drv). */
#define SG_CU_TRY(call, what)                                                                      \
    do {                                                                                           \
        CUresult sg_cu_rc_ = (call);                                                               \
        if (sg_cu_rc_ != CUDA_SUCCESS)                                                             \
            return sg_replay__cu_fail(drv, err, errlen, sg_cu_rc_, what);                          \
    } while (0)

/* ---- the replay object ---------------------------------------------------------- */

typedef enum {
    SG_PLACE_NONE = 0, /* not placed (size 0, or not yet) */
    SG_PLACE_SAME,     /* at its recorded address */
    SG_PLACE_MOVED,    /* elsewhere: pointers to it are relocated */
    SG_PLACE_GRAPH,    /* created by a mem_alloc node of the graph */
} sg_place_t;

typedef struct {
    CUdeviceptr va;       /* where the region lives now */
    CUdeviceptr extra_va; /* a reservation held only to push va elsewhere (--relocate) */
    uint64_t extra_size;
    CUmemGenericAllocationHandle handle;
    bool reserved, created, mapped;
    void *host; /* host regions: the mapping, and whether it is registered */
    bool host_registered;
} sg_region_state_t;

/* One CUDA node this replay created, for profiling and the trace. */
typedef struct {
    CUgraphNode cu;
    uint64_t cupti_id;
    sg_node_id_t id;
    const sg_graph_t *owner; /* the model graph (root or a body) holding the node */
    char path[64];
    char name[96];
    sg_node_type_t type;
    uint32_t stream;
    const char *mangled; /* kernels: the model's name (for the profile fallback) */
    uint32_t grid[3];
} sg_built_node_t;

/* The GPU replays run on (replay.h: sg_replay_gpu_open). */
struct sg_replay_gpu {
    const sg_replay_driver_t *drv; /* the caller's table, borrowed */
    int device;                    /* ordinal */
    CUdevice dev;
    CUcontext ctx;
    bool retained; /* ctx is the primary context, retained by open, released by close */
};

struct sg_replay {
    const sg_graph_t *g;
    char *bundle;
    sg_replay_options_t opt;
    const sg_replay_driver_t *drv; /* the gpu's: every driver call goes through it */
    int device;                    /* ordinal */
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    /* memory */
    sg_region_t *regions;
    sg_region_state_t *rs;
    uint32_t n_regions;
    CUdeviceptr *buf_addr; /* per buffer: its address now */
    uint8_t *buf_place;    /* per buffer: sg_place_t */
    bool *buf_freed;       /* per buffer: a mem_free node of the graph frees it */
    sg_reloc_map_t map;
    sg_reloc_report_t report;
    /* code */
    CUlibrary *libs; /* per image, NULL until loaded */
    /* graph */
    CUgraph graph;
    CUgraphExec exec;
    CUevent *events;     /* per event table entry, created on first use */
    CUevent *own_events; /* for record/wait nodes that name no event */
    uint32_t n_own_events, cap_own_events;
    CUgraph *children; /* child-graph bodies, kept until close */
    uint32_t n_children, cap_children;
    sg_built_node_t *built;
    uint32_t n_built, cap_built;
    bool unfreed_alloc; /* a graph allocation outlives the launch */
    bool *influenced;   /* per buffer, with skip_host_nodes: may depend on a skipped callback */
    bool launched;
    CUevent *bench_events; /* 2 per launch of one bench chunk */
    uint32_t n_bench_events;
    sg_replay_timings_t t;
};

/* memory.c */
int sg_replay__place(sg_replay_t *r, char *err, size_t errlen);
/* The bytes of buffer i now (device or host memory, wherever it lives) /
 * written from data. size is at most the buffer's. */
int sg_replay__read_buffer(sg_replay_t *r, uint32_t i, void *dst, size_t size, char *err,
                           size_t errlen);
int sg_replay__write_buffer(sg_replay_t *r, uint32_t i, const void *src, size_t size, char *err,
                            size_t errlen);
/* The host pointer of a (placed) address in host memory of this replay
 * (its device alias may differ), or NULL for device memory. */
void *sg_replay__host_pointer(const sg_replay_t *r, uint64_t addr);
/* reserve.c: give back the early reservations inside [base, base+size),
 * right before mapping it; returns how many were released. */
uint32_t sg_replay__unreserve(uint64_t base, uint64_t size);
void sg_replay__release_memory(sg_replay_t *r);
/* code.c */
int sg_replay__load_code(sg_replay_t *r, char *err, size_t errlen);
int sg_replay__function(sg_replay_t *r, const sg_kernel_t *k, CUfunction *out, char *err,
                        size_t errlen);
/* build.c */
int sg_replay__build(sg_replay_t *r, char *err, size_t errlen);
/* profile.c */
int sg_replay__profile_prepare(char *err, size_t errlen);

double sg_replay__now_ms(void);

#endif /* SGCAP_REPLAY_PRIVATE_H */
