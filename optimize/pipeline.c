/* pipeline.c: the passes the in-app optimizer runs on a graph before it
 * builds the optimized one, in order. The ordering passes come first (they
 * make every ordering explicit before anything moves), then chain fusion:
 * `fuse` reads each stage's PTX from the images capture holds in the
 * process (code.c), compiles with NVRTC through code/nvlib.c, which the
 * optimizer points at the real dlsym (module.c), so the fuser's NVRTC calls
 * never pass through the shim's own hooks, at most SG_OPT_MAX_FUSED kernels
 * per graph and within the process's fusion time (SGCAP_OPTIMIZE_FUSE_MS,
 * SG_OPT_FUSE_MS). The list is the optimizer's own rather than rewrite's default
 * list, so a new offline pass never enters the application by itself:
 * whatever is listed here runs inside it and must follow the in-app rules
 * (docs/ARCHITECTURE.md). The pass manager verifies after every pass that
 * no ordering of the input was lost (pass.h); a pass that fails or loses
 * one leaves the original in place. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "graph/views.h"

#include "opt.h"
#include "rewrite/pass.h"

static const char *const passes[] = {
    "control-deps",
    "defer-dealloc",
    "fuse",
};
#define N_PASSES (sizeof passes / sizeof passes[0])

const char *sg_opt_pipeline_names(void)
{
    static char names[256];
    if (!names[0]) {
        size_t l = 0;
        for (size_t i = 0; i < N_PASSES && l < sizeof names; i++)
            l += (size_t)snprintf(names + l, sizeof names - l, "%s%s", i ? "," : "", passes[i]);
    }
    return names;
}

/* The fused kernels of g, each as its stages' nodes and kernels:
 * "n1+n2 (k_axpb -> k_square)"; more than three stages as
 * "first -> ... -> last, 8 stages". Cut with "..." at n. */
static void describe_fused(const sg_graph_t *g, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < g->n_fusions && at + 1 < n; i++) {
        const sg_fusion_t *f = &g->fusions[i];
        if (!f->n_stages || !sg_graph_node(g, f->node)) continue;
        char part[200] = "", names[160] = "", a[48], b[48], c[48];
        size_t p = 0;
        for (uint32_t s = 0; s < f->n_stages && p + 1 < sizeof part; s++)
            p += (size_t)snprintf(part + p, sizeof part - p, "%sn%u", s ? "+" : "",
                                  f->stages[s].node);
        sg_kernel_plain_name(f->stages[0].kernel.name, a, sizeof a);
        sg_kernel_plain_name(f->stages[f->n_stages - 1].kernel.name, b, sizeof b);
        if (f->n_stages == 1)
            snprintf(names, sizeof names, "%s", a);
        else if (f->n_stages == 2)
            snprintf(names, sizeof names, "%s -> %s", a, b);
        else if (f->n_stages == 3)
            snprintf(names, sizeof names, "%s -> %s -> %s", a,
                     sg_kernel_plain_name(f->stages[1].kernel.name, c, sizeof c), b);
        else
            snprintf(names, sizeof names, "%s -> ... -> %s, %u stages", a, b, f->n_stages);
        int w = snprintf(buf + at, n - at, "%s%s (%s)", at ? ", " : "", part, names);
        if (w < 0 || (size_t)w >= n - at) {
            if (n > 4) snprintf(buf + (n - 4), 4, "...");
            return;
        }
        at += (size_t)w;
    }
}

/* The process's fusion time: the budget and what the runs with `fuse` took.
 * Threads may instantiate graphs at once, outside the optimizer's lock:
 * both are atomic (two graphs started together may each spend up to what
 * was left, which bounds the total at twice the budget in the worst case). */
static _Atomic uint32_t fuse_budget_ms = SG_OPT_FUSE_MS;
static _Atomic uint64_t fuse_spent_ms;

void sg_opt_pipeline_set_fuse_budget(uint32_t ms)
{
    atomic_store(&fuse_budget_ms, ms);
}

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

int sg_opt_pipeline(sg_graph_t *g, uint32_t arch, sg_rewrite_kernel_ptx_fn kernel_ptx,
                    sg_rewrite_files_t *files, sg_opt_rewrite_stats_t *st, char *why, size_t n)
{
    memset(st, 0, sizeof *st);
    /* fuse is the last pass: without budget left, the list stops before it */
    uint64_t spent = atomic_load(&fuse_spent_ms);
    uint32_t budget = atomic_load(&fuse_budget_ms);
    bool fuse = spent < budget;
    size_t n_passes = fuse ? N_PASSES : N_PASSES - 1;
    st->fuse_skipped = !fuse;
    uint32_t fused_before = sg_opt_fused_nodes(g);
    sg_report_t *report = sg_report_create(); /* text only, for a failure's reason */
    sg_rewrite_options_t opt;
    sg_rewrite_options_init(&opt);
    opt.files = files;
    opt.kernel_ptx = kernel_ptx;
    opt.fuse_arch = arch;
    opt.fuse_max_kernels = SG_OPT_MAX_FUSED;
    opt.fuse_budget_ms = fuse ? (uint32_t)(budget - spent) : 0;
    uint64_t t0 = now_ms();
    int rc = sg_rewrite_run_opts(g, passes, n_passes, &opt, report);
    if (fuse) atomic_fetch_add(&fuse_spent_ms, now_ms() - t0); /* the ordering passes' too */
    if (rc) {
        /* the end of the report names the pass and what it found */
        const char *text = sg_report_text(report);
        size_t len = strlen(text);
        while (len && text[len - 1] == '\n')
            len--;
        size_t from = len > 160 ? len - 160 : 0;
        snprintf(why, n, "the passes (%s) failed: %s: ...%.*s", sg_opt_pipeline_names(),
                 sg_strerror(rc), (int)(len - from), text + from);
        for (char *c = why; *c; c++)
            if (*c == '\n') *c = ' ';
        sg_report_destroy(report);
        return rc;
    }
    sg_report_destroy(report);
    st->passes = (uint32_t)n_passes;
    uint32_t fused = sg_opt_fused_nodes(g);
    st->fused_chains = fused > fused_before ? fused - fused_before : 0;
    if (st->fused_chains) describe_fused(g, st->chains, sizeof st->chains);
    return SG_OK;
}
