/* modules.c: the parts of libsgcap.so above inject/, in the order inject/
 * starts them (inject/inject.h: sg_inject_modules). This folder assembles
 * the shim and is the only place that knows all of its parts; the in-app
 * optimizer (optimize/, docs/ARCHITECTURE.md) joins the list after capture,
 * whose observer it will build on. */
#include "capture/capture.h"

const sg_inject_module_t *const sg_inject_modules[] = {
    &sg_capture_module,
    NULL,
};
