/* modules.c: the parts of libsgcap.so above inject/, in the order inject/
 * starts them (inject/inject.h: sg_inject_modules). This folder assembles
 * the shim and is the only place that knows all of its parts. The in-app
 * optimizer (optimize/, docs/ARCHITECTURE.md) comes after capture: it
 * builds on capture's models, and its observer runs after capture's for
 * every call. */
#include "capture/capture.h"
#include "optimize/optimize.h"

const sg_inject_module_t *const sg_inject_modules[] = {
    &sg_capture_module,
    &sg_optimize_module,
    NULL,
};
