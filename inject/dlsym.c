/* dlsym interposition.
 *
 * A default nvcc binary (static cudart), PyTorch, CuPy and the CUDA libraries
 * reach the driver with dlopen("libcuda.so.1") + dlsym(handle, name), which
 * LD_PRELOAD symbol interposition does not see. So libsgcap exports dlsym.
 *
 * The entry is assembly for one reason: glibc's dlsym looks at its return
 * address to know who is asking. For RTLD_DEFAULT that decides which local
 * scopes are searched (a library loaded RTLD_LOCAL sees its own
 * dependencies), and RTLD_NEXT means "after the caller's object". Calling the
 * real dlsym from C here would make every such lookup libsgcap's. Those two
 * handles are therefore passed on with a jump, so the real dlsym sees the
 * program's return address; a preloaded libsgcap is found first by global
 * lookups anyway, so they already return our wrappers. Only lookups on an
 * explicit handle (which do not depend on the caller) go through C, where
 * a wrapped CUDA symbol is swapped for our wrapper.
 *
 * The real dlsym comes from dlvsym(RTLD_NEXT, "dlsym", version); the public
 * dlsym is never called from inside the shim (it would come back here). */
#include "inject/internal.h"
#include <dlfcn.h>
#include <string.h>

void *(*volatile sg_real_dlsym_fn)(void *, const char *) = NULL;

/* Returns the real dlsym (resolving it on first use), or NULL. Called from
 * the assembly entry, possibly before our constructor ran (another library's
 * constructor may call dlsym first). */
void *sg_inject_resolve_real_dlsym(void)
{
    void *(*fn)(void *, const char *) = sg_real_dlsym_fn;
    if (fn != NULL) return (void *)fn;
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5"};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0] && fn == NULL; i++)
        fn = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    if (fn != NULL) sg_real_dlsym_fn = fn;
    return (void *)fn;
}

void *sg_inject_real_dlsym(void *handle, const char *name)
{
    void *(*real)(void *, const char *) = (void *(*)(void *, const char *))sg_inject_resolve_real_dlsym();
    return real ? real(handle, name) : NULL;
}

/* Lookups on an explicit handle. */
void *sg_dlsym_explicit(void *handle, const char *name) SG_HIDDEN;
void *sg_dlsym_explicit(void *handle, const char *name)
{
    void *(*real)(void *, const char *) = sg_real_dlsym_fn;
    void *p = real(handle, name);
    if (p == NULL || name == NULL) return p;
    /* Cheap filter first: only cu* and nvrtc* names can be ours. */
    if (!((name[0] == 'c' && name[1] == 'u') || (name[0] == 'n' && name[1] == 'v'))) return p;
    sg_inject_init();
    if (!sg_inject_substituting()) return p;
    return sg_inject_substitute(p, name, NULL);
}

#if defined(__x86_64__)
/* dlsym(handle, name): rdi = handle, rsi = name. RTLD_DEFAULT is 0 and
 * RTLD_NEXT is -1 on glibc. */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        ".globl sg_dlsym_entry\n"
        ".hidden sg_dlsym_entry\n"
        ".p2align 4\n"
        "dlsym:\n"
        "sg_dlsym_entry:\n"
        "    .cfi_startproc\n"
        "    endbr64\n"
        "    movq sg_real_dlsym_fn(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    jnz 1f\n"
        "    pushq %rdi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    pushq %rsi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    subq $8, %rsp\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    call sg_inject_resolve_real_dlsym\n"
        "    addq $8, %rsp\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    popq %rsi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    popq %rdi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    testq %rax, %rax\n"
        "    jz 3f\n"
        "1:\n"
        "    testq %rdi, %rdi\n"
        "    jz 2f\n"
        "    cmpq $-1, %rdi\n"
        "    je 2f\n"
        "    jmp sg_dlsym_explicit\n"
        "2:\n"
        "    jmp *%rax\n"
        "3:\n"
        "    xorl %eax, %eax\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size dlsym, .-dlsym\n");
#else
#error "libsgcap's dlsym entry is written for x86-64 (glibc); port the trampoline first"
#endif
