/* test_mangled.c: graph/mangled.c, which parameters of a kernel are
 * pointers to const, read from the mangled name without a demangler.
 *
 * The oracle is what capture did before: libstdc++'s __cxa_demangle and a
 * reading of the demangled text ("T const*" is a pointer to const). On
 * every name the oracle can read, the reader must give the same answer,
 * and its substitution table must be the demangler's: a reference to each
 * entry (S_, S0_, ...) appended as one more parameter must mean the same
 * to both, and the first reference past the end must fail in both. Names:
 * real nvcc 13 kernels built from tests/mangled/kernels.cu, a sample of the
 * CUDA 13 libraries' kernels (tests/mangled/toolkit_names.txt), names too
 * deep for the demangler (deep_names.txt, answers from `c++filt -r`),
 * hand-written cases, and random mutations of all of them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "code/elf_image.h"
#include "graph/graph.h"
#include "graph/views.h"

char *__cxa_demangle(const char *mangled, char *out, size_t *length, int *status);

#define MAXP 300

/* ---- the oracle ----------------------------------------------------------------------- */

static bool text_is_const_pointer(const char *p, size_t len)
{
    while (len && p[len - 1] == ' ')
        len--;
    const char *restrict_words[] = {"__restrict__", "__restrict", "restrict"};
    for (size_t i = 0; i < 3; i++) {
        size_t w = strlen(restrict_words[i]);
        if (len > w && memcmp(p + len - w, restrict_words[i], w) == 0) {
            len -= w;
            while (len && p[len - 1] == ' ')
                len--;
            break;
        }
    }
    if (len < 7 || p[len - 1] != '*') return false;
    len--;
    while (len && p[len - 1] == ' ')
        len--;
    return len >= 5 && memcmp(p + len - 5, "const", 5) == 0 &&
           (len == 5 || p[len - 6] == ' ' || p[len - 6] == '>');
}

/* The number of parameters (ro[] filled), or -1 when the name does not
 * demangle to a function. */
static int oracle(const char *mangled, bool *ro)
{
    if (strncmp(mangled, "_Z", 2) != 0 || strlen(mangled) > 16384) return -1;
    int status = 0;
    char *dem = __cxa_demangle(mangled, NULL, NULL, &status);
    if (!dem || status != 0) {
        free(dem);
        return -1;
    }
    size_t len = strlen(dem);
    int rc = -1;
    if (len < 2 || dem[len - 1] != ')') goto out;
    size_t open = len - 1;
    int depth = 0;
    for (size_t i = len; i-- > 0;) {
        if (dem[i] == ')' || dem[i] == '>' || dem[i] == ']') depth++;
        if (dem[i] == '(' || dem[i] == '<' || dem[i] == '[') depth--;
        if (depth == 0) {
            open = i;
            break;
        }
    }
    if (depth != 0 || dem[open] != '(') goto out;
    const char *body = dem + open + 1;
    size_t body_len = len - 1 - (open + 1);
    if (body_len == 0 || (body_len == 4 && memcmp(body, "void", 4) == 0)) {
        rc = 0;
        goto out;
    }
    int count = 0;
    size_t start = 0;
    depth = 0;
    for (size_t i = 0; i <= body_len; i++) {
        char c = i < body_len ? body[i] : ',';
        if (c == '(' || c == '<' || c == '[') depth++;
        if (c == ')' || c == '>' || c == ']') depth--;
        if (c == ',' && depth == 0) {
            const char *p = body + start;
            size_t plen = i - start;
            while (plen && *p == ' ') {
                p++;
                plen--;
            }
            if (count < MAXP) ro[count] = text_is_const_pointer(p, plen);
            count++;
            start = i + 1;
        }
    }
    if (count <= 256) rc = count;
out:
    free(dem);
    return rc;
}

/* The reader's answer without knowing the count: the count it accepts. */
static int reader(const char *mangled, bool *ro)
{
    for (uint32_t n = 0; n <= 256; n++)
        if (sg_kernel_const_pointer_params(mangled, n, ro) == 0) return (int)n;
    return -1;
}

static void subst_ref(char *out, unsigned k)
{
    if (k == 0) {
        strcpy(out, "S_");
        return;
    }
    k--;
    char digits[16];
    int n = 0;
    do {
        unsigned d = k % 36;
        digits[n++] = (char)(d < 10 ? '0' + d : 'A' + d - 10);
        k /= 36;
    } while (k);
    int j = 0;
    out[j++] = 'S';
    while (n)
        out[j++] = digits[--n];
    out[j++] = '_';
    out[j] = '\0';
}

typedef struct {
    unsigned names, compared, oracle_failed, entries;
} tally_t;

/* Everything the oracle can say about one name, checked. */
static void check_name(const char *name, tally_t *t)
{
    bool want[MAXP], got[MAXP];
    t->names++;
    int n = oracle(name, want);
    if (n < 0) {
        t->oracle_failed++;
        return;
    }
    int rc = sg_kernel_const_pointer_params(name, (uint32_t)n, got);
    if (rc != 0) fail_msg("reader refused %s (%d parameters)", name, n);
    for (int i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("parameter %d of %s: reader %d, demangler %d", i, name, got[i], want[i]);
    t->compared++;
    if (n == 0 || n >= 256) return;

    /* The substitution table, entry by entry. A reference wrapped in a
     * template argument ("1zI<ref>E") is valid exactly while it is inside
     * the table (both add "z" first); as a bare parameter, it must print
     * the same way (when the demangler can print it out of context). */
    size_t len = strlen(name);
    char *buf = malloc(len + 32);
    assert_non_null(buf);
    int last_oracle = -1, last_reader = -1;
    for (unsigned k = 0; k < 4096; k++) {
        char ref[16];
        subst_ref(ref, k);
        snprintf(buf, len + 32, "%s%s", name, ref);
        int on = oracle(buf, want);
        int rr = sg_kernel_const_pointer_params(buf, (uint32_t)n + 1, got);
        if (on == n + 1 && rr == 0) {
            if (got[n] != want[n])
                fail_msg("substitution %s after %s: reader %d, demangler %d", ref, name, got[n],
                         want[n]);
            t->entries++;
        }
        snprintf(buf, len + 32, "%s1zI%sE", name, ref);
        if (oracle(buf, want) >= 0) last_oracle = (int)k;
        if (sg_kernel_const_pointer_params(buf, (uint32_t)n + 1, got) == 0) last_reader = (int)k;
        if ((int)k > last_oracle + 3 && (int)k > last_reader + 3) break;
    }
    free(buf);
    if (last_oracle != last_reader)
        fail_msg("%s: the demangler's substitution table ends at %d, the reader's at %d", name,
                 last_oracle, last_reader);
}

static char **read_lines(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s", path);
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t got;
    while ((got = getline(&line, &lcap, f)) > 0) {
        while (got && (line[got - 1] == '\n' || line[got - 1] == '\r'))
            line[--got] = '\0';
        if (!got || line[0] == '#') continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 256;
            v = realloc(v, cap * sizeof *v);
            assert_non_null(v);
        }
        v[(*n)++] = strdup(line);
    }
    free(line);
    fclose(f);
    return v;
}

static void free_lines(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* ---- hand-written cases ------------------------------------------------------------------ */

static void expect(const char *name, int count, const char *flags)
{
    bool ro[MAXP];
    memset(ro, 1, sizeof ro);
    int n = reader(name, ro);
    if (n != count) fail_msg("%s: %d parameters, expected %d", name, n, count);
    for (int i = 0; i < count; i++)
        if (ro[i] != (flags[i] == '1'))
            fail_msg("%s: parameter %d is %d, expected %c", name, i, ro[i], flags[i]);
}

static void test_cases(void **state)
{
    (void)state;
    expect("_Z6k_axpbPfPKfffm", 5, "01000");        /* (float*, float const*, float, float, ulong) */
    expect("_Z5scaleIfEvPT_S0_i", 3, "000");        /* template, substitutions */
    expect("_Z1fPPKf", 1, "0");                     /* float const**: the pointer may be written */
    expect("_Z1fPKPf", 1, "1");                     /* float* const* */
    expect("_Z1fPKiPKd", 2, "11");
    expect("_Z1fv", 0, "");
    expect("_Z1kIPKfEvT_", 1, "1");                 /* T = float const* */
    expect("_Z1kIKfEvPT_", 1, "1");                 /* T = float const: T* */
    expect("_Z1kIVfEvPKT_", 1, "1");                /* float volatile const* */
    expect("_Z1fPVKi", 1, "0");                     /* int const volatile* */
    expect("_Z1fPKVi", 1, "1");                     /* int volatile const* */
    expect("_Z1fPrKi", 1, "0");                     /* int const restrict* */
    expect("_Z1kIrPKfEvT_", 1, "1");                /* float const* restrict */
    expect("_Z1kIKPKfEvT_", 1, "0");                /* float const* const */
    expect("_Z1fIiEvPKKT_", 1, "1");                /* a repeated qualifier */
    expect("_Z7k_paramIPA4_KfEvT_", 1, "0");        /* float const (*) [4] */
    expect("_Z1kIA3_iEvPKT_", 1, "0");              /* int const (*) [3] */
    expect("_Z7k_paramIPFviEEvT_", 1, "0");         /* void (*)(int) */
    expect("_Z1fRKi", 1, "0");                      /* a reference is not a pointer */
    expect("_Z1fM1AKi", 1, "0");                    /* int const A::* */
    expect("_Z1kIJPKfPfEEvDpT_", 2, "10");          /* a pack expansion */
    expect("_Z7k_pack2IiJfdEEvT_DpPKT0_", 3, "011"); /* Args const*... */
    expect("_Z6k_packIJEEvDpT_", 0, "");            /* an empty pack */
    expect("_Z1fIvEvT_", 0, "");                    /* T = void: no parameters */
    expect("_ZN2ns1kIfEEvN1S2InIT_E4typeEPKS3_", 2, "01");
    expect("_Z8k_lambdaIZ14launch_lambdasvEUlfE_EvT_PKf", 2, "01");
    expect("_Z1fSt5tupleIJPiPKiEE", 1, "0");

    bool ro[8] = {true, true};
    /* wrong count, not mangled, not a function, malformed: refused, all false */
    assert_int_equal(sg_kernel_const_pointer_params("_Z6k_axpbPfPKfffm", 4, ro), -1);
    assert_false(ro[0] || ro[1]);
    assert_int_equal(sg_kernel_const_pointer_params("add_kernel", 1, ro), -1);
    assert_int_equal(sg_kernel_const_pointer_params(NULL, 1, ro), -1);
    assert_int_equal(sg_kernel_const_pointer_params("_Zzzz", 1, ro), -1);
    assert_int_equal(sg_kernel_const_pointer_params("_Z3foo", 0, ro), -1);   /* data */
    assert_int_equal(sg_kernel_const_pointer_params("_ZN1a1b", 1, ro), -1);  /* truncated */
    assert_int_equal(sg_kernel_const_pointer_params("_Z1fS_", 1, ro), -1);   /* empty table */
    assert_int_equal(sg_kernel_const_pointer_params("_Z1fT_", 1, ro), -1);   /* no template */
    assert_int_equal(sg_kernel_const_pointer_params("_Z1f99i", 1, ro), -1);  /* name past the end */
    assert_int_equal(sg_kernel_const_pointer_params("_Z1fPKi.constprop.0", 1, ro), -1);
    assert_int_equal(sg_kernel_const_pointer_params("_Z1fPU3AS1Kf", 1, ro), -1); /* vendor */

    /* Bounded: deep nesting is refused, not recursed into; long names are
     * not read at all. */
    char deep[2100] = "_Z1f";
    memset(deep + 4, 'P', 2000);
    strcpy(deep + 2004, "Ki");
    assert_int_equal(sg_kernel_const_pointer_params(deep, 1, ro), -1);
    strcpy(deep + 4 + 99, "PKi"); /* 100 levels: read */
    expect(deep, 1, "0");
    strcpy(deep + 4, "PKi");
    expect(deep, 1, "1");
    size_t big = 16385;
    char *huge = malloc(big + 1);
    assert_non_null(huge);
    memcpy(huge, "_Z1fPKi", 7);
    memset(huge + 7, 'i', big - 7);
    huge[big] = '\0';
    assert_int_equal(sg_kernel_const_pointer_params(huge, 1, ro), -1);
    free(huge);
}

/* ---- names from real code ---------------------------------------------------------------- */

static void test_nvcc_names(void **state)
{
    (void)state;
    FILE *f = fopen(SGCAP_MANGLED_CUBIN, "rb");
    if (!f) fail_msg("cannot open %s", SGCAP_MANGLED_CUBIN);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    uint8_t *cubin = malloc((size_t)size);
    assert_non_null(cubin);
    assert_int_equal(fread(cubin, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    sg_name_list_t names = {0};
    assert_int_equal(sg_elf_list_kernels(cubin, (size_t)size, &names), SG_OK);
    tally_t t = {0};
    for (uint32_t i = 0; i < names.n; i++)
        check_name(names.names[i], &t);
    /* every kernel of kernels.cu, each one the demangler reads */
    assert_true(t.names >= 30);
    assert_int_equal(t.oracle_failed, 0);
    assert_true(t.entries > 150);
    sg_name_list_free(&names);
    free(cubin);
}

static void test_toolkit_names(void **state)
{
    (void)state;
    size_t n = 0;
    char **v = read_lines(SGCAP_MANGLED_DIR "/toolkit_names.txt", &n);
    tally_t t = {0};
    for (size_t i = 0; i < n; i++)
        check_name(v[i], &t);
    assert_true(t.compared >= 1000);
    assert_true(t.entries > 10000);
    free_lines(v, n);
}

/* Deeper than libstdc++'s demangler goes (its recursion limit): the
 * reader answers, as the demangler does without the limit. */
static void test_deep_names(void **state)
{
    (void)state;
    size_t n = 0;
    char **v = read_lines(SGCAP_MANGLED_DIR "/deep_names.txt", &n);
    assert_true(n >= 2);
    for (size_t i = 0; i < n; i++) {
        char *sp = strchr(v[i], ' ');
        assert_non_null(sp);
        *sp = '\0';
        bool ro[MAXP];
        assert_int_equal(oracle(sp + 1, ro), -1);
        expect(sp + 1, (int)strlen(v[i]), v[i]);
    }
    free_lines(v, n);
}

/* Random edits of real names: never a crash (the unit tests also run under
 * the sanitizers), and where both read the edited name, the same answer. */
static void test_mutations(void **state)
{
    (void)state;
    static const char alphabet[] = "_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    size_t n = 0;
    char **v = read_lines(SGCAP_MANGLED_DIR "/toolkit_names.txt", &n);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    unsigned both = 0;
    for (int iter = 0; iter < 20000; iter++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const char *src = v[x % n];
        size_t len = strlen(src);
        char *buf = malloc(len + 8);
        assert_non_null(buf);
        memcpy(buf, src, len + 1);
        for (int edits = 1 + (int)(x >> 60) % 3; edits > 0; edits--) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t pos = 2 + (x >> 8) % (len - 1);
            char c = alphabet[(x >> 40) % (sizeof alphabet - 1)];
            switch (x % 3) {
            case 0:
                if (pos < len) buf[pos] = c;
                break;
            case 1:
                memmove(buf + pos + 1, buf + pos, len - pos + 1);
                buf[pos] = c;
                len++;
                break;
            default:
                if (pos < len) {
                    memmove(buf + pos, buf + pos + 1, len - pos);
                    len--;
                }
            }
        }
        bool want[MAXP], got[MAXP];
        int on = oracle(buf, want);
        int rn = reader(buf, got);
        if (on >= 0 && rn >= 0) {
            both++;
            if (on != rn) fail_msg("%s: %d parameters, demangler %d", buf, rn, on);
            for (int i = 0; i < on; i++)
                if (got[i] != want[i]) fail_msg("parameter %d of %s differs", i, buf);
        }
        free(buf);
    }
    assert_true(both > 2000);
    free_lines(v, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),         cmocka_unit_test(test_nvcc_names),
        cmocka_unit_test(test_toolkit_names), cmocka_unit_test(test_deep_names),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
