/* driver.c: the optimizer's driver table (opt.h), replay's table for the
 * materializer included, filled from the shim's real entry points: the
 * very functions the program's own lookups returned (inject.h: SG_REAL).
 * Never a dlopen or dlsym of the driver: inside the shim those would
 * resolve to the shim's own wrappers (docs/ARCHITECTURE.md). Calls made
 * through it are not observed (observer callbacks run inside the shim's
 * reentrancy guard). */
#include <stdio.h>
#include <string.h>

#include "inject/inject.h"
#include "opt.h"

int sg_opt_driver_fill(sg_opt_driver_t *d, char *why, size_t n)
{
    memset(d, 0, sizeof *d);
#define SG_OPT_FILL_REPLAY_(name, abi) d->r.name = SG_REAL(abi);
#define SG_OPT_FILL_(name) d->name = SG_REAL(name);
    SG_REPLAY_DRIVER_FUNCS(SG_OPT_FILL_REPLAY_)
    SG_OPT_DRIVER_FUNCS(SG_OPT_FILL_)
#undef SG_OPT_FILL_REPLAY_
#undef SG_OPT_FILL_
    /* What the optimizer calls on every path (the rest only where a graph
     * needs it: the call then fails with the entry's name). */
    struct {
        const char *name;
        const void *fn;
    } need[] = {
        {"cuGraphCreate", (const void *)d->r.cuGraphCreate},
        {"cuGraphAddNode_v2", (const void *)d->r.cuGraphAddNode},
        {"cuGraphDestroy", (const void *)d->r.cuGraphDestroy},
        {"cuGraphInstantiateWithFlags", (const void *)d->r.cuGraphInstantiateWithFlags},
        {"cuGraphExecDestroy", (const void *)d->r.cuGraphExecDestroy},
        {"cuGraphUpload", (const void *)d->r.cuGraphUpload},
        {"cuStreamSynchronize", (const void *)d->r.cuStreamSynchronize},
        {"cuEventCreate", (const void *)d->r.cuEventCreate},
        {"cuEventRecord", (const void *)d->r.cuEventRecord},
        {"cuEventSynchronize", (const void *)d->r.cuEventSynchronize},
        {"cuEventElapsedTime_v2", (const void *)d->r.cuEventElapsedTime},
        {"cuEventDestroy_v2", (const void *)d->r.cuEventDestroy},
        {"cuGraphKernelNodeGetParams_v2", (const void *)d->cuGraphKernelNodeGetParams_v2},
        {"cuMemcpyDtoHAsync_v2", (const void *)d->cuMemcpyDtoHAsync_v2},
        {"cuMemcpyHtoDAsync_v2", (const void *)d->cuMemcpyHtoDAsync_v2},
        {"cuCtxGetCurrent", (const void *)d->cuCtxGetCurrent},
        {"cuCtxSynchronize", (const void *)d->cuCtxSynchronize},
        {"cuCtxGetDevice", (const void *)d->cuCtxGetDevice},
    };
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!need[i].fn) {
            snprintf(why, n, "the driver has no %s", need[i].name);
            return SG_EUNSUPPORTED;
        }
    return SG_OK;
}

int sg_opt_cu_fail(const sg_opt_driver_t *d, CUresult rc, const char *what, char *why, size_t n)
{
    const char *name = NULL;
    if (d && d->r.cuGetErrorName) d->r.cuGetErrorName(rc, &name);
    if (name)
        snprintf(why, n, "%s: %s", what, name);
    else
        snprintf(why, n, "%s: CUDA error %d", what, (int)rc);
    return SG_ECUDA;
}
