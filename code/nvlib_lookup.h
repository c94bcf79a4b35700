/* nvlib_lookup.h: which symbol lookup code/nvlib.c fills its tables with.
 *
 * Apart from nvlib.h so that in-app code, which sees the driver API through
 * inject/sg_cuda.h (its __CUDA_API_VERSION_INTERNAL clashes with cupti.h),
 * can set it without the NVRTC/nvJitLink/CUPTI headers. */
#ifndef SGCAP_CODE_NVLIB_LOOKUP_H
#define SGCAP_CODE_NVLIB_LOOKUP_H

/* The symbol lookup the tables use (default dlsym): inside libsgcap.so the
 * real dlsym, passed by the optimizer before the first table is asked for
 * (the exported dlsym is the shim's, which hands out its NVRTC hooks). */
void sg_nvlib_use_dlsym(void *(*fn)(void *, const char *));

#endif /* SGCAP_CODE_NVLIB_LOOKUP_H */
