/* fake_cupti.c: a fake libcupti.so.13 for the CPU test of libsgcap loaded
 * through CUDA_INJECTION64_PATH alone: one subscriber (a second one is
 * refused, as CUPTI 13.0 does), callbacks enabled per driver callback id,
 * and fake_cupti_dispatch(), which the fake driver (fake_graph_cuda.c) calls
 * on entry and exit of its traced entry points with CUPTI's parameter
 * structs. Nothing else of CUPTI. */
#define _GNU_SOURCE 1
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_result.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT void fake_cupti_dispatch(int site, unsigned cbid, const char *name, const void *params,
                                 const CUresult *result);
static CUpti_CallbackFunc subscriber;
static void *subscriber_data;
static unsigned char enabled[CUPTI_DRIVER_TRACE_CBID_SIZE];

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *ud)
{
    /* FAKE_CUPTI_BUSY: a profiler subscribed first */
    if (subscriber || getenv("FAKE_CUPTI_BUSY"))
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    subscriber = cb;
    subscriber_data = ud;
    *sub = (CUpti_SubscriberHandle)&subscriber;
    /* tell the fake driver where to report calls (it looks nothing up per call) */
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void (*tell)(void *) = drv ? (void (*)(void *))dlsym(drv, "fake_cuda_cupti_loaded") : NULL;
    if (tell) tell((void *)fake_cupti_dispatch);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle sub,
                                       CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    if (sub != (CUpti_SubscriberHandle)&subscriber || domain != CUPTI_CB_DOMAIN_DRIVER_API ||
        cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    enabled[cbid] = on != 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    *s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "multiple subscribers" : "error";
    return CUPTI_SUCCESS;
}

/* site 0 = enter, 1 = exit (result valid). */
EXPORT void fake_cupti_dispatch(int site, unsigned cbid, const char *name, const void *params,
                                const CUresult *result)
{
    if (!subscriber || cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE || !enabled[cbid]) return;
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.callbackSite = site ? CUPTI_API_EXIT : CUPTI_API_ENTER;
    d.functionName = name;
    d.functionParams = params;
    d.functionReturnValue = site ? (void *)result : NULL;
    subscriber(subscriber_data, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
}
