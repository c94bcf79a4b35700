/* bundle_fusions.c: reading the root's fused-kernel records from graph.json
 * (the top-level "fusions" array, docs/FORMAT.md section 4.4; the writer is
 * bundle_emit.c's fusion_obj), with the same checks as the rest of the
 * bundle: bounded sizes, indices that must exist, the position of any
 * error. Kept apart from the main parser, which calls it once. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle_private.h"
#include "graph_private.h"

#define MAX_STAGES 4096u
#define MAX_DROPPED 65536u

/* ---- reading ----------------------------------------------------------------------- */

typedef struct {
    sg_diag_t *diag;
    const char *file;
    char where[160];
} rd_t;

static int bad(rd_t *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(rd_t *r, int code, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sg_bundle_diag(r->diag, code, r->file, 0, 0, "%s: %s", r->where, msg);
}

static int get_uint(rd_t *r, const json_t *o, const char *k, bool req, uint64_t max, uint64_t *out)
{
    const json_t *v = json_object_get(o, k);
    if (!v || json_is_null(v)) {
        if (req) return bad(r, SG_EFORMAT, "\"%s\" is required", k);
        return 1; /* absent */
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
        return bad(r, SG_EFORMAT, "\"%s\" must be an integer in 0..%" PRIu64, k, max);
    *out = (uint64_t)json_integer_value(v);
    return SG_OK;
}

static int get_triple3(rd_t *r, const json_t *o, const char *k, uint32_t d[3])
{
    const json_t *v = json_object_get(o, k);
    if (!v || json_is_null(v)) return SG_OK;
    if (!json_is_array(v) || json_array_size(v) != 3)
        return bad(r, SG_EFORMAT, "\"%s\" must be [u32, u32, u32]", k);
    for (size_t i = 0; i < 3; i++) {
        const json_t *x = json_array_get(v, i);
        if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > UINT32_MAX)
            return bad(r, SG_EFORMAT, "\"%s\" must be [u32, u32, u32]", k);
        d[i] = (uint32_t)json_integer_value(x);
    }
    return SG_OK;
}

static int hexnib(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int read_kernel(rd_t *r, const sg_graph_t *g, const json_t *o, sg_kernel_t *k)
{
    memset(k, 0, sizeof *k);
    k->image = SG_NONE;
    if (!json_is_object(o)) return bad(r, SG_EFORMAT, "\"kernel\" must be an object");
    const json_t *name = json_object_get(o, "name");
    if (!json_is_string(name) || json_string_length(name) > SG_BUNDLE_MAX_STRING)
        return bad(r, SG_EFORMAT, "\"kernel\".\"name\" must be a string");
    uint64_t v;
    int rc = get_uint(r, o, "image", false, UINT32_MAX - 1, &v);
    if (rc < 0) return rc;
    if (rc == SG_OK) {
        if (v >= g->n_images) return bad(r, SG_EFORMAT, "\"image\" names unknown image %" PRIu64, v);
        k->image = (uint32_t)v;
    }
    if ((rc = get_triple3(r, o, "grid", k->grid)) || (rc = get_triple3(r, o, "block", k->block)) ||
        (rc = get_triple3(r, o, "cluster", k->cluster)))
        return rc;
    rc = get_uint(r, o, "shared_bytes", false, UINT32_MAX, &v);
    if (rc < 0) return rc;
    if (rc == SG_OK) k->shared_bytes = (uint32_t)v;
    k->name = strdup(json_string_value(name));
    if (!k->name) return SG_ENOMEM;
    const json_t *p = json_object_get(o, "params");
    if (!p || json_is_null(p)) return SG_OK;
    const json_t *bytes = json_object_get(p, "bytes"), *layout = json_object_get(p, "layout");
    if (bytes && !json_is_null(bytes)) {
        if (!json_is_string(bytes) || json_string_length(bytes) % 2 ||
            json_string_length(bytes) / 2 > SG_BUNDLE_MAX_PARAM_BYTES)
            return bad(r, SG_EFORMAT, "\"params\".\"bytes\" must be hex of at most %u bytes",
                       SG_BUNDLE_MAX_PARAM_BYTES);
        size_t n = json_string_length(bytes) / 2;
        const char *s = json_string_value(bytes);
        k->param_bytes = malloc(n ? n : 1);
        if (!k->param_bytes) return SG_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            int hi = hexnib(s[2 * i]), lo = hexnib(s[2 * i + 1]);
            if (hi < 0 || lo < 0) return bad(r, SG_EFORMAT, "\"params\".\"bytes\" is not hex");
            k->param_bytes[i] = (uint8_t)(hi << 4 | lo);
        }
        k->params_size = (uint32_t)n;
    }
    if (layout && !json_is_null(layout)) {
        if (!json_is_array(layout) || json_array_size(layout) > SG_BUNDLE_MAX_PARAM_BYTES)
            return bad(r, SG_EFORMAT, "\"params\".\"layout\" must be an array of [offset, size]");
        size_t n = json_array_size(layout);
        k->param_offsets = malloc((n ? n : 1) * sizeof(uint32_t));
        k->param_sizes = malloc((n ? n : 1) * sizeof(uint32_t));
        if (!k->param_offsets || !k->param_sizes) return SG_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            const json_t *e = json_array_get(layout, i);
            const json_t *a = json_array_get(e, 0), *b = json_array_get(e, 1);
            if (!json_is_array(e) || json_array_size(e) != 2 || !json_is_integer(a) ||
                !json_is_integer(b) || json_integer_value(a) < 0 || json_integer_value(b) < 0 ||
                json_integer_value(a) + json_integer_value(b) > (json_int_t)k->params_size)
                return bad(r, SG_EFORMAT, "\"params\".\"layout\"[%zu] must lie within the bytes", i);
            k->param_offsets[i] = (uint32_t)json_integer_value(a);
            k->param_sizes[i] = (uint32_t)json_integer_value(b);
        }
        k->n_params = (uint32_t)n;
    }
    return SG_OK;
}

static int read_one(rd_t *r, sg_graph_t *g, const json_t *o, size_t index)
{
    snprintf(r->where, sizeof r->where, "fusions[%zu]", index);
    if (!json_is_object(o)) return bad(r, SG_EFORMAT, "must be an object");
    uint64_t node, v;
    int rc = get_uint(r, o, "node", true, UINT32_MAX - 1, &node);
    if (rc) return rc;
    const sg_node_t *fx = sg_graph_node(g, (sg_node_id_t)node);
    if (!fx || fx->type != SG_NODE_KERNEL)
        return bad(r, SG_EFORMAT, "\"node\" %" PRIu64 " is not a kernel node of the root graph", node);
    if (sg_graph_fusion(g, (sg_node_id_t)node))
        return bad(r, SG_EFORMAT, "node %" PRIu64 " has a fusion record already", node);
    const json_t *hash = json_object_get(o, "hash");
    if (!json_is_string(hash) || json_string_length(hash) != 16 ||
        strspn(json_string_value(hash), "0123456789abcdef") != 16)
        return bad(r, SG_EFORMAT, "\"hash\" must be 16 lowercase hex digits");
    sg_fusion_t *f;
    if ((rc = sg_graph_add_fusion(g, (sg_node_id_t)node, &f))) return rc;
    memcpy(f->hash, json_string_value(hash), 17);
    if ((rc = get_uint(r, o, "tier", true, 2, &v)) ) return rc;
    if (v < 1) return bad(r, SG_EFORMAT, "\"tier\" must be 1 or 2");
    f->tier = (uint32_t)v;
    const json_t *cg = json_object_get(o, "codegen");
    if (cg && json_is_string(cg) && json_string_length(cg) <= SG_BUNDLE_MAX_STRING) {
        f->codegen = strdup(json_string_value(cg));
        if (!f->codegen) return SG_ENOMEM;
    }
    const json_t *note = json_object_get(o, "note");
    if (note && json_is_string(note) && json_string_length(note) <= SG_BUNDLE_MAX_STRING) {
        f->note = strdup(json_string_value(note));
        if (!f->note) return SG_ENOMEM;
    }
    const char *imgs[2] = {"ptx_image", "cubin_image"};
    uint32_t *slots[2] = {&f->ptx_image, &f->cubin_image};
    for (int i = 0; i < 2; i++) {
        rc = get_uint(r, o, imgs[i], false, UINT32_MAX - 1, &v);
        if (rc < 0) return rc;
        if (rc == SG_OK) {
            if (v >= g->n_images) return bad(r, SG_EFORMAT, "\"%s\" names unknown image %" PRIu64, imgs[i], v);
            *slots[i] = (uint32_t)v;
        }
    }
    const char *ints[2] = {"registers", "spill_bytes"};
    int32_t *iv[2] = {&f->registers, &f->spill_bytes};
    for (int i = 0; i < 2; i++) {
        const json_t *x = json_object_get(o, ints[i]);
        if (!x || json_is_null(x)) continue;
        if (!json_is_integer(x) || json_integer_value(x) < -1 || json_integer_value(x) > INT32_MAX)
            return bad(r, SG_EFORMAT, "\"%s\" must be an integer >= -1", ints[i]);
        *iv[i] = (int32_t)json_integer_value(x);
    }
    const json_t *stages = json_object_get(o, "stages");
    if (!json_is_array(stages) || json_array_size(stages) < 1 || json_array_size(stages) > MAX_STAGES)
        return bad(r, SG_EFORMAT, "\"stages\" must be an array of 1..%u stages", MAX_STAGES);
    for (size_t s = 0; s < json_array_size(stages); s++) {
        const json_t *so = json_array_get(stages, s);
        snprintf(r->where, sizeof r->where, "fusions[%zu].stages[%zu]", index, s);
        if (!json_is_object(so)) return bad(r, SG_EFORMAT, "must be an object");
        uint64_t sn, seq = 0, base;
        if ((rc = get_uint(r, so, "node", true, UINT32_MAX - 1, &sn))) return rc;
        rc = get_uint(r, so, "seq", false, UINT64_MAX >> 1, &seq);
        if (rc < 0) return rc;
        if ((rc = get_uint(r, so, "param_base", true, UINT32_MAX, &base))) return rc;
        sg_kernel_t k;
        rc = read_kernel(r, g, json_object_get(so, "kernel"), &k);
        if (!rc && base + k.params_size > fx->u.kernel.params_size)
            rc = bad(r, SG_EFORMAT, "its parameters (%u bytes at %" PRIu64 ") reach past the fused "
                                    "node's %u bytes", k.params_size, base, fx->u.kernel.params_size);
        if (!rc) rc = sg_fusion_add_stage(f, (sg_node_id_t)sn, seq, &k, (uint32_t)base);
        sg_kernel_release(&k);
        if (rc) return rc;
    }
    const json_t *dropped = json_object_get(o, "dropped");
    if (dropped && !json_is_null(dropped)) {
        snprintf(r->where, sizeof r->where, "fusions[%zu]", index);
        if (!json_is_array(dropped) || json_array_size(dropped) > MAX_DROPPED)
            return bad(r, SG_EFORMAT, "\"dropped\" must be an array of at most %u", MAX_DROPPED);
        for (size_t d = 0; d < json_array_size(dropped); d++) {
            const json_t *w = json_array_get(dropped, d);
            snprintf(r->where, sizeof r->where, "fusions[%zu].dropped[%zu]", index, d);
            uint64_t stage, buffer, off, size;
            if (!json_is_object(w)) return bad(r, SG_EFORMAT, "must be an object");
            if ((rc = get_uint(r, w, "stage", true, f->n_stages - 1, &stage)) ||
                (rc = get_uint(r, w, "buffer", true, UINT32_MAX - 1, &buffer)) ||
                (rc = get_uint(r, w, "offset", true, UINT64_MAX >> 1, &off)) ||
                (rc = get_uint(r, w, "size", true, UINT64_MAX >> 1, &size)))
                return rc;
            if (buffer >= g->n_buffers) return bad(r, SG_EFORMAT, "\"buffer\" names unknown buffer %" PRIu64, buffer);
            const json_t *why = json_object_get(w, "reason");
            const char *reason = why && json_is_string(why) && json_string_length(why) <= SG_BUNDLE_MAX_STRING
                                     ? json_string_value(why)
                                     : NULL;
            if ((rc = sg_fusion_add_dropped(f, (uint32_t)stage, (uint32_t)buffer, off, size, reason)))
                return rc;
        }
    }
    return SG_OK;
}

int sg_bundle__parse_fusions(const json_t *top, sg_graph_t *g, sg_diag_t *diag, const char *file)
{
    const json_t *arr = json_object_get(top, "fusions");
    if (!arr || json_is_null(arr)) return SG_OK;
    rd_t r = {diag, file, "fusions"};
    if (!json_is_array(arr) || json_array_size(arr) > SG_BUNDLE_MAX_TABLE)
        return bad(&r, SG_EFORMAT, "must be an array of at most %u records", SG_BUNDLE_MAX_TABLE);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        int rc = read_one(&r, g, json_array_get(arr, i), i);
        if (rc) return rc;
    }
    return SG_OK;
}
