/* bundle_open.h: reading a bundle named on the command line, with the one
 * clear error line every subcommand prints for bad input (exit code 2). */
#ifndef SGCAP_BUNDLE_OPEN_H
#define SGCAP_BUNDLE_OPEN_H

#include "graph/bundle.h"

/* Open the bundle at path (graph/bundle.h: its directory held by a
 * descriptor, every file read through it); on failure print
 * "sgcap CMD: FILE:LINE:COL: msg" and return NULL. */
sg_bundle_t *sg_cli_open(const char *cmd, const char *path);

/* The same for a command that needs only the graph (the caller destroys it). */
sg_graph_t *sg_cli_open_bundle(const char *cmd, const char *path);

/* Print a bundle diagnostic as one error line of cmd, after what. */
void sg_cli_bundle_error(const char *cmd, const char *what, const sg_diag_t *diag);

#endif /* SGCAP_BUNDLE_OPEN_H */
