/* driver.h: the CUDA driver entry points replay calls, as a table its
 * caller fills. replay/ never looks the driver up by itself: a process of
 * its own (the `sgcap replay` command, tests) fills the table from
 * libcuda.so.1 with sg_replay_driver_load; inside an application (the
 * in-app optimizer, optimize/) the shim fills it from the real entry points
 * it already holds (inject/inject.h: SG_REAL), because a dlopen/dlsym made
 * there would resolve to the shim's own wrappers (docs/ARCHITECTURE.md).
 *
 * Each entry is X(name, abi): the field is named as cuda.h spells the
 * function, and has the prototype of the exported function that name
 * stands for in the CUDA version of these headers (cuMemcpyHtoD is
 * cuMemcpyHtoD_v2, and so on), spelled out so that the table has the same
 * types in code that includes cuda.h with its version macros and in code
 * that turns them off (the shim: inject/sg_cuda.h). A table filled by hand
 * must hold exactly those ABIs, every entry non-NULL; the shim fills it
 * with SG_REAL(abi).
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
    X(cuInit, cuInit) \
    X(cuDriverGetVersion, cuDriverGetVersion) \
    X(cuDeviceGetCount, cuDeviceGetCount) \
    X(cuDeviceGet, cuDeviceGet) \
    X(cuDeviceGetName, cuDeviceGetName) \
    X(cuDeviceGetAttribute, cuDeviceGetAttribute) \
    X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain) \
    X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2) \
    X(cuCtxSetCurrent, cuCtxSetCurrent) \
    X(cuGetErrorName, cuGetErrorName) \
    X(cuGetErrorString, cuGetErrorString) \
    X(cuMemGetAllocationGranularity, cuMemGetAllocationGranularity) \
    X(cuMemAddressReserve, cuMemAddressReserve) \
    X(cuMemAddressFree, cuMemAddressFree) \
    X(cuMemCreate, cuMemCreate) \
    X(cuMemRelease, cuMemRelease) \
    X(cuMemMap, cuMemMap) \
    X(cuMemUnmap, cuMemUnmap) \
    X(cuMemSetAccess, cuMemSetAccess) \
    X(cuMemHostRegister, cuMemHostRegister_v2) \
    X(cuMemHostUnregister, cuMemHostUnregister) \
    X(cuMemHostGetDevicePointer, cuMemHostGetDevicePointer_v2) \
    X(cuMemcpyHtoD, cuMemcpyHtoD_v2) \
    X(cuMemcpyDtoH, cuMemcpyDtoH_v2) \
    X(cuMemsetD8, cuMemsetD8_v2) \
    X(cuLibraryLoadData, cuLibraryLoadData) \
    X(cuLibraryUnload, cuLibraryUnload) \
    X(cuLibraryGetKernel, cuLibraryGetKernel) \
    X(cuKernelGetFunction, cuKernelGetFunction) \
    X(cuFuncGetParamInfo, cuFuncGetParamInfo) \
    X(cuFuncSetAttribute, cuFuncSetAttribute) \
    X(cuGraphCreate, cuGraphCreate) \
    X(cuGraphDestroy, cuGraphDestroy) \
    X(cuGraphAddNode, cuGraphAddNode_v2) \
    X(cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags) \
    X(cuGraphExecDestroy, cuGraphExecDestroy) \
    X(cuGraphLaunch, cuGraphLaunch) \
    X(cuGraphUpload, cuGraphUpload) \
    X(cuGraphConditionalHandleCreate, cuGraphConditionalHandleCreate) \
    X(cuGraphKernelNodeSetAttribute, cuGraphKernelNodeSetAttribute) \
    X(cuStreamCreate, cuStreamCreate) \
    X(cuStreamDestroy, cuStreamDestroy_v2) \
    X(cuStreamSynchronize, cuStreamSynchronize) \
    X(cuEventCreate, cuEventCreate) \
    X(cuEventDestroy, cuEventDestroy_v2) \
    X(cuEventRecord, cuEventRecord) \
    X(cuEventSynchronize, cuEventSynchronize) \
    X(cuEventElapsedTime, cuEventElapsedTime_v2) \
    X(cuMemFreeAsync, cuMemFreeAsync)
// clang-format on

#define SG_REPLAY_DRIVER_FIELD_(name, abi) __typeof__(&abi) name;
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
