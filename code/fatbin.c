/* fatbin.c: the fatbin reader (wrapper, containers, entries, LZ4/zstd), PTX
 * text scanning, PTX selection for a device, format sniffing and content
 * hashing. Contract in fatbin.h; layout facts in shared/reference/fusion.md.
 * Every size read from the input is checked against the bytes that remain
 * before it is used; multi-byte fields are read byte by byte (unaligned,
 * little-endian). */
#include "fatbin.h"
#include "bytes.h"
#include "graph/bundle.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <zstd.h>

#define ENTRY_MIN_HEADER 64u
/* LZ4 block format cannot expand more than 255x (one literal-length byte
 * per 255 output bytes at best); a larger declared size is a lie. */
#define LZ4_MAX_RATIO 255u

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- wrapper -------------------------------------------------------------- */

int sg_fatbin_wrapper_decode(const void *p, size_t n, sg_fatbin_wrapper_t *out)
{
    const uint8_t *b = p;
    if (!b || !out || n < SG_FATBIN_WRAPPER_SIZE) return SG_EINVAL;
    if (sg_rd32(b) != SG_FATBIN_WRAPPER_MAGIC) return SG_EFORMAT;
    uint32_t version = sg_rd32(b + 4);
    if (version != 1 && version != 2) return SG_EUNSUPPORTED;
    out->version = version;
    out->data = sg_rd64(b + 8);
    out->aux = sg_rd64(b + 16);
    return SG_OK;
}

int sg_fatbin_wrapper_fatbins(const void *wrapper, const uint8_t **out, uint32_t max,
                              uint32_t *n)
{
    sg_fatbin_wrapper_t w;
    if (!wrapper || !n || (max && !out)) return SG_EINVAL;
    *n = 0;
    int rc = sg_fatbin_wrapper_decode(wrapper, SG_FATBIN_WRAPPER_SIZE, &w);
    if (rc) return rc;
    uint32_t count = 0;
    if (w.data) {
        if (count >= max) return SG_ELIMIT;
        out[count++] = (const uint8_t *)(uintptr_t)w.data;
    }
    if (w.version == 2 && w.aux) {
        const void *const *arr = (const void *const *)(uintptr_t)w.aux;
        for (size_t k = 0; arr[k]; k++) {
            if (count >= max) {
                *n = count;
                return SG_ELIMIT;
            }
            out[count++] = arr[k];
        }
    }
    *n = count;
    return SG_OK;
}

/* ---- containers ------------------------------------------------------------- */

/* Check the container header at b[off..] against n; sets *hsize / *bytes. */
static int container_header(const uint8_t *b, uint64_t off, uint64_t n, uint32_t *hsize,
                            uint64_t *bytes, char *err, size_t errlen)
{
    if (!sg_in_bounds(off, SG_FATBIN_CONTAINER_SIZE, n)) {
        set_err(err, errlen, "truncated fatbin header at offset 0x%llx",
                (unsigned long long)off);
        return SG_EFORMAT;
    }
    const uint8_t *h = b + off;
    if (sg_rd32(h) != SG_FATBIN_MAGIC) {
        set_err(err, errlen, "bad fatbin magic 0x%08x at offset 0x%llx", sg_rd32(h),
                (unsigned long long)off);
        return SG_EFORMAT;
    }
    uint16_t version = sg_rd16(h + 4), hs = sg_rd16(h + 6);
    uint64_t nbytes = sg_rd64(h + 8);
    if (version != 1) {
        set_err(err, errlen, "fatbin version %u at offset 0x%llx is not supported", version,
                (unsigned long long)off);
        return SG_EUNSUPPORTED;
    }
    if (hs < SG_FATBIN_CONTAINER_SIZE || !sg_in_bounds(off, hs, n) ||
        !sg_in_bounds(off + hs, nbytes, n)) {
        set_err(err, errlen,
                "fatbin at offset 0x%llx: header size %u + entries 0x%llx exceed the 0x%llx bytes "
                "available",
                (unsigned long long)off, hs, (unsigned long long)nbytes,
                (unsigned long long)(n - off));
        return SG_EFORMAT;
    }
    *hsize = hs;
    *bytes = nbytes;
    return SG_OK;
}

int sg_fatbin_span(const void *p, size_t max, size_t *len)
{
    uint32_t hs;
    uint64_t bytes;
    if (!p || !len) return SG_EINVAL;
    int rc = container_header(p, 0, max, &hs, &bytes, NULL, 0);
    if (rc) return rc;
    *len = (size_t)(hs + bytes);
    return SG_OK;
}

/* Parse the entries of one container into fb (appending). */
static int parse_entries(const uint8_t *b, uint64_t start, uint64_t end, uint32_t container,
                         sg_fatbin_t *fb, uint32_t *cap, char *err, size_t errlen)
{
    uint64_t e = start;
    while (e < end) {
        uint64_t left = end - e;
        if (left < ENTRY_MIN_HEADER) {
            set_err(err, errlen, "truncated entry header at offset 0x%llx (%llu bytes left)",
                    (unsigned long long)e, (unsigned long long)left);
            return SG_EFORMAT;
        }
        const uint8_t *h = b + e;
        uint32_t hsz = sg_rd32(h + 4);
        uint64_t psz = sg_rd64(h + 8);
        if (hsz < ENTRY_MIN_HEADER || hsz > left || psz > left - hsz) {
            set_err(err, errlen,
                    "entry at offset 0x%llx: header %u + payload 0x%llx bytes run past its "
                    "container (0x%llx bytes left)",
                    (unsigned long long)e, hsz, (unsigned long long)psz,
                    (unsigned long long)left);
            return SG_EFORMAT;
        }
        sg_fatbin_entry_t en;
        memset(&en, 0, sizeof en);
        en.raw_kind = sg_rd16(h);
        en.kind = en.raw_kind == 1   ? SG_FATBIN_ENTRY_PTX
                  : en.raw_kind == 2 ? SG_FATBIN_ENTRY_ELF
                                     : SG_FATBIN_ENTRY_OTHER;
        en.header_offset = e;
        en.header_size = hsz;
        en.payload_offset = e + hsz;
        en.payload_size = psz;
        en.compressed_size = sg_rd32(h + 16);
        en.version_minor = sg_rd16(h + 24);
        en.version_major = sg_rd16(h + 26);
        en.arch = sg_rd32(h + 28);
        en.flags = sg_rd64(h + 40);
        en.uncompressed_size = sg_rd64(h + 56);
        en.container = container;

        bool lz4 = en.flags & SG_FATBIN_FLAG_LZ4, zstd = en.flags & SG_FATBIN_FLAG_ZSTD;
        if (lz4 && zstd) {
            set_err(err, errlen, "entry at offset 0x%llx claims both LZ4 and zstd compression",
                    (unsigned long long)e);
            return SG_EFORMAT;
        }
        en.compression = lz4    ? SG_FATBIN_COMPRESS_LZ4
                         : zstd ? SG_FATBIN_COMPRESS_ZSTD
                                : SG_FATBIN_COMPRESS_NONE;
        if (en.compression != SG_FATBIN_COMPRESS_NONE) {
            if (en.compressed_size == 0 || en.compressed_size > psz) {
                set_err(err, errlen,
                        "entry at offset 0x%llx: compressed size 0x%llx does not fit its payload "
                        "of 0x%llx bytes",
                        (unsigned long long)e, (unsigned long long)en.compressed_size,
                        (unsigned long long)psz);
                return SG_EFORMAT;
            }
        } else {
            /* Uncompressed entries carry 0 in both size fields; ignore
             * whatever else is there rather than trust it later. */
            en.compressed_size = 0;
            en.uncompressed_size = 0;
        }

        /* Optional strings: only if they lie inside this header. */
        uint32_t name_off = sg_rd32(h + 32), name_len = sg_rd32(h + 36);
        if (name_len && name_off >= ENTRY_MIN_HEADER && sg_in_bounds(name_off, name_len, hsz)) {
            en.name_offset = e + name_off;
            en.name_len = (uint32_t)strnlen((const char *)h + name_off, name_len);
        }
        /* The options block is {u32 offset of the string from the entry
         * start, u32 length}, followed by the string (measured: -rdc PTX
         * "--compile-only  ", -G PTX " -g --dont-merge-basicblocks ..."). */
        uint32_t opt = sg_rd32(h + 20);
        if (opt >= ENTRY_MIN_HEADER && sg_in_bounds(opt, 8, hsz)) {
            uint32_t soff = sg_rd32(h + opt), slen = sg_rd32(h + opt + 4);
            if (slen && sg_in_bounds(soff, slen, hsz) && soff >= ENTRY_MIN_HEADER) {
                en.options_offset = e + soff;
                en.options_len = (uint32_t)strnlen((const char *)h + soff, slen);
            }
        }

        if (fb->n_entries >= SG_FATBIN_MAX_ENTRIES) {
            set_err(err, errlen, "more than %u entries", SG_FATBIN_MAX_ENTRIES);
            return SG_ELIMIT;
        }
        if (fb->n_entries == *cap) {
            uint32_t ncap = *cap ? *cap * 2 : 8;
            sg_fatbin_entry_t *ne = realloc(fb->entries, (size_t)ncap * sizeof *ne);
            if (!ne) {
                set_err(err, errlen, "out of memory");
                return SG_ENOMEM;
            }
            fb->entries = ne;
            *cap = ncap;
        }
        fb->entries[fb->n_entries++] = en;
        e += hsz + psz;
    }
    return SG_OK;
}

int sg_fatbin_parse(const void *p, size_t n, unsigned flags, sg_fatbin_t *out, char *err,
                    size_t errlen)
{
    if (!out) return SG_EINVAL;
    memset(out, 0, sizeof *out);
    if (err && errlen) err[0] = '\0';
    if (!p) return SG_EINVAL;
    const uint8_t *b = p;
    uint64_t off = 0, consumed = 0;
    uint32_t cap = 0;
    int rc = SG_OK;
    for (;;) {
        if (out->n_containers > 0) {
            if (flags & SG_FATBIN_FIRST_ONLY) break;
            /* Zero padding may separate containers (sections are aligned). */
            while (off < n && b[off] == 0) off++;
            if (off >= n) break;
        }
        uint32_t hs;
        uint64_t bytes;
        rc = container_header(b, off, n, &hs, &bytes, err, errlen);
        if (rc) break;
        if (out->n_containers >= SG_FATBIN_MAX_ENTRIES) {
            set_err(err, errlen, "more than %u containers", SG_FATBIN_MAX_ENTRIES);
            rc = SG_ELIMIT;
            break;
        }
        rc = parse_entries(b, off + hs, off + hs + bytes, out->n_containers, out, &cap, err,
                           errlen);
        if (rc) break;
        out->n_containers++;
        off += hs + bytes;
        consumed = off;
    }
    if (rc) {
        sg_fatbin_free(out);
        return rc;
    }
    out->data = b;
    out->size = (size_t)consumed;
    return SG_OK;
}

void sg_fatbin_free(sg_fatbin_t *fb)
{
    if (!fb) return;
    free(fb->entries);
    memset(fb, 0, sizeof *fb);
}

int sg_fatbin_entry_payload(const sg_fatbin_t *fb, uint32_t i, const uint8_t **p, size_t *n)
{
    if (!fb || i >= fb->n_entries || !p || !n) return SG_EINVAL;
    const sg_fatbin_entry_t *e = &fb->entries[i];
    *p = fb->data + e->payload_offset;
    *n = (size_t)(e->compression != SG_FATBIN_COMPRESS_NONE ? e->compressed_size
                                                            : e->payload_size);
    return SG_OK;
}

/* Decompress src into a new buffer of at most cap bytes (+1 for a NUL). */
static int decompress(const sg_fatbin_entry_t *e, const uint8_t *src, uint64_t max_bytes,
                      uint8_t **out, size_t *got)
{
    uint64_t csz = e->compressed_size, want = e->uncompressed_size;
    if (e->compression == SG_FATBIN_COMPRESS_LZ4) {
        if (want == 0 || want > (uint64_t)INT_MAX - 1 || csz > (uint64_t)INT_MAX ||
            want > csz * LZ4_MAX_RATIO + 16)
            return SG_EFORMAT;
        if (want > max_bytes) return SG_ELIMIT;
        uint8_t *buf = malloc((size_t)want + 1);
        if (!buf) return SG_ENOMEM;
        int r = LZ4_decompress_safe((const char *)src, (char *)buf, (int)csz, (int)want);
        if (r < 0) {
            free(buf);
            return SG_EFORMAT;
        }
        *out = buf;
        *got = (size_t)r;
        return SG_OK;
    }
    /* zstd: the header's size is the one to trust for the allocation; the
     * frame's own content size (when present) must not exceed it. */
    unsigned long long fcs = ZSTD_getFrameContentSize(src, (size_t)csz);
    if (fcs == ZSTD_CONTENTSIZE_ERROR) return SG_EFORMAT;
    if (want == 0) {
        if (fcs == ZSTD_CONTENTSIZE_UNKNOWN) return SG_EFORMAT;
        want = fcs;
    }
    if (want > max_bytes || want > (uint64_t)SIZE_MAX - 1) return SG_ELIMIT;
    if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs > want) return SG_EFORMAT;
    uint8_t *buf = malloc((size_t)want + 1);
    if (!buf) return SG_ENOMEM;
    size_t r = ZSTD_decompress(buf, (size_t)want, src, (size_t)csz);
    if (ZSTD_isError(r)) {
        free(buf);
        return SG_EFORMAT;
    }
    *out = buf;
    *got = r;
    return SG_OK;
}

int sg_fatbin_extract(const sg_fatbin_t *fb, uint32_t i, uint64_t max_bytes, uint8_t **out,
                      size_t *len)
{
    if (!fb || i >= fb->n_entries || !out || !len) return SG_EINVAL;
    *out = NULL;
    *len = 0;
    if (max_bytes == 0) max_bytes = SG_FATBIN_DEFAULT_MAX_IMAGE;
    const sg_fatbin_entry_t *e = &fb->entries[i];
    const uint8_t *src = fb->data + e->payload_offset;
    uint8_t *buf;
    size_t got;

    if (e->compression == SG_FATBIN_COMPRESS_NONE) {
        /* Trim before copying so that the cap applies to the image, not to
         * the padding. */
        size_t avail = (size_t)e->payload_size;
        if (e->kind == SG_FATBIN_ENTRY_PTX) {
            avail = strnlen((const char *)src, avail);
        } else if (e->kind == SG_FATBIN_ENTRY_ELF) {
            uint64_t sz;
            if (sg_elf_image_size(src, avail, &sz) == SG_OK) avail = (size_t)sz;
        }
        if (avail > max_bytes) return SG_ELIMIT;
        buf = malloc(avail + 1);
        if (!buf) return SG_ENOMEM;
        if (avail) memcpy(buf, src, avail);
        got = avail;
    } else {
        int rc = decompress(e, src, max_bytes, &buf, &got);
        if (rc) return rc;
        if (e->kind == SG_FATBIN_ENTRY_PTX) {
            got = strnlen((const char *)buf, got);
        } else if (e->kind == SG_FATBIN_ENTRY_ELF) {
            uint64_t sz;
            if (sg_elf_image_size(buf, got, &sz) == SG_OK) got = (size_t)sz;
        }
    }
    buf[got] = 0;
    *out = buf;
    *len = got;
    return SG_OK;
}

/* ---- PTX text --------------------------------------------------------------- */

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$';
}

typedef struct {
    const char *s;
    size_t n; /* bytes to scan: stops early at a NUL */
    size_t i;
} ptx_scan_t;

static void scan_init(ptx_scan_t *sc, const char *s, size_t n)
{
    sc->s = s;
    sc->n = s ? strnlen(s, n) : 0;
    sc->i = 0;
}

/* Next directive (".entry", ".target", ...) outside comments and strings, at
 * a token boundary (so "ld.param" is not a directive). *word points at the
 * name after the dot. */
static bool scan_directive(ptx_scan_t *sc, const char **word, size_t *wlen)
{
    const char *s = sc->s;
    size_t n = sc->n, i = sc->i;
    while (i < n) {
        char c = s[i];
        if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n') i++;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            i += 2;
            while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) i++;
            i = i + 2 <= n ? i + 2 : n;
        } else if (c == '"') {
            i++;
            while (i < n && s[i] != '"' && s[i] != '\n') i += (s[i] == '\\' && i + 1 < n) ? 2 : 1;
            if (i < n) i++;
        } else if (c == '.' && (i == 0 || !(ident_char(s[i - 1]) || s[i - 1] == '%'))) {
            size_t j = i + 1;
            while (j < n && ident_char(s[j])) j++;
            if (j > i + 1) {
                *word = s + i + 1;
                *wlen = j - i - 1;
                sc->i = j;
                return true;
            }
            i = j;
        } else {
            i++;
        }
    }
    sc->i = n;
    return false;
}

static bool word_is(const char *w, size_t wlen, const char *lit)
{
    size_t l = strlen(lit);
    return wlen == l && memcmp(w, lit, l) == 0;
}

static void scan_spaces(ptx_scan_t *sc)
{
    while (sc->i < sc->n &&
           (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\t' || sc->s[sc->i] == '\r' ||
            sc->s[sc->i] == '\n'))
        sc->i++;
}

/* Identifier at the cursor (PTX: [A-Za-z0-9_$%]), length 0 if none. */
static size_t scan_ident(ptx_scan_t *sc, const char **id)
{
    size_t j = sc->i;
    while (j < sc->n && (ident_char(sc->s[j]) || sc->s[j] == '%')) j++;
    *id = sc->s + sc->i;
    size_t len = j - sc->i;
    sc->i = j;
    return len;
}

/* Parse up to 4 decimal digits at s[*i]; false if none or too many. */
static bool parse_uint(const char *s, size_t n, size_t *i, uint32_t *v)
{
    uint32_t x = 0;
    size_t start = *i;
    while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
        if (*i - start >= 4) return false;
        x = x * 10 + (uint32_t)(s[*i] - '0');
        (*i)++;
    }
    if (*i == start) return false;
    *v = x;
    return true;
}

int sg_ptx_target(const char *ptx, size_t len, uint32_t *arch, char *suffix)
{
    if (!ptx || !arch) return SG_EINVAL;
    ptx_scan_t sc;
    scan_init(&sc, ptx, len);
    const char *w;
    size_t wl;
    while (scan_directive(&sc, &w, &wl)) {
        if (!word_is(w, wl, "target")) continue;
        scan_spaces(&sc);
        const char *id;
        size_t il = scan_ident(&sc, &id);
        if (il < 4 || memcmp(id, "sm_", 3) != 0) return SG_EFORMAT;
        size_t k = 3;
        uint32_t v;
        if (!parse_uint(id, il, &k, &v) || v == 0) return SG_EFORMAT;
        char sfx = 0;
        if (k < il) {
            if (k + 1 != il || (id[k] != 'a' && id[k] != 'f')) return SG_EFORMAT;
            sfx = id[k];
        }
        *arch = v;
        if (suffix) *suffix = sfx;
        return SG_OK;
    }
    return SG_ENOENT;
}

int sg_ptx_version(const char *ptx, size_t len, uint32_t *major, uint32_t *minor)
{
    if (!ptx || !major || !minor) return SG_EINVAL;
    ptx_scan_t sc;
    scan_init(&sc, ptx, len);
    const char *w;
    size_t wl;
    while (scan_directive(&sc, &w, &wl)) {
        if (!word_is(w, wl, "version")) continue;
        scan_spaces(&sc);
        size_t i = sc.i;
        if (!parse_uint(sc.s, sc.n, &i, major)) return SG_EFORMAT;
        if (i >= sc.n || sc.s[i] != '.') return SG_EFORMAT;
        i++;
        if (!parse_uint(sc.s, sc.n, &i, minor)) return SG_EFORMAT;
        return SG_OK;
    }
    return SG_ENOENT;
}

/* Calls fn for each .entry name; stops when fn returns true. */
static bool for_each_entry(const char *ptx, size_t len,
                           bool (*fn)(const char *name, size_t nl, void *ctx), void *ctx)
{
    ptx_scan_t sc;
    scan_init(&sc, ptx, len);
    const char *w;
    size_t wl;
    while (scan_directive(&sc, &w, &wl)) {
        if (!word_is(w, wl, "entry")) continue;
        scan_spaces(&sc);
        const char *id;
        size_t il = scan_ident(&sc, &id);
        if (il && fn(id, il, ctx)) return true;
    }
    return false;
}

typedef struct {
    uint64_t count, bytes;
    const char **names;
    char *w;
} entry_collect_t;

static bool count_entry(const char *name, size_t nl, void *ctx)
{
    entry_collect_t *c = ctx;
    c->count++;
    c->bytes += nl + 1;
    return false;
}

static bool store_entry(const char *name, size_t nl, void *ctx)
{
    entry_collect_t *c = ctx;
    memcpy(c->w, name, nl);
    c->w[nl] = 0;
    c->names[c->count++] = c->w;
    c->w += nl + 1;
    return false;
}

int sg_ptx_list_entries(const char *ptx, size_t len, sg_name_list_t *out)
{
    if (!out) return SG_EINVAL;
    memset(out, 0, sizeof *out);
    if (!ptx) return SG_EINVAL;
    entry_collect_t c = {0};
    for_each_entry(ptx, len, count_entry, &c);
    if (c.count == 0) return SG_OK;
    if (c.count > UINT32_MAX) return SG_ELIMIT;
    void *block = malloc(c.count * sizeof(char *) + c.bytes);
    if (!block) return SG_ENOMEM;
    uint64_t count = c.count;
    c.names = block;
    c.w = (char *)block + count * sizeof(char *);
    c.count = 0;
    for_each_entry(ptx, len, store_entry, &c);
    out->n = (uint32_t)c.count;
    out->names = c.names;
    out->block = block;
    return SG_OK;
}

typedef struct {
    const char *name;
    size_t nl;
} entry_find_t;

static bool match_entry(const char *name, size_t nl, void *ctx)
{
    entry_find_t *f = ctx;
    return nl == f->nl && memcmp(name, f->name, nl) == 0;
}

bool sg_ptx_has_entry(const char *ptx, size_t len, const char *name)
{
    if (!ptx || !name || !*name) return false;
    entry_find_t f = {name, strlen(name)};
    return for_each_entry(ptx, len, match_entry, &f);
}

bool sg_ptx_target_usable(uint32_t target, char suffix, uint32_t device_arch)
{
    if (target == 0 || device_arch == 0) return false;
    if (suffix == 'a') return target == device_arch;
    if (suffix == 'f') return target <= device_arch && target / 10 == device_arch / 10;
    return target <= device_arch;
}

/* ---- PTX selection -------------------------------------------------------------- */

static const char *const reason_names[SG_PTX_REASON_COUNT] = {
    [SG_PTX_OK] = "ok",
    [SG_PTX_NO_IMAGE] = "image_not_captured",
    [SG_PTX_SASS_ONLY] = "sass_only",
    [SG_PTX_ONLY_HIGHER] = "only_higher_target",
    [SG_PTX_ARCH_MISMATCH] = "arch_specific_mismatch",
    [SG_PTX_NOT_IN_PTX] = "kernel_not_in_ptx",
    [SG_PTX_FROM_SOURCE] = "from_nvrtc_source",
    [SG_PTX_EMPTY] = "no_code",
    [SG_PTX_UNREADABLE] = "unreadable",
};

const char *sg_ptx_reason_name(sg_ptx_reason_t r)
{
    if ((unsigned)r >= SG_PTX_REASON_COUNT) return "unknown";
    return reason_names[r];
}

/* A short set of archs for messages ("sm_75, sm_90a"), deduplicated. */
typedef struct {
    uint32_t arch[12];
    char sfx[12];
    uint32_t n;
    bool more;
} arch_set_t;

static void arch_add(arch_set_t *s, uint32_t arch, char sfx)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (s->arch[i] == arch && s->sfx[i] == sfx) return;
    if (s->n == sizeof s->arch / sizeof s->arch[0]) {
        s->more = true;
        return;
    }
    s->arch[s->n] = arch;
    s->sfx[s->n++] = sfx;
}

static const char *arch_str(const arch_set_t *s, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < s->n && used < n; i++) {
        int w = snprintf(buf + used, n - used, "%ssm_%u%s", i ? ", " : "", s->arch[i],
                         s->sfx[i] == 'a' ? "a" : s->sfx[i] == 'f' ? "f" : "");
        if (w < 0) break;
        used += (size_t)w;
    }
    if (s->more && used < n) snprintf(buf + used, n - used, ", ...");
    return buf;
}

static char flag_suffix(uint64_t flags)
{
    return (flags & SG_FATBIN_FLAG_ARCH_SPECIFIC)     ? 'a'
           : (flags & SG_FATBIN_FLAG_FAMILY_SPECIFIC) ? 'f'
                                                      : 0;
}

int sg_fatbin_pick_ptx(const sg_fatbin_t *fb, uint32_t device_arch, const char *kernel,
                       uint64_t max_bytes, sg_ptx_pick_t *out, char **ptx, size_t *ptx_len)
{
    if (!fb || !out || device_arch == 0) return SG_EINVAL;
    memset(out, 0, sizeof *out);
    out->entry = SG_NONE;
    if (ptx) *ptx = NULL;
    if (ptx_len) *ptx_len = 0;

    uint32_t n_ptx = 0, n_bad = 0, n_holding = 0, n_higher = 0, n_mismatch = 0;
    arch_set_t sass = {0}, holding = {0}, all_ptx = {0};
    char *best = NULL;
    size_t best_len = 0;
    uint32_t best_target = 0;
    char best_sfx = 0;

    for (uint32_t i = 0; i < fb->n_entries; i++) {
        const sg_fatbin_entry_t *e = &fb->entries[i];
        if (e->kind == SG_FATBIN_ENTRY_ELF) arch_add(&sass, e->arch, flag_suffix(e->flags));
        if (e->kind != SG_FATBIN_ENTRY_PTX) continue;
        n_ptx++;
        uint8_t *text;
        size_t len;
        int rc = sg_fatbin_extract(fb, i, max_bytes, &text, &len);
        if (rc == SG_ENOMEM) {
            free(best);
            return rc;
        }
        if (rc) {
            n_bad++;
            continue;
        }
        uint32_t target;
        char sfx;
        /* The text decides; fall back on the header for a PTX that has no
         * readable .target (not seen from nvcc). */
        if (sg_ptx_target((const char *)text, len, &target, &sfx) != SG_OK) {
            target = e->arch;
            sfx = flag_suffix(e->flags);
        }
        arch_add(&all_ptx, target, sfx);
        if (kernel && !sg_ptx_has_entry((const char *)text, len, kernel)) {
            free(text);
            continue;
        }
        n_holding++;
        arch_add(&holding, target, sfx);
        bool better = !best || target > best_target ||
                      (target == best_target && best_sfx != 0 && sfx == 0);
        if (sg_ptx_target_usable(target, sfx, device_arch) && better) {
            free(best);
            best = (char *)text;
            best_len = len;
            best_target = target;
            best_sfx = sfx;
            out->entry = i;
            continue;
        }
        if (!sg_ptx_target_usable(target, sfx, device_arch)) {
            if (target > device_arch)
                n_higher++;
            else
                n_mismatch++;
        }
        free(text);
    }

    char archs[96];
    const char *kname = kernel ? kernel : "any kernel";
    if (best) {
        out->reason = SG_PTX_OK;
        out->target = best_target;
        out->target_suffix = best_sfx;
        snprintf(out->detail, sizeof out->detail, "PTX .target sm_%u%s (entry %u) for sm_%u",
                 best_target, best_sfx == 'a' ? "a" : best_sfx == 'f' ? "f" : "", out->entry,
                 device_arch);
        if (ptx) {
            *ptx = best;
            if (ptx_len) *ptx_len = best_len;
        } else {
            free(best);
        }
        return SG_OK;
    }
    if (n_holding > 0) {
        out->reason = n_higher > 0 ? SG_PTX_ONLY_HIGHER : SG_PTX_ARCH_MISMATCH;
        snprintf(out->detail, sizeof out->detail, "PTX only for %s, none usable on sm_%u%s",
                 arch_str(&holding, archs, sizeof archs), device_arch,
                 n_bad ? " (some PTX entries unreadable)" : "");
    } else if (n_bad > 0) {
        out->reason = SG_PTX_UNREADABLE;
        snprintf(out->detail, sizeof out->detail,
                 "%u of %u PTX entries could not be decompressed or exceed the size cap", n_bad,
                 n_ptx);
    } else if (n_ptx > 0) {
        out->reason = SG_PTX_NOT_IN_PTX;
        snprintf(out->detail, sizeof out->detail, "PTX for %s does not define %s",
                 arch_str(&all_ptx, archs, sizeof archs), kname);
    } else if (sass.n > 0) {
        out->reason = SG_PTX_SASS_ONLY;
        snprintf(out->detail, sizeof out->detail, "SASS only (%s), no PTX",
                 arch_str(&sass, archs, sizeof archs));
    } else {
        out->reason = SG_PTX_EMPTY;
        snprintf(out->detail, sizeof out->detail, "no PTX or SASS entries (%u entries)",
                 fb->n_entries);
    }
    return SG_OK;
}

/* ---- sniffing and hashing -------------------------------------------------------- */

/* Does the text at p look like PTX? Only text bytes before the first NUL
 * (or the scan limit) and a .version or .target directive. */
static bool looks_like_ptx(const char *p, size_t n)
{
    size_t lim = n < 65536 ? n : 65536;
    size_t len = strnlen(p, lim);
    if (len == 0) return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v')
            return false;
        if (c == 0x7f) return false;
    }
    ptx_scan_t sc;
    scan_init(&sc, p, len);
    const char *w;
    size_t wl;
    while (scan_directive(&sc, &w, &wl))
        if (word_is(w, wl, "version") || word_is(w, wl, "target")) return true;
    return false;
}

sg_code_format_t sg_code_image_sniff(const void *p, size_t n, uint64_t *size)
{
    const uint8_t *b = p;
    if (size) *size = 0;
    if (!b || n < 4) return SG_CODE_FORMAT_UNKNOWN;
    uint32_t magic = sg_rd32(b);
    if (magic == SG_FATBIN_MAGIC) {
        size_t len;
        if (size && sg_fatbin_span(b, n, &len) == SG_OK) *size = len;
        return SG_CODE_FORMAT_FATBIN;
    }
    if (magic == SG_FATBIN_WRAPPER_MAGIC) {
        if (n < SG_FATBIN_WRAPPER_SIZE) return SG_CODE_FORMAT_UNKNOWN;
        if (size) *size = SG_FATBIN_WRAPPER_SIZE;
        return SG_CODE_FORMAT_WRAPPER;
    }
    if (b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F') {
        if (sg_elf_check(b, n) != SG_OK || sg_rd16(b + 0x12) != SG_ELF_EM_CUDA)
            return SG_CODE_FORMAT_UNKNOWN;
        uint64_t sz;
        if (size && sg_elf_image_size(b, n, &sz) == SG_OK) *size = sz;
        return SG_CODE_FORMAT_CUBIN;
    }
    if (looks_like_ptx((const char *)b, n)) {
        if (size) *size = strnlen((const char *)b, n);
        return SG_CODE_FORMAT_PTX;
    }
    return SG_CODE_FORMAT_UNKNOWN;
}

const char *sg_code_format_name(sg_code_format_t f)
{
    switch (f) {
    case SG_CODE_FORMAT_FATBIN: return "fatbin";
    case SG_CODE_FORMAT_WRAPPER: return "fatbin_wrapper";
    case SG_CODE_FORMAT_CUBIN: return "cubin";
    case SG_CODE_FORMAT_PTX: return "ptx";
    default: return "unknown";
    }
}

void sg_code_hash(const void *p, size_t n, char out[17])
{
    sg_bundle_hash(p, n, out); /* the format's hash, defined with the format */
}

uint32_t sg_code_arch_of(int cc_major, int cc_minor)
{
    if (cc_major > 0 && cc_major < 100 && cc_minor >= 0 && cc_minor < 10)
        return (uint32_t)(cc_major * 10 + cc_minor);
    return 90;
}
