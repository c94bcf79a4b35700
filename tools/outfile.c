/* outfile.c: output files that appear complete or not at all (outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the signal handler cleans up: only async-signal-safe state. */
static char pending_tmp[PATH_MAX];
static volatile sig_atomic_t have_pending_tmp;
static volatile sig_atomic_t pending_child;

static void on_signal(int sig)
{
    int saved = errno;
    if (pending_child > 0) kill((pid_t)pending_child, SIGKILL);
    if (have_pending_tmp) unlink(pending_tmp);
    /* die of the same signal, as if we had not caught it */
    signal(sig, SIG_DFL);
    raise(sig);
    errno = saved;
}

static void install_handlers(void)
{
    static bool done;
    if (done) return;
    done = true;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue; /* nohup */
        struct sigaction sa = {0};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* Set the name the handler removes, with signals blocked so it never sees
 * half a name. */
static void set_pending(const char *name)
{
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    if (name) {
        snprintf(pending_tmp, sizeof pending_tmp, "%s", name);
        have_pending_tmp = 1;
    } else {
        have_pending_tmp = 0;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
}

void sg_outfile_child(pid_t pid)
{
    pending_child = pid;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

static char *tmp_name(const char *path)
{
    size_t n = strlen(path) + 32;
    char *t = malloc(n);
    if (t) snprintf(t, n, "%s.%ld.tmp", path, (long)getpid());
    return t;
}

int sg_outfile_open(sg_outfile_t *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    install_handlers();
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        o->direct = true;
        o->fd = open(path, O_WRONLY | O_CLOEXEC);
        return o->fd >= 0 ? 0 : errno;
    }
    char *real = realpath(path, NULL); /* through a link, to the file it names */
    o->path = real ? real : strdup(path);
    char *dir = o->path ? dir_of(o->path) : NULL;
    if (!o->path || !dir) {
        free(dir);
        free(o->path);
        return ENOMEM;
    }
    /* unnamed: nothing to clean up whatever happens to us */
    o->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    free(dir);
    if (o->fd >= 0) return 0;
    /* a file system without O_TMPFILE: a name the handler removes */
    if (!(o->tmp = tmp_name(path))) {
        free(o->path);
        return ENOMEM;
    }
    set_pending(o->tmp);
    o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (o->fd < 0) {
        int err = errno;
        set_pending(NULL);
        free(o->tmp);
        free(o->path);
        return err;
    }
    return 0;
}

int sg_outfile_commit(sg_outfile_t *o)
{
    int err = 0;
    if (o->direct) {
        err = close(o->fd) != 0 ? errno : 0;
        memset(o, 0, sizeof *o);
        o->fd = -1;
        return err;
    }
    if (!o->tmp) {
        /* name the unnamed file next to the target, then move it over */
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", o->fd);
        if (!(o->tmp = tmp_name(o->path))) {
            err = ENOMEM;
        } else {
            set_pending(o->tmp);
            if (linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp, AT_SYMLINK_FOLLOW) != 0) {
                err = errno;
                set_pending(NULL);
                free(o->tmp);
                o->tmp = NULL;
            }
        }
    }
    if (close(o->fd) != 0 && !err) err = errno;
    o->fd = -1;
    if (!err && rename(o->tmp, o->path) != 0) err = errno;
    if (err && o->tmp) unlink(o->tmp);
    set_pending(NULL);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
    o->fd = -1;
    return err;
}

void sg_outfile_abort(sg_outfile_t *o)
{
    if (o->fd >= 0) close(o->fd);
    if (o->tmp) unlink(o->tmp);
    set_pending(NULL);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
    o->fd = -1;
}
