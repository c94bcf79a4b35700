/* bundle_open.c: see bundle_open.h. */
#include "bundle_open.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

sg_graph_t *sg_cli_open_bundle(const char *cmd, const char *path)
{
    sg_graph_t *g = NULL;
    sg_diag_t diag = {0};
    int rc = sg_bundle_read(path, &g, &diag);
    if (rc != SG_OK) {
        char buf[1024];
        const char *msg = sg_diag_format(&diag, buf, sizeof buf);
        /* Some diagnostics already start with the bundle path; don't repeat it. */
        if (strncmp(msg, path, strlen(path)) == 0)
            sg_cli_error(cmd, "%s", msg);
        else
            sg_cli_error(cmd, "%s: %s", path, msg);
        return NULL;
    }
    return g;
}
