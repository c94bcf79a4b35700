/* cli.c: shared helpers of the `sgcap` subcommands (see cli.h). */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sg_cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "sgcap %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
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
