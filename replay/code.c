/* code.c: the saved code images, loaded into this process. Fatbin, cubin
 * and PTX go straight to cuLibraryLoadData; NVRTC source is compiled first
 * with the options the capture recorded. Kernels are found by their mangled
 * name in the image their node names, never by searching other images: two
 * images may hold different kernels of the same name. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "graph/bundle.h"
#include "replay_private.h"

#define SG_REPLAY_DEFAULT_MAX_IMAGE (1ull << 30)
#define SG_NVRTC_MAX_OPTIONS 256

/* Mark the images some kernel node (at any depth) needs. */
static void mark_needed(const sg_graph_t *g, bool *needed, uint32_t n_images)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *n = sg_graph_node(g, i);
        if (!n) continue;
        if (n->type == SG_NODE_KERNEL && n->u.kernel.image < n_images)
            needed[n->u.kernel.image] = true;
        if (n->type == SG_NODE_CHILD_GRAPH && n->u.child) mark_needed(n->u.child, needed, n_images);
        if (n->type == SG_NODE_CONDITIONAL)
            for (uint32_t b = 0; b < n->u.cond.n_bodies; b++)
                mark_needed(n->u.cond.bodies[b], needed, n_images);
    }
}

/* Split an option string on blanks, honouring double quotes (the capture
 * records NVRTC options joined by spaces). Writes into buf (same length as
 * s + 1); returns the count, or -1 past SG_NVRTC_MAX_OPTIONS. */
static int split_options(const char *s, char *buf, char **argv)
{
    int argc = 0;
    char *w = buf;
    while (s && *s) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        if (!*s) break;
        if (argc == SG_NVRTC_MAX_OPTIONS) return -1;
        argv[argc++] = w;
        bool quoted = false;
        while (*s && (quoted || (*s != ' ' && *s != '\t' && *s != '\n'))) {
            if (*s == '"') {
                quoted = !quoted;
                s++;
                continue;
            }
            *w++ = *s++;
        }
        *w++ = '\0';
    }
    return argc;
}

static int compile_nvrtc(sg_replay_t *r, uint32_t id, const sg_image_t *im, const char *src,
                         size_t len, void **out, char *err, size_t errlen)
{
    const sg_replay_driver_t *drv = r->drv;
    int rc = sg_replay__load_nvrtc(err, errlen);
    if (rc) return rc;
    char *source = malloc(len + 1);
    size_t olen = im->options ? strlen(im->options) : 0;
    char *optbuf = malloc(olen + 2);
    char **argv = calloc(SG_NVRTC_MAX_OPTIONS + 1, sizeof *argv);
    char arch[48];
    nvrtcProgram prog = NULL;
    if (!source || !optbuf || !argv) {
        rc = sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
        goto out;
    }
    memcpy(source, src, len);
    source[len] = '\0';
    int argc = split_options(im->options, optbuf, argv);
    if (argc < 0) {
        rc = sg_replay__fail(err, errlen, SG_ELIMIT, "code image %u: more than %d NVRTC options",
                             id, SG_NVRTC_MAX_OPTIONS);
        goto out;
    }
    bool has_arch = false;
    for (int i = 0; i < argc; i++)
        if (!strncmp(argv[i], "-arch", 5) || !strncmp(argv[i], "--gpu-architecture", 18))
            has_arch = true;
    if (!has_arch) {
        /* no target recorded: compile for this GPU, to SASS */
        int major = 0, minor = 0;
        drv->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, r->dev);
        drv->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, r->dev);
        snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", major, minor);
        argv[argc++] = arch;
    }
    nvrtcResult nr = sg_nvrtc->nvrtcCreateProgram(&prog, source, "sgcap_image.cu", 0, NULL, NULL);
    if (nr != NVRTC_SUCCESS) {
        rc = sg_replay__fail(err, errlen, SG_EUNSUPPORTED, "code image %u: nvrtcCreateProgram: %s",
                             id, sg_nvrtc->nvrtcGetErrorString(nr));
        goto out;
    }
    nr = sg_nvrtc->nvrtcCompileProgram(prog, argc, (const char *const *)argv);
    if (nr != NVRTC_SUCCESS) {
        size_t loglen = 0;
        char log[600] = "";
        if (sg_nvrtc->nvrtcGetProgramLogSize(prog, &loglen) == NVRTC_SUCCESS && loglen > 1) {
            char *full = malloc(loglen);
            if (full && sg_nvrtc->nvrtcGetProgramLog(prog, full) == NVRTC_SUCCESS)
                snprintf(log, sizeof log, "%s", full);
            free(full);
        }
        rc = sg_replay__fail(err, errlen, SG_EUNSUPPORTED,
                             "code image %u: NVRTC could not compile it with the recorded options "
                             "(%s): %s",
                             id, sg_nvrtc->nvrtcGetErrorString(nr), log);
        goto out;
    }
    size_t size = 0;
    bool cubin = sg_nvrtc->nvrtcGetCUBINSize(prog, &size) == NVRTC_SUCCESS && size > 0;
    if (!cubin && sg_nvrtc->nvrtcGetPTXSize(prog, &size) != NVRTC_SUCCESS) size = 0;
    char *code = size ? malloc(size) : NULL;
    if (!code) {
        rc = sg_replay__fail(err, errlen, size ? SG_ENOMEM : SG_EUNSUPPORTED,
                             "code image %u: NVRTC produced no code", id);
        goto out;
    }
    nr = cubin ? sg_nvrtc->nvrtcGetCUBIN(prog, code) : sg_nvrtc->nvrtcGetPTX(prog, code);
    if (nr != NVRTC_SUCCESS) {
        free(code);
        rc = sg_replay__fail(err, errlen, SG_EUNSUPPORTED, "code image %u: %s", id,
                             sg_nvrtc->nvrtcGetErrorString(nr));
        goto out;
    }
    *out = code;
    rc = SG_OK;
out:
    if (prog) sg_nvrtc->nvrtcDestroyProgram(&prog);
    free(source);
    free(optbuf);
    free(argv);
    return rc;
}

static void archs_text(const uint32_t *a, uint32_t n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < n && used + 8 < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%u", i ? "," : "", a[i]);
    if (!n) snprintf(buf, len, "none");
}

/* Load image id into *lib; *no_binary says the failure was "no code for
 * this GPU" (a fused kernel's cubin on another GPU: its PTX may do). */
static int load_image_into(sg_replay_t *r, uint32_t id, CUlibrary *lib, bool *no_binary, char *err,
                           size_t errlen)
{
    const sg_replay_driver_t *drv = r->drv;
    const sg_image_t *im = sg_graph_image(r->g, id);
    if (!im->file)
        return sg_replay__fail(err, errlen, SG_EUNSUPPORTED,
                               "code image %u (%s) was not saved in the bundle", id, im->hash);
    uint64_t max = r->opt.max_image_bytes ? r->opt.max_image_bytes : SG_REPLAY_DEFAULT_MAX_IMAGE;
    void *data = NULL;
    size_t size = 0;
    sg_diag_t diag;
    memset(&diag, 0, sizeof diag);
    double t0 = sg_replay__now_ms();
    /* through the open bundle when there is one; either way the bytes must
     * match the image's hash before a byte of them is run */
    int rc = r->opt.files ? sg_bundle_load_image(r->opt.files, id, max, &data, &size, &diag)
                          : sg_bundle_read_blob(r->bundle, im->file, max, &data, &size, &diag);
    if (!rc && !r->opt.files && (rc = sg_bundle_check_image(r->g, id, data, size, &diag))) {
        free(data);
        data = NULL;
    }
    r->t.read_ms += sg_replay__now_ms() - t0;
    if (rc) {
        char buf[900];
        return sg_replay__fail(err, errlen, rc, "code image %u: %s", id,
                               sg_diag_format(&diag, buf, sizeof buf));
    }
    t0 = sg_replay__now_ms();
    void *code = data;
    if (im->kind == SG_IMAGE_PTX) {
        /* the driver wants PTX as a NUL-terminated string */
        code = malloc(size + 1);
        if (!code) {
            free(data);
            return sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
        }
        memcpy(code, data, size);
        ((char *)code)[size] = '\0';
    } else if (im->kind == SG_IMAGE_NVRTC) {
        code = NULL;
        rc = compile_nvrtc(r, id, im, data, size, &code, err, errlen);
        if (rc) {
            free(data);
            return rc;
        }
    }
    CUresult cr = drv->cuLibraryLoadData(lib, code, NULL, NULL, 0, NULL, NULL, 0);
    if (code != data) free(code);
    free(data);
    r->t.load_ms += sg_replay__now_ms() - t0;
    *no_binary = cr == CUDA_ERROR_NO_BINARY_FOR_GPU;
    if (cr == CUDA_ERROR_NO_BINARY_FOR_GPU || cr == CUDA_ERROR_INVALID_PTX ||
        cr == CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
        char sass[64], ptx[64];
        archs_text(im->sass_archs, im->n_sass_archs, sass, sizeof sass);
        archs_text(im->ptx_archs, im->n_ptx_archs, ptx, sizeof ptx);
        int major = 0, minor = 0;
        drv->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, r->dev);
        drv->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, r->dev);
        char what[256];
        snprintf(what, sizeof what,
                 "code image %u (%s, %s) has no code this sm_%d%d GPU can run (SASS for %s, PTX "
                 "for %s)",
                 id, sg_image_kind_name(im->kind), im->hash, major, minor, sass, ptx);
        return sg_replay__cu_fail(drv, err, errlen, cr, what);
    }
    if (cr != CUDA_SUCCESS) {
        char what[128];
        snprintf(what, sizeof what, "loading code image %u (%s, %s)", id, sg_image_kind_name(im->kind),
                 im->hash);
        return sg_replay__cu_fail(drv, err, errlen, cr, what);
    }
    return SG_OK;
}

/* A fused kernel's cubin (rewrite --passes fuse) is for the GPU it was
 * built for; on another one, its PTX image (the fusion record names it)
 * is JIT-compiled instead. */
static int load_image(sg_replay_t *r, uint32_t id, char *err, size_t errlen)
{
    bool no_binary = false;
    int rc = load_image_into(r, id, &r->libs[id], &no_binary, err, errlen);
    if (rc == SG_OK || !no_binary) return rc;
    for (uint32_t i = 0; i < r->g->n_fusions; i++) {
        const sg_fusion_t *f = &r->g->fusions[i];
        if (f->cubin_image != id || f->ptx_image == SG_NONE || f->ptx_image >= r->g->n_images) continue;
        bool again = false;
        return load_image_into(r, f->ptx_image, &r->libs[id], &again, err, errlen);
    }
    return rc;
}

int sg_replay__load_code(sg_replay_t *r, char *err, size_t errlen)
{
    uint32_t n = r->g->n_images;
    r->libs = calloc(n + 1, sizeof *r->libs);
    bool *needed = calloc(n + 1, sizeof *needed);
    if (!r->libs || !needed) {
        free(needed);
        return sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
    }
    mark_needed(r->g, needed, n);
    int rc = SG_OK;
    for (uint32_t i = 0; i < n && rc == SG_OK; i++)
        if (needed[i]) rc = load_image(r, i, err, errlen);
    free(needed);
    return rc;
}

int sg_replay__function(sg_replay_t *r, const sg_kernel_t *k, CUfunction *out, char *err,
                        size_t errlen)
{
    const sg_replay_driver_t *drv = r->drv;
    if (k->image >= r->g->n_images || !r->libs[k->image])
        return sg_replay__fail(err, errlen, SG_EUNSUPPORTED, "the code of %s was not loaded",
                               k->name ? k->name : "?");
    CUkernel kern;
    CUresult cr = drv->cuLibraryGetKernel(&kern, r->libs[k->image], k->name);
    if (cr == CUDA_ERROR_NOT_FOUND || cr == CUDA_ERROR_INVALID_VALUE)
        return sg_replay__fail(err, errlen, SG_EUNSUPPORTED,
                               "kernel %s is not in code image %u (%s), the image its node names",
                               k->name, k->image, r->g->images[k->image].hash);
    if (cr != CUDA_SUCCESS) return sg_replay__cu_fail(drv, err, errlen, cr, "cuLibraryGetKernel");
    SG_CU_TRY(drv->cuKernelGetFunction(out, kern), "cuKernelGetFunction");
    return SG_OK;
}
