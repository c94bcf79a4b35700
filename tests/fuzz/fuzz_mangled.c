/* fuzz_mangled.c: libFuzzer target for the mangled-name reader
 * (graph/mangled.c), which runs inside the shim on every kernel name a
 * program launches. The input, cut at its first NUL, goes to
 * sg_kernel_const_pointer_params for every parameter count up to 64. It
 * must never crash or read outside the name; at most one count is
 * accepted (a signature has one parameter list); a refusal leaves every
 * flag false. Any violation traps.
 * Seeds: tests/fuzz/seeds/fuzz_mangled/ (real kernel names). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph/views.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x)) __builtin_trap();                                                                \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = malloc(size + 1);
    if (!name) return 0;
    memcpy(name, data, size);
    name[size] = '\0';
    bool ro[64];
    int accepted = 0;
    for (uint32_t n = 0; n <= 64; n++) {
        memset(ro, 1, sizeof ro);
        int rc = sg_kernel_const_pointer_params(name, n, ro);
        CHECK(rc == 0 || rc == -1);
        if (rc == 0)
            accepted++;
        else
            for (uint32_t i = 0; i < n && i < 64; i++)
                CHECK(!ro[i]);
        if (n == 64) break;
    }
    CHECK(accepted <= 1);
    free(name);
    return 0;
}
