/* A fake libnvrtc.so.13 (its symbols versioned like the real one's) for the
 * CPU tests: records which function was called. */
#include <nvrtc.h>
#include <stdint.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static char fake_nvrtc_last_name[64];

EXPORT const char *fake_nvrtc_last(void)
{
    return fake_nvrtc_last_name;
}

EXPORT nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name,
                                      int numHeaders, const char *const *headers,
                                      const char *const *includeNames)
{
    strcpy(fake_nvrtc_last_name, "nvrtcCreateProgram");
    *prog = (nvrtcProgram)(uintptr_t)0x4242;
    return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions,
                                       const char *const *options)
{
    strcpy(fake_nvrtc_last_name, "nvrtcCompileProgram");
    return NVRTC_SUCCESS;
}
