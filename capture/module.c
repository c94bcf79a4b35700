/* module.c: capture/ as a module of libsgcap.so (capture.h). */
#include "capture.h"
#include "shim.h"

const sg_inject_module_t sg_capture_module = {.name = "capture", .start = sg_capture_attach};
