/* code.c: the code side of fusion inside the application (opt.h).
 *
 * Kernels' PTX for the fuse pass (sg_opt_kernel_ptx, the pass's kernel_ptx
 * hook), from the images capture holds in the process
 * (capture.h: sg_capture_image_bytes; borrowed .nv_fatbin sections,
 * cuModuleLoadData copies, NVRTC programs): a PTX image as it is; the best
 * PTX entry of a fatbin for the device (code/fatbin.h), decompressed within
 * the fatbin reader's cap; a captured NVRTC program recompiled for
 * compute_<arch> with its captured options (code/nvrtc_ptx.h: NVRTC through
 * code/nvlib.h with the real dlsym, never the shim's hooks), also for a
 * cubin NVRTC made from one (its source_image). A cubin alone is SASS:
 * refused. Recompiled PTX is kept per source hash and arch, so a graph
 * instantiated again, or an exec update that re-plans, compiles nothing;
 * at most MAX_RECOMPILES programs are compiled per process (each takes
 * NVRTC a noticeable time: the work in the app stays bounded).
 *
 * Which parameter bytes a stage's legality rests on (sg_opt_stage_param_mask,
 * for exec updates of a fused stage): from the access analysis of its PTX,
 * kept per image, kernel and layout (at most MAX_MASKS).
 *
 * Fused kernels for G1 (sg_opt_fused_function): the cubin the pass made,
 * loaded once per process with cuLibraryLoadData (by content hash, at most
 * MAX_LIBRARIES kept for the life of the process: executable graphs may
 * still run them), and its kernel's function in the current context. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "code/access.h"
#include "code/fatbin.h"
#include "code/nvrtc_ptx.h"
#include "opt.h"

#define MAX_RECOMPILES 64
#define MAX_LIBRARIES 256
#define MAX_MASKS 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
    char hash[17]; /* of the source */
    uint32_t arch;
    char *ptx;
    size_t len;
} recompiled[MAX_RECOMPILES];
static uint32_t n_recompiled;

static struct {
    char hash[17]; /* of the cubin */
    CUlibrary lib;
} libraries[MAX_LIBRARIES];
static uint32_t n_libraries;

static struct {
    char key[17]; /* sg_access_key of image, kernel and layout */
    uint8_t *mask;
    uint32_t size;
} masks[MAX_MASKS];
static uint32_t n_masks;

static char *dup_text(const void *p, size_t n, size_t *len)
{
    char *t = malloc(n + 1);
    if (!t) return NULL;
    memcpy(t, p, n);
    t[n] = '\0';
    *len = strnlen(t, n);
    return t;
}

/* A captured NVRTC program (image `src` of g) recompiled for compute_<arch>. */
static int from_source(const sg_graph_t *g, uint32_t src, uint32_t arch, char **ptx, size_t *len,
                       char *why, size_t n)
{
    const sg_image_t *im = sg_graph_image(g, src);
    const void *bytes = NULL;
    size_t size = 0;
    if (!im || im->kind != SG_IMAGE_NVRTC || sg_capture_image_bytes(g, src, &bytes, &size)) {
        snprintf(why, n, "the NVRTC program (image %u) is not held in the process", src);
        return SG_OK;
    }
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < n_recompiled; i++)
        if (recompiled[i].arch == arch && !strcmp(recompiled[i].hash, im->hash)) {
            *ptx = dup_text(recompiled[i].ptx, recompiled[i].len, len);
            pthread_mutex_unlock(&lock);
            return *ptx ? SG_OK : SG_ENOMEM;
        }
    bool room = n_recompiled < MAX_RECOMPILES;
    pthread_mutex_unlock(&lock);
    if (!room) {
        snprintf(why, n, "NVRTC programs: the %u this process may recompile are done",
                 MAX_RECOMPILES);
        return SG_OK;
    }
    char err[200] = "";
    int rc = sg_nvrtc_compile_ptx(bytes, size, NULL, im->options, arch, ptx, len, err, sizeof err);
    if (rc == SG_ENOMEM) return rc;
    if (rc) {
        snprintf(why, n, "NVRTC source (image %u): recompiling for compute_%u failed: %s", src,
                 arch, err);
        *ptx = NULL;
        return SG_OK;
    }
    pthread_mutex_lock(&lock);
    if (n_recompiled < MAX_RECOMPILES) {
        size_t l = 0;
        char *keep = dup_text(*ptx, *len, &l);
        if (keep) {
            snprintf(recompiled[n_recompiled].hash, sizeof recompiled[n_recompiled].hash, "%s",
                     im->hash);
            recompiled[n_recompiled].arch = arch;
            recompiled[n_recompiled].ptx = keep;
            recompiled[n_recompiled].len = l;
            n_recompiled++;
        }
    }
    pthread_mutex_unlock(&lock);
    return SG_OK;
}

int sg_opt_kernel_ptx(void *user, const sg_graph_t *g, const char *kernel, uint32_t image,
                      uint32_t arch, char **ptx, size_t *len, char *why, size_t n)
{
    (void)user;
    *ptx = NULL;
    *len = 0;
    const sg_image_t *im = sg_graph_image(g, image);
    if (!im) {
        snprintf(why, n, "no code image recorded for the kernel");
        return SG_OK;
    }
    if (im->kind == SG_IMAGE_NVRTC) return from_source(g, image, arch, ptx, len, why, n);
    const void *bytes = NULL;
    size_t size = 0;
    if (sg_capture_image_bytes(g, image, &bytes, &size)) {
        snprintf(why, n, "image %s: its bytes are not held in the process", im->hash);
        return SG_OK;
    }
    switch (sg_code_image_sniff(bytes, size, NULL)) {
    case SG_CODE_FORMAT_PTX: {
        uint32_t target = 0;
        char sfx = 0;
        if (sg_ptx_target(bytes, size, &target, &sfx) || !sg_ptx_target_usable(target, sfx, arch)) {
            snprintf(why, n, "PTX image %s: not usable on sm_%u", im->hash, arch);
            return SG_OK;
        }
        if (!sg_ptx_has_entry(bytes, size, kernel)) {
            snprintf(why, n, "PTX image %s does not define the kernel", im->hash);
            return SG_OK;
        }
        *ptx = dup_text(bytes, size, len);
        return *ptx ? SG_OK : SG_ENOMEM;
    }
    case SG_CODE_FORMAT_FATBIN: {
        sg_fatbin_t fb;
        char err[160] = "";
        int rc = sg_fatbin_parse(bytes, size, 0, &fb, err, sizeof err);
        if (rc == SG_ENOMEM) return rc;
        if (rc) {
            snprintf(why, n, "fatbin %s: %s", im->hash, err);
            return SG_OK;
        }
        sg_ptx_pick_t pick;
        rc = sg_fatbin_pick_ptx(&fb, arch, kernel, SG_FATBIN_DEFAULT_MAX_IMAGE, &pick, ptx, len);
        sg_fatbin_free(&fb);
        if (rc) return rc;
        if (pick.reason == SG_PTX_OK && *ptx) return SG_OK;
        free(*ptx);
        *ptx = NULL;
        break; /* no PTX in it: its NVRTC source, if any */
    }
    default:
        break;
    }
    if (im->source_image != SG_NONE && im->source_image != image)
        return from_source(g, im->source_image, arch, ptx, len, why, n);
    snprintf(why, n, "image %s holds no PTX for the kernel (SASS only)", im->hash);
    return SG_OK;
}

int sg_opt_fused_function(const sg_opt_driver_t *d, const void *cubin, size_t size,
                          const char *name, CUfunction *out, char *why, size_t n)
{
    if (!d->r.cuLibraryLoadData || !d->r.cuLibraryGetKernel || !d->r.cuKernelGetFunction) {
        snprintf(why, n, "the driver has no cuLibraryLoadData/cuLibraryGetKernel/cuKernelGetFunction");
        return SG_EUNSUPPORTED;
    }
    char hash[17];
    sg_code_hash(cubin, size, hash);
    CUlibrary lib = NULL;
    CUresult cr = CUDA_SUCCESS;
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < n_libraries && !lib; i++)
        if (!strcmp(libraries[i].hash, hash)) lib = libraries[i].lib;
    if (!lib) {
        if (n_libraries == MAX_LIBRARIES) {
            pthread_mutex_unlock(&lock);
            snprintf(why, n, "fused kernels: the %u this process may load are loaded",
                     MAX_LIBRARIES);
            return SG_ELIMIT;
        }
        cr = d->r.cuLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0);
        if (cr == CUDA_SUCCESS) {
            snprintf(libraries[n_libraries].hash, sizeof libraries[n_libraries].hash, "%s", hash);
            libraries[n_libraries++].lib = lib;
        }
    }
    pthread_mutex_unlock(&lock);
    if (cr != CUDA_SUCCESS) return sg_opt_cu_fail(d, cr, "loading the fused kernel", why, n);
    CUkernel kern = NULL;
    cr = d->r.cuLibraryGetKernel(&kern, lib, name);
    if (cr == CUDA_SUCCESS) cr = d->r.cuKernelGetFunction(out, kern);
    if (cr != CUDA_SUCCESS) return sg_opt_cu_fail(d, cr, "the fused kernel's function", why, n);
    return SG_OK;
}

int sg_opt_stage_param_mask(const sg_graph_t *g, const sg_kernel_t *k, uint8_t *mask, char *why,
                            size_t n)
{
    const sg_image_t *im = sg_graph_image(g, k->image);
    char key[17];
    sg_access_key(im ? im->hash : "", k->name ? k->name : "", k->n_params, k->param_offsets,
                  k->param_sizes, key);
    memset(mask, 0, k->params_size);
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < n_masks; i++)
        if (!strcmp(masks[i].key, key) && masks[i].size == k->params_size) {
            memcpy(mask, masks[i].mask, k->params_size);
            pthread_mutex_unlock(&lock);
            return SG_OK;
        }
    pthread_mutex_unlock(&lock);
    char *ptx = NULL;
    size_t len = 0;
    char w[200] = "";
    uint32_t arch = sg_code_arch_of(g->device.cc_major, g->device.cc_minor);
    int rc = sg_opt_kernel_ptx(NULL, g, k->name ? k->name : "", k->image, arch, &ptx, &len, w,
                               sizeof w);
    if (rc || !ptx) {
        snprintf(why, n, "no PTX for the stage: %s", rc ? sg_strerror(rc) : w);
        return rc ? rc : SG_ENOENT;
    }
    sg_access_kernel_t ak;
    memset(&ak, 0, sizeof ak);
    rc = sg_access_analyze_text(ptx, len, k->name, &ak);
    free(ptx);
    if (rc == SG_OK && ak.status != SG_OK) {
        snprintf(why, n, "the stage's code cannot be analyzed: %s", ak.detail);
        rc = SG_EFORMAT;
    } else if (rc == SG_OK && ak.params_size != k->params_size) {
        snprintf(why, n, "the stage's code has %u parameter bytes, the node %u", ak.params_size,
                 k->params_size);
        rc = SG_EFORMAT;
    }
    if (rc == SG_OK) sg_access_param_mask(&ak, mask, k->params_size);
    sg_access_kernel_free(&ak);
    if (rc) return rc;
    pthread_mutex_lock(&lock);
    if (n_masks < MAX_MASKS && (masks[n_masks].mask = malloc(k->params_size + 1u))) {
        memcpy(masks[n_masks].mask, mask, k->params_size);
        masks[n_masks].size = k->params_size;
        snprintf(masks[n_masks].key, sizeof masks[n_masks].key, "%s", key);
        n_masks++;
    }
    pthread_mutex_unlock(&lock);
    return SG_OK;
}
