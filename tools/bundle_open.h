/* bundle_open.h: reading a bundle named on the command line, with the one
 * clear error line every subcommand prints for bad input (exit code 2). */
#ifndef SGCAP_BUNDLE_OPEN_H
#define SGCAP_BUNDLE_OPEN_H

#include "graph/bundle.h"

/* Read the bundle at path; on failure print "sgcap CMD: FILE:LINE:COL: msg"
 * and return NULL. */
sg_graph_t *sg_cli_open_bundle(const char *cmd, const char *path);

#endif /* SGCAP_BUNDLE_OPEN_H */
