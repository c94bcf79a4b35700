/* cli.c: shared helpers of the `sgcap` subcommands (see cli.h). */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/text.h"

/* The whole message is escaped: it is one line, and its arguments may come
 * from a bundle (names, labels, a reader's diagnostic quoting a key). */
void sg_cli_error(const char *cmd, const char *fmt, ...)
{
    char small[1024], *msg = small;
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof small) {
        char *big = malloc((size_t)n + 1); /* else the message is cut short */
        if (big && vsnprintf(big, (size_t)n + 1, fmt, ap2) >= 0)
            msg = big;
        else
            free(big);
    }
    va_end(ap2);
    fprintf(stderr, "sgcap %s: ", cmd);
    sg_text_put(stderr, n < 0 ? "(unprintable message)" : msg);
    fputc('\n', stderr);
    if (msg != small) free(msg);
}

const char *sg_cli_value(const char *cmd, int argc, char **argv, int *i)
{
    const char *opt = argv[*i];
    if (*i + 1 >= argc || strcmp(argv[*i + 1], "--") == 0 || !argv[*i + 1][0]) {
        sg_cli_error(cmd, "%s needs a value", opt);
        return NULL;
    }
    return argv[++*i];
}

bool sg_cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) return false;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) return true;
    }
    return false;
}

void sg_cli_print_usage(const sg_command_t *cmd, FILE *f)
{
    fputs(cmd->usage, f);
    size_t n = strlen(cmd->usage);
    if (n == 0 || cmd->usage[n - 1] != '\n') fputc('\n', f);
}

void sg_cli_progress(const char *fmt, ...)
{
    const char *env = getenv("SGCAP_PROGRESS");
    if (!(isatty(STDERR_FILENO) || (env && strcmp(env, "1") == 0))) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

const char *sg_cli_text(const char *s)
{
    static char *ring[8];
    static size_t cap[8];
    static unsigned next;
    unsigned k = next++ % 8;
    size_t need = sg_text_escape(NULL, 0, s) + 1;
    if (need > cap[k]) {
        char *p = realloc(ring[k], need);
        if (!p) return "(out of memory)";
        ring[k] = p;
        cap[k] = need;
    }
    sg_text_escape(ring[k], cap[k], s);
    return ring[k];
}
