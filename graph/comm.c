/* comm.c: communication kernels and streams, told by name (comm.h). */
#include "comm.h"

#include <string.h>

/* Does an identifier of the mangled name begin with prefix? An identifier
 * starts the name (an extern "C" kernel) or follows its length in the
 * Itanium mangling ("_Z39ncclDevKernel_...", "...I11ncclDevComm..."). */
static bool names_identifier(const char *name, const char *prefix)
{
    for (const char *p = strstr(name, prefix); p; p = strstr(p + 1, prefix))
        if (p == name || (p[-1] >= '0' && p[-1] <= '9')) return true;
    return false;
}

sg_comm_library_t sg_kernel_comm_library(const char *name)
{
    if (!name || !*name) return SG_COMM_NONE;
    if (names_identifier(name, "nccl")) return SG_COMM_NCCL;
    if (names_identifier(name, "nvshmem")) return SG_COMM_NVSHMEM;
    return SG_COMM_NONE;
}

const char *sg_comm_library_name(sg_comm_library_t lib)
{
    switch (lib) {
    case SG_COMM_NCCL:
        return "NCCL";
    case SG_COMM_NVSHMEM:
        return "NVSHMEM";
    default:
        return "";
    }
}

/* A stream that has run a kernel of no communication library. */
#define MIXED ((sg_comm_library_t)-1)

static void classify(const sg_graph_t *g, uint32_t n_streams, sg_comm_library_t *out,
                     uint32_t depth)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const sg_node_t *n = sg_graph_node(g, i);
        if (!n) continue;
        if (n->type == SG_NODE_KERNEL && n->stream < n_streams) {
            sg_comm_library_t lib = sg_kernel_comm_library(n->u.kernel.name);
            sg_comm_library_t *s = &out[n->stream];
            if (lib == SG_COMM_NONE)
                *s = MIXED;
            else if (*s == SG_COMM_NONE)
                *s = lib;
        }
        if (depth >= 64) continue; /* bodies deeper than any bundle holds */
        if (n->type == SG_NODE_CHILD_GRAPH && n->u.child)
            classify(n->u.child, n_streams, out, depth + 1);
        if (n->type == SG_NODE_CONDITIONAL)
            for (uint32_t b = 0; b < n->u.cond.n_bodies; b++)
                if (n->u.cond.bodies[b]) classify(n->u.cond.bodies[b], n_streams, out, depth + 1);
    }
}

uint32_t sg_graph_comm_streams(const sg_graph_t *g, sg_comm_library_t *out)
{
    if (!g || !out) return 0;
    const sg_graph_t *root = g->root ? g->root : g;
    for (uint32_t s = 0; s < root->n_streams; s++)
        out[s] = SG_COMM_NONE;
    classify(root, root->n_streams, out, 0);
    uint32_t n = 0;
    for (uint32_t s = 0; s < root->n_streams; s++) {
        if (out[s] == MIXED) out[s] = SG_COMM_NONE;
        if (out[s] != SG_COMM_NONE) n++;
    }
    return n;
}
