/* sass_facts.c: the SASS analysis' facts as text and the analysis of a
 * cubin file (sass_facts.h). The text is what tests/data/sass/expected_*.txt
 * hold, so it changes only with the analysis, deliberately. */
#include "code/sass_facts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "code/elf_image.h"
#include "graph/graph.h"

static void write_kernel(FILE *o, const sg_sass_kernel_t *k)
{
    fprintf(o, "kernel %s: %s", k->name ? k->name : "?", sg_sass_status_name(k->status));
    if (k->status != SG_SASS_ANALYSED) {
        fprintf(o, " (%s)\n", k->reason);
        return;
    }
    fprintf(o, ", sm_%u, parameters at c[0x0][0x%x] (%u bytes), %s%s%s\n", k->arch, k->param_base,
            k->param_size, k->certain ? "certain" : "uncertain", k->certain ? "" : ": ",
            k->uncertain_reason);
    for (uint32_t i = 0; i < k->n_accesses; i++) {
        char b[512];
        sg_sass_access_format(&k->accesses[i], b, sizeof b);
        fprintf(o, "  %s\n", b);
    }
    for (uint32_t i = 0; i < k->n_params; i++) {
        const sg_sass_param_use_t *p = &k->params[i];
        fprintf(o, "  address word P[0x%x]:%s%s%s%s\n", p->offset,
                p->uses & SG_SASS_LOAD ? " load" : "", p->uses & SG_SASS_STORE ? " store" : "",
                p->uses & SG_SASS_ATOMIC ? " atomic" : "",
                p->base_uses != p->uses ? " (candidate only for some)" : "");
    }
}

void sg_sass_facts_write(FILE *o, const sg_sass_kernel_t *k, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        write_kernel(o, &k[i]);
}

char *sg_sass_facts_string(const sg_sass_kernel_t *k, uint32_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    if (!o) return NULL;
    sg_sass_facts_write(o, k, n);
    if (fclose(o) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

char *sg_sass_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (b = malloc((size_t)n + 1)) != NULL && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
        errno = EIO;
    }
    fclose(f);
    if (b) {
        b[n] = '\0';
        *len = (size_t)n;
    }
    return b;
}

int sg_sass_analyze_cubin_file(const char *path, const sg_sass_options_t *opt, const char *match,
                               sg_sass_kernel_t **out, uint32_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    size_t len = 0;
    uint8_t *b = (uint8_t *)sg_sass_read_file(path, &len);
    if (!b) {
        if (err && errlen) snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return errno == ENOMEM ? SG_ENOMEM : SG_EIO;
    }
    sg_name_list_t names = {0};
    int rc = sg_elf_list_kernels(b, len, &names);
    if (rc) {
        if (err && errlen)
            snprintf(err, errlen, "%s: not an ELF cubin (%s)", path, sg_strerror(rc));
        free(b);
        return rc == SG_ENOMEM ? SG_ENOMEM : SG_EFORMAT;
    }
    const char **pick = calloc(names.n ? names.n : 1, sizeof *pick);
    sg_sass_kernel_t *k = calloc(names.n ? names.n : 1, sizeof *k);
    uint32_t np = 0;
    rc = pick && k ? SG_OK : SG_ENOMEM;
    for (uint32_t i = 0; rc == SG_OK && i < names.n; i++)
        if (!match || strstr(names.names[i], match)) pick[np++] = names.names[i];
    if (rc == SG_OK) rc = sg_sass_analyze_cubin(b, len, pick, np, opt, k);
    free(pick);
    sg_name_list_free(&names);
    free(b);
    if (rc) {
        sg_sass_kernels_free(k, np);
        if (err && errlen) snprintf(err, errlen, "%s: %s", path, sg_strerror(rc));
        return rc;
    }
    *out = k;
    *n = np;
    return SG_OK;
}

int sg_sass_analyze_listing(const char *text, size_t len, uint32_t arch, sg_sass_kernel_t **out,
                            uint32_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    sg_sass_listing_t l;
    int rc = sg_sass_parse(text, len, &l, err, errlen);
    if (rc) return rc;
    sg_sass_kernel_t *k = calloc(l.n_funcs ? l.n_funcs : 1, sizeof *k);
    if (!k) {
        sg_sass_listing_free(&l);
        return SG_ENOMEM;
    }
    sg_sass_target_t t = {.arch = arch};
    for (uint32_t f = 0; f < l.n_funcs; f++)
        sg_sass_analyze(&l, l.funcs[f].first, l.funcs[f].count, 0, l.funcs[f].name, &t, &k[f]);
    *out = k;
    *n = l.n_funcs;
    sg_sass_listing_free(&l);
    return SG_OK;
}

void sg_sass_kernels_free(sg_sass_kernel_t *k, uint32_t n)
{
    if (!k) return;
    for (uint32_t i = 0; i < n; i++)
        sg_sass_kernel_free(&k[i]);
    free(k);
}
