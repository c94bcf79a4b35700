/* nvrtc_ptx.h: PTX for a kernel whose code the program compiled with NVRTC
 * (CuPy, PyTorch's jiterator): recompile the captured source with the
 * captured options, retargeted to a virtual architecture so NVRTC emits PTX.
 *
 * libnvrtc comes from the one loader (nvlib.h), opened at run time, never
 * linked: the CLI must run without it. Used offline (sgcap inspect --code),
 * never inside the shim.
 */
#ifndef SGCAP_CODE_NVRTC_PTX_H
#define SGCAP_CODE_NVRTC_PTX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Rewrite captured NVRTC options for PTX output on compute_<arch>: every
 * -arch/--gpu-architecture becomes --gpu-architecture=compute_<arch>, one
 * is added when none was given, and options that ask for other output
 * (-dlto, --dlink-time-opt, -lto) are dropped. `options` is the captured
 * string, options separated by single spaces (as capture records them).
 * Returns a malloc'd NULL-terminated argv (one allocation) or NULL on OOM. */
char **sg_nvrtc_ptx_options(const char *options, uint32_t arch, int *argc);

/* Compile `src` (len bytes, not necessarily NUL-terminated) to PTX for
 * compute_<arch>. On success *ptx is a malloc'd NUL-terminated string and
 * *ptx_len its length. On failure returns SG_EUNSUPPORTED (no libnvrtc),
 * SG_EFORMAT (compile error: first lines of the log in err) or SG_ENOMEM. */
int sg_nvrtc_compile_ptx(const char *src, size_t len, const char *name, const char *options,
                         uint32_t arch, char **ptx, size_t *ptx_len, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CODE_NVRTC_PTX_H */
