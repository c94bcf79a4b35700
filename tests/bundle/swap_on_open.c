/* swap_on_open.c: an LD_PRELOAD library for the race test of
 * tests/bundle/cli_bundle.cmake (issue 16, finding 1). It makes the race
 * deterministic: the second time the process opens a file whose name ends in
 * the basename of $SGCAP_TEST_SWAP, that file is first replaced by a symbolic
 * link to $SGCAP_TEST_SWAP_TARGET, exactly as an attacker swapping it
 * between sgcap's check of the bundle and its later use would. The first
 * open (the reader's check) sees the real file. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int opens;

static void maybe_swap(const char *path)
{
    const char *swap = getenv("SGCAP_TEST_SWAP"), *target = getenv("SGCAP_TEST_SWAP_TARGET");
    if (!swap || !target || !path) return;
    const char *base = strrchr(swap, '/');
    base = base ? base + 1 : swap;
    size_t n = strlen(path), b = strlen(base);
    if (n < b || strcmp(path + n - b, base) != 0 || (n > b && path[n - b - 1] != '/')) return;
    if (++opens != 2) return;
    unlink(swap);
    if (symlink(target, swap) != 0) perror("swap_on_open: symlink");
}

#define MODE_ARG(flags, mode)                                                                      \
    do {                                                                                           \
        if ((flags) & (O_CREAT | O_TMPFILE)) {                                                     \
            va_list ap;                                                                            \
            va_start(ap, flags);                                                                   \
            mode = va_arg(ap, int);                                                                \
            va_end(ap);                                                                            \
        }                                                                                          \
    } while (0)

int open(const char *path, int flags, ...)
{
    int mode = 0;
    MODE_ARG(flags, mode);
    maybe_swap(path);
    int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    return real(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
    int mode = 0;
    MODE_ARG(flags, mode);
    maybe_swap(path);
    int (*real)(const char *, int, ...) =
        (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open64");
    return real(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
    int mode = 0;
    MODE_ARG(flags, mode);
    maybe_swap(path);
    int (*real)(int, const char *, int, ...) =
        (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
    return real(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
    int mode = 0;
    MODE_ARG(flags, mode);
    maybe_swap(path);
    int (*real)(int, const char *, int, ...) =
        (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat64");
    return real(dirfd, path, flags, mode);
}
