/* occupy.c: a preload for the test of replay's re-run without address
 * randomization: when the process starts with randomization on, it maps
 * OCCUPY_AT=ADDR:SIZE before main (as a library or the loader might), so
 * the recorded range is taken; started without randomization it leaves the
 * range alone (another layout). */
#define _GNU_SOURCE 1
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/personality.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

__attribute__((constructor)) static void occupy(void)
{
    const char *at = getenv("OCCUPY_AT");
    int pers = personality(0xffffffff);
    if (!at || pers == -1 || (pers & ADDR_NO_RANDOMIZE)) return;
    char *end = NULL;
    unsigned long long addr = strtoull(at, &end, 0), size = 0;
    if (end && *end == ':') size = strtoull(end + 1, NULL, 0);
    if (addr && size)
        mmap((void *)(uintptr_t)addr, size, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
}
