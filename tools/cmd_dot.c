/* cmd_dot.c: `sgcap dot B [-o FILE]`: draw a bundle's graph with one lane per
 * stream. A name ending in .svg (or .png/.pdf) is rendered through Graphviz;
 * the output appears complete or not at all. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bundle_open.h"
#include "cli.h"
#include "graph/views.h"

static const char usage[] =
    "usage: sgcap dot [-o FILE] [--ids] [--params] BUNDLE\n"
    "\n"
    "Write the graph of BUNDLE in Graphviz DOT: one coloured lane per stream\n"
    "(nodes added explicitly, not by stream capture, get an \"explicit\" lane),\n"
    "event edges dashed and labelled with their event, control edges dotted,\n"
    "deferred-deallocation edges bold red, kernels labelled with a short\n"
    "demangled name and their grid/block geometry.\n"
    "\n"
    "options:\n"
    "  -o FILE    write to FILE instead of stdout; when FILE ends in .svg, .png or\n"
    "             .pdf it is rendered with Graphviz's `dot` (must be installed)\n"
    "  --ids      add node ids to the labels\n"
    "  --params   add kernel parameter sizes to the labels\n"
    "  -h, --help show this help\n"
    "\n"
    "exit codes: 0 ok, 1 rendering failed, 2 bad usage or unreadable/malformed bundle\n";

static const char *render_format(const char *out)
{
    const char *dot = strrchr(out, '.');
    if (!dot) return NULL;
    if (strcmp(dot, ".svg") == 0) return "svg";
    if (strcmp(dot, ".png") == 0) return "png";
    if (strcmp(dot, ".pdf") == 0) return "pdf";
    return NULL;
}

/* Run `dot -T<fmt> -o out in`; 0 on success. */
static int run_graphviz(const char *fmt, const char *in, const char *out)
{
    char tflag[16];
    snprintf(tflag, sizeof tflag, "-T%s", fmt);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execlp("dot", "dot", tflag, "-o", out, in, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return 127;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int run(int argc, char **argv)
{
    const char *out = NULL, *path = NULL;
    sg_dot_options_t opt = {0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0) {
            if (++i >= argc) {
                sg_cli_error("dot", "-o needs a file name");
                return SG_EXIT_USAGE;
            }
            out = argv[i];
        } else if (strcmp(argv[i], "--ids") == 0) {
            opt.show_ids = true;
        } else if (strcmp(argv[i], "--params") == 0) {
            opt.show_params = true;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            sg_cli_error("dot", "unknown option '%s' (see sgcap dot --help)", argv[i]);
            return SG_EXIT_USAGE;
        } else if (!path) {
            path = argv[i];
        } else {
            sg_cli_error("dot", "one bundle at a time ('%s' is extra)", argv[i]);
            return SG_EXIT_USAGE;
        }
    }
    if (!path) {
        sg_cli_error("dot", "no bundle given (see sgcap dot --help)");
        return SG_EXIT_USAGE;
    }
    sg_graph_t *g = sg_cli_open_bundle("dot", path);
    if (!g) return SG_EXIT_USAGE;
    opt.title = g->program;

    int exit_code = SG_EXIT_OK;
    if (!out) {
        if (sg_dot_write(g, stdout, &opt) != SG_OK || fflush(stdout) != 0) exit_code = 1;
        sg_graph_destroy(g);
        return exit_code;
    }
    /* Write next to the target and rename, so a failure never leaves half a file. */
    const char *fmt = render_format(out);
    size_t n = strlen(out) + 32;
    char *tmp_dot = malloc(n), *tmp_out = malloc(n);
    if (!tmp_dot || !tmp_out) {
        sg_cli_error("dot", "out of memory");
        exit_code = SG_EXIT_USAGE;
        goto done;
    }
    snprintf(tmp_dot, n, "%s.%ld.tmp.dot", out, (long)getpid());
    snprintf(tmp_out, n, "%s.%ld.tmp", out, (long)getpid());
    FILE *f = fopen(tmp_dot, "w");
    if (!f) {
        sg_cli_error("dot", "cannot write %s: %s", tmp_dot, strerror(errno));
        exit_code = SG_EXIT_USAGE;
        goto done;
    }
    int wrc = sg_dot_write(g, f, &opt);
    if (fclose(f) != 0 || wrc != SG_OK) {
        sg_cli_error("dot", "writing %s failed", tmp_dot);
        unlink(tmp_dot);
        exit_code = 1;
        goto done;
    }
    if (fmt) {
        int rrc = run_graphviz(fmt, tmp_dot, tmp_out);
        unlink(tmp_dot);
        if (rrc != 0) {
            unlink(tmp_out);
            if (rrc == 127)
                sg_cli_error("dot", "Graphviz `dot` not found (install graphviz)");
            else
                sg_cli_error("dot", "Graphviz failed to render %s", out);
            exit_code = 1;
            goto done;
        }
        if (rename(tmp_out, out) != 0) {
            sg_cli_error("dot", "cannot create %s: %s", out, strerror(errno));
            unlink(tmp_out);
            exit_code = 1;
        }
    } else if (rename(tmp_dot, out) != 0) {
        sg_cli_error("dot", "cannot create %s: %s", out, strerror(errno));
        unlink(tmp_dot);
        exit_code = 1;
    }
done:
    free(tmp_dot);
    free(tmp_out);
    sg_graph_destroy(g);
    return exit_code;
}

const sg_command_t sg_command_dot = {"dot", "draw a bundle's graph (DOT, or SVG via Graphviz)",
                                     usage, run};
