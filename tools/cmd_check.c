/* cmd_check.c: `sgcap check B [--json] [--strict]`: report the cross-stream
 * hazards of a bundle's graph (races, use after free, allocation reuse),
 * each proven or possible, with the edge that would fix each; exit 1 when
 * one is proven (any, with --strict). What kernels touch comes from the
 * bundle's access facts, computed on the fly from its code when it has none
 * (the `access` pass, rewrite/access_pass.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle_open.h"
#include "cli.h"
#include "rewrite/check.h"
#include "rewrite/pass.h"

static const char usage[] =
    "usage: sgcap check [--json] [--strict] [--no-analysis] [--max N] BUNDLE\n"
    "\n"
    "Find cross-stream synchronization hazards in the graph of BUNDLE. \"Ordered\"\n"
    "means a path in the graph; an explicit node (no stream) counts as its own\n"
    "stream. Each finding names its nodes, streams, buffer and address range,\n"
    "and the edge that would order it:\n"
    "  race            nodes on different streams touch overlapping memory of one\n"
    "                  allocation, at least one writes (an unknown access counts\n"
    "                  as a write; two atomic updates do not race), and neither is\n"
    "                  ordered before the other\n"
    "  use_after_free  a node uses a graph allocation without being ordered after\n"
    "                  its mem_alloc, or before its mem_free\n"
    "  reuse           two graph allocations share addresses and a user of the\n"
    "                  first is not ordered before the second's mem_alloc (no free\n"
    "                  of the first is ordered before it)\n"
    "\n"
    "What each kernel reads and writes comes from its code (PTX, else SASS through\n"
    "nvdisasm: docs/ACCESS.md), computed now when the bundle has no access facts\n"
    "(`sgcap rewrite` stores them); what nvdisasm printed is kept for the next run\n"
    "in $SGCAP_CACHE_DIR (default ~/.cache/sgcap; `off`: none). A hazard is proven\n"
    "when both sides are known and their bytes certainly overlap; possible when a\n"
    "side is not known, and it says why (no code, an offset that depends on loaded\n"
    "data, a bound that is not touched in full). Lifetimes are per allocation: two\n"
    "graph allocations given the same address are two buffers. A stream that ends\n"
    "in a node with no path to the origin stream's last node is joined by the end\n"
    "of the graph launch: a note, not a hazard.\n"
    "\n"
    "Output: one line per hazard (sorted by kind, then node ids), the notes, then a\n"
    "summary with the proven and possible counts.\n"
    "\n"
    "options:\n"
    "  --json         print one JSON object instead (schema sgcap-check, version 2,\n"
    "                 docs/SCHEMAS.md): {\"bundle\", \"analysis\", \"hazards\": [{\"kind\",\n"
    "                 \"proven\", \"why\", \"message\", \"nodes\", \"buffers\", \"ranges\",\n"
    "                 \"range\", \"missing_edge\"}], \"joined_at_end\", \"counts\",\n"
    "                 \"proven\", \"possible\", \"truncated\"}\n"
    "  --strict       exit 1 for possible hazards too\n"
    "  --no-analysis  use the bundle's accesses as they are (no facts computed)\n"
    "  --max N        stop after N hazards (default 100000)\n"
    "  -h, --help     show this help\n"
    "\n"
    "exit codes: 0 no proven hazard (none at all with --strict), 1 a proven hazard\n"
    "(any hazard with --strict), 2 bad usage or unreadable/malformed bundle\n";

static int run(int argc, char **argv)
{
    const char *path = NULL;
    bool json = false, strict = false, analysis = true;
    sg_check_options_t opt = {0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--strict") == 0) {
            strict = true;
        } else if (strcmp(argv[i], "--no-analysis") == 0) {
            analysis = false;
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
    sg_bundle_t *bundle = sg_cli_open("check", path);
    if (!bundle) return SG_EXIT_USAGE;
    sg_graph_t *g = sg_bundle_graph(bundle);
    bool ran = false;
    char how[512] = "";
    int rc = analysis ? sg_rewrite_ensure_access(g, bundle, &ran, how, sizeof how) : SG_OK;
    if (rc) {
        sg_cli_error("check", "%s: access analysis failed: %s", sg_cli_text(path), sg_strerror(rc));
        sg_bundle_close(bundle);
        return SG_EXIT_USAGE;
    }
    sg_check_result_t res;
    rc = sg_check_run(g, &opt, &res);
    if (rc) {
        sg_cli_error("check", "%s: %s", sg_cli_text(path), sg_strerror(rc));
        sg_bundle_close(bundle);
        return SG_EXIT_USAGE;
    }
    int exit_code = res.n_proven || (strict && res.n) ? SG_EXIT_FINDING : SG_EXIT_OK;
    if (json) {
        json_t *arr = json_array();
        for (size_t i = 0; i < res.n; i++) json_array_append_new(arr, sg_hazard_json(g, &res.hazards[i]));
        json_t *notes = json_array();
        for (size_t i = 0; i < res.n_joined_at_end; i++)
            json_array_append_new(notes, sg_check_joined_json(g, &res.joined_at_end[i]));
        json_t *counts = json_object(), *proven = json_object();
        for (int k = 0; k < SG_HAZARD_KIND_COUNT; k++) {
            json_object_set_new(counts, sg_hazard_kind_name(k), json_integer((json_int_t)res.counts[k]));
            json_object_set_new(proven, sg_hazard_kind_name(k),
                                json_integer((json_int_t)res.proven_counts[k]));
        }
        json_t *an = json_pack("{s:s, s:s}", "facts",
                               !analysis ? "not computed" : ran ? "computed now" : "from the bundle",
                               "summary", how);
        json_t *o = json_pack("{s:s, s:i, s:s, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:b}", "schema",
                              SG_CHECK_SCHEMA, "schema_version", SG_CHECK_SCHEMA_VERSION, "bundle",
                              path, "analysis", an, "hazards", arr, "joined_at_end", notes,
                              "counts", counts, "proven_counts", proven, "proven",
                              (json_int_t)res.n_proven, "possible", (json_int_t)res.n_possible,
                              "truncated", res.truncated);
        if (!o || json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) {
            sg_cli_error("check", "out of memory");
            exit_code = SG_EXIT_USAGE;
        }
        fputc('\n', stdout);
        json_decref(o);
    } else {
        char line[2048];
        if (ran) printf("access facts computed for this check: %s\n", how);
        for (size_t i = 0; i < res.n; i++)
            printf("%s\n", sg_hazard_format(g, &res.hazards[i], line, sizeof line));
        for (size_t i = 0; i < res.n_joined_at_end; i++)
            printf("%s\n", sg_check_joined_format(g, &res.joined_at_end[i], line, sizeof line));
        if (res.n == 0) {
            printf("%s: no hazards\n", sg_cli_text(path));
        } else {
            printf("%s: %zu hazard%s, %zu proven, %zu possible (race %zu/%zu, use_after_free "
                   "%zu/%zu, reuse %zu/%zu proven/all)%s\n",
                   sg_cli_text(path), res.n, res.n == 1 ? "" : "s", res.n_proven, res.n_possible,
                   res.proven_counts[SG_HAZARD_RACE], res.counts[SG_HAZARD_RACE],
                   res.proven_counts[SG_HAZARD_USE_AFTER_FREE], res.counts[SG_HAZARD_USE_AFTER_FREE],
                   res.proven_counts[SG_HAZARD_REUSE], res.counts[SG_HAZARD_REUSE],
                   res.truncated ? "; stopped at --max" : "");
        }
    }
    if (fflush(stdout) != 0) exit_code = SG_EXIT_USAGE;
    sg_check_result_free(&res);
    sg_bundle_close(bundle);
    return exit_code;
}

const sg_command_t sg_command_check = {"check",
                                       "find cross-stream races, use after free and allocation "
                                       "reuse, proven from the kernels' code or possible",
                                       usage, run};
