/* cuGetProcAddress wrappers: the driver's own entry-point lookup, which static
 * and shared cudart, cuBLAS & co., PyTorch (via cudaGetDriverEntryPoint*) and
 * CuPy use for every driver function.
 *
 * The real lookup runs first with the caller's (cudaVersion, flags); what it
 * returned is identified by address (table.c) and replaced by the wrapper of
 * that exact exported function, so the ABI the driver chose for the caller is
 * the ABI the caller gets, and legacy and _ptsz pointers stay apart. Asking
 * for "cuGetProcAddress" itself therefore returns one of these wrappers.
 * Unknown functions pass through; a NULL symbolStatus is fine; nothing here
 * needs cuInit. */
#include "inject/internal.h"

static void sg_procaddr_finish(sg_fn_id_t fn, const char *symbol, void **pfn, int version,
                               cuuint64_t flags, CUresult result)
{
    if (sg_tls_depth > 0) return;
    const char *identified = NULL;
    int wrapped = 0;
    if (result == CUDA_SUCCESS && pfn != NULL && *pfn != NULL && sg_inject_substituting()) {
        void *w = sg_inject_substitute(*pfn, NULL, &identified);
        wrapped = w != *pfn;
        *pfn = w;
    }
    if (sg_inject_config()->log >= SG_LOG_TRACE)
        sg_inject_log(
            SG_LOG_TRACE, "trace fn=%s symbol=%s version=%d flags=%#llx -> %s%s result=%d",
            sg_inject_fn_name(fn), symbol ? symbol : "(null)", version, (unsigned long long)flags,
            identified ? identified : (pfn && *pfn ? "(unidentified)" : "(none)"),
            wrapped ? " wrapped" : "", (int)result);
}

SG_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags)
{
    __typeof__(&cuGetProcAddress) real = SG_REAL(cuGetProcAddress);
    if (real == NULL) return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(symbol, pfn, cudaVersion, flags);
    sg_procaddr_finish(SG_FN_cuGetProcAddress, symbol, pfn, cudaVersion, flags, r);
    return r;
}

SG_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                       cuuint64_t flags,
                                       CUdriverProcAddressQueryResult *symbolStatus)
{
    __typeof__(&cuGetProcAddress_v2) real = SG_REAL(cuGetProcAddress_v2);
    if (real == NULL) return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(symbol, pfn, cudaVersion, flags, symbolStatus);
    sg_procaddr_finish(SG_FN_cuGetProcAddress_v2, symbol, pfn, cudaVersion, flags, r);
    return r;
}

/* In CUDA 13.0 cuGetProcAddress_v2_ptsz is a static inline in cuda.h, not an
 * exported symbol; this entry exists for a driver that does export it. When
 * it does not, behave like the inline: default to the per-thread flavour. */
CUresult sg_cuGetProcAddress_v2_ptsz(const char *symbol, void **pfn, int cudaVersion,
                                     cuuint64_t flags,
                                     CUdriverProcAddressQueryResult *symbolStatus) SG_HIDDEN;
CUresult sg_cuGetProcAddress_v2_ptsz(const char *symbol, void **pfn, int cudaVersion,
                                     cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
    __typeof__(&cuGetProcAddress_v2) real =
        (__typeof__(&cuGetProcAddress_v2))sg_inject_real(SG_FN_cuGetProcAddress_v2_ptsz);
    if (real == NULL) {
        const cuuint64_t mask =
            CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
        if ((flags & mask) == 0) flags |= CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
        return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, symbolStatus);
    }
    CUresult r = real(symbol, pfn, cudaVersion, flags, symbolStatus);
    sg_procaddr_finish(SG_FN_cuGetProcAddress_v2_ptsz, symbol, pfn, cudaVersion, flags, r);
    return r;
}
