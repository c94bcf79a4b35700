/* bundle_open.c: see bundle_open.h. */
#include "bundle_open.h"

#include <stdio.h>

#include "cli.h"

sg_graph_t *sg_cli_open_bundle(const char *cmd, const char *path)
{
    sg_graph_t *g = NULL;
    sg_diag_t diag = {0};
    int rc = sg_bundle_read(path, &g, &diag);
    if (rc != SG_OK) {
        char buf[1024];
        sg_cli_error(cmd, "%s: %s", path, sg_diag_format(&diag, buf, sizeof buf));
        return NULL;
    }
    return g;
}
