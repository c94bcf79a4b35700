/* The observer seam (see observe.h): one entry point per API family, the
 * SGCAP_LOG=trace line of every intercepted call, the count of active stream
 * captures that decides whether hot calls are observed, and the table of
 * registered observers (capture/ adds itself here). */
#include "inject/internal.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define SG_MAX_OBSERVERS 8

static const sg_observer_t *sg_observers[SG_MAX_OBSERVERS];
static atomic_int sg_observer_count;

int sg_inject_add_observer(const sg_observer_t *observer)
{
    static atomic_int reserved;
    int slot = atomic_fetch_add(&reserved, 1);
    if (observer == NULL || slot >= SG_MAX_OBSERVERS) return -1;
    sg_observers[slot] = observer;
    /* Published in order; a slot is visible only once filled. */
    while (atomic_load(&sg_observer_count) != slot)
        ;
    atomic_store(&sg_observer_count, slot + 1);
    sg_inject_update_watch();
    return 0;
}

void sg_inject_observers_reset_after_fork(void)
{
    /* Observers stay registered; they reset their own state if they need to. */
}

void sg_inject_update_watch(void)
{
    const sg_inject_config_t *c = sg_inject_config();
    int on = c->mode != SG_MODE_OFF;
    int eager = c->log >= SG_LOG_TRACE;
    int n = atomic_load(&sg_observer_count);
    for (int i = 0; i < n; i++)
        eager |= sg_observers[i]->wants_eager;
    atomic_store(&sg_watch_cold, on);
    atomic_store(&sg_watch_hot, on && eager);
}

int sg_inject_active_captures(void)
{
    return atomic_load(&sg_active_captures_count);
}

void sg_inject_capture_began(void)
{
    atomic_fetch_add(&sg_active_captures_count, 1);
}

void sg_inject_capture_ended(void)
{
    int n = atomic_load(&sg_active_captures_count);
    while (n > 0 && !atomic_compare_exchange_weak(&sg_active_captures_count, &n, n - 1))
        ;
}

static inline void sg_dispatch(sg_family_t family, sg_phase_t phase, sg_call_t *call)
{
    int n = atomic_load_explicit(&sg_observer_count, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        const sg_observer_t *o = sg_observers[i];
        if (o->on[family] != NULL) o->on[family](phase, call, o->user);
    }
}

/* ---- the trace line ---- */
static int sg_tracing(void)
{
    return sg_inject_config()->log >= SG_LOG_TRACE;
}

static void sg_format_stream(char *out, size_t size, CUstream s)
{
    if (s == CU_STREAM_LEGACY)
        snprintf(out, size, "0x1(legacy)");
    else if (s == CU_STREAM_PER_THREAD)
        snprintf(out, size, "0x2(per-thread)");
    else
        snprintf(out, size, "%p", (void *)s);
}

/* fn=... [stream=... capture=...] result=... extras */
static void sg_trace(const sg_call_t *call, const char *extras)
{
    char where[160] = "";
    if (call->has_stream) {
        char s[40];
        sg_format_stream(s, sizeof s, call->stream);
        CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
        cuuint64_t id = 0;
        CUresult qr = sg_inject_capture_status(call->stream, &st, &id);
        const char *cap = qr != CUDA_SUCCESS                           ? "unknown"
                          : st == CU_STREAM_CAPTURE_STATUS_ACTIVE      ? "active"
                          : st == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? "invalidated"
                                                                       : "none";
        if (st == CU_STREAM_CAPTURE_STATUS_NONE || qr != CUDA_SUCCESS)
            snprintf(where, sizeof where, " stream=%s capture=%s", s, cap);
        else
            snprintf(where, sizeof where, " stream=%s capture=%s id=%" PRIu64, s, cap,
                     (uint64_t)id);
    }
    sg_inject_log(SG_LOG_TRACE, "trace fn=%s%s result=%d%s%s", sg_inject_fn_name(call->fn), where,
                  call->result, extras && extras[0] ? " " : "", extras ? extras : "");
}

#define SG_A(proto) SG_CALL_ARGS(call, proto)
#define SG_OK (call->result == 0)

/* ---- families ---- */
void sg_observe_procaddr(sg_phase_t phase, sg_call_t *call)
{
    sg_dispatch(SG_FAMILY_PROCADDR, phase, call);
}

void sg_observe_capture(sg_phase_t phase, sg_call_t *call)
{
    if (phase == SG_PHASE_AFTER) {
        int begin = call->proto == SG_FN_cuStreamBeginCapture ||
                    call->proto == SG_FN_cuStreamBeginCapture_v2 ||
                    call->proto == SG_FN_cuStreamBeginCaptureToGraph;
        int end = call->proto == SG_FN_cuStreamEndCapture;
        if (begin && SG_OK) sg_inject_capture_began();
        /* The capture is over (the graph may be NULL) unless the stream was
         * not capturing or belongs to another thread's capture. */
        if (end && (SG_OK || call->result == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED ||
                    call->result == CUDA_ERROR_STREAM_CAPTURE_UNJOINED))
            sg_inject_capture_ended();
        if (sg_tracing()) {
            char x[160] = "";
            switch (call->proto) {
            case SG_FN_cuStreamBeginCapture_v2:
                snprintf(x, sizeof x, "op=begin mode=%d", (int)SG_A(cuStreamBeginCapture_v2)->mode);
                break;
            case SG_FN_cuStreamBeginCapture:
                snprintf(x, sizeof x, "op=begin");
                break;
            case SG_FN_cuStreamBeginCaptureToGraph: {
                sg_args_cuStreamBeginCaptureToGraph_t *a = SG_A(cuStreamBeginCaptureToGraph);
                snprintf(x, sizeof x, "op=begin graph=%p deps=%zu mode=%d", (void *)a->hGraph,
                         a->numDependencies, (int)a->mode);
                break;
            }
            case SG_FN_cuStreamEndCapture: {
                sg_args_cuStreamEndCapture_t *a = SG_A(cuStreamEndCapture);
                snprintf(x, sizeof x, "op=end graph=%p",
                         SG_OK && a->phGraph ? (void *)*a->phGraph : NULL);
                break;
            }
            case SG_FN_cuStreamUpdateCaptureDependencies:
                snprintf(x, sizeof x, "op=update deps=%zu flags=%u",
                         SG_A(cuStreamUpdateCaptureDependencies)->numDependencies,
                         SG_A(cuStreamUpdateCaptureDependencies)->flags);
                break;
            case SG_FN_cuStreamUpdateCaptureDependencies_v2:
                snprintf(x, sizeof x, "op=update deps=%zu flags=%u",
                         SG_A(cuStreamUpdateCaptureDependencies_v2)->numDependencies,
                         SG_A(cuStreamUpdateCaptureDependencies_v2)->flags);
                break;
            default:
                break;
            }
            sg_trace(call, x);
        }
    }
    sg_dispatch(SG_FAMILY_CAPTURE, phase, call);
}

void sg_observe_capinfo(sg_phase_t phase, sg_call_t *call)
{
    if (phase == SG_PHASE_AFTER && sg_tracing()) sg_trace(call, "op=query");
    sg_dispatch(SG_FAMILY_CAPINFO, phase, call);
}

void sg_observe_event(sg_phase_t phase, sg_call_t *call)
{
    if (phase == SG_PHASE_AFTER && sg_tracing()) {
        char x[96];
        if (call->proto == SG_FN_cuEventRecordWithFlags)
            snprintf(x, sizeof x, "event=%p flags=%u", (void *)SG_A(cuEventRecordWithFlags)->hEvent,
                     SG_A(cuEventRecordWithFlags)->flags);
        else
            snprintf(x, sizeof x, "event=%p", (void *)SG_A(cuEventRecord)->hEvent);
        sg_trace(call, x);
    }
    sg_dispatch(SG_FAMILY_EVENT, phase, call);
}

void sg_observe_wait(sg_phase_t phase, sg_call_t *call)
{
    if (phase == SG_PHASE_AFTER && sg_tracing()) {
        char x[96];
        snprintf(x, sizeof x, "event=%p flags=%u", (void *)SG_A(cuStreamWaitEvent)->hEvent,
                 SG_A(cuStreamWaitEvent)->Flags);
        sg_trace(call, x);
    }
    sg_dispatch(SG_FAMILY_WAIT, phase, call);
}

void sg_observe_launch(sg_phase_t phase, sg_call_t *call)
{
    if (phase == SG_PHASE_AFTER && sg_tracing()) {
        char x[192] = "";
        switch (call->proto) {
        case SG_FN_cuLaunchKernel: {
            sg_args_cuLaunchKernel_t *a = SG_A(cuLaunchKernel);
            snprintf(x, sizeof x, "func=%p grid=%u,%u,%u block=%u,%u,%u smem=%u", (void *)a->f,
                     a->gridDimX, a->gridDimY, a->gridDimZ, a->blockDimX, a->blockDimY,
                     a->blockDimZ, a->sharedMemBytes);
            break;
        }
        case SG_FN_cuLaunchCooperativeKernel: {
            sg_args_cuLaunchCooperativeKernel_t *a = SG_A(cuLaunchCooperativeKernel);
            snprintf(x, sizeof x, "func=%p grid=%u,%u,%u block=%u,%u,%u smem=%u cooperative",
                     (void *)a->f, a->gridDimX, a->gridDimY, a->gridDimZ, a->blockDimX,
                     a->blockDimY, a->blockDimZ, a->sharedMemBytes);
            break;
        }
        case SG_FN_cuLaunchKernelEx: {
            sg_args_cuLaunchKernelEx_t *a = SG_A(cuLaunchKernelEx);
            const CUlaunchConfig *c = a->config;
            if (c != NULL)
                snprintf(x, sizeof x, "func=%p grid=%u,%u,%u block=%u,%u,%u smem=%u attrs=%u",
                         (void *)a->f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
                         c->blockDimY, c->blockDimZ, c->sharedMemBytes, c->numAttrs);
            break;
        }
        case SG_FN_cuLaunchHostFunc:
            snprintf(x, sizeof x, "hostfn=%p", (void *)SG_A(cuLaunchHostFunc)->fn);
            break;
        default:
            break;
        }
        sg_trace(call, x);
    }
    sg_dispatch(SG_FAMILY_LAUNCH, phase, call);
}

void sg_observe_copy(sg_phase_t phase, sg_call_t *call)
{
    if (phase == SG_PHASE_AFTER && sg_tracing()) {
        char x[128] = "";
        switch (call->proto) {
        case SG_FN_cuMemcpyAsync:
            snprintf(x, sizeof x, "dst=%#llx src=%#llx bytes=%zu",
                     (unsigned long long)SG_A(cuMemcpyAsync)->dst,
                     (unsigned long long)SG_A(cuMemcpyAsync)->src, SG_A(cuMemcpyAsync)->ByteCount);
            break;
        case SG_FN_cuMemcpyHtoDAsync_v2:
            snprintf(x, sizeof x, "kind=HtoD bytes=%zu", SG_A(cuMemcpyHtoDAsync_v2)->ByteCount);
            break;
        case SG_FN_cuMemcpyDtoHAsync_v2:
            snprintf(x, sizeof x, "kind=DtoH bytes=%zu", SG_A(cuMemcpyDtoHAsync_v2)->ByteCount);
            break;
        case SG_FN_cuMemcpyDtoDAsync_v2:
            snprintf(x, sizeof x, "kind=DtoD bytes=%zu", SG_A(cuMemcpyDtoDAsync_v2)->ByteCount);
            break;
        default:
            break;
        }
        sg_trace(call, x);
    }
    sg_dispatch(SG_FAMILY_COPY, phase, call);
}

void sg_observe_memset(sg_phase_t phase, sg_call_t *call)
{
    if (phase == SG_PHASE_AFTER && sg_tracing()) {
        char x[96] = "";
        if (call->proto == SG_FN_cuMemsetD8Async)
            snprintf(x, sizeof x, "dst=%#llx n=%zu",
                     (unsigned long long)SG_A(cuMemsetD8Async)->dstDevice,
                     SG_A(cuMemsetD8Async)->N);
        else if (call->proto == SG_FN_cuMemsetD32Async)
            snprintf(x, sizeof x, "dst=%#llx n=%zu",
                     (unsigned long long)SG_A(cuMemsetD32Async)->dstDevice,
                     SG_A(cuMemsetD32Async)->N);
        sg_trace(call, x);
    }
    sg_dispatch(SG_FAMILY_MEMSET, phase, call);
}

void sg_observe_alloc(sg_phase_t phase, sg_call_t *call)
{
    if (phase == SG_PHASE_AFTER && sg_tracing()) {
        char x[128] = "";
        unsigned long long ptr = 0;
        size_t size = 0;
        switch (call->proto) {
        case SG_FN_cuMemAlloc_v2:
            ptr = SG_OK ? *SG_A(cuMemAlloc_v2)->dptr : 0;
            size = SG_A(cuMemAlloc_v2)->bytesize;
            break;
        case SG_FN_cuMemAllocAsync:
            ptr = SG_OK ? *SG_A(cuMemAllocAsync)->dptr : 0;
            size = SG_A(cuMemAllocAsync)->bytesize;
            break;
        case SG_FN_cuMemAllocFromPoolAsync:
            ptr = SG_OK ? *SG_A(cuMemAllocFromPoolAsync)->dptr : 0;
            size = SG_A(cuMemAllocFromPoolAsync)->bytesize;
            break;
        case SG_FN_cuMemAllocManaged:
            ptr = SG_OK ? *SG_A(cuMemAllocManaged)->dptr : 0;
            size = SG_A(cuMemAllocManaged)->bytesize;
            break;
        case SG_FN_cuMemAllocPitch_v2:
            ptr = SG_OK ? *SG_A(cuMemAllocPitch_v2)->dptr : 0;
            size = SG_OK ? *SG_A(cuMemAllocPitch_v2)->pPitch * SG_A(cuMemAllocPitch_v2)->Height : 0;
            break;
        case SG_FN_cuMemAddressReserve:
            ptr = SG_OK ? *SG_A(cuMemAddressReserve)->ptr : 0;
            size = SG_A(cuMemAddressReserve)->size;
            break;
        case SG_FN_cuMemMap:
            ptr = SG_A(cuMemMap)->ptr;
            size = SG_A(cuMemMap)->size;
            break;
        case SG_FN_cuMemCreate:
            ptr = SG_OK ? (unsigned long long)*SG_A(cuMemCreate)->handle : 0;
            size = SG_A(cuMemCreate)->size;
            break;
        case SG_FN_cuMemHostAlloc:
            ptr = SG_OK ? (unsigned long long)(uintptr_t)*SG_A(cuMemHostAlloc)->pp : 0;
            size = SG_A(cuMemHostAlloc)->bytesize;
            break;
        case SG_FN_cuMemAllocHost_v2:
            ptr = SG_OK ? (unsigned long long)(uintptr_t)*SG_A(cuMemAllocHost_v2)->pp : 0;
            size = SG_A(cuMemAllocHost_v2)->bytesize;
            break;
        default:
            break;
        }
        if (ptr != 0 || size != 0) snprintf(x, sizeof x, "ptr=%#llx size=%zu", ptr, size);
        sg_trace(call, x);
    }
    sg_dispatch(SG_FAMILY_ALLOC, phase, call);
}

void sg_observe_free(sg_phase_t phase, sg_call_t *call)
{
    if (phase == SG_PHASE_AFTER && sg_tracing()) {
        char x[64] = "";
        if (call->proto == SG_FN_cuMemFree_v2)
            snprintf(x, sizeof x, "ptr=%#llx", (unsigned long long)SG_A(cuMemFree_v2)->dptr);
        else if (call->proto == SG_FN_cuMemFreeAsync)
            snprintf(x, sizeof x, "ptr=%#llx", (unsigned long long)SG_A(cuMemFreeAsync)->dptr);
        sg_trace(call, x);
    }
    sg_dispatch(SG_FAMILY_FREE, phase, call);
}

void sg_observe_pool(sg_phase_t phase, sg_call_t *call)
{
    if (phase == SG_PHASE_AFTER && sg_tracing()) sg_trace(call, "");
    sg_dispatch(SG_FAMILY_POOL, phase, call);
}

void sg_observe_graph(sg_phase_t phase, sg_call_t *call)
{
    if (phase == SG_PHASE_AFTER && sg_tracing()) {
        char x[128] = "";
        switch (call->proto) {
        case SG_FN_cuGraphInstantiateWithFlags: {
            sg_args_cuGraphInstantiateWithFlags_t *a = SG_A(cuGraphInstantiateWithFlags);
            snprintf(x, sizeof x, "graph=%p exec=%p flags=%#llx", (void *)a->hGraph,
                     SG_OK ? (void *)*a->phGraphExec : NULL, a->flags);
            break;
        }
        case SG_FN_cuGraphInstantiateWithParams: {
            sg_args_cuGraphInstantiateWithParams_t *a = SG_A(cuGraphInstantiateWithParams);
            snprintf(x, sizeof x, "graph=%p exec=%p", (void *)a->hGraph,
                     SG_OK ? (void *)*a->phGraphExec : NULL);
            break;
        }
        case SG_FN_cuGraphInstantiate:
        case SG_FN_cuGraphInstantiate_v2: {
            sg_args_cuGraphInstantiate_t *a = SG_A(cuGraphInstantiate);
            snprintf(x, sizeof x, "graph=%p exec=%p", (void *)a->hGraph,
                     SG_OK ? (void *)*a->phGraphExec : NULL);
            break;
        }
        case SG_FN_cuGraphLaunch:
            snprintf(x, sizeof x, "exec=%p", (void *)SG_A(cuGraphLaunch)->hGraph);
            break;
        case SG_FN_cuGraphUpload:
            snprintf(x, sizeof x, "exec=%p", (void *)SG_A(cuGraphUpload)->hGraph);
            break;
        case SG_FN_cuGraphExecUpdate_v2:
            snprintf(x, sizeof x, "exec=%p graph=%p",
                     (void *)SG_A(cuGraphExecUpdate_v2)->hGraphExec,
                     (void *)SG_A(cuGraphExecUpdate_v2)->hGraph);
            break;
        case SG_FN_cuGraphDestroy:
            snprintf(x, sizeof x, "graph=%p", (void *)SG_A(cuGraphDestroy)->hGraph);
            break;
        case SG_FN_cuGraphExecDestroy:
            snprintf(x, sizeof x, "exec=%p", (void *)SG_A(cuGraphExecDestroy)->hGraphExec);
            break;
#define SG_EXEC_SET(name)                                                                          \
    case SG_FN_##name:                                                                             \
        snprintf(x, sizeof x, "exec=%p node=%p", (void *)SG_A(name)->hGraphExec,                   \
                 (void *)SG_A(name)->hNode);                                                       \
        break;
            SG_EXEC_SET(cuGraphExecKernelNodeSetParams)
            SG_EXEC_SET(cuGraphExecKernelNodeSetParams_v2)
            SG_EXEC_SET(cuGraphExecMemcpyNodeSetParams)
            SG_EXEC_SET(cuGraphExecMemsetNodeSetParams)
            SG_EXEC_SET(cuGraphExecNodeSetParams)
            SG_EXEC_SET(cuGraphExecHostNodeSetParams)
            SG_EXEC_SET(cuGraphExecChildGraphNodeSetParams)
            SG_EXEC_SET(cuGraphExecEventRecordNodeSetEvent)
            SG_EXEC_SET(cuGraphExecEventWaitNodeSetEvent)
            SG_EXEC_SET(cuGraphNodeSetEnabled)
#undef SG_EXEC_SET
        default:
            break;
        }
        sg_trace(call, x);
    }
    sg_dispatch(SG_FAMILY_GRAPH, phase, call);
}

void sg_observe_module(sg_phase_t phase, sg_call_t *call)
{
    if (phase == SG_PHASE_AFTER && sg_tracing()) {
        char x[160] = "";
        switch (call->proto) {
        case SG_FN_cuModuleLoad:
            snprintf(x, sizeof x, "module=%p file=%.100s",
                     SG_OK ? (void *)*SG_A(cuModuleLoad)->module : NULL,
                     SG_A(cuModuleLoad)->fname ? SG_A(cuModuleLoad)->fname : "");
            break;
        case SG_FN_cuModuleLoadData:
            snprintf(x, sizeof x, "module=%p image=%p",
                     SG_OK ? (void *)*SG_A(cuModuleLoadData)->module : NULL,
                     SG_A(cuModuleLoadData)->image);
            break;
        case SG_FN_cuModuleLoadDataEx:
            snprintf(x, sizeof x, "module=%p image=%p",
                     SG_OK ? (void *)*SG_A(cuModuleLoadDataEx)->module : NULL,
                     SG_A(cuModuleLoadDataEx)->image);
            break;
        case SG_FN_cuModuleLoadFatBinary:
            snprintf(x, sizeof x, "module=%p image=%p",
                     SG_OK ? (void *)*SG_A(cuModuleLoadFatBinary)->module : NULL,
                     SG_A(cuModuleLoadFatBinary)->fatCubin);
            break;
        case SG_FN_cuLibraryLoadData:
            snprintf(x, sizeof x, "library=%p image=%p",
                     SG_OK ? (void *)*SG_A(cuLibraryLoadData)->library : NULL,
                     SG_A(cuLibraryLoadData)->code);
            break;
        case SG_FN_cuLibraryLoadFromFile:
            snprintf(x, sizeof x, "library=%p file=%.100s",
                     SG_OK ? (void *)*SG_A(cuLibraryLoadFromFile)->library : NULL,
                     SG_A(cuLibraryLoadFromFile)->fileName ? SG_A(cuLibraryLoadFromFile)->fileName
                                                           : "");
            break;
        default:
            break;
        }
        sg_trace(call, x);
    }
    sg_dispatch(SG_FAMILY_MODULE, phase, call);
}

void sg_observe_nvrtc(sg_phase_t phase, sg_call_t *call)
{
    if (phase == SG_PHASE_AFTER && sg_tracing()) {
        char x[160] = "";
        if (call->proto == SG_FN_nvrtcCreateProgram) {
            sg_args_nvrtcCreateProgram_t *a = SG_A(nvrtcCreateProgram);
            snprintf(x, sizeof x, "prog=%p name=%.80s source_bytes=%zu",
                     SG_OK && a->prog ? (void *)*a->prog : NULL, a->name ? a->name : "",
                     a->src ? strlen(a->src) : 0);
        } else if (call->proto == SG_FN_nvrtcCompileProgram) {
            snprintf(x, sizeof x, "prog=%p options=%d", (void *)SG_A(nvrtcCompileProgram)->prog,
                     SG_A(nvrtcCompileProgram)->numOptions);
        }
        sg_trace(call, x);
    }
    sg_dispatch(SG_FAMILY_NVRTC, phase, call);
}

void sg_observe_sync(sg_phase_t phase, sg_call_t *call)
{
    if (phase == SG_PHASE_AFTER && sg_tracing()) sg_trace(call, "");
    sg_dispatch(SG_FAMILY_SYNC, phase, call);
}
