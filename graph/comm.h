/* comm.h: which kernels belong to a communication library (NCCL, NVSHMEM),
 * told from their names, and which streams carry only such kernels (the
 * "comm" streams of a program that overlaps communication with compute).
 *
 * This is the one place that decides it: inspect and dot label with it,
 * replay refuses such kernels as in-process only (replay/plan.c), and the
 * in-app optimizer never swaps a graph holding one. A communication kernel
 * reads the communicator's device state and waits on peer ranks and the
 * library's proxy threads: nothing a bundle holds can stand in for them.
 *
 * The rule (docs/NCCL.md): a kernel is NCCL's when an identifier of its
 * mangled name begins with "nccl" (NVSHMEM's: "nvshmem"), an identifier
 * being the start of the name or what follows a mangled length prefix.
 * That covers every NCCL kernel family (measured on libnccl 2.28.9 here,
 * from NCCL's sources for 2.27 and older):
 *   ncclDevKernel_<Coll>_<Op>_<type>_<algo>_<proto>, ncclDevKernel_Generic*
 *                                       (2.19 to 2.28)
 *   ncclSymkDevKernel_...               (2.28, symmetric memory)
 *   ncclSymDevKernel_...                (2.27, symmetric memory)
 *   ncclKernel_...                      (2.18 and older)
 * and user kernels taking NCCL's device-API types (ncclDevComm, ncclWindow_t
 * and the like, 2.28) as parameters, which talk to peers just the same.
 * NCCL's one-rank reduction kernel (oneRankReduce, for ncclAvg and
 * pre-multiplied sums on a single rank) is a local computation and is not
 * one of them; neither is a name that merely contains the letters
 * ("myncclhelper").
 *
 * Pure C, no allocation outside sg_graph_comm_streams: it runs in the shim. */
#ifndef SGCAP_GRAPH_COMM_H
#define SGCAP_GRAPH_COMM_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SG_COMM_NONE = 0,
    SG_COMM_NCCL,
    SG_COMM_NVSHMEM,
} sg_comm_library_t;

/* The library a kernel of this (mangled) name belongs to; NONE for NULL. */
sg_comm_library_t sg_kernel_comm_library(const char *name);

/* "NCCL", "NVSHMEM", or "" for NONE. */
const char *sg_comm_library_name(sg_comm_library_t lib);

/* Per stream of g's root: out[s] = the library when stream s holds at least
 * one kernel node (at any depth) and every kernel node on it is a
 * communication kernel, else SG_COMM_NONE. out has root->n_streams entries.
 * Returns the number of such streams. */
uint32_t sg_graph_comm_streams(const sg_graph_t *g, sg_comm_library_t *out);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_GRAPH_COMM_H */
