/* fuzz_bundle.c: libFuzzer target for the bundle reader (graph/bundle_parse.c
 * over graph/json_read.c). Arbitrary bytes go to sg_bundle_parse_json. A
 * rejection must come with a diagnostic naming the file and saying why; text
 * that jansson (an independent JSON parser) finds malformed must be rejected
 * as malformed, with a line number. An accepted graph must be JSON to
 * jansson too, and survive what every reader of a bundle does next:
 * serialize it, parse that again into the same model (sg_bundle_same),
 * serialize again to the same bytes (the writer is deterministic and the
 * reader accepts all it writes), dump and clone it, order it topologically.
 * Any violation traps, which libFuzzer reports as a crash.
 * Seeds: tests/fuzz/seeds/fuzz_bundle/ (small valid and invalid graph.json). */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph/bundle.h"
#include "graph/views.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x)) __builtin_trap();                                                                \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sg_graph_t *g = NULL;
    sg_diag_t diag;
    memset(&diag, 0, sizeof diag);
    int rc = sg_bundle_parse_json((const char *)data, size, "graph.json", &g, &diag);
    json_error_t je;
    json_t *oracle = json_loadb((const char *)data, size, 0, &je);
    json_decref(oracle);
    if (rc != SG_OK) {
        CHECK(g == NULL);
        CHECK(rc < 0);
        CHECK(strcmp(diag.file, "graph.json") == 0 && diag.message[0] != '\0');
        if (!oracle) CHECK(rc == SG_EFORMAT && diag.line > 0);
        return 0;
    }
    CHECK(oracle != NULL);
    char *json = NULL, *again = NULL, *dump1 = NULL, *dump2 = NULL;
    CHECK(sg_bundle_to_json(g, &json) == SG_OK);
    sg_graph_t *g2 = NULL;
    rc = sg_bundle_parse_json(json, strlen(json), "graph.json", &g2, &diag);
    CHECK(rc == SG_OK);
    CHECK(sg_bundle_same(g, g2, NULL, 0));
    CHECK(sg_bundle_to_json(g2, &again) == SG_OK);
    CHECK(strcmp(json, again) == 0);
    CHECK(sg_dump_string(g, &dump1) == SG_OK);
    CHECK(sg_dump_string(g2, &dump2) == SG_OK);
    CHECK(strcmp(dump1, dump2) == 0);
    sg_graph_t *c = sg_graph_clone(g);
    CHECK(c != NULL);
    sg_node_id_t *order = NULL;
    uint32_t n = 0;
    CHECK(sg_graph_topo_order(c, &order, &n) == SG_OK);
    CHECK(n == sg_graph_node_count(g));
    free(order);
    sg_graph_destroy(c);
    free(json);
    free(again);
    free(dump1);
    free(dump2);
    sg_graph_destroy(g);
    sg_graph_destroy(g2);
    return 0;
}
