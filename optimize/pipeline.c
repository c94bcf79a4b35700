/* pipeline.c: the passes the in-app optimizer runs on a graph before it
 * builds the optimized one, in order. The ordering passes come first (they
 * make every ordering explicit before anything moves); chain fusion is one
 * more line, "fuse", once it can run inside the app: it compiles with
 * NVRTC through code/nvlib.c today, which the shim cannot use (its dlopen
 * and dlsym would resolve to the shim's own wrappers), so libsgcap.so's
 * build of rewrite/ (sgcap_rewrite_app) leaves it out of the registry until
 * NVRTC comes from the shim's real entry points. The list is the
 * optimizer's own rather than rewrite's default list, so a new offline pass
 * never enters the application by itself: whatever is listed here runs
 * inside it and must follow the in-app rules (docs/ARCHITECTURE.md). The
 * pass manager verifies after every pass that no ordering of the input was
 * lost (pass.h); a pass that fails or loses one leaves the original in
 * place. */
#include <stdio.h>
#include <string.h>

#include "opt.h"
#include "rewrite/pass.h"

static const char *const passes[] = {
    "control-deps",
    "defer-dealloc",
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

int sg_opt_pipeline(sg_graph_t *g, sg_opt_rewrite_stats_t *st, char *why, size_t n)
{
    memset(st, 0, sizeof *st);
    uint32_t fused_before = sg_opt_fused_nodes(g);
    sg_report_t *report = sg_report_create(); /* text only, for a failure's reason */
    int rc = sg_rewrite_run(g, passes, N_PASSES, report);
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
    st->passes = (uint32_t)N_PASSES;
    uint32_t fused = sg_opt_fused_nodes(g);
    st->fused_chains = fused > fused_before ? fused - fused_before : 0;
    return SG_OK;
}
