/* cmd_check.c: `sgcap check B [--json]`: report the cross-stream hazards of
 * a bundle's graph (races, use after free, allocation reuse, unjoined forks)
 * with the edge that would fix each; exit 1 when there are any. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle_open.h"
#include "cli.h"
#include "rewrite/check.h"

static const char usage[] =
    "usage: sgcap check [--json] [--max N] BUNDLE\n"
    "\n"
    "Find cross-stream synchronization hazards in the graph of BUNDLE. \"Ordered\"\n"
    "means a path in the graph; an explicit node (no stream) counts as its own\n"
    "stream. Each finding names its nodes, streams, buffer and address range,\n"
    "and the edge that would order it:\n"
    "  race            nodes on different streams touch overlapping memory of one\n"
    "                  allocation, at least one writes (an unknown access counts\n"
    "                  as a write), and neither is ordered before the other\n"
    "  use_after_free  a node uses a graph allocation without being ordered after\n"
    "                  its mem_alloc, or before its mem_free\n"
    "  reuse           two graph allocations share addresses and a user of the\n"
    "                  first is not ordered before the second's mem_alloc (no free\n"
    "                  of the first is ordered before it)\n"
    "  unjoined        a stream other than the capture's origin stream (the stream\n"
    "                  of the first captured node) whose last node has no path to\n"
    "                  the origin stream's last node\n"
    "\n"
    "Output: one line per hazard (sorted by kind, then node ids), then a summary.\n"
    "\n"
    "options:\n"
    "  --json     print one JSON object instead: {\"bundle\", \"hazards\": [{\"kind\",\n"
    "             \"message\", \"nodes\", \"buffers\", \"range\", \"missing_edge\"}],\n"
    "             \"counts\", \"truncated\"}\n"
    "  --max N    stop after N hazards (default 100000)\n"
    "  -h, --help show this help\n"
    "\n"
    "exit codes: 0 no hazard found, 1 hazards found, 2 bad usage or\n"
    "unreadable/malformed bundle\n";

static int run(int argc, char **argv)
{
    const char *path = NULL;
    bool json = false;
    sg_check_options_t opt = {0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--max") == 0) {
            char *end = NULL;
            if (!sg_cli_value("check", argc, argv, &i)) return SG_EXIT_USAGE;
            unsigned long v = strtoul(argv[i], &end, 10);
            if (!*argv[i] || *end || v == 0 || v > UINT32_MAX) {
                sg_cli_error("check", "--max needs a positive number, not '%s'", argv[i]);
                return SG_EXIT_USAGE;
            }
            opt.max_hazards = (uint32_t)v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            sg_cli_error("check", "unknown option '%s' (see sgcap check --help)", argv[i]);
            return SG_EXIT_USAGE;
        } else if (!path) {
            path = argv[i];
        } else {
            sg_cli_error("check", "one bundle at a time ('%s' is extra)", argv[i]);
            return SG_EXIT_USAGE;
        }
    }
    if (!path) {
        sg_cli_error("check", "no bundle given (see sgcap check --help)");
        return SG_EXIT_USAGE;
    }
    sg_graph_t *g = sg_cli_open_bundle("check", path);
    if (!g) return SG_EXIT_USAGE;
    sg_check_result_t res;
    int rc = sg_check_run(g, &opt, &res);
    if (rc) {
        sg_cli_error("check", "%s: %s", path, sg_strerror(rc));
        sg_graph_destroy(g);
        return SG_EXIT_USAGE;
    }
    int exit_code = res.n ? SG_EXIT_FINDING : SG_EXIT_OK;
    if (json) {
        json_t *arr = json_array();
        for (size_t i = 0; i < res.n; i++) json_array_append_new(arr, sg_hazard_json(g, &res.hazards[i]));
        json_t *counts = json_object();
        for (int k = 0; k < SG_HAZARD_KIND_COUNT; k++)
            json_object_set_new(counts, sg_hazard_kind_name(k), json_integer((json_int_t)res.counts[k]));
        json_t *o = json_pack("{s:s, s:i, s:s, s:o, s:o, s:b}", "schema", SG_CHECK_SCHEMA,
                              "schema_version", SG_CHECK_SCHEMA_VERSION, "bundle", path, "hazards",
                              arr, "counts", counts, "truncated", res.truncated);
        if (!o || json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) {
            sg_cli_error("check", "out of memory");
            exit_code = SG_EXIT_USAGE;
        }
        fputc('\n', stdout);
        json_decref(o);
    } else {
        char line[2048];
        for (size_t i = 0; i < res.n; i++)
            printf("%s\n", sg_hazard_format(g, &res.hazards[i], line, sizeof line));
        if (res.n == 0) {
            printf("%s: no hazards\n", sg_cli_text(path));
        } else {
            printf("%s: %zu hazard%s (race %zu, use_after_free %zu, reuse %zu, unjoined %zu)%s\n",
                   sg_cli_text(path), res.n, res.n == 1 ? "" : "s", res.counts[SG_HAZARD_RACE],
                   res.counts[SG_HAZARD_USE_AFTER_FREE], res.counts[SG_HAZARD_REUSE],
                   res.counts[SG_HAZARD_UNJOINED], res.truncated ? "; stopped at --max" : "");
        }
    }
    if (fflush(stdout) != 0) exit_code = SG_EXIT_USAGE;
    sg_check_result_free(&res);
    sg_graph_destroy(g);
    return exit_code;
}

const sg_command_t sg_command_check = {"check",
                                       "find cross-stream races, use after free, allocation "
                                       "reuse and unjoined streams",
                                       usage, run};
