/* fuzz_lift.c: libFuzzer target for the fusion lifter (rewrite/fuse.h): PTX
 * text after an 8-byte header that picks the launch geometry and the
 * parameter bytes. Every entry is analyzed as a stage; stages that pass are
 * planned as a run of two (the same stage twice, the cross-stage rules) and
 * generated. The promises checked, beyond not crashing: a refusal always
 * says why and an accepted stage never does; every site's width and
 * t-interval are sane; a plan splits only inside the run; generation
 * succeeds or refuses with a reason, and leaves no internal marker in the
 * CUDA C it writes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "code/ptx.h"
#include "graph/graph.h"
#include "rewrite/fuse.h"

#define CHECK(c) \
    do {         \
        if (!(c)) abort(); \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8 || size > (1u << 20)) return 0;
    uint32_t block = 32u * (1u + data[0] % 8), grid = 1u + data[1] * 3u;
    sg_ptx_module_t *m = NULL;
    sg_ptx_error_t err;
    if (sg_ptx_parse((const char *)data + 8, size - 8, NULL, &m, &err) != SG_OK) return 0;
    sg_graph_t *g = sg_graph_create();
    CHECK(g && sg_graph_add_stream(g, NULL, 0, NULL) == SG_OK);
    for (uint32_t b = 0; b < 4; b++)
        CHECK(sg_graph_add_buffer(g, b == 3 ? SG_BUFFER_GRAPH_ALLOC : SG_BUFFER_DEVICE,
                                  0x7f0000000000ull + 0x1000000ull * b, 0x1000000ull, NULL) == SG_OK);
    uint32_t kernels = 0;
    for (uint32_t fi = 0; fi < m->n_funcs && kernels < 4; fi++) {
        const sg_ptx_func_t *f = &m->funcs[fi];
        if (!f->is_entry || !f->has_body) continue;
        kernels++;
        sg_node_id_t id;
        CHECK(sg_graph_add_node(g, SG_NODE_KERNEL, 0, fi, &id) == SG_OK);
        CHECK(sg_node_set_kernel_name(g, id, f->name) == SG_OK);
        uint32_t ps = f->params_size < 4096 ? f->params_size : 4096;
        uint8_t *bytes = calloc(ps + 8, 1);
        CHECK(bytes);
        for (uint32_t i = 0; i + 8 <= ps; i += 8) {
            uint64_t w = (data[2 + (i / 8) % 6] & 1) ? 0x7f0000000000ull + 0x1000000ull * ((i / 8) % 4)
                                                    : (uint64_t)data[2 + (i / 8) % 6] * 4096u;
            memcpy(bytes + i, &w, 8);
        }
        CHECK(sg_node_set_kernel_params(g, id, 0, NULL, NULL, bytes, ps) == SG_OK);
        free(bytes);
        sg_kernel_t *k = &sg_graph_node(g, id)->u.kernel;
        k->grid[0] = grid;
        k->block[0] = block;
        k->grid[1] = k->grid[2] = k->block[1] = k->block[2] = 1;
        sg_fz_stage_t st[2];
        int rc = sg_fz_stage_analyze(m, sg_graph_node(g, id), &st[0]);
        CHECK(rc == SG_OK || rc == SG_ENOMEM);
        if (rc) continue;
        CHECK(st[0].ok == (st[0].reason[0] == 0));
        for (uint32_t i = 0; i < st[0].n_sites; i++) {
            const sg_fz_site_t *x = &st[0].sites[i];
            CHECK(x->width >= 1 && x->width <= 256);
            CHECK(x->lo < x->hi && x->hi <= st[0].threads);
        }
        if (st[0].ok) {
            st[1] = st[0];
            sg_fz_plan_t plan;
            rc = sg_fz_plan(g, st, 2, &plan);
            CHECK(rc == SG_OK || rc == SG_ENOMEM);
            if (rc == SG_OK) {
                CHECK(plan.split_at == SG_NONE || plan.split_at < 2);
                CHECK(plan.n_stages <= 2);
                if (plan.n_stages) {
                    sg_fz_gen_options_t o;
                    sg_fz_gen_options_default(&o);
                    sg_fz_source_t src;
                    char e[512] = "";
                    rc = sg_fz_generate(&plan, &o, &src, e, sizeof e);
                    CHECK(rc == SG_OK || rc == SG_EUNSUPPORTED || rc == SG_ENOMEM);
                    if (rc == SG_EUNSUPPORTED) CHECK(e[0]);
                    if (rc == SG_OK) {
                        CHECK(strstr(src.source, src.name));
                        CHECK(!strchr(src.source, '\1') && !strchr(src.source, '\3'));
                        CHECK(src.params_size >= plan.n_stages);
                        sg_fz_source_free(&src);
                    }
                }
                sg_fz_plan_free(&plan);
            }
        }
        sg_fz_stage_free(&st[0]);
    }
    sg_graph_destroy(g);
    sg_ptx_module_free(m);
    return 0;
}
