/* nvrtc_ptx.c: recompile captured NVRTC source to PTX (see nvrtc_ptx.h). */
#include "nvrtc_ptx.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "nvlib.h"

static bool drops(const char *o)
{
    return strcmp(o, "-dlto") == 0 || strcmp(o, "--dlink-time-opt") == 0 ||
           strcmp(o, "-lto") == 0 || strcmp(o, "--extensible-whole-program") == 0 ||
           strcmp(o, "-ewp") == 0;
}

static bool is_arch_flag(const char *o)
{
    return strncmp(o, "-arch=", 6) == 0 || strncmp(o, "--gpu-architecture=", 19) == 0;
}

static bool is_arch_flag_alone(const char *o)
{
    return strcmp(o, "-arch") == 0 || strcmp(o, "--gpu-architecture") == 0;
}

char **sg_nvrtc_ptx_options(const char *options, uint32_t arch, int *argc)
{
    const char *opts = options ? options : "";
    size_t len = strlen(opts);
    size_t max_args = 2;
    for (size_t i = 0; i < len; i++)
        if (opts[i] == ' ') max_args++;
    char target[48];
    snprintf(target, sizeof target, "--gpu-architecture=compute_%u", arch);
    size_t tlen = strlen(target) + 1;
    /* One block: the pointer array, then a copy of the options, then target. */
    char **argv = malloc((max_args + 1) * sizeof *argv + len + 1 + tlen);
    if (!argv) return NULL;
    char *copy = (char *)(argv + max_args + 1);
    memcpy(copy, opts, len + 1);
    char *tcopy = copy + len + 1;
    memcpy(tcopy, target, tlen);
    int n = 0;
    bool have_arch = false, skip_next = false;
    for (char *tok = strtok(copy, " "); tok; tok = strtok(NULL, " ")) {
        if (skip_next) {
            skip_next = false;
            continue;
        }
        if (drops(tok)) continue;
        if (is_arch_flag_alone(tok)) {
            skip_next = true;
        } else if (!is_arch_flag(tok)) {
            argv[n++] = tok;
            continue;
        }
        if (!have_arch) argv[n++] = tcopy;
        have_arch = true;
    }
    if (!have_arch) argv[n++] = tcopy;
    argv[n] = NULL;
    *argc = n;
    return argv;
}

/* First line of the compile log that says something, into err. */
static void log_summary(const sg_nvrtc_api_t *api, nvrtcProgram prog, char *err, size_t errlen)
{
    size_t n = 0;
    if (api->nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n < 2 || n > (16u << 20)) return;
    char *log = malloc(n);
    if (!log) return;
    if (api->nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) {
        char *line = log;
        while (*line == '\n') line++;
        char *end = strchr(line, '\n');
        if (end) *end = '\0';
        snprintf(err, errlen, "NVRTC: %s", line);
    }
    free(log);
}

int sg_nvrtc_compile_ptx(const char *src, size_t len, const char *name, const char *options,
                         uint32_t arch, char **ptx, size_t *ptx_len, char *err, size_t errlen)
{
    *ptx = NULL;
    *ptx_len = 0;
    if (err && errlen) err[0] = '\0';
    char why[1024];
    const sg_nvrtc_api_t *api = sg_nvlib_nvrtc(why, sizeof why);
    if (!api) {
        snprintf(err, errlen, "%s: cannot recompile NVRTC source", why);
        return SG_EUNSUPPORTED;
    }
    char *source = malloc(len + 1);
    int argc = 0;
    char **argv = sg_nvrtc_ptx_options(options, arch, &argc);
    if (!source || !argv) {
        free(source);
        free(argv);
        return SG_ENOMEM;
    }
    memcpy(source, src, len);
    source[len] = '\0';
    nvrtcProgram prog = NULL;
    int rc = SG_OK;
    if (api->nvrtcCreateProgram(&prog, source, name ? name : "sgcap_nvrtc.cu", 0, NULL, NULL) !=
        NVRTC_SUCCESS) {
        snprintf(err, errlen, "nvrtcCreateProgram failed");
        rc = SG_EFORMAT;
    } else if (api->nvrtcCompileProgram(prog, argc, (const char *const *)argv) != NVRTC_SUCCESS) {
        snprintf(err, errlen, "compile failed");
        log_summary(api, prog, err, errlen);
        rc = SG_EFORMAT;
    } else {
        size_t n = 0;
        char *out = NULL;
        if (api->nvrtcGetPTXSize(prog, &n) != NVRTC_SUCCESS || n < 2 || !(out = malloc(n))) {
            rc = out || n < 2 ? SG_EFORMAT : SG_ENOMEM;
            snprintf(err, errlen, "no PTX produced");
        } else if (api->nvrtcGetPTX(prog, out) != NVRTC_SUCCESS) {
            free(out);
            rc = SG_EFORMAT;
            snprintf(err, errlen, "nvrtcGetPTX failed");
        } else {
            out[n - 1] = '\0';
            *ptx = out;
            *ptx_len = strlen(out);
        }
    }
    if (prog) api->nvrtcDestroyProgram(&prog);
    free(source);
    free(argv);
    return rc;
}
