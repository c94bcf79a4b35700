/* sass_icache.c: what nvdisasm printed for each distinct instruction, kept
 * across runs in a cache directory (see sass_uniq.h). nvdisasm's start-up
 * (~0.4 s) and its ~15-40 us per instruction are paid once per machine for
 * an instruction, not once per analysis.
 *
 * The file is text: a header naming the format, the arch and the nvdisasm
 * binary (path, size, modification time), then "HEX32 LINE" per encoding,
 * then "end N HASH" (the count and a 64-bit hash of every line between).
 * Everything read back is checked: a header for another binary or arch, a
 * wrong count or hash (any damage, even one that leaves a line readable as
 * another instruction), a line that is not 32 hex digits and an instruction
 * line, or lines that do not parse into exactly one instruction each, and
 * the file is ignored (and replaced on the next save). Offline code: never
 * inside the shim. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uthash.h>
#include <xxhash.h>

#include "code/sass_facts.h"
#include "code/sass_uniq.h"
#include "graph/graph.h"

#define MAGIC "sgcap sass instruction cache 1"
#define MAX_ENTRIES (1u << 18) /* ~30 MB of text; past it nothing more is learned */
#define MAX_LINE 400
#define MAX_FILE ((size_t)64 << 20)

typedef struct {
    uint8_t enc[16];
    char *line; /* as nvdisasm printed it, trimmed */
    UT_hash_handle hh;
} entry_t;

struct sg_sass_icache {
    char path[4096];
    char header[4600];
    entry_t *map; /* by encoding; iterated in the order added */
    uint32_t n;
    uint32_t learned;
};

int sg_sass_default_cache_dir(char *path, size_t len)
{
    const char *d = getenv("SGCAP_CACHE_DIR");
    int w;
    if (d) {
        if (!*d || !strcmp(d, "off"))
            return SG_ENOENT;
        w = snprintf(path, len, "%s", d);
    } else if ((d = getenv("XDG_CACHE_HOME")) && *d == '/') {
        w = snprintf(path, len, "%s/sgcap", d);
    } else if ((d = getenv("HOME")) && *d == '/') {
        w = snprintf(path, len, "%s/.cache/sgcap", d);
    } else {
        return SG_ENOENT;
    }
    return w > 0 && (size_t)w < len ? 0 : SG_ENOENT;
}

static entry_t *find(const sg_sass_icache_t *c, const uint8_t *enc)
{
    entry_t *e = NULL;
    HASH_FIND(hh, c->map, enc, 16, e);
    return e;
}

/* Add (enc, line[0, n)) unless known or full. */
static int add(sg_sass_icache_t *c, const uint8_t *enc, const char *line, size_t n)
{
    if (c->n >= MAX_ENTRIES || find(c, enc))
        return 0;
    entry_t *e = calloc(1, sizeof *e);
    if (!e || !(e->line = strndup(line, n))) {
        free(e);
        return SG_ENOMEM;
    }
    memcpy(e->enc, enc, 16);
    HASH_ADD(hh, c->map, enc, 16, e);
    if (!find(c, enc)) { /* HASH_NONFATAL_OOM: not added */
        free(e->line);
        free(e);
        return SG_ENOMEM;
    }
    c->n++;
    return 0;
}

static void clear(sg_sass_icache_t *c)
{
    entry_t *e, *t;
    HASH_ITER(hh, c->map, e, t)
    {
        HASH_DEL(c->map, e);
        free(e->line);
        free(e);
    }
    c->n = 0;
}

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

/* An instruction line as the parser takes it: a slash-star pc star-slash, then "... ;". */
static bool insn_line(const char *s, size_t n, uint64_t *pc)
{
    if (n < 6 || n > MAX_LINE || s[0] != '/' || s[1] != '*' || !memchr(s, ';', n))
        return false;
    size_t i = 2;
    uint64_t v = 0;
    while (i < n && isxdigit((unsigned char)s[i]) && i < 18)
        v = v * 16 + (uint64_t)hexval(tolower((unsigned char)s[i++]));
    if (i == 2 || i + 1 >= n || s[i] != '*' || s[i + 1] != '/')
        return false;
    for (size_t k = 0; k < n; k++)
        if (s[k] == '\n' || s[k] == 0)
            return false;
    *pc = v;
    return true;
}

static bool load(sg_sass_icache_t *c)
{
    size_t len = 0;
    char *b = sg_sass_read_file(c->path, &len);
    if (!b)
        return false;
    size_t hl = strlen(c->header);
    bool ok = len <= MAX_FILE && len > hl && !memcmp(b, c->header, hl) && b[hl] == '\n';
    /* the trailer: "end N HASH\n", HASH over the entry lines */
    size_t body = hl + 1, tail = len;
    if (ok) {
        ok = len >= 2 && b[len - 1] == '\n';
        tail = len - 1;
        while (ok && tail > body && b[tail - 1] != '\n')
            tail--;
        unsigned long long cnt = 0, h = 0;
        char extra;
        b[len - 1] = 0;
        ok = ok && sscanf(b + tail, "end %llu %llx%c", &cnt, &h, &extra) == 2 &&
             h == (unsigned long long)XXH3_64bits(b + body, tail - body);
        b[len - 1] = '\n';
        size_t lines = 0;
        for (size_t i = body; ok && i < tail; i++)
            lines += b[i] == '\n';
        ok = ok && lines == cnt;
    }
    for (size_t pos = body; ok && pos < tail;) {
        char *nl = memchr(b + pos, '\n', tail - pos);
        if (!nl) {
            ok = false;
            break;
        }
        const char *s = b + pos;
        size_t n = (size_t)(nl - s);
        uint8_t enc[16];
        uint64_t pc;
        ok = n > 33 && s[32] == ' ' && insn_line(s + 33, n - 33, &pc);
        for (int k = 0; ok && k < 16; k++) {
            int hi = hexval(s[2 * k]), lo = hexval(s[2 * k + 1]);
            ok = hi >= 0 && lo >= 0;
            enc[k] = (uint8_t)(hi * 16 + lo);
        }
        if (ok && add(c, enc, s + 33, n - 33) != 0)
            ok = false;
        pos += n + 1;
    }
    free(b);
    if (!ok)
        clear(c);
    return ok;
}

sg_sass_icache_t *sg_sass_icache_open(const char *dir, const char *tool, uint32_t arch)
{
    if (!dir || !*dir || !tool)
        return NULL;
    sg_sass_icache_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    struct stat st;
    char real[4096];
    if (!realpath(tool, real))
        snprintf(real, sizeof real, "%s", tool);
    if (stat(real, &st) != 0)
        memset(&st, 0, sizeof st);
    snprintf(c->header, sizeof c->header, "%s SM%u %lld %lld.%09ld %s", MAGIC, arch,
             (long long)st.st_size, (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec, real);
    for (char *p = c->header; *p; p++)
        if (*p == '\n')
            *p = '?';
    int w = snprintf(c->path, sizeof c->path, "%s/sass-sm%u-%016llx.txt", dir, arch,
                     (unsigned long long)XXH3_64bits(c->header, strlen(c->header)));
    if (w <= 0 || (size_t)w >= sizeof c->path) {
        free(c);
        return NULL;
    }
    load(c);
    return c;
}

uint32_t sg_sass_icache_fill(const sg_sass_icache_t *c, sg_sass_uniq_t *u)
{
    if (!c || !u || !c->n)
        return 0;
    uint32_t *hit = malloc((size_t)(u->n_distinct ? u->n_distinct : 1) * sizeof *hit);
    size_t cap = 1 << 16, tl = 0;
    char *text = malloc(cap);
    uint32_t nh = 0;
    if (!hit || !text)
        goto out;
    for (uint32_t d = 0; d < u->n_distinct; d++) {
        if (u->have[d])
            continue;
        const entry_t *e = find(c, u->code + (size_t)d * 16);
        if (!e)
            continue;
        size_t n = strlen(e->line);
        if (tl + n + 2 > cap) {
            while (tl + n + 2 > cap)
                cap *= 2;
            char *nt = realloc(text, cap);
            if (!nt)
                goto out;
            text = nt;
        }
        memcpy(text + tl, e->line, n);
        tl += n;
        text[tl++] = '\n';
        hit[nh++] = d;
    }
    if (nh) {
        sg_sass_listing_t l;
        /* one instruction per line, or nothing is used */
        if (sg_sass_parse(text, tl, &l, NULL, 0) == 0) {
            if (l.n_insns == nh) {
                for (uint32_t k = 0; k < nh; k++) {
                    u->insns[hit[k]] = l.insns[k];
                    u->have[hit[k]] = 1;
                }
            } else {
                nh = 0;
            }
            sg_sass_listing_free(&l);
        } else {
            nh = 0;
        }
    }
out:
    free(hit);
    free(text);
    return nh;
}

void sg_sass_icache_learn(sg_sass_icache_t *c, const sg_sass_uniq_t *u, const uint32_t *which,
                          uint32_t n, const char *text, size_t len, uint64_t base)
{
    if (!c || !u || !which || !text)
        return;
    uint64_t k = base / 16;
    for (size_t pos = 0; pos < len;) {
        const char *s = text + pos;
        const char *nl = memchr(s, '\n', len - pos);
        size_t ln = nl ? (size_t)(nl - s) : len - pos;
        pos += ln + 1;
        while (ln && isspace((unsigned char)*s))
            s++, ln--;
        while (ln && isspace((unsigned char)s[ln - 1]))
            ln--;
        uint64_t pc;
        if (!insn_line(s, ln, &pc))
            continue;
        /* the listing goes one instruction per 16 bytes from base */
        if (pc != k * 16 || k >= n || which[k] >= u->n_distinct)
            return;
        uint32_t before = c->n;
        if (add(c, u->code + (size_t)which[k] * 16, s, ln) != 0)
            return;
        c->learned += c->n - before;
        k++;
    }
}

/* mkdir -p for the cache directory (0700: it is one user's) */
static int make_dirs(const char *dir)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return SG_EINVAL;
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0700) != 0 && errno != EEXIST)
                return SG_EIO;
            *s = '/';
        }
    return mkdir(p, 0700) != 0 && errno != EEXIST ? SG_EIO : 0;
}

int sg_sass_icache_save(sg_sass_icache_t *c)
{
    if (!c || !c->learned)
        return 0;
    char dir[4096], tmp[4200];
    snprintf(dir, sizeof dir, "%s", c->path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return SG_EINVAL;
    *slash = 0;
    if (make_dirs(dir) != 0)
        return SG_EIO;
    snprintf(tmp, sizeof tmp, "%s/.sass-XXXXXX", dir);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return SG_EIO;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return SG_EIO;
    }
    bool ok = fprintf(f, "%s\n", c->header) > 0;
    XXH3_state_t *h = XXH3_createState();
    ok = ok && h && XXH3_64bits_reset(h) == XXH_OK;
    for (const entry_t *e = c->map; ok && e; e = e->hh.next) {
        char row[MAX_LINE + 40];
        for (int k = 0; k < 16; k++)
            snprintf(row + 2 * k, 3, "%02x", e->enc[k]);
        int w = snprintf(row + 32, sizeof row - 32, " %s\n", e->line);
        ok = w > 0 && (size_t)w < sizeof row - 32 && fputs(row, f) >= 0 &&
             XXH3_64bits_update(h, row, 32 + (size_t)w) == XXH_OK;
    }
    ok = ok && fprintf(f, "end %u %llx\n", c->n, (unsigned long long)XXH3_64bits_digest(h)) > 0;
    XXH3_freeState(h);
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, c->path) != 0) {
        unlink(tmp);
        return SG_EIO;
    }
    c->learned = 0;
    return 0;
}

const char *sg_sass_icache_path(const sg_sass_icache_t *c)
{
    return c ? c->path : NULL;
}

const char *sg_sass_icache_header(const sg_sass_icache_t *c)
{
    return c ? c->header : NULL;
}

void sg_sass_icache_stats(const sg_sass_icache_t *c, uint32_t *entries, uint32_t *learned)
{
    if (entries)
        *entries = c ? c->n : 0;
    if (learned)
        *learned = c ? c->learned : 0;
}

void sg_sass_icache_free(sg_sass_icache_t *c)
{
    if (!c)
        return;
    clear(c);
    free(c);
}
