/* cuda_api.c: the driver, CUPTI and NVRTC, loaded at run time through
 * code/nvlib.h. Linking them would make every sgcap binary (and every unit
 * test, which links all our libraries) refuse to start on a machine without
 * a GPU driver. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "replay_private.h"

const sg_cupti_api_t *sg_cupti;
const sg_nvrtc_api_t *sg_nvrtc;

int sg_replay__fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

int sg_replay__cu_fail(const sg_replay_driver_t *drv, char *err, size_t errlen, CUresult rc,
                       const char *what)
{
    const char *name = NULL, *desc = NULL;
    if (drv && drv->cuGetErrorName) drv->cuGetErrorName(rc, &name);
    if (drv && drv->cuGetErrorString) drv->cuGetErrorString(rc, &desc);
    return sg_replay__fail(err, errlen, SG_ECUDA, "%s: %s (%s)", what, name ? name : "CUDA error",
                           desc ? desc : "no description");
}

double sg_replay__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* libcuda.so.1 through the one loader, then every entry through
 * cuGetProcAddress_v2 for the CUDA version of these headers. */
static int resolve_driver(sg_replay_driver_t *t, char *first_err, size_t first_errlen)
{
    void *h = sg_nvlib_handle(SG_NVLIB_CUDA, first_err, first_errlen);
    if (!h) return SG_ECUDA;
    __typeof__(&cuGetProcAddress) get =
        (__typeof__(&cuGetProcAddress))dlsym(h, "cuGetProcAddress_v2");
    if (!get)
        return sg_replay__fail(first_err, first_errlen, SG_ECUDA,
                               "the CUDA driver has no cuGetProcAddress_v2: it is older than "
                               "CUDA 12; sgcap needs a CUDA %d.%d driver",
                               CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
    CUdriverProcAddressQueryResult status;
#define SG_RESOLVE(name, abi)                                                                         \
    if (get(#name, (void **)&t->name, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) !=       \
            CUDA_SUCCESS ||                                                                        \
        !t->name)                                                                                  \
        return sg_replay__fail(first_err, first_errlen, SG_ECUDA,                                  \
                               "the CUDA driver lacks %s for CUDA %d.%d (query status %d): "       \
                               "the driver is too old",                                            \
                               #name, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10, (int)status);
    SG_REPLAY_DRIVER_FUNCS(SG_RESOLVE)
#undef SG_RESOLVE
    return SG_OK;
}

int sg_replay_driver_load(sg_replay_driver_t *out, char *err, size_t errlen)
{
    static sg_replay_driver_t table;
    static int state = 1; /* 1 = not tried, else the first result */
    static char first_err[1024];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    if (state == 1) state = resolve_driver(&table, first_err, sizeof first_err);
    int rc = state;
    if (rc == SG_OK)
        *out = table;
    else
        sg_replay__fail(err, errlen, rc, "%s", first_err);
    pthread_mutex_unlock(&lock);
    return rc;
}

int sg_replay__load_cupti(char *err, size_t errlen)
{
    char why[1024];
    const sg_cupti_api_t *api = sg_nvlib_cupti(why, sizeof why);
    if (!api)
        return sg_replay__fail(err, errlen, SG_EUNSUPPORTED, "%s: --profile and --trace need it",
                               why);
    sg_cupti = api;
    return SG_OK;
}

int sg_replay__load_nvrtc(char *err, size_t errlen)
{
    char why[1024];
    const sg_nvrtc_api_t *api = sg_nvlib_nvrtc(why, sizeof why);
    if (!api)
        return sg_replay__fail(err, errlen, SG_EUNSUPPORTED,
                               "%s: NVRTC source images cannot be compiled here", why);
    sg_nvrtc = api;
    return SG_OK;
}
