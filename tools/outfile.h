/* outfile.h: output files of the `sgcap` commands that appear complete or
 * not at all, even when the command is interrupted or killed: the content
 * goes to an unnamed file in the target's directory (O_TMPFILE; else a
 * PATH.<pid>.tmp name) and takes the target's name only at commit. A
 * SIGINT, SIGTERM or SIGHUP that ends the command removes the temporary
 * name and kills the helper process registered with sg_outfile_child. One
 * output file at a time. A target that exists and is not a regular file
 * (/dev/stdout, a FIFO) is written directly: renaming over it would
 * replace the device; a symbolic link is followed, so the file it names
 * is replaced, not the link. */
#ifndef SGCAP_OUTFILE_H
#define SGCAP_OUTFILE_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct {
    int fd;      /* write the content here */
    char *path;  /* the target */
    char *tmp;   /* the temporary name, NULL while the file has none */
    bool direct; /* writing to the target itself (not a regular file) */
} sg_outfile_t;

/* 0, or an errno value (nothing is left behind then). */
int sg_outfile_open(sg_outfile_t *o, const char *path);
/* Give the content its name (replacing an existing file); 0 or an errno
 * value, and then nothing is left behind. Closes o->fd either way. */
int sg_outfile_commit(sg_outfile_t *o);
/* Drop the content; nothing is left behind. */
void sg_outfile_abort(sg_outfile_t *o);
/* The process a terminating signal kills as well (0: none). */
void sg_outfile_child(pid_t pid);

#endif /* SGCAP_OUTFILE_H */
