/* module.c: capture/ as a module of libsgcap.so, and what it offers the
 * in-app optimizer (capture.h). */
#include "capture.h"
#include "shim.h"

const sg_inject_module_t sg_capture_module = {.name = "capture", .start = sg_capture_attach};

sg_graph_t *sg_capture_model(CUgraph graph, uint64_t **nodes, uint32_t *n_nodes,
                             uint32_t *unreadable, char *why, size_t n)
{
    return sg_shim_build_mapped(graph, NULL, nodes, n_nodes, unreadable, why, n);
}

int sg_capture_raw_digest(CUgraph graph, uint64_t *digest)
{
    sg_raw_digest_t raw;
    int rc = sg_shim_raw_digest(graph, NULL, &raw);
    *digest = rc == SG_OK ? raw.digest : 0;
    return rc;
}

int sg_capture_image_bytes(const struct sg_graph *g, uint32_t image, const void **bytes,
                           size_t *size)
{
    return sg_code_image_bytes(g, image, bytes, size);
}
