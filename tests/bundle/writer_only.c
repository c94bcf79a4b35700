/* writer_only.c: a program that writes a bundle and does nothing else, as
 * the shim does. tests/bundle/bundle.cmake checks that linking it against
 * sgcap_graph pulls in no part of the bundle reader (bundle_read.c,
 * bundle_parse.c, json_read.c): the shim must not carry a parser of
 * untrusted input (issue 10). */
#include <stdio.h>

#include "graph/bundle.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: writer_only OUT.sgraph\n");
        return 2;
    }
    sg_graph_t *g = sg_graph_create();
    uint32_t s;
    sg_diag_t diag;
    int rc = g ? sg_graph_add_stream(g, NULL, 0, &s) : SG_ENOMEM;
    if (!rc) rc = sg_graph_add_node(g, SG_NODE_EMPTY, s, 0, NULL);
    if (!rc) rc = sg_bundle_write(g, argv[1], NULL, 0, SG_BUNDLE_OVERWRITE, &diag);
    sg_graph_destroy(g);
    if (rc) fprintf(stderr, "writer_only: %s\n", sg_strerror(rc));
    return rc ? 1 : 0;
}
