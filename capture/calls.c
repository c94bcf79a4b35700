/* calls.c: a graph known by the calls that captured it.
 *
 * A program that re-captures its graph every step (a solver with new
 * coefficients, bench_recapture) makes the same calls, or the same calls
 * with new scalars, again and again. The raw digest (rawdigest.c) reads
 * each graph back from the driver: ~20 queries and ~1 us a step on the
 * H200, half of what the shim costs such a program. Here the book
 * (book.h: sg_book_calls_*) hashes what the capture did as it happens:
 * each stream's identity, each node's stream, order and predecessors,
 * each event record and wait, and, noted by this file, each kernel
 * launch's function, geometry, attributes and argument bytes laid out by
 * the kernel's parameter info (the argument bytes in their own run, and
 * the words that point into known device memory in the shape, as the raw
 * digest does). shim.c keeps a memo from these call hashes to the raw
 * digest and shape they were found to have; a later graph with the same
 * call hashes is taken to have them too and is not read back.
 *
 * What makes that sound: a capture's graph is decided by the calls made
 * into it and by state those calls read. The calls are all seen (the book
 * turns the digest off for any node made by a call not described here:
 * copies, sets, host functions, graph memory, child graphs, updated
 * dependencies, captures into an existing graph) and the state is in the
 * salt or checked: stream and function attributes (a counter of the calls
 * that change them, in the salt), the memory map and the kernel facts
 * (their generations, in the salt and checked at the end), and the graph
 * itself, which a program could change between the end of the capture and
 * instantiation (a counter of every graph- and node-changing entry point,
 * checked, together with the node count the driver reports). Any doubt
 * turns the memo off for that graph: it is read back as before. A memo
 * miss costs what it always did. SGCAP_VERIFY_DIGEST=1 reads every graph
 * back anyway and counts memo answers that differ (the summary says).
 *
 * Under the hot lock, except where said. */
#include "shim.h"

#include <string.h>
#include <xxhash.h>

#include "graph/bundle.h"

/* The counters (relaxed atomics: a change made on another thread without
 * the program's own synchronisation is a race in the program anyway). */
static _Atomic uint64_t graph_changes, attr_changes;

void sg_shim_calls_graph_changed(void)
{
    atomic_fetch_add_explicit(&graph_changes, 1, memory_order_relaxed);
}

void sg_shim_calls_attr_changed(void)
{
    atomic_fetch_add_explicit(&attr_changes, 1, memory_order_relaxed);
}

/* What must not change between a capture's begin and its graph's digest. */
static uint64_t world(void)
{
    uint64_t w[3] = {atomic_load_explicit(&graph_changes, memory_order_relaxed),
                     sg_shim.mem.generation, sg_kinfo_generation()};
    return XXH3_64bits(w, sizeof w);
}

void sg_shim_calls_begin(uint64_t key)
{
    uint64_t salt[4] = {0x63616c6c73ull /* "calls" */,
                        atomic_load_explicit(&attr_changes, memory_order_relaxed),
                        sg_shim.mem.generation, sg_kinfo_generation()};
    sg_book_calls_begin(sg_shim.book, key, world(), salt, sizeof salt);
}

/* The attributes of a cuLaunchKernelEx we can describe by value: false for
 * any other (an event handle, a policy window, one added after CUDA 13.0). */
static bool launch_attrs(sg_bytes_t *shape, const CUlaunchAttribute *a, unsigned n)
{
    if (n && !a) return false;
    for (unsigned i = 0; i < n; i++) {
        uint64_t w[4] = {(uint64_t)a[i].id, 0, 0, 0};
        const CUlaunchAttributeValue *v = &a[i].value;
        switch (a[i].id) {
        case CU_LAUNCH_ATTRIBUTE_IGNORE:
            continue;
        case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
            w[1] = (uint64_t)v->cooperative;
            break;
        case CU_LAUNCH_ATTRIBUTE_PRIORITY:
            w[1] = (uint64_t)(int64_t)v->priority;
            break;
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
            w[1] = v->clusterDim.x, w[2] = v->clusterDim.y, w[3] = v->clusterDim.z;
            break;
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
            w[1] = (uint64_t)v->clusterSchedulingPolicyPreference;
            break;
        case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
            w[1] = (uint64_t)v->programmaticStreamSerializationAllowed;
            break;
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
            w[1] = (uint64_t)v->memSyncDomain;
            break;
        case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
            w[1] = (uint64_t)v->sharedMemCarveout;
            break;
        default:
            return false;
        }
        sg_bytes_put(shape, w, sizeof w);
    }
    return true;
}

/* Straight into the book's runs (book.h: sg_book_calls_runs); a launch
 * that cannot be described takes its bytes back and is not noted. */
void sg_shim_calls_note(uint64_t key, const sg_call_t *c)
{
    /* a capture the calls no longer describe (a copy, a set, a host
     * function made a node) is read back anyway: no need to describe more */
    sg_bytes_t *shape, *args;
    sg_book_calls_t *bc = sg_book_calls_runs(sg_shim.book, key, &shape, &args);
    if (!bc) return;
    size_t shape0 = shape->n, args0 = args->n;
    uint32_t geo[7];
    CUfunction f;
    void **params, **extra = NULL;
    bool ok = true;
    sg_bytes_u32(shape, (uint32_t)c->proto);
    switch (c->proto) {
    case SG_FN_cuLaunchKernel: {
        const sg_args_cuLaunchKernel_t *a = SG_CALL_ARGS(c, cuLaunchKernel);
        f = a->f, params = a->kernelParams, extra = a->extra;
        uint32_t g[7] = {a->gridDimX,  a->gridDimY,  a->gridDimZ,     a->blockDimX,
                         a->blockDimY, a->blockDimZ, a->sharedMemBytes};
        memcpy(geo, g, sizeof geo);
        break;
    }
    case SG_FN_cuLaunchCooperativeKernel: {
        const sg_args_cuLaunchCooperativeKernel_t *a = SG_CALL_ARGS(c, cuLaunchCooperativeKernel);
        f = a->f, params = a->kernelParams;
        uint32_t g[7] = {a->gridDimX,  a->gridDimY,  a->gridDimZ,     a->blockDimX,
                         a->blockDimY, a->blockDimZ, a->sharedMemBytes};
        memcpy(geo, g, sizeof geo);
        break;
    }
    case SG_FN_cuLaunchKernelEx: {
        const sg_args_cuLaunchKernelEx_t *a = SG_CALL_ARGS(c, cuLaunchKernelEx);
        const CUlaunchConfig *k = a->config;
        if (!k) {
            ok = false;
            break;
        }
        f = a->f, params = a->kernelParams, extra = a->extra;
        uint32_t g[7] = {k->gridDimX,  k->gridDimY,  k->gridDimZ,     k->blockDimX,
                         k->blockDimY, k->blockDimZ, k->sharedMemBytes};
        memcpy(geo, g, sizeof geo);
        sg_bytes_u32(shape, k->numAttrs);
        ok = launch_attrs(shape, k->attrs, k->numAttrs);
        break;
    }
    default: /* not described: the book turns the digest off if it made a node */
        ok = false;
        break;
    }
    if (ok) {
        sg_bytes_u64(shape, (uint64_t)(uintptr_t)f);
        sg_bytes_put(shape, geo, sizeof geo);
        ok = sg_shim_kernel_args(args, shape, sg_kinfo_get(f, NULL), params, extra) == SG_OK &&
             !shape->oom && !args->oom;
    }
    if (!ok) {
        shape->n = shape0, args->n = args0;
        return;
    }
    sg_book_calls_noted(bc);
}

int sg_shim_calls_digest(CUgraph graph, const sg_override_t *ov, sg_raw_digest_t *out)
{
    memset(out, 0, sizeof *out);
    if (ov) return SG_EUNSUPPORTED; /* an exec changed in place: read it back */
    __typeof__(&cuGraphGetNodes) get_nodes = SG_REAL(cuGraphGetNodes);
    if (!get_nodes) return SG_EUNSUPPORTED;
    int rc = SG_EUNSUPPORTED;
    pthread_mutex_lock(&sg_shim.hot);
    const sg_capture_record_t *rec = sg_book_find_record(sg_shim.book, (uint64_t)(uintptr_t)graph);
    if (rec && rec->calls_ok && rec->calls_gen == world()) {
        size_t n = 0;
        if (get_nodes(graph, NULL, &n) == CUDA_SUCCESS && n == rec->n_tags) {
            /* apart from raw digests: a different domain of keys */
            out->shape = rec->calls_shape ^ 0xca11ca11ca11ca11ull;
            out->digest = XXH3_64bits_withSeed(&rec->calls_args, sizeof rec->calls_args,
                                               out->shape);
            out->nodes = (uint32_t)n;
            out->streams = rec->n_streams;
            out->events = rec->n_events;
            out->captured = true;
            rc = SG_OK;
        }
    }
    pthread_mutex_unlock(&sg_shim.hot);
    return rc;
}
