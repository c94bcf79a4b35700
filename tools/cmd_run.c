/* cmd_run.c: `sgcap run [options] -- PROGRAM [ARGS...]`: run a program with
 * the capture shim preloaded, then list the bundles it wrote. The shim
 * itself prints its summary on stderr at the program's exit; the exit code
 * is the program's own (128+N when a signal N killed it). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

static const char usage[] =
    "usage: sgcap run [--out DIR] [--snapshot] [--trace] [--max-bundles N] [--optimize]\n"
    "                 [--shim PATH] -- PROGRAM [ARGS...]\n"
    "\n"
    "Run PROGRAM with libsgcap.so preloaded: every CUDA graph it instantiates\n"
    "is recorded with its streams and events and written as a bundle\n"
    "DIR/<program>.<pid>.<seq>.sgraph (identical re-captures once; a rank a\n"
    "launcher set, RANK and the like, adds .rank<R> after <program>, and a\n"
    "process that sees several GPUs .dev<D>). At exit\n"
    "the shim prints a summary on stderr and this command lists the new\n"
    "bundles. PROGRAM's stdin, stdout and stderr are its own. Each bundle is\n"
    "renamed into place whole; it is fsync'ed too only with SGCAP_FSYNC=1\n"
    "(without, a crash of the system itself may lose the last ones).\n"
    "\n"
    "options:\n"
    "  --out DIR          where bundles go (SGCAP_DIR; default ./sgcap-out)\n"
    "  --snapshot         also record every buffer each graph touches before and\n"
    "                     after its first launch (SGCAP_SNAPSHOT=1; see also\n"
    "                     SGCAP_SNAPSHOT_LAUNCH, SGCAP_SNAPSHOT_MAX_BYTES)\n"
    "  --trace            log every intercepted call (SGCAP_LOG=trace)\n"
    "  --max-bundles N    write at most N bundles (SGCAP_MAX_BUNDLES; default 64);\n"
    "                     of graphs that differ only in kernel arguments that are\n"
    "                     not device pointers at most SGCAP_MAX_VARIANTS\n"
    "                     (default 4, 0: no cap)\n"
    "  --optimize         also run each graph's optimized version once its first\n"
    "                     launch was checked against the original, bit for bit\n"
    "                     (SGCAP_MODE=optimize; see SGCAP_OPTIMIZE_CHECK,\n"
    "                     SGCAP_SHADOW_MAX_BYTES and SGCAP_OPTIMIZE_FUSE_MS, the\n"
    "                     time in-app fusion may spend); the summary says, per\n"
    "                     graph, whether it was swapped or kept its original, and\n"
    "                     why, and which chains were fused\n"
    "  --shim PATH        the shim to preload (default: ../lib/libsgcap.so next to\n"
    "                     this sgcap executable)\n"
    "  -h, --help         show this help\n"
    "\n"
    "An existing LD_PRELOAD is kept (the shim goes first). SIGINT and SIGQUIT\n"
    "reach the program from the terminal; SIGTERM and SIGHUP sent to sgcap are\n"
    "passed on to it.\n"
    "\n"
    "exit codes: PROGRAM's exit code, 128+N if it died of signal N, 127 if it\n"
    "could not be started, 2 on bad usage or a missing shim\n";

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
    if (child_pid > 0) kill((pid_t)child_pid, sig);
}

/* <dir of /proc/self/exe>/../lib/libsgcap.so */
static int default_shim(char *out, size_t n)
{
    char exe[PATH_MAX];
    ssize_t m = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (m <= 0) return -1;
    exe[m] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = '\0';
    int k = snprintf(out, n, "%s/../lib/libsgcap.so", exe);
    if (k < 0 || (size_t)k >= n) return -1;
    char real[PATH_MAX];
    if (realpath(out, real)) snprintf(out, n, "%s", real);
    return 0;
}

typedef struct {
    char **names;
    size_t n;
} list_t;

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static list_t list_bundles(const char *dir)
{
    list_t l = {NULL, 0};
    DIR *d = opendir(dir);
    if (!d) return l;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 8 || strcmp(e->d_name + len - 7, ".sgraph") != 0) continue;
        char **v = realloc(l.names, (l.n + 1) * sizeof *v);
        if (!v) break;
        l.names = v;
        l.names[l.n] = strdup(e->d_name);
        if (l.names[l.n]) l.n++;
    }
    closedir(d);
    if (l.n) qsort(l.names, l.n, sizeof *l.names, name_cmp);
    return l;
}

static bool listed(const list_t *l, const char *name)
{
    return l->n && bsearch(&name, l->names, l->n, sizeof *l->names, name_cmp) != NULL;
}

static void list_free(list_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
}

static int run(int argc, char **argv)
{
    const char *out = getenv("SGCAP_DIR");
    const char *shim_arg = NULL, *max_bundles = NULL;
    bool snapshot = false, trace = false, optimize = false;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "--out") == 0 || strcmp(a, "--shim") == 0 ||
            strcmp(a, "--max-bundles") == 0) {
            const char *v = sg_cli_value("run", argc, argv, &i); /* never "--" */
            if (!v) return SG_EXIT_USAGE;
            if (a[2] == 'o')
                out = v;
            else if (a[2] == 's')
                shim_arg = v;
            else
                max_bundles = v;
        } else if (strcmp(a, "--snapshot") == 0) {
            snapshot = true;
        } else if (strcmp(a, "--trace") == 0) {
            trace = true;
        } else if (strcmp(a, "--optimize") == 0) {
            optimize = true;
        } else if (a[0] == '-') {
            sg_cli_error("run", "unknown option '%s' (see sgcap run --help)", a);
            return SG_EXIT_USAGE;
        } else {
            break; /* the program, without "--" */
        }
    }
    if (i >= argc) {
        sg_cli_error("run", "no program given (sgcap run [options] -- PROGRAM [ARGS...])");
        return SG_EXIT_USAGE;
    }
    if (max_bundles) {
        char *end = NULL;
        strtoul(max_bundles, &end, 10);
        if (!*max_bundles || *end || max_bundles[0] == '-') {
            sg_cli_error("run", "--max-bundles needs a number, not '%s'", max_bundles);
            return SG_EXIT_USAGE;
        }
    }
    char shim[PATH_MAX];
    if (shim_arg) {
        if (!realpath(shim_arg, shim)) snprintf(shim, sizeof shim, "%s", shim_arg);
    } else if (default_shim(shim, sizeof shim) != 0) {
        sg_cli_error("run", "cannot locate libsgcap.so (use --shim PATH)");
        return SG_EXIT_USAGE;
    }
    if (access(shim, R_OK) != 0) {
        sg_cli_error("run", "%s: %s (use --shim PATH)", shim, strerror(errno));
        return SG_EXIT_USAGE;
    }
    if (!out || !*out) out = "./sgcap-out";

    /* The environment the program runs in. */
    const char *old = getenv("LD_PRELOAD");
    size_t len = strlen(shim) + (old ? strlen(old) + 1 : 0) + 1;
    char *preload = malloc(len);
    if (!preload) return SG_EXIT_USAGE;
    snprintf(preload, len, "%s%s%s", shim, old && *old ? ":" : "", old && *old ? old : "");
    setenv("LD_PRELOAD", preload, 1);
    free(preload);
    setenv("SGCAP_DIR", out, 1);
    if (snapshot) setenv("SGCAP_SNAPSHOT", "1", 1);
    if (trace) setenv("SGCAP_LOG", "trace", 1);
    if (max_bundles) setenv("SGCAP_MAX_BUNDLES", max_bundles, 1);
    if (optimize)
        setenv("SGCAP_MODE", "optimize", 1);
    else if (!getenv("SGCAP_MODE"))
        setenv("SGCAP_MODE", "capture", 1);

    list_t before = list_bundles(out);
    fflush(NULL);

    /* Like system(): the terminal's SIGINT/SIGQUIT reach the program (same
     * process group); we wait for it rather than die first. */
    struct sigaction ign = {0}, fwd = {0}, old_int, old_quit, old_term, old_hup;
    ign.sa_handler = SIG_IGN;
    fwd.sa_handler = forward;
    sigemptyset(&ign.sa_mask);
    sigemptyset(&fwd.sa_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    sigaction(SIGTERM, &fwd, &old_term);
    sigaction(SIGHUP, &fwd, &old_hup);
    pid_t pid = fork();
    if (pid < 0) {
        sg_cli_error("run", "fork: %s", strerror(errno));
        list_free(&before);
        return SG_EXIT_USAGE;
    }
    if (pid == 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGHUP, &old_hup, NULL);
        execvp(argv[i], argv + i);
        fprintf(stderr, "sgcap run: cannot run %s: %s\n", argv[i], strerror(errno));
        _exit(127);
    }
    child_pid = pid;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            status = 127 << 8;
            break;
        }
    }
    child_pid = 0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    int code = WIFEXITED(status)     ? WEXITSTATUS(status)
               : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                     : 1;

    list_t after = list_bundles(out);
    size_t fresh = 0;
    for (size_t k = 0; k < after.n; k++)
        if (!listed(&before, after.names[k])) fresh++;
    fprintf(stderr, "sgcap run: %s exited with %d; %zu new bundle%s in %s\n", sg_cli_text(argv[i]),
            code, fresh, fresh == 1 ? "" : "s", sg_cli_text(out));
    for (size_t k = 0; k < after.n; k++)
        if (!listed(&before, after.names[k]))
            fprintf(stderr, "  %s/%s\n", sg_cli_text(out), sg_cli_text(after.names[k]));
    list_free(&before);
    list_free(&after);
    return code;
}

const sg_command_t sg_command_run = {
    .name = "run",
    .summary = "run a program under the capture shim and list the bundles it wrote",
    .usage = usage,
    .run = run,
};
