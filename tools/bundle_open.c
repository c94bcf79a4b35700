/* bundle_open.c: see bundle_open.h. */
#include "bundle_open.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

void sg_cli_bundle_error(const char *cmd, const char *what, const sg_diag_t *diag)
{
    char buf[1024];
    const char *msg = sg_diag_format(diag, buf, sizeof buf);
    /* Some diagnostics already start with the bundle path; don't repeat it. */
    if (!what || strncmp(msg, what, strlen(what)) == 0)
        sg_cli_error(cmd, "%s", msg);
    else
        sg_cli_error(cmd, "%s: %s", what, msg);
}

sg_bundle_t *sg_cli_open(const char *cmd, const char *path)
{
    sg_bundle_t *b = NULL;
    sg_diag_t diag = {0};
    if (sg_bundle_open(path, &b, &diag) != SG_OK) {
        sg_cli_bundle_error(cmd, path, &diag);
        return NULL;
    }
    return b;
}

sg_graph_t *sg_cli_open_bundle(const char *cmd, const char *path)
{
    sg_bundle_t *b = sg_cli_open(cmd, path);
    sg_graph_t *g = sg_bundle_take_graph(b);
    sg_bundle_close(b);
    return g;
}
