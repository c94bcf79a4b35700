/* execs.c: what each executable graph really runs.
 *
 * A bundle is written from the CUgraph an exec was instantiated (or updated)
 * from. Programs can change an exec in place afterwards: XLA updates the
 * buffer addresses of its command buffers with cuGraphExecKernelNodeSetParams
 * before each execution, so the exec no longer runs the recorded graph, and
 * a snapshot of the recorded graph's buffers around its launch would pair
 * the wrong memory with the wrong model. So every in-place change is kept
 * here (a deep copy of the new kernel, copy or memset parameters, per node
 * of the original graph), and at the exec's next launch the shim records
 * the graph again with those parameters in place of the graph's own
 * (build.c asks sg_execs_override). Changes the model cannot express (host
 * callbacks, child graphs, events, enabling or disabling nodes, other node
 * types) mark the exec unrecordable instead, with the reason: its bundle is
 * then not re-recorded and not snapshotted, rather than wrong.
 *
 * Lock: `lock` is innermost (taken under hot or out, never around them);
 * builds get a private copy of the overrides (sg_execs_pending), so nothing
 * here is read while another thread changes it. */
#include "shim.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sg_override {
    uint64_t node; /* key: CUgraphNode of the graph the exec came from */
    CUgraphNodeType type;
    CUDA_KERNEL_NODE_PARAMS kernel; /* kernelParams / extra point into the fields below */
    void **args;
    uint8_t *bytes;
    void *extra[5];
    size_t extra_size;
    CUDA_MEMCPY3D memcpy;
    CUDA_MEMSET_NODE_PARAMS memset;
    UT_hash_handle hh;
};

typedef struct exec_entry {
    uint64_t exec;          /* key */
    uint64_t graph;         /* what it was instantiated/updated from; 0 once destroyed */
    bool dirty;             /* changed in place since it was last recorded */
    char unrecordable[160]; /* set: changed in a way the model cannot express */
    sg_override_t *ov;
    UT_hash_handle hh;
} exec_entry_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static exec_entry_t *execs;
/* Entries with dirty set: every launch asks sg_execs_pending, and in a
 * program that never changes an exec in place (most) the answer is known
 * without the lock. Changed under the lock; read without it. */
static atomic_uint n_dirty;

static void set_dirty(exec_entry_t *e, bool dirty)
{
    if (e->dirty == dirty) return;
    e->dirty = dirty;
    if (dirty)
        atomic_fetch_add_explicit(&n_dirty, 1, memory_order_release);
    else
        atomic_fetch_sub_explicit(&n_dirty, 1, memory_order_release);
}

static void override_free(sg_override_t *o)
{
    if (!o) return;
    free(o->args);
    free(o->bytes);
    free(o);
}

void sg_execs_free_overrides(sg_override_t *ov)
{
    sg_override_t *o, *tmp;
    HASH_ITER(hh, ov, o, tmp)
    {
        HASH_DEL(ov, o);
        override_free(o);
    }
}

static exec_entry_t *entry(uint64_t exec, bool create)
{
    exec_entry_t *e = NULL;
    HASH_FIND(hh, execs, &exec, sizeof exec, e);
    if (!e && create && (e = calloc(1, sizeof *e)) != NULL) {
        e->exec = exec;
        HASH_ADD(hh, execs, exec, sizeof e->exec, e);
    }
    return e;
}

void sg_execs_bind(CUgraphExec exec, CUgraph graph)
{
    pthread_mutex_lock(&lock);
    exec_entry_t *e = entry((uint64_t)(uintptr_t)exec, true);
    if (e) {
        e->graph = (uint64_t)(uintptr_t)graph;
        set_dirty(e, false);
        e->unrecordable[0] = '\0';
        sg_execs_free_overrides(e->ov);
        e->ov = NULL;
    }
    pthread_mutex_unlock(&lock);
}

void sg_execs_forget(CUgraphExec exec)
{
    uint64_t key = (uint64_t)(uintptr_t)exec;
    pthread_mutex_lock(&lock);
    exec_entry_t *e = entry(key, false);
    if (e) {
        set_dirty(e, false);
        HASH_DEL(execs, e);
        sg_execs_free_overrides(e->ov);
        free(e);
    }
    pthread_mutex_unlock(&lock);
}

void sg_execs_graph_destroyed(CUgraph graph)
{
    uint64_t g = (uint64_t)(uintptr_t)graph;
    pthread_mutex_lock(&lock);
    exec_entry_t *e, *tmp;
    HASH_ITER(hh, execs, e, tmp)
    {
        if (e->graph == g) e->graph = 0;
    }
    pthread_mutex_unlock(&lock);
}

/* The argument bytes of a kernel launch, laid out by the kernel's own
 * parameter info, so the copy outlives the caller's arrays. */
static int copy_kernel(sg_override_t *o, const CUDA_KERNEL_NODE_PARAMS *p)
{
    o->kernel = *p;
    o->kernel.kernelParams = NULL;
    o->kernel.extra = NULL;
    if (p->kernelParams) {
        const sg_kinfo_t *ki = sg_kinfo_get(p->func, p->kern);
        o->bytes = calloc(1, ki->total ? ki->total : 1);
        o->args = calloc(ki->n_params ? ki->n_params : 1, sizeof *o->args);
        if (!o->bytes || !o->args) return SG_ENOMEM;
        for (uint32_t i = 0; i < ki->n_params; i++) {
            if (p->kernelParams[i])
                memcpy(o->bytes + ki->offs[i], p->kernelParams[i], ki->sizes[i]);
            o->args[i] = o->bytes + ki->offs[i];
        }
        o->kernel.kernelParams = o->args;
    } else if (p->extra) {
        void *buf = NULL;
        size_t len = 0;
        for (int i = 0; i < 64 && p->extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (p->extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buf = p->extra[i + 1];
            if (p->extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && p->extra[i + 1])
                len = *(size_t *)p->extra[i + 1];
        }
        if (buf && len && len <= (1u << 20)) {
            o->bytes = malloc(len);
            if (!o->bytes) return SG_ENOMEM;
            memcpy(o->bytes, buf, len);
            o->extra_size = len;
            o->extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
            o->extra[1] = o->bytes;
            o->extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
            o->extra[3] = &o->extra_size;
            o->extra[4] = CU_LAUNCH_PARAM_END;
            o->kernel.extra = o->extra;
        }
    }
    return SG_OK;
}

static void set_override(exec_entry_t *e, uint64_t node, CUgraphNodeType type,
                         const CUDA_KERNEL_NODE_PARAMS *k, const CUDA_MEMCPY3D *c,
                         const CUDA_MEMSET_NODE_PARAMS *m)
{
    sg_override_t *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(e->unrecordable, sizeof e->unrecordable, "out of memory keeping its changes");
        return;
    }
    o->node = node;
    o->type = type;
    int rc = SG_OK;
    if (k) rc = copy_kernel(o, k);
    if (c) o->memcpy = *c;
    if (m) o->memset = *m;
    if (rc) {
        override_free(o);
        snprintf(e->unrecordable, sizeof e->unrecordable, "out of memory keeping its changes");
        return;
    }
    sg_override_t *old = NULL;
    HASH_FIND(hh, e->ov, &node, sizeof node, old);
    if (old) {
        HASH_DEL(e->ov, old);
        override_free(old);
    }
    HASH_ADD(hh, e->ov, node, sizeof o->node, o);
    set_dirty(e, true);
}

static void unrecordable(exec_entry_t *e, const char *fn)
{
    set_dirty(e, true);
    if (!e->unrecordable[0])
        snprintf(e->unrecordable, sizeof e->unrecordable,
                 "%s changed it in a way sgcap does not model", fn);
}

void sg_execs_on_set(sg_call_t *c)
{
    if (c->result != CUDA_SUCCESS) return;
    uint64_t exec = 0, node = 0;
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    const CUDA_KERNEL_NODE_PARAMS *k = NULL;
    CUDA_KERNEL_NODE_PARAMS kv2;
    const CUDA_MEMCPY3D *cp = NULL;
    const CUDA_MEMSET_NODE_PARAMS *ms = NULL;
    CUDA_MEMSET_NODE_PARAMS msv1;
    const char *other = NULL;
    switch (c->proto) {
    case SG_FN_cuGraphExecKernelNodeSetParams_v2: {
        sg_args_cuGraphExecKernelNodeSetParams_v2_t *a =
            SG_CALL_ARGS(c, cuGraphExecKernelNodeSetParams_v2);
        exec = (uint64_t)(uintptr_t)a->hGraphExec, node = (uint64_t)(uintptr_t)a->hNode;
        type = CU_GRAPH_NODE_TYPE_KERNEL;
        k = a->nodeParams;
        break;
    }
    case SG_FN_cuGraphExecMemcpyNodeSetParams: {
        sg_args_cuGraphExecMemcpyNodeSetParams_t *a =
            SG_CALL_ARGS(c, cuGraphExecMemcpyNodeSetParams);
        exec = (uint64_t)(uintptr_t)a->hGraphExec, node = (uint64_t)(uintptr_t)a->hNode;
        type = CU_GRAPH_NODE_TYPE_MEMCPY;
        cp = a->copyParams;
        break;
    }
    case SG_FN_cuGraphExecMemsetNodeSetParams: {
        sg_args_cuGraphExecMemsetNodeSetParams_t *a =
            SG_CALL_ARGS(c, cuGraphExecMemsetNodeSetParams);
        exec = (uint64_t)(uintptr_t)a->hGraphExec, node = (uint64_t)(uintptr_t)a->hNode;
        type = CU_GRAPH_NODE_TYPE_MEMSET;
        ms = a->memsetParams;
        break;
    }
    case SG_FN_cuGraphExecNodeSetParams: {
        sg_args_cuGraphExecNodeSetParams_t *a = SG_CALL_ARGS(c, cuGraphExecNodeSetParams);
        exec = (uint64_t)(uintptr_t)a->hGraphExec, node = (uint64_t)(uintptr_t)a->hNode;
        const CUgraphNodeParams *p = a->nodeParams;
        if (!p) return;
        type = p->type;
        if (p->type == CU_GRAPH_NODE_TYPE_KERNEL) {
            const CUDA_KERNEL_NODE_PARAMS_v3 *v3 = &p->kernel;
            memset(&kv2, 0, sizeof kv2);
            kv2.func = v3->func;
            kv2.gridDimX = v3->gridDimX, kv2.gridDimY = v3->gridDimY, kv2.gridDimZ = v3->gridDimZ;
            kv2.blockDimX = v3->blockDimX, kv2.blockDimY = v3->blockDimY;
            kv2.blockDimZ = v3->blockDimZ;
            kv2.sharedMemBytes = v3->sharedMemBytes;
            kv2.kernelParams = v3->kernelParams;
            kv2.extra = v3->extra;
            kv2.kern = v3->kern;
            kv2.ctx = v3->ctx;
            k = &kv2;
        } else if (p->type == CU_GRAPH_NODE_TYPE_MEMCPY) {
            cp = &p->memcpy.copyParams;
        } else if (p->type == CU_GRAPH_NODE_TYPE_MEMSET) {
            msv1.dst = p->memset.dst;
            msv1.pitch = p->memset.pitch;
            msv1.value = p->memset.value;
            msv1.elementSize = p->memset.elementSize;
            msv1.width = p->memset.width;
            msv1.height = p->memset.height;
            ms = &msv1;
        } else {
            other = "cuGraphExecNodeSetParams (a node type other than kernel, copy or set)";
        }
        break;
    }
#define SG_EXEC_OTHER(name)                                                                        \
    case SG_FN_##name:                                                                             \
        exec = (uint64_t)(uintptr_t)SG_CALL_ARGS(c, name)->hGraphExec;                             \
        other = #name;                                                                             \
        break;
        SG_EXEC_OTHER(cuGraphExecKernelNodeSetParams) /* the pre-12.0 ABI */
        SG_EXEC_OTHER(cuGraphExecHostNodeSetParams)
        SG_EXEC_OTHER(cuGraphExecChildGraphNodeSetParams)
        SG_EXEC_OTHER(cuGraphExecEventRecordNodeSetEvent)
        SG_EXEC_OTHER(cuGraphExecEventWaitNodeSetEvent)
        SG_EXEC_OTHER(cuGraphNodeSetEnabled)
#undef SG_EXEC_OTHER
    default:
        return;
    }
    pthread_mutex_lock(&lock);
    exec_entry_t *e = entry(exec, false);
    if (e) {
        if (other)
            unrecordable(e, other);
        else
            set_override(e, node, type, k, cp, ms);
    }
    pthread_mutex_unlock(&lock);
}

static sg_override_t *clone_all(const sg_override_t *ov, bool *ok)
{
    sg_override_t *out = NULL;
    *ok = true;
    for (const sg_override_t *o = ov; o; o = o->hh.next) {
        sg_override_t *c = calloc(1, sizeof *c);
        if (!c) {
            *ok = false;
            break;
        }
        *c = *o;
        memset(&c->hh, 0, sizeof c->hh);
        c->args = NULL;
        c->bytes = NULL;
        int rc = SG_OK;
        if (o->type == CU_GRAPH_NODE_TYPE_KERNEL) {
            /* copy_kernel from the stored copy: same layout, own arrays */
            rc = copy_kernel(c, &o->kernel);
        }
        if (rc) {
            override_free(c);
            *ok = false;
            break;
        }
        HASH_ADD(hh, out, node, sizeof c->node, c);
    }
    if (!*ok) {
        sg_execs_free_overrides(out);
        out = NULL;
    }
    return out;
}

int sg_execs_pending(CUgraphExec exec, CUgraph *graph, sg_override_t **ov, char *why, size_t n)
{
    *graph = NULL;
    *ov = NULL;
    int rc = 0;
    if (atomic_load_explicit(&n_dirty, memory_order_acquire) == 0) return 0;
    pthread_mutex_lock(&lock);
    exec_entry_t *e = entry((uint64_t)(uintptr_t)exec, false);
    if (e && e->dirty) {
        set_dirty(e, false);
        if (e->unrecordable[0]) {
            snprintf(why, n, "%s", e->unrecordable);
            rc = -1;
        } else if (!e->graph) {
            snprintf(why, n,
                     "its graph was destroyed before the change, so it cannot be read "
                     "again");
            rc = -1;
        } else {
            bool ok;
            *ov = clone_all(e->ov, &ok);
            if (ok) {
                *graph = (CUgraph)(uintptr_t)e->graph;
                rc = 1;
            } else {
                snprintf(why, n, "out of memory copying its changes");
                rc = -1;
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

const sg_override_t *sg_execs_override(const sg_override_t *ov, uint64_t node, CUgraphNodeType type)
{
    const sg_override_t *o = NULL;
    HASH_FIND(hh, ov, &node, sizeof node, o);
    return o && o->type == type ? o : NULL;
}

const CUDA_KERNEL_NODE_PARAMS *sg_override_kernel(const sg_override_t *o)
{
    return &o->kernel;
}
const CUDA_MEMCPY3D *sg_override_memcpy(const sg_override_t *o)
{
    return &o->memcpy;
}
const CUDA_MEMSET_NODE_PARAMS *sg_override_memset(const sg_override_t *o)
{
    return &o->memset;
}

void sg_execs_atfork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    exec_entry_t *e, *tmp;
    HASH_ITER(hh, execs, e, tmp)
    {
        HASH_DEL(execs, e);
        sg_execs_free_overrides(e->ov);
        free(e);
    }
    atomic_store(&n_dirty, 0);
}
