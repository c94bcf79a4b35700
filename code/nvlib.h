/* nvlib.h: the one loader for NVIDIA's libraries: the driver (libcuda, for
 * the processes that drive a GPU themselves: `sgcap replay`), NVRTC,
 * nvJitLink and CUPTI. Each is opened with dlopen at run time, never
 * linked, so every sgcap binary and test starts on a machine without them,
 * and each comes with a table of its entry points typed by the toolkit's
 * own headers, filled once per process.
 *
 * Where a library is looked for, in this order (the first that loads wins):
 *   1. already loaded in this process (a Python that imported its pip copy,
 *      a program linked with it): never a second copy;
 *   2. <dir of the running binary>/../lib, where the build copies CUPTI:
 *      the exact library these headers describe;
 *   3. the soname through the dynamic loader (LD_LIBRARY_PATH, runpath,
 *      ld.so.cache);
 *   4. the running binary's own folder;
 *   5. $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64 (and their
 *      extras/CUPTI/lib64 for CUPTI): the GPU machine runs carried build
 *      trees and need not have the toolkit on its search path.
 * The driver is looked for only by its soname (steps 1 and 3): the
 * toolkit's lib64/stubs/libcuda.so must never be mistaken for it.
 * Python's pip folders (site-packages/nvidia/<lib>/lib) are not searched:
 * a process that uses them has the library loaded already (step 1), and
 * an offline sgcap does not know which Python the user means.
 *
 * Inside libsgcap.so the public dlsym is the shim's own, which hands out
 * the shim's hooks for NVRTC's functions (and its driver entry points come
 * from inject/: SG_REAL): there the optimizer gives the real dlsym to
 * sg_nvlib_use_dlsym before any table is filled, so the fuser's NVRTC and
 * nvJitLink calls go to the libraries and never through the shim's hooks
 * (never recorded as the program's NVRTC programs). dlopen is not hooked.
 * Thread-safe; nothing prints.
 */
#ifndef SGCAP_CODE_NVLIB_H
#define SGCAP_CODE_NVLIB_H

#include <stddef.h>

#include <cupti.h>
#include <nvJitLink.h>
#include <nvrtc.h>

#include "nvlib_lookup.h" /* sg_nvlib_use_dlsym */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SG_NVLIB_CUDA = 0, /* libcuda.so.1 (the driver) */
    SG_NVLIB_NVRTC,    /* libnvrtc.so.13 */
    SG_NVLIB_NVJITLINK, /* libnvJitLink.so.13 */
    SG_NVLIB_CUPTI,    /* libcupti.so.13 */
    SG_NVLIB_COUNT
} sg_nvlib_t;

/* "NVRTC", "nvJitLink", ... for messages. */
const char *sg_nvlib_name(sg_nvlib_t lib);

/* The paths tried for `lib`, in order, as dlopen arguments (a bare soname
 * means the dynamic loader's search); step 1 (already loaded) is implied.
 * `exe_dir` is the running binary's folder (NULL: none), `cuda_home` and
 * `cuda_path` the environment's (NULL or "": unset). Writes at most `max`
 * malloc'd strings to out and returns how many there are in all (free each
 * with free()). Exposed so that the order is tested and errors can list it. */
size_t sg_nvlib_candidates(sg_nvlib_t lib, const char *exe_dir, const char *cuda_home,
                           const char *cuda_path, char **out, size_t max);

/* The library's dlopen handle, loaded on first use (later calls return the
 * first answer). NULL when it cannot be loaded: err gets one line naming
 * what was tried. */
void *sg_nvlib_handle(sg_nvlib_t lib, char *err, size_t errlen);

/* ---- typed entry points ---------------------------------------------------------- */

// clang-format off
/* NVRTC: compiling CUDA C++ to PTX, CUBIN or LTO-IR. */
#define SG_NVRTC_FUNCS(X) \
    X(nvrtcVersion) \
    X(nvrtcGetErrorString) \
    X(nvrtcCreateProgram) \
    X(nvrtcDestroyProgram) \
    X(nvrtcCompileProgram) \
    X(nvrtcGetProgramLogSize) \
    X(nvrtcGetProgramLog) \
    X(nvrtcGetPTXSize) \
    X(nvrtcGetPTX) \
    X(nvrtcGetCUBINSize) \
    X(nvrtcGetCUBIN) \
    X(nvrtcGetLTOIRSize) \
    X(nvrtcGetLTOIR) \
    X(nvrtcAddNameExpression) \
    X(nvrtcGetLoweredName)

/* nvJitLink: linking PTX, cubins and LTO-IR into one cubin. Its header
 * versions the exported names (nvJitLinkCreate is an inline wrapper around
 * __nvJitLinkCreate_13_0); the table holds the versioned functions under
 * the plain names: X(field, exported symbol). */
#define SG_NVJITLINK_FUNCS(X) \
    X(nvJitLinkCreate, __nvJitLinkCreate_13_0) \
    X(nvJitLinkDestroy, __nvJitLinkDestroy_13_0) \
    X(nvJitLinkAddData, __nvJitLinkAddData_13_0) \
    X(nvJitLinkAddFile, __nvJitLinkAddFile_13_0) \
    X(nvJitLinkComplete, __nvJitLinkComplete_13_0) \
    X(nvJitLinkGetLinkedCubinSize, __nvJitLinkGetLinkedCubinSize_13_0) \
    X(nvJitLinkGetLinkedCubin, __nvJitLinkGetLinkedCubin_13_0) \
    X(nvJitLinkGetLinkedPtxSize, __nvJitLinkGetLinkedPtxSize_13_0) \
    X(nvJitLinkGetLinkedPtx, __nvJitLinkGetLinkedPtx_13_0) \
    X(nvJitLinkGetErrorLogSize, __nvJitLinkGetErrorLogSize_13_0) \
    X(nvJitLinkGetErrorLog, __nvJitLinkGetErrorLog_13_0) \
    X(nvJitLinkGetInfoLogSize, __nvJitLinkGetInfoLogSize_13_0) \
    X(nvJitLinkGetInfoLog, __nvJitLinkGetInfoLog_13_0) \
    X(nvJitLinkVersion, nvJitLinkVersion)

/* CUPTI: what `sgcap replay --profile/--trace` uses. */
#define SG_CUPTI_FUNCS(X) \
    X(cuptiActivityRegisterCallbacks) \
    X(cuptiActivityEnable) \
    X(cuptiActivityDisable) \
    X(cuptiActivityFlushAll) \
    X(cuptiActivityGetNextRecord) \
    X(cuptiActivityGetNumDroppedRecords) \
    X(cuptiGetGraphNodeId) \
    X(cuptiSubscribe) \
    X(cuptiUnsubscribe) \
    X(cuptiEnableCallback) \
    X(cuptiGetResultString)
// clang-format on

#define SG_NVLIB_FIELD_(name) __typeof__(&name) name;
#define SG_NVLIB_FIELD2_(name, symbol) __typeof__(&symbol) name;
typedef struct {
    SG_NVRTC_FUNCS(SG_NVLIB_FIELD_)
} sg_nvrtc_api_t;
typedef struct {
    SG_NVJITLINK_FUNCS(SG_NVLIB_FIELD2_)
} sg_nvjitlink_api_t;
typedef struct {
    SG_CUPTI_FUNCS(SG_NVLIB_FIELD_)
} sg_cupti_api_t;
#undef SG_NVLIB_FIELD_
#undef SG_NVLIB_FIELD2_

/* The library's table, every entry non-NULL; loaded on first use. NULL when
 * the library cannot be loaded or lacks one of the functions (too old): err
 * says which. The table lives as long as the process. */
const sg_nvrtc_api_t *sg_nvlib_nvrtc(char *err, size_t errlen);
const sg_nvjitlink_api_t *sg_nvlib_nvjitlink(char *err, size_t errlen);
const sg_cupti_api_t *sg_nvlib_cupti(char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CODE_NVLIB_H */
