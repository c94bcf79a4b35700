/* The one way sgcap code includes the CUDA driver and NVRTC headers.
 *
 * The shim speaks in exported ELF names (cuMemAlloc is the 32-bit 2.0 ABI,
 * cuMemAlloc_v2 the 64-bit one, cuLaunchKernel_ptsz the per-thread-stream
 * twin). cuda.h normally rewrites the short names into the newest versioned
 * ones with macros; __CUDA_API_VERSION_INTERNAL turns that off and declares
 * every exported name with its real prototype, so a wrapper whose parameter
 * list disagrees with the driver's ABI fails to compile. Include this header
 * before anything else that may pull in cuda.h. */
#ifndef SGCAP_INJECT_SG_CUDA_H
#define SGCAP_INJECT_SG_CUDA_H

#if defined(CUDA_VERSION) && !defined(__CUDA_API_VERSION_INTERNAL)
#error "include inject/sg_cuda.h before <cuda.h>: sgcap code names exported symbols, not macros"
#endif
#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL 1
#endif
#include <cuda.h>
#include <nvrtc.h>

#endif
