/* repeat.c: after a validation mismatch, replay once more and compare the two
 * replays with each other, to tell the two causes apart that need different
 * answers:
 *   - the replays differ from each other: the graph is not deterministic
 *     (floating-point atomics, split-K reductions, races), so no bit-exact
 *     comparison with the capture can pass and a tolerance is the answer;
 *   - they agree: the replay is repeatable but not what the program
 *     computed, so something the graph depends on was not recorded (memory
 *     no snapshot covered, module state, work done outside the graph, an
 *     exec changed in place that the capture did not see).
 * Needs the buffers' contents after the first run, so it reads every
 * compared buffer before restoring and running again. */
#include <stdlib.h>
#include <string.h>

#include "replay_private.h"

int sg_replay_repeat(sg_replay_t *r, sg_repeat_result_t *out, char *err, size_t errlen)
{
    const sg_graph_t *g = r->g;
    memset(out, 0, sizeof *out);
    out->max_ulp = 0;
    void **first = calloc(g->n_buffers + 1, sizeof *first);
    if (!first) return sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
    int rc = SG_OK;
    for (uint32_t i = 0; i < g->n_buffers && rc == SG_OK; i++) {
        const sg_buffer_t *b = &g->buffers[i];
        if (!b->after_file || !r->buf_addr[i] || r->buf_place[i] == SG_PLACE_NONE ||
            (r->buf_place[i] == SG_PLACE_GRAPH && r->buf_freed[i]) || b->size == 0)
            continue;
        first[i] = malloc(b->size);
        if (!first[i]) {
            rc = sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
            break;
        }
        rc = sg_replay__read_buffer(r, i, first[i], b->size, err, errlen);
    }
    if (rc == SG_OK) rc = sg_replay_restore(r, err, errlen);
    if (rc == SG_OK) rc = sg_replay_run(r, err, errlen);
    void *again = NULL;
    for (uint32_t i = 0; i < g->n_buffers && rc == SG_OK; i++) {
        if (!first[i]) continue;
        const sg_buffer_t *b = &g->buffers[i];
        void *p = realloc(again, b->size);
        if (!p) {
            rc = sg_replay__fail(err, errlen, SG_ENOMEM, "out of memory");
            break;
        }
        again = p;
        rc = sg_replay__read_buffer(r, i, again, b->size, err, errlen);
        if (rc) break;
        out->compared++;
        sg_compare_result_t c;
        sg_compare_buffers(again, first[i], b->size, NULL, &c);
        if (!c.mismatches) continue;
        out->differing++;
        if (out->first_buffer == 0 && out->differing == 1) out->first_buffer = i;
        out->bytes_differing += c.mismatches;
        if (c.as_float && c.max_ulp > out->max_ulp) out->max_ulp = c.max_ulp;
    }
    free(again);
    for (uint32_t i = 0; i < g->n_buffers; i++)
        free(first[i]);
    free(first);
    return rc;
}
