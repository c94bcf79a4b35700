/* fuzz_icache.c: libFuzzer target for the file of what nvdisasm printed
 * (code/sass_icache.c). The input is the body of a cache file: the harness
 * writes the header the cache expects, the input, and (when the first byte
 * says so) the trailer with the right count and hash, so that the line
 * checks are reached and not only the hash; then it opens the cache, fills
 * an index of the encodings the input names (its lines' first 32
 * characters read as hex, where they are), learns the input again as a
 * listing, saves, and opens the saved file. Promises checked: a cache
 * never fills an instruction the code does not have, every filled
 * instruction has a NUL-terminated opcode and at most 8 operands, and a
 * saved file reads back with the same entries. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "code/sass_uniq.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x)) __builtin_trap();                                                                \
    } while (0)

static char dir[64];

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz_icache: could not remove %s\n", dir);
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The encodings named at the start of the input's lines, as code. */
static size_t code_of(const uint8_t *data, size_t size, uint8_t *code, size_t cap)
{
    size_t n = 0;
    for (size_t pos = 0; pos < size && n + 16 <= cap;) {
        const uint8_t *nl = memchr(data + pos, '\n', size - pos);
        size_t ln = nl ? (size_t)(nl - (data + pos)) : size - pos;
        bool ok = ln >= 32;
        uint8_t w[16];
        for (int k = 0; ok && k < 16; k++) {
            int hi = hexval(data[pos + 2 * k]), lo = hexval(data[pos + 2 * k + 1]);
            ok = hi >= 0 && lo >= 0;
            w[k] = (uint8_t)(hi * 16 + lo);
        }
        if (ok) {
            memcpy(code + n, w, 16);
            n += 16;
        }
        pos += ln + 1;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 20))
        return 0;
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/sgcap-fuzz-icache-%d", (int)getpid());
        char cmd[128];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
        if (system(cmd) != 0)
            return 0;
        atexit(remove_dir);
    }
    bool trailer = data[0] & 1;
    data++, size--;
    sg_sass_icache_t *c = sg_sass_icache_open(dir, "/bin/sh", 90);
    CHECK(c);
    const char *path = sg_sass_icache_path(c);
    FILE *f = fopen(path, "w");
    if (!f) {
        sg_sass_icache_free(c);
        return 0;
    }
    fprintf(f, "%s\n", sg_sass_icache_header(c));
    fwrite(data, 1, size, f);
    if (trailer) {
        size_t lines = 0;
        for (size_t i = 0; i < size; i++)
            lines += data[i] == '\n';
        fprintf(f, "end %zu %llx\n", lines, (unsigned long long)XXH3_64bits(data, size));
    }
    fclose(f);
    sg_sass_icache_free(c);

    static uint8_t code[16 * 4096];
    size_t n = code_of(data, size, code, sizeof code);
    c = sg_sass_icache_open(dir, "/bin/sh", 90);
    CHECK(c);
    sg_sass_uniq_t u;
    if (sg_sass_uniq_build(code, n, &u) == 0) {
        uint32_t got = sg_sass_icache_fill(c, &u);
        CHECK(got <= u.n_distinct);
        uint32_t filled = 0;
        for (uint32_t d = 0; d < u.n_distinct; d++) {
            if (!u.have[d])
                continue;
            filled++;
            CHECK(memchr(u.insns[d].op, 0, sizeof u.insns[d].op));
            CHECK(u.insns[d].n_ops <= SG_SASS_MAX_OPERANDS);
        }
        CHECK(filled == got);
        /* the input again, as a listing of the distinct code at -base 0 */
        uint32_t *which = malloc((u.n_distinct ? u.n_distinct : 1) * sizeof *which);
        if (which) {
            for (uint32_t d = 0; d < u.n_distinct; d++)
                which[d] = d;
            sg_sass_icache_learn(c, &u, which, u.n_distinct, (const char *)data, size, 0);
            free(which);
        }
        uint32_t entries, learned;
        sg_sass_icache_stats(c, &entries, &learned);
        if (learned && sg_sass_icache_save(c) == 0) {
            sg_sass_icache_t *back = sg_sass_icache_open(dir, "/bin/sh", 90);
            uint32_t again;
            sg_sass_icache_stats(back, &again, NULL);
            CHECK(again == entries);
            sg_sass_icache_free(back);
        }
        sg_sass_uniq_free(&u);
    }
    sg_sass_icache_free(c);
    return 0;
}
