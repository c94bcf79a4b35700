/* capture.h: capture/ as seen by whoever assembles libsgcap.so
 * (shim/modules.c): one module of the shim (inject/inject.h), started by
 * inject/ once the shim is initialised. Everything else of capture/ is
 * private to it. */
#ifndef SGCAP_CAPTURE_CAPTURE_H
#define SGCAP_CAPTURE_CAPTURE_H

#include "inject/inject.h"

/* Starts capture: configuration from the environment (docs/CAPTURE.md),
 * the observer of every intercepted family capture needs. */
extern const sg_inject_module_t sg_capture_module SG_INJECT_HIDDEN;

#endif /* SGCAP_CAPTURE_CAPTURE_H */
