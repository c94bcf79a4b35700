/* list_exports.c: prints, one per line, every name libsgcap.so must export:
 * the wrapped entry points of inject/hooks.def (NAME and, for PTSZ entries,
 * NAME_ptsz), its hand-written SG_CUSTOM entries whose wrapper has the
 * entry's name (a wrapper of another name is only handed out by lookups:
 * cuGetProcAddress_v2_ptsz has no exported symbol in CUDA 13), dlsym and
 * InitializeInjection. check_linkage.sh compares the shim's dynamic symbol
 * table with this list, both ways. Built from hooks.def itself, so the list
 * cannot drift from the hooks. */
#include <stdio.h>
#include <string.h>

#define SG_PRINT_PLAIN(name) puts(#name);
#define SG_PRINT_PTSZ(name) puts(#name), puts(#name "_ptsz");
#define SG_HOOK(ret, fam, flav, hs_st, name, ...) SG_PRINT_##flav(name)
#define SG_CUSTOM(name, wrapper)                                                                   \
    if (strcmp(#name, #wrapper) == 0) puts(#name);
#define SG_REAL_ONLY(name)

int main(void)
{
#include "inject/hooks.def"
    puts("dlsym");
    puts("InitializeInjection");
    return 0;
}
