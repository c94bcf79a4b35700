/* code_report.h: for each kernel of a captured graph, which code image holds
 * it, which SASS and PTX archs that image has, and whether PTX usable on a
 * given device exists for that kernel, with the reason when it does not.
 * `sgcap inspect --code` prints it; fusion uses the same answer to refuse
 * kernels without PTX.
 *
 * Images are read from the bundle through sg_bundle_read_blob (bounded, no
 * path may leave the bundle), one image at a time, so memory stays at one
 * image plus one decompressed entry. Nothing here prints or exits.
 */
#ifndef SGCAP_CODE_CODE_REPORT_H
#define SGCAP_CODE_CODE_REPORT_H

#include "graph/graph.h"
#include "fatbin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SG_CODE_REPORT_MAX_ARCHS 16
#define SG_CODE_REPORT_MAX_IMAGE (1ull << 30) /* default cap on one image file */
#define SG_CODE_REPORT_DEFAULT_ARCH 90        /* device arch when the graph has none */

typedef struct {
    uint32_t n;
    uint32_t arch[SG_CODE_REPORT_MAX_ARCHS]; /* ascending */
    char suffix[SG_CODE_REPORT_MAX_ARCHS];   /* 'a', 'f' or 0 */
    bool truncated;                          /* more than MAX_ARCHS distinct archs */
} sg_arch_list_t;

/* One row per distinct (kernel name, image) pair, in order of first
 * appearance (root graph in id order, then bodies depth-first). */
typedef struct {
    const char *kernel;       /* mangled name; points into the graph */
    sg_node_id_t first_node;  /* first node launching it (id in its own graph) */
    bool first_in_body;       /* that node lives in a child/conditional body */
    uint32_t n_nodes;         /* kernel nodes launching it, bodies included */
    uint32_t image;           /* image index or SG_NONE */
    sg_image_kind_t image_kind;   /* as recorded (SG_IMAGE_UNKNOWN if none) */
    sg_code_format_t image_format;/* as sniffed from the bytes (UNKNOWN if unread) */
    char image_hash[17];      /* "" if none */
    const char *image_file;   /* relative path in the bundle or NULL; points into the graph */
    sg_arch_list_t sass, ptx; /* archs in the image (header arch for PTX) */
    bool archs_from_bytes;    /* false: from the image's recorded metadata */
    bool ptx_available;       /* PTX usable on the device defines this kernel */
    sg_ptx_reason_t reason;
    uint32_t ptx_entry;       /* fatbin entry index, SG_NONE if none or not a fatbin */
    uint32_t ptx_target;      /* .target sm number of the chosen PTX, 0 if none */
    char ptx_target_suffix;
    char detail[224];         /* one line: what was found and why not */
} sg_code_report_row_t;

typedef struct {
    uint32_t device_arch;
    uint32_t n_rows;
    sg_code_report_row_t *rows;
    uint32_t n_ptx_available;
} sg_code_report_t;

typedef struct {
    uint32_t device_arch;     /* 0: sg_code_report_default_arch(g) */
    uint64_t max_image_bytes; /* 0: SG_CODE_REPORT_MAX_IMAGE */
    uint64_t max_entry_bytes; /* 0: SG_FATBIN_DEFAULT_MAX_IMAGE */
    bool recompile_nvrtc;     /* NVRTC source images, and the source_image of
                                 an image without usable PTX (a CuPy cubin):
                                 recompile them to PTX (needs libnvrtc; never
                                 inside the shim) */
    /* the open bundle to read images through (graph/bundle.h: one directory
     * descriptor, no link followed); NULL: bundle_path is opened again for
     * each image */
    const struct sg_bundle *files;
} sg_code_report_options_t;

/* "sm_75, sm_90a, sm_100" ("-" when empty, ", ..." when truncated) into
 * buf (at most n bytes with the NUL); returns buf. For printing rows. */
const char *sg_arch_list_format(const sg_arch_list_t *l, char *buf, size_t n);

/* The bundle's device (cc_major * 10 + cc_minor), else 90. */
uint32_t sg_code_report_default_arch(const sg_graph_t *g);

/* Build the report. bundle_path may be NULL: then only the images'
 * recorded metadata is used (no bytes are read, and no row is
 * ptx_available, since the kernel cannot be found in the PTX). opt may be
 * NULL. Problems with one image end up in its rows (reason and detail),
 * never as a failure of the whole report; the return value is 0,
 * SG_EINVAL or SG_ENOMEM. Free with sg_code_report_free. */
int sg_code_report(const sg_graph_t *g, const char *bundle_path,
                   const sg_code_report_options_t *opt, sg_code_report_t *out);
void sg_code_report_free(sg_code_report_t *r);

/* The PTX text of one kernel, decided exactly as its report row would be
 * (the image's PTX, a fatbin's best entry, or recompiled NVRTC source, also
 * through an image's source_image): what fusion lifts. On success *ptx is
 * malloc'd and NUL-terminated; row (may be NULL) gets the row's answer
 * (reason, detail, target) either way. Returns 0 with *ptx NULL when there
 * is no usable PTX (row->reason says why), SG_ENOMEM, SG_EINVAL. */
int sg_code_kernel_ptx(const sg_graph_t *g, const char *bundle_path, const char *kernel,
                       uint32_t image, const sg_code_report_options_t *opt, char **ptx,
                       size_t *ptx_len, sg_code_report_row_t *row);

#ifdef __cplusplus
}
#endif
#endif /* SGCAP_CODE_CODE_REPORT_H */
