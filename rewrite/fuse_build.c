/* fuse_build.c: compiling a generated fused kernel with NVRTC (through the
 * one loader, code/nvlib.h) into PTX and a cubin, with the registers and
 * spills ptxas reports; results cached in this process by a hash of the
 * source and the target, so a chain seen again (another graph of the same
 * program, a second rewrite) costs nothing. Needs no GPU. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/fatbin.h"
#include "code/nvlib.h"
#include "fuse.h"

typedef struct cache_entry {
    char key[17];
    sg_fz_binary_t bin;
    struct cache_entry *next;
} cache_entry_t;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cache_entry_t *cache_head;
static uint32_t cache_count;
#define CACHE_MAX 256

void sg_fz_binary_free(sg_fz_binary_t *b)
{
    if (!b) return;
    free(b->ptx);
    free(b->cubin);
    memset(b, 0, sizeof *b);
}

static int copy_binary(const sg_fz_binary_t *src, sg_fz_binary_t *dst)
{
    *dst = *src;
    dst->ptx = malloc(src->ptx_len + 1);
    dst->cubin = malloc(src->cubin_len ? src->cubin_len : 1);
    if (!dst->ptx || !dst->cubin) {
        free(dst->ptx);
        free(dst->cubin);
        memset(dst, 0, sizeof *dst);
        return SG_ENOMEM;
    }
    memcpy(dst->ptx, src->ptx, src->ptx_len + 1);
    memcpy(dst->cubin, src->cubin, src->cubin_len);
    return SG_OK;
}

/* "ptxas info    : Used 24 registers, ..." and "N bytes spill stores, M bytes spill loads" */
static void parse_ptxas_log(const char *log, const char *kernel, int *regs, int *spills)
{
    *regs = -1;
    *spills = -1;
    const char *p = kernel ? strstr(log, kernel) : log;
    if (!p) p = log;
    const char *u = strstr(p, "Used ");
    if (u) *regs = atoi(u + 5);
    const char *s = strstr(p, "bytes spill stores");
    const char *l = strstr(p, "bytes spill loads");
    if (s && l) {
        /* the numbers precede the words */
        const char *a = s;
        while (a > p && a[-1] == ' ') a--;
        while (a > p && a[-1] >= '0' && a[-1] <= '9') a--;
        const char *b = l;
        while (b > p && b[-1] == ' ') b--;
        while (b > p && b[-1] >= '0' && b[-1] <= '9') b--;
        *spills = atoi(a) + atoi(b);
    }
}

static int compile(const sg_fz_source_t *src, uint32_t arch, sg_fz_binary_t *out, char *err,
                   size_t errlen)
{
    char lerr[256] = "";
    const sg_nvrtc_api_t *nv = sg_nvlib_nvrtc(lerr, sizeof lerr);
    if (!nv) {
        snprintf(err, errlen, "NVRTC is not available: %s", lerr);
        return SG_EUNSUPPORTED;
    }
    nvrtcProgram prog = NULL;
    nvrtcResult r = nv->nvrtcCreateProgram(&prog, src->source, "sgcap_fused.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        snprintf(err, errlen, "nvrtcCreateProgram: %s", nv->nvrtcGetErrorString(r));
        return SG_EUNSUPPORTED;
    }
    char archopt[48];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=sm_%u", arch);
    /* --fmad=true is NVRTC's default and what nvcc used for the stages; the
     * stage bodies are PTX already, so it only affects the wrapper */
    const char *opts[] = {archopt, "--std=c++17", "-Xptxas", "-v", "--fmad=true"};
    r = nv->nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);
    size_t loglen = 0;
    char *log = NULL;
    if (nv->nvrtcGetProgramLogSize(prog, &loglen) == NVRTC_SUCCESS && loglen > 0) {
        log = malloc(loglen + 1);
        if (log && nv->nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) log[0] = 0;
        if (log) log[loglen] = 0;
    }
    int rc = SG_OK;
    if (r != NVRTC_SUCCESS) {
        snprintf(err, errlen, "NVRTC could not compile the fused kernel (%s): %.600s",
                 nv->nvrtcGetErrorString(r), log ? log : "");
        rc = SG_EUNSUPPORTED;
        goto out;
    }
    memset(out, 0, sizeof *out);
    size_t n = 0;
    if (nv->nvrtcGetPTXSize(prog, &n) != NVRTC_SUCCESS || !n ||
        !(out->ptx = malloc(n + 1)) || nv->nvrtcGetPTX(prog, out->ptx) != NVRTC_SUCCESS) {
        rc = out->ptx ? SG_EUNSUPPORTED : SG_ENOMEM;
        snprintf(err, errlen, "NVRTC gave no PTX");
        goto out;
    }
    out->ptx[n] = 0;
    out->ptx_len = strlen(out->ptx);
    if (nv->nvrtcGetCUBINSize(prog, &n) != NVRTC_SUCCESS || !n ||
        !(out->cubin = malloc(n)) || nv->nvrtcGetCUBIN(prog, out->cubin) != NVRTC_SUCCESS) {
        rc = out->cubin ? SG_EUNSUPPORTED : SG_ENOMEM;
        snprintf(err, errlen, "NVRTC gave no cubin");
        goto out;
    }
    out->cubin_len = n;
    parse_ptxas_log(log ? log : "", src->name, &out->registers, &out->spill_bytes);
out:
    if (rc) sg_fz_binary_free(out);
    free(log);
    nv->nvrtcDestroyProgram(&prog);
    return rc;
}

int sg_fz_compile(const sg_fz_source_t *src, uint32_t arch, sg_fz_binary_t *out, char *err,
                  size_t errlen)
{
    if (!src || !src->source || !out) return SG_EINVAL;
    memset(out, 0, sizeof *out);
    size_t n = strlen(src->source);
    char *keytext = malloc(n + 32);
    if (!keytext) return SG_ENOMEM;
    int k = snprintf(keytext, n + 32, "sm_%u\n", arch);
    memcpy(keytext + k, src->source, n);
    char key[17];
    sg_code_hash(keytext, n + (size_t)k, key);
    free(keytext);
    pthread_mutex_lock(&cache_lock);
    for (cache_entry_t *e = cache_head; e; e = e->next)
        if (!strcmp(e->key, key)) {
            int rc = copy_binary(&e->bin, out);
            pthread_mutex_unlock(&cache_lock);
            out->cached = rc == SG_OK;
            return rc;
        }
    pthread_mutex_unlock(&cache_lock);
    int rc = compile(src, arch, out, err, errlen);
    if (rc) return rc;
    cache_entry_t *e = calloc(1, sizeof *e);
    if (e && copy_binary(out, &e->bin) == SG_OK) {
        memcpy(e->key, key, sizeof key);
        pthread_mutex_lock(&cache_lock);
        if (cache_count < CACHE_MAX) {
            e->next = cache_head;
            cache_head = e;
            cache_count++;
            e = NULL;
        }
        pthread_mutex_unlock(&cache_lock);
    }
    if (e) {
        sg_fz_binary_free(&e->bin);
        free(e);
    }
    return SG_OK;
}
