/* optimize.h: optimize/ as seen by whoever assembles libsgcap.so
 * (shim/modules.c): one module of the shim (inject/inject.h), started
 * after capture, whose models it builds on. It does anything only under
 * SGCAP_MODE=optimize (docs/INJECT.md, optimize/README.md). */
#ifndef SGCAP_OPTIMIZE_OPTIMIZE_H
#define SGCAP_OPTIMIZE_OPTIMIZE_H

#include "inject/inject.h"

extern const sg_inject_module_t sg_optimize_module SG_INJECT_HIDDEN;

#endif /* SGCAP_OPTIMIZE_OPTIMIZE_H */
