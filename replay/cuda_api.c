/* cuda_api.c: the driver, CUPTI and NVRTC, loaded at run time. Linking
 * them would make every sgcap binary (and every unit test, which links all
 * our libraries) refuse to start on a machine without a GPU driver. */
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "replay_private.h"

sg_cu_api_t sg_cu;
sg_cupti_api_t sg_cupti;
sg_nvrtc_api_t sg_nvrtc;

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

int sg_replay__cu_fail(char *err, size_t errlen, CUresult rc, const char *what)
{
    const char *name = NULL, *desc = NULL;
    if (sg_cu.cuGetErrorName) sg_cu.cuGetErrorName(rc, &name);
    if (sg_cu.cuGetErrorString) sg_cu.cuGetErrorString(rc, &desc);
    return sg_replay__fail(err, errlen, SG_ECUDA, "%s: %s (%s)", what, name ? name : "CUDA error",
                           desc ? desc : "no description");
}

double sg_replay__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* dlopen the first of `names` that loads: beside this binary (its ../lib,
 * where the build copies CUPTI), then from the search path, this binary's
 * own folder and the toolkit's usual folders, because the GPU machine may
 * not have them on its search path. `tried` gets the list, for the message. */
static void *open_first(const char *const *names, char *tried, size_t triedlen)
{
    char self[PATH_MAX] = "";
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len > 0) {
        self[len] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) *slash = '\0';
    }
    char lib_dir[PATH_MAX + 8];
    snprintf(lib_dir, sizeof lib_dir, "%s/../lib", self);
    /* "" = the search path. The copy in ../lib comes first: it is the
     * library these headers describe (CUPTI's record layouts are versioned
     * with it), while the search path may hold another version. */
    const char *dirs[] = {self[0] ? lib_dir : NULL, "", self[0] ? self : NULL,
                          "/usr/local/cuda/lib64", "/usr/local/cuda/extras/CUPTI/lib64"};
    size_t used = 0;
    if (tried && triedlen) tried[0] = '\0';
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        if (!dirs[d]) continue;
        for (const char *const *n = names; *n; n++) {
            char path[2 * PATH_MAX];
            if (dirs[d][0])
                snprintf(path, sizeof path, "%s/%s", dirs[d], *n);
            else
                snprintf(path, sizeof path, "%s", *n);
            void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (h) return h;
            if (tried && used + 1 < triedlen) {
                int w = snprintf(tried + used, triedlen - used, "%s%s", used ? ", " : "", path);
                if (w > 0) used = used + (size_t)w < triedlen ? used + (size_t)w : triedlen - 1;
            }
        }
    }
    return NULL;
}

int sg_replay__load_cuda(char *err, size_t errlen)
{
    static int state = 1; /* 1 = not tried, else the first result */
    static char first_err[512];
    if (state != 1) {
        if (state) sg_replay__fail(err, errlen, state, "%s", first_err);
        return state;
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        state = sg_replay__fail(first_err, sizeof first_err, SG_ECUDA,
                                "cannot load the CUDA driver (libcuda.so.1): %s; is there an "
                                "NVIDIA GPU and driver on this machine?",
                                dlerror());
        return sg_replay__fail(err, errlen, state, "%s", first_err);
    }
    __typeof__(&cuGetProcAddress) get =
        (__typeof__(&cuGetProcAddress))dlsym(h, "cuGetProcAddress_v2");
    if (!get) {
        state = sg_replay__fail(first_err, sizeof first_err, SG_ECUDA,
                                "the CUDA driver has no cuGetProcAddress_v2: it is older than "
                                "CUDA 12; sgcap needs a CUDA %d.%d driver",
                                CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
        return sg_replay__fail(err, errlen, state, "%s", first_err);
    }
    CUdriverProcAddressQueryResult status;
#define SG_RESOLVE(name)                                                                           \
    if (get(#name, (void **)&sg_cu.name, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) !=    \
            CUDA_SUCCESS ||                                                                        \
        !sg_cu.name) {                                                                             \
        state =                                                                                    \
            sg_replay__fail(first_err, sizeof first_err, SG_ECUDA,                                 \
                            "the CUDA driver lacks %s for CUDA %d.%d (query status %d): "          \
                            "the driver is too old",                                               \
                            #name, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10, (int)status);    \
        return sg_replay__fail(err, errlen, state, "%s", first_err);                               \
    }
    SG_CU_FUNCS(SG_RESOLVE)
#undef SG_RESOLVE
    state = SG_OK;
    return SG_OK;
}

int sg_replay__load_cupti(char *err, size_t errlen)
{
    static int state = 1;
    static char first_err[1024];
    if (state != 1) {
        if (state) sg_replay__fail(err, errlen, state, "%s", first_err);
        return state;
    }
    static const char *const names[] = {"libcupti.so.13", "libcupti.so", NULL};
    char tried[700];
    void *h = open_first(names, tried, sizeof tried);
    if (!h) {
        state =
            sg_replay__fail(first_err, sizeof first_err, SG_EUNSUPPORTED,
                            "cannot load CUPTI (tried %s): --profile and --trace need it", tried);
        return sg_replay__fail(err, errlen, state, "%s", first_err);
    }
#define SG_DLSYM_ONE(name)                                                                         \
    if (!(*(void **)&sg_cupti.name = dlsym(h, #name))) {                                           \
        state = sg_replay__fail(first_err, sizeof first_err, SG_EUNSUPPORTED,                      \
                                "CUPTI has no %s: it is too old for this sgcap", #name);           \
        return sg_replay__fail(err, errlen, state, "%s", first_err);                               \
    }
    SG_CUPTI_FUNCS(SG_DLSYM_ONE)
#undef SG_DLSYM_ONE
    state = SG_OK;
    return SG_OK;
}

int sg_replay__load_nvrtc(char *err, size_t errlen)
{
    static int state = 1;
    static char first_err[1024];
    if (state != 1) {
        if (state) sg_replay__fail(err, errlen, state, "%s", first_err);
        return state;
    }
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so", NULL};
    char tried[700];
    void *h = open_first(names, tried, sizeof tried);
    if (!h) {
        state = sg_replay__fail(first_err, sizeof first_err, SG_EUNSUPPORTED,
                                "cannot load NVRTC (tried %s): NVRTC source images cannot be "
                                "compiled here",
                                tried);
        return sg_replay__fail(err, errlen, state, "%s", first_err);
    }
#define SG_DLSYM_ONE(name)                                                                         \
    if (!(*(void **)&sg_nvrtc.name = dlsym(h, #name))) {                                           \
        state = sg_replay__fail(first_err, sizeof first_err, SG_EUNSUPPORTED,                      \
                                "NVRTC has no %s: it is too old for this sgcap", #name);           \
        return sg_replay__fail(err, errlen, state, "%s", first_err);                               \
    }
    SG_NVRTC_FUNCS(SG_DLSYM_ONE)
#undef SG_DLSYM_ONE
    state = SG_OK;
    return SG_OK;
}
