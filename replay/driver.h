/* driver.h: the CUDA driver entry points replay calls, as a table its
 * caller fills. replay/ never looks the driver up by itself: a process of
 * its own (the `sgcap replay` command, tests) fills the table from
 * libcuda.so.1 with sg_replay_driver_load; inside an application (the
 * in-app optimizer, optimize/) the shim fills it from the real entry points
 * it already holds (inject/inject.h: SG_REAL), because a dlopen/dlsym made
 * there would resolve to the shim's own wrappers (docs/ARCHITECTURE.md).
 *
 * Each entry has the prototype cuda.h gives its name for the CUDA version
 * these headers describe (cuMemcpyHtoD is cuMemcpyHtoD_v2, and so on); a
 * table filled by hand must hold exactly those ABIs, every entry non-NULL.
 */
#ifndef SGCAP_REPLAY_DRIVER_H
#define SGCAP_REPLAY_DRIVER_H

#include <stddef.h>

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

// clang-format off
#define SG_REPLAY_DRIVER_FUNCS(X) \
    X(cuInit) \
    X(cuDriverGetVersion) \
    X(cuDeviceGetCount) \
    X(cuDeviceGet) \
    X(cuDeviceGetName) \
    X(cuDeviceGetAttribute) \
    X(cuDevicePrimaryCtxRetain) \
    X(cuDevicePrimaryCtxRelease) \
    X(cuCtxSetCurrent) \
    X(cuGetErrorName) \
    X(cuGetErrorString) \
    X(cuMemGetAllocationGranularity) \
    X(cuMemAddressReserve) \
    X(cuMemAddressFree) \
    X(cuMemCreate) \
    X(cuMemRelease) \
    X(cuMemMap) \
    X(cuMemUnmap) \
    X(cuMemSetAccess) \
    X(cuMemHostRegister) \
    X(cuMemHostUnregister) \
    X(cuMemHostGetDevicePointer) \
    X(cuMemcpyHtoD) \
    X(cuMemcpyDtoH) \
    X(cuMemsetD8) \
    X(cuLibraryLoadData) \
    X(cuLibraryUnload) \
    X(cuLibraryGetKernel) \
    X(cuKernelGetFunction) \
    X(cuFuncGetParamInfo) \
    X(cuFuncSetAttribute) \
    X(cuGraphCreate) \
    X(cuGraphDestroy) \
    X(cuGraphAddNode) \
    X(cuGraphInstantiateWithFlags) \
    X(cuGraphExecDestroy) \
    X(cuGraphLaunch) \
    X(cuGraphUpload) \
    X(cuGraphConditionalHandleCreate) \
    X(cuGraphKernelNodeSetAttribute) \
    X(cuStreamCreate) \
    X(cuStreamDestroy) \
    X(cuStreamSynchronize) \
    X(cuEventCreate) \
    X(cuEventDestroy) \
    X(cuEventRecord) \
    X(cuEventSynchronize) \
    X(cuEventElapsedTime) \
    X(cuMemFreeAsync)
// clang-format on

#define SG_REPLAY_DRIVER_FIELD_(name) __typeof__(&name) name;
typedef struct sg_replay_driver {
    SG_REPLAY_DRIVER_FUNCS(SG_REPLAY_DRIVER_FIELD_)
} sg_replay_driver_t;
#undef SG_REPLAY_DRIVER_FIELD_

/* Fill *out from libcuda.so.1 (found by code/nvlib.h), each entry through
 * cuGetProcAddress_v2 for this CUDA version. The library is loaded and the
 * table resolved once per process; later calls copy the same table (or
 * return the same error). SG_ECUDA with a message when there is no driver,
 * or it is too old for one of the entries. Never call it inside the shim. */
int sg_replay_driver_load(sg_replay_driver_t *out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_REPLAY_DRIVER_H */
