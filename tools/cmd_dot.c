/* cmd_dot.c: `sgcap dot B [-o FILE]`: draw a bundle's graph with one lane per
 * stream, folded when it is big (graph/dot_fold.h). The format comes from
 * FILE's extension (any case): DOT text for none, .dot or .gv, anything else
 * rendered by Graphviz's `dot -T<ext>`, fed through a pipe. The output
 * appears complete or not at all (tools/outfile.h), and an interrupted run
 * leaves neither a file nor a Graphviz process behind: Graphviz dies with
 * us (PR_SET_PDEATHSIG). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bundle_open.h"
#include "cli.h"
#include "graph/views.h"
#include "outfile.h"

/* The default budget of boxes: a drawing people can read, which Graphviz
 * lays out in well under a second. */
#define SG_DOT_DEFAULT_MAX_NODES 300
/* Unfolded drawings of more nodes than this can keep Graphviz busy for
 * minutes: say so. */
#define SG_DOT_SLOW_NODES 2000

static const char usage[] =
    "usage: sgcap dot [-o FILE] [--ids] [--params] [--max-nodes N] BUNDLE\n"
    "\n"
    "Write the graph of BUNDLE in Graphviz DOT: one coloured lane per stream\n"
    "(nodes added explicitly, not by stream capture, get an \"explicit\" lane),\n"
    "event edges dashed and labelled with their event, control edges dotted,\n"
    "deferred-deallocation edges bold red, kernels labelled with a short\n"
    "demangled name and their grid/block geometry; an NCCL kernel says so, and\n"
    "a stream whose kernels are all NCCL's is titled \"(comm: NCCL)\".\n"
    "\n"
    "A graph of more than N nodes (default 300) is drawn folded, in boxes of\n"
    "one stream each: runs of the same kernel (\"x40\") or of a repeated\n"
    "pattern (\"12 x [ ... ]\"), runs of mixed nodes between two points where\n"
    "the stream waits for another (\"137 nodes\", with their types and most\n"
    "launched kernels), and for graphs too big even for that, bands: the graph\n"
    "cut into slices of about equal size, one box per stream and slice, arrows\n"
    "only between slices. Folding never draws an ordering the graph lacks. The\n"
    "title and stderr say how the drawing was folded.\n"
    "\n"
    "options:\n"
    "  -o FILE        write to FILE instead of stdout; the format comes from its\n"
    "                 extension, in any case: none, .dot or .gv write DOT text,\n"
    "                 any other (.svg, .png, .pdf, .jpg, ...) is rendered by\n"
    "                 Graphviz's `dot -T<ext>` (must be installed; `dot -T?`\n"
    "                 lists what it supports)\n"
    "  --ids          add node ids to the labels\n"
    "  --params       add kernel parameter sizes to the labels\n"
    "  --max-nodes N  fold graphs of more than N nodes into about N boxes\n"
    "                 (default 300; 0 draws every node, which Graphviz may take\n"
    "                 minutes to lay out for thousands)\n"
    "  -h, --help     show this help\n"
    "\n"
    "exit codes: 0 ok, 1 rendering failed, 2 bad usage, unreadable/malformed\n"
    "bundle or an output that cannot be written\n";

/* The Graphviz format for an output name: NULL for DOT text (no extension,
 * .dot, .gv), the extension in lower case, or "" when it cannot be one. */
static const char *format_of(const char *path, char *buf, size_t n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base) return NULL;
    size_t len = strlen(dot + 1);
    if (len == 0 || len >= n) return "";
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)dot[1 + i];
        if (!isalnum(c) && c != '_' && c != '-') return "";
        buf[i] = (char)tolower(c);
    }
    buf[len] = '\0';
    if (strcmp(buf, "dot") == 0 || strcmp(buf, "gv") == 0) return NULL;
    return buf;
}

/* Graphviz's messages: the first lines of what it wrote on stderr. */
static void read_messages(FILE *err, char *msg, size_t n)
{
    msg[0] = '\0';
    if (!err || fflush(err) != 0 || fseek(err, 0, SEEK_SET) != 0) return;
    size_t got = fread(msg, 1, n - 1, err);
    msg[got] = '\0';
    while (got && (msg[got - 1] == '\n' || msg[got - 1] == ' '))
        msg[--got] = '\0';
}

/* Render g with `dot -T<fmt>` into out_fd, the DOT text fed through a pipe.
 * 0 on success; else an exit code, the error reported. */
static int render(const sg_graph_t *g, const sg_dot_options_t *opt, const char *fmt, int out_fd,
                  const char *out)
{
    char tflag[40];
    snprintf(tflag, sizeof tflag, "-T%s", fmt);
    FILE *err = tmpfile(); /* unnamed: nothing to clean up */
    int p[2];
    if (!err || pipe2(p, O_CLOEXEC) != 0) {
        sg_cli_error("dot", "cannot start Graphviz: %s", strerror(errno));
        if (err) fclose(err);
        return 1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        sg_cli_error("dot", "cannot start Graphviz: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        fclose(err);
        return 1;
    }
    if (pid == 0) {
        /* dies with us, however we die */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        signal(SIGPIPE, SIG_DFL);
        if (dup2(p[0], 0) < 0 || dup2(out_fd, 1) < 0 || dup2(fileno(err), 2) < 0) _exit(126);
        execlp("dot", "dot", tflag, (char *)NULL);
        dprintf(2, "cannot run dot: %s", strerror(errno));
        _exit(127);
    }
    sg_outfile_child(pid);
    close(p[0]);
    /* Graphviz may stop reading (a bad format): its message says why, not EPIPE */
    struct sigaction ign = {0}, old;
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    FILE *w = fdopen(p[1], "w");
    int wrc = w ? sg_dot_write(g, w, opt) : SG_ENOMEM;
    if (w ? fclose(w) != 0 : close(p[1]) != 0) wrc = wrc ? wrc : SG_EIO;
    sigaction(SIGPIPE, &old, NULL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    sg_outfile_child(0);
    char msg[600];
    read_messages(err, msg, sizeof msg);
    fclose(err);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        sg_cli_error("dot", "Graphviz's `dot` could not be run (install graphviz): %s", msg);
        return 1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char why[64];
        if (WIFSIGNALED(status))
            snprintf(why, sizeof why, "killed by signal %d", WTERMSIG(status));
        else
            snprintf(why, sizeof why, "exit status %d", WEXITSTATUS(status));
        sg_cli_error("dot", "Graphviz (dot %s) failed to render %s (%s)%s%s", tflag, out, why,
                     msg[0] ? ": " : "", msg);
        return 1;
    }
    if (wrc != SG_OK) {
        sg_cli_error("dot", "writing the drawing failed: %s", sg_strerror(wrc));
        return 1;
    }
    if (msg[0]) sg_cli_error("dot", "Graphviz: %s", msg); /* its warnings */
    return 0;
}

/* DOT text into fd. */
static int write_dot(const sg_graph_t *g, const sg_dot_options_t *opt, int fd, const char *out)
{
    int copy = dup(fd);
    FILE *f = copy >= 0 ? fdopen(copy, "w") : NULL;
    if (!f) {
        if (copy >= 0) close(copy);
        sg_cli_error("dot", "cannot write %s: %s", out, strerror(errno));
        return SG_EXIT_USAGE;
    }
    int rc = sg_dot_write(g, f, opt);
    if (fclose(f) != 0 && rc == SG_OK) rc = SG_EIO;
    if (rc != SG_OK) {
        sg_cli_error("dot", "writing %s failed: %s", out,
                     rc == SG_EIO ? strerror(errno) : sg_strerror(rc));
        return SG_EXIT_USAGE;
    }
    return 0;
}

static int run(int argc, char **argv)
{
    const char *out = NULL, *path = NULL;
    sg_dot_summary_t summary;
    sg_dot_options_t opt = {.max_nodes = SG_DOT_DEFAULT_MAX_NODES, .summary = &summary};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0) {
            if (!(out = sg_cli_value("dot", argc, argv, &i))) return SG_EXIT_USAGE;
        } else if (strcmp(argv[i], "--ids") == 0) {
            opt.show_ids = true;
        } else if (strcmp(argv[i], "--params") == 0) {
            opt.show_params = true;
        } else if (strcmp(argv[i], "--max-nodes") == 0) {
            const char *v = sg_cli_value("dot", argc, argv, &i);
            char *end = NULL;
            unsigned long n = v ? strtoul(v, &end, 10) : 0;
            if (!v || !*v || *end || v[0] == '-' || n > 1000000) {
                if (v) sg_cli_error("dot", "--max-nodes needs a number (0: draw every node)");
                return SG_EXIT_USAGE;
            }
            opt.max_nodes = (uint32_t)n;
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
    char ext[24];
    const char *fmt = out ? format_of(out, ext, sizeof ext) : NULL;
    if (fmt && !fmt[0]) {
        sg_cli_error("dot",
                     "cannot tell a format from the name %s (use .svg, .png, .pdf, ... "
                     "for Graphviz, .dot or no extension for DOT text)",
                     out);
        return SG_EXIT_USAGE;
    }
    sg_graph_t *g = sg_cli_open_bundle("dot", path);
    if (!g) return SG_EXIT_USAGE;
    opt.title = g->program;

    int exit_code = SG_EXIT_OK;
    if (!out) {
        /* stdout: write errors are caught at exit (main.c) */
        if (sg_dot_write(g, stdout, &opt) != SG_OK) exit_code = 1;
    } else {
        sg_outfile_t of;
        int err = sg_outfile_open(&of, out);
        if (err) {
            sg_cli_error("dot", "cannot write %s: %s", out, strerror(err));
            exit_code = SG_EXIT_USAGE;
        } else {
            if (fmt && opt.max_nodes == 0 && sg_graph_node_count(g) > SG_DOT_SLOW_NODES)
                sg_cli_error("dot",
                             "drawing %u nodes unfolded: Graphviz may take minutes "
                             "(--max-nodes folds)",
                             sg_graph_node_count(g));
            exit_code = fmt ? render(g, &opt, fmt, of.fd, out) : write_dot(g, &opt, of.fd, out);
            if (exit_code) {
                sg_outfile_abort(&of);
            } else if ((err = sg_outfile_commit(&of)) != 0) {
                sg_cli_error("dot", "cannot create %s: %s", out, strerror(err));
                exit_code = SG_EXIT_USAGE;
            }
        }
    }
    if (exit_code == SG_EXIT_OK && (summary.folded_boxes || summary.bodies_hidden)) {
        char how[256];
        sg_cli_error("dot", "%s; --max-nodes 0 draws every node",
                     sg_dot_summary_text(&summary, how, sizeof how));
    }
    sg_graph_destroy(g);
    return exit_code;
}

const sg_command_t sg_command_dot = {"dot",
                                     "draw a bundle's graph (DOT, or SVG and more via "
                                     "Graphviz)",
                                     usage, run};
