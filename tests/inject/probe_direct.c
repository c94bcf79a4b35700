/* A program linked with -lcuda and -lnvrtc (the fake ones) that calls the
 * driver and NVRTC directly, as programs using the driver API do: under
 * LD_PRELOAD its references must bind to libsgcap's exported definitions,
 * including NVRTC's versioned ones (nvrtcCreateProgram@libnvrtc.so.13). */
#define _GNU_SOURCE 1
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <nvrtc.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

const char *fake_last(void);
const char *fake_nvrtc_last(void);

static const char *where(void *p)
{
    Dl_info i;
    if (!dladdr(p, &i) || i.dli_fname == NULL) return "unknown";
    return strstr(i.dli_fname, "libsgcap")   ? "sgcap"
           : strstr(i.dli_fname, "libcuda")  ? "cuda"
           : strstr(i.dli_fname, "libnvrtc") ? "nvrtc"
                                             : "other";
}

int main(void)
{
    CUstream s = (CUstream)0x3000;
    CUgraph g = NULL;
    printf("begin=%d\n", cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    printf("launch=%d reaches=%s\n", cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL),
           fake_last());
    printf("end=%d reaches=%s\n", cuStreamEndCapture(s, &g), fake_last());
    CUdeviceptr p = 0;
    printf("alloc=%d reaches=%s\n", cuMemAlloc_v2(&p, 64), fake_last());
    nvrtcProgram prog = NULL;
    printf("nvrtc_create=%d reaches=%s\n",
           nvrtcCreateProgram(&prog, "__global__ void k(){}", "k.cu", 0, NULL, NULL),
           fake_nvrtc_last());
    printf("nvrtc_compile=%d reaches=%s\n", nvrtcCompileProgram(prog, 0, NULL), fake_nvrtc_last());
    printf("bound_launch=%s bound_nvrtc=%s\n", where((void *)cuLaunchKernel),
           where((void *)nvrtcCreateProgram));
    return 0;
}
