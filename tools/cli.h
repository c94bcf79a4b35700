/* cli.h: what every `sgcap` subcommand shares: the command descriptor, exit
 * codes, and small helpers for option parsing and messages. Check-and-die
 * helpers live here and only here (DESIGN.md: never inside the shim). */
#ifndef SGCAP_CLI_H
#define SGCAP_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* Exit codes, documented in `sgcap --help` and the README. */
enum {
    SG_EXIT_OK = 0,      /* success; for `check`: no hazard found */
    SG_EXIT_FINDING = 1, /* the command ran and found something: hazards, a
                            validation mismatch, a failed run */
    SG_EXIT_USAGE = 2,   /* bad usage or bad input (malformed bundle, missing file) */
};

typedef struct {
    const char *name;    /* "inspect" */
    const char *summary; /* one line for `sgcap --help` */
    const char *usage;   /* full text for `sgcap NAME --help` */
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} sg_command_t;

/* Print "sgcap NAME: message" to stderr. */
void sg_cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The value of option argv[*i]: the next argument, with *i moved to it; or
 * NULL, the error printed, when there is none or it is "--" or empty ("--"
 * ends the options, it is never a value). */
const char *sg_cli_value(const char *cmd, int argc, char **argv, int *i);
/* Does argv hold -h/--help (before a lone "--")? */
bool sg_cli_wants_help(int argc, char **argv);
/* Print cmd->usage to f. */
void sg_cli_print_usage(const sg_command_t *cmd, FILE *f);
/* s escaped for a terminal (graph/text.h: control characters, invalid
 * UTF-8 and bidirectional controls become visible escapes), for printing
 * any string that comes from a bundle. The result lives in one of 8
 * rotating buffers: valid until 8 more calls, so one printf may take 8. */
const char *sg_cli_text(const char *s);
/* Progress line on stderr, only when stderr is a terminal or SGCAP_PROGRESS=1. */
void sg_cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* SGCAP_CLI_H */
