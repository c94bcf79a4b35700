/* sass_text.c: parsing nvdisasm's listing into instructions (sass.h).
 *
 * The text is untrusted (a disassembler of another version, a saved file, a
 * fuzzer): every field is bounded, unknown syntax becomes SG_SASS_OP_OTHER,
 * an instruction line that cannot be split keeps op "?" so that the
 * analysis of its kernel reports it rather than guessing around it.
 *
 * Instruction lines look like
 *     /​*0070*​/               @!P0 IMAD.WIDE R2, R5, 0x4, R2 ;
 * with pcs absolute in raw mode (nvdisasm -b) and per section in ELF mode,
 * where `.text.NAME:` opens a kernel and `.L_x_N:` labels branch targets.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/sass.h"
#include "graph/graph.h"

#define MAX_TEXT (1ull << 30)
#define MAX_INSNS (16u << 20)
#define MAX_LINE 4096

typedef struct {
    char *name;
    uint32_t func; /* index of the function it is in, UINT32_MAX raw */
    uint32_t pc;
} label_t;

typedef struct {
    sg_sass_listing_t *l;
    uint32_t cap_insns, cap_funcs;
    label_t *labels;
    uint32_t n_labels, cap_labels;
    /* label references to resolve once every label is known */
    struct fix {
        uint32_t insn;
        uint32_t func;
        uint8_t op;
        char *name;
    } *fixes;
    uint32_t cur_func;
    uint32_t n_fixes, cap_fixes;
} parser_t;

static void seterr(char *err, size_t errlen, const char *msg, size_t line)
{
    if (err && errlen)
        snprintf(err, errlen, "line %zu: %s", line, msg);
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint32_t nc = *cap ? *cap : 64;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*p, (size_t)nc * elem);
    if (!q)
        return SG_ENOMEM;
    *p = q;
    *cap = nc;
    return 0;
}

static bool is_ident(int c)
{
    return isalnum(c) || c == '_' || c == '.' || c == '$';
}

/* Parse an unsigned hex/decimal number at s; *end after it. */
static bool parse_num(const char *s, const char **end, int64_t *v)
{
    char *e;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        if (!isxdigit((unsigned char)s[2]))
            return false;
        unsigned long long x = strtoull(s + 2, &e, 16);
        *v = (int64_t)x;
    } else if (isdigit((unsigned char)s[0])) {
        unsigned long long x = strtoull(s, &e, 10);
        *v = (int64_t)x;
    } else {
        return false;
    }
    *end = e;
    return true;
}

/* R12, RZ, UR4, URZ with optional .64/.U32/.reuse/.H1 ... suffixes. */
static bool parse_reg(const char *s, const char **end, sg_sass_operand_t *o)
{
    bool uni = false;
    const char *p = s;
    if (p[0] == 'U' && p[1] == 'R') {
        uni = true;
        p += 2;
    } else if (p[0] == 'R') {
        p += 1;
    } else {
        return false;
    }
    uint16_t r;
    if (*p == 'Z') {
        r = uni ? 63 : 255;
        p++;
    } else if (isdigit((unsigned char)*p)) {
        unsigned v = 0;
        while (isdigit((unsigned char)*p) && v < 1000)
            v = v * 10 + (unsigned)(*p++ - '0');
        if (v > (uni ? 62u : 254u))
            return false;
        r = (uint16_t)v;
    } else {
        return false;
    }
    if (isalnum((unsigned char)*p) || *p == '_')
        return false;
    o->kind = SG_SASS_OP_REG;
    o->uniform = uni;
    o->reg = r;
    while (*p == '.') {
        const char *q = p + 1;
        size_t k = 0;
        while (isalnum((unsigned char)q[k]) || q[k] == '_')
            k++;
        if (k == 2 && !strncmp(q, "64", 2))
            o->wide = true;
        else if (k == 3 && !strncmp(q, "U32", 3))
            o->u32 = true;
        else if (k == 5 && !strncmp(q, "reuse", 5))
            ;
        else if (k == 0)
            break;
        else
            o->kind = SG_SASS_OP_OTHER; /* R0.H1, R2.B1, ...: a sub-word, not modelled */
        p = q + k;
    }
    *end = p;
    return true;
}

static bool parse_pred(const char *s, const char **end, sg_sass_operand_t *o)
{
    const char *p = s;
    bool uni = false;
    if (p[0] == 'U' && p[1] == 'P') {
        uni = true;
        p += 2;
    } else if (p[0] == 'P') {
        p += 1;
    } else {
        return false;
    }
    uint16_t r;
    if (*p == 'T')
        r = 7;
    else if (*p >= '0' && *p <= '6')
        r = (uint16_t)(*p - '0');
    else
        return false;
    p++;
    if (isalnum((unsigned char)*p) || *p == '_')
        return false;
    o->kind = SG_SASS_OP_PRED;
    o->uniform = uni;
    o->reg = r;
    *end = p;
    return true;
}

static uint8_t sreg_atom(const char *s, size_t n)
{
    static const struct {
        const char *name;
        uint8_t atom;
    } t[] = {
        {"SR_TID.X", SG_SASS_TID_X},       {"SR_TID.Y", SG_SASS_TID_Y},
        {"SR_TID.Z", SG_SASS_TID_Z},       {"SR_CTAID.X", SG_SASS_CTAID_X},
        {"SR_CTAID.Y", SG_SASS_CTAID_Y},   {"SR_CTAID.Z", SG_SASS_CTAID_Z},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strlen(t[i].name) == n && !strncmp(s, t[i].name, n))
            return t[i].atom;
    return 0;
}

/* Inside [...] of an address: terms joined by '+'. */
static void parse_mem(const char *s, size_t n, sg_sass_operand_t *o)
{
    o->kind = SG_SASS_OP_MEM;
    o->reg = 0xffff;
    o->reg2 = 0xffff;
    o->imm = 0;
    size_t i = 0;
    int sign = 1;
    while (i < n) {
        while (i < n && isspace((unsigned char)s[i]))
            i++;
        if (i >= n)
            break;
        if (s[i] == '+' || s[i] == '-') {
            sign = s[i] == '-' ? -1 : 1;
            i++;
            continue;
        }
        char buf[64];
        size_t k = 0;
        while (i + k < n && s[i + k] != '+' && s[i + k] != '-' && !isspace((unsigned char)s[i + k]) &&
               k < sizeof buf - 1) {
            buf[k] = s[i + k];
            k++;
        }
        buf[k] = 0;
        if (k == 0) {
            o->kind = SG_SASS_OP_OTHER;
            return;
        }
        i += k;
        const char *e;
        sg_sass_operand_t r = {0};
        int64_t v;
        if (parse_num(buf, &e, &v) && *e == 0) {
            o->imm += sign * v;
        } else if (parse_reg(buf, &e, &r) && *e == 0 && r.kind == SG_SASS_OP_REG && sign > 0) {
            if (o->reg == 0xffff) {
                o->reg = r.reg;
                o->uniform = r.uniform;
                o->wide = r.wide;
                o->u32 = r.u32;
            } else if (o->reg2 == 0xffff) {
                o->reg2 = r.reg;
                o->reg2_uniform = r.uniform;
                o->reg2_wide = r.wide;
            } else {
                o->kind = SG_SASS_OP_OTHER;
                return;
            }
        } else {
            o->kind = SG_SASS_OP_OTHER;
            return;
        }
        sign = 1;
    }
}

/* One operand of text [s, s+n). */
static void parse_operand(parser_t *ps, uint32_t insn, uint8_t idx, const char *s, size_t n,
                          sg_sass_operand_t *o)
{
    memset(o, 0, sizeof *o);
    o->kind = SG_SASS_OP_OTHER;
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (!n)
        return;
    char buf[MAX_LINE];
    if (n >= sizeof buf)
        return;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *p = buf;
    bool neg = false, inv = false, abs_ = false;
    for (;;) {
        if (*p == '-' && !isdigit((unsigned char)p[1]))
            neg = true, p++;
        else if (*p == '~' || *p == '!')
            inv = true, p++;
        else if (*p == '|')
            abs_ = true, p++;
        else
            break;
    }
    size_t len = strlen(p);
    if (abs_ && len && p[len - 1] == '|')
        p[--len] = 0;
    const char *e;
    int64_t v;
    if (*p == '-' && parse_num(p + 1, &e, &v) && *e == 0) {
        o->kind = SG_SASS_OP_IMM;
        o->imm = -v;
    } else if (parse_num(p, &e, &v) && *e == 0) {
        o->kind = SG_SASS_OP_IMM;
        o->imm = v;
    } else if (parse_reg(p, &e, o) && *e == 0) {
        /* kind set (REG, or OTHER for a sub-word register) */
    } else if (parse_pred(p, &e, o) && *e == 0) {
    } else if (!strncmp(p, "SR_", 3) || !strncmp(p, "SRZ", 3)) {
        o->kind = SG_SASS_OP_SREG;
        o->sreg = sreg_atom(p, len);
        o->reg = !strcmp(p, "SRZ") ? 1 : 0; /* CS2R R, SRZ: zero */
    } else if ((p[0] == 'c' || (p[0] == 'c' && p[1] == 'x')) && strchr(p, '[')) {
        /* c[0x0][0x210], c[0x0][RZ], c[0x0][R2+0x10], cx[UR4][...] */
        char *b1 = strchr(p, '['), *e1 = b1 ? strchr(b1, ']') : NULL;
        char *b2 = e1 ? strchr(e1, '[') : NULL, *e2 = b2 ? strrchr(b2, ']') : NULL;
        if (p[1] != '[' || !e1 || !b2 || !e2 || b2 != e1 + 1 || e2[1] != 0)
            return;
        int64_t bank;
        if (!parse_num(b1 + 1, &e, &bank) || e != e1)
            return;
        sg_sass_operand_t m = {0};
        parse_mem(b2 + 1, (size_t)(e2 - b2 - 1), &m);
        if (m.kind != SG_SASS_OP_MEM || m.reg2 != 0xffff)
            return;
        o->kind = SG_SASS_OP_CBANK;
        o->reg2 = (uint16_t)(bank & 0xffff);
        /* c[0x0][RZ] is offset 0 */
        o->reg = (m.reg == 255 && !m.uniform) || (m.reg == 63 && m.uniform) ? 0xffff : m.reg;
        o->uniform = m.uniform;
        o->imm = m.imm;
    } else if (p[0] == '[' || !strncmp(p, "desc[", 5) || !strncmp(p, "gdesc[", 6)) {
        char *b = p;
        if (p[0] != '[') {
            char *d = strchr(p, ']');
            if (!d || d[1] != '[')
                return;
            b = d + 1;
        }
        char *c = strrchr(b, ']');
        if (!c || c[1] != 0)
            return;
        parse_mem(b + 1, (size_t)(c - b - 1), o);
    } else if (p[0] == '`' && p[1] == '(') {
        char *c = strchr(p, ')');
        if (!c)
            return;
        *c = 0;
        o->kind = SG_SASS_OP_LABEL;
        o->imm = -1;
        parser_t *q = ps;
        if (grow((void **)&q->fixes, &q->cap_fixes, q->n_fixes + 1, sizeof *q->fixes) == 0) {
            char *nm = strdup(p + 2);
            if (nm) {
                q->fixes[q->n_fixes].insn = insn;
                q->fixes[q->n_fixes].func = q->cur_func;
                q->fixes[q->n_fixes].op = idx;
                q->fixes[q->n_fixes].name = nm;
                q->n_fixes++;
            }
        }
    } else if (isdigit((unsigned char)p[0]) || (p[0] == '-' && isdigit((unsigned char)p[1]))) {
        char *fe;
        double d = strtod(p, &fe);
        if (*fe == 0) {
            o->kind = SG_SASS_OP_FIMM;
            o->fimm = d;
        }
    } else if (!strcmp(p, "+INF") || !strcmp(p, "-INF") || !strcmp(p, "+QNAN")) {
        o->kind = SG_SASS_OP_FIMM;
        o->fimm = 0.0 / 0.0; /* not a value we use */
    }
    o->neg = neg;
    o->inv = inv;
    o->abs = abs_;
}

/* Split "OP a, b, c" (after the guard) into opcode and operands. Commas
 * inside brackets do not split. */
static void parse_insn_body(parser_t *ps, uint32_t idx, sg_sass_insn_t *in, const char *s,
                            size_t n)
{
    size_t i = 0;
    while (i < n && isspace((unsigned char)s[i]))
        i++;
    size_t k = 0;
    while (i + k < n && is_ident((unsigned char)s[i + k]))
        k++;
    if (k == 0 || k >= sizeof in->op) {
        strcpy(in->op, "?");
        return;
    }
    memcpy(in->op, s + i, k);
    in->op[k] = 0;
    i += k;
    while (i < n) {
        while (i < n && isspace((unsigned char)s[i]))
            i++;
        if (i >= n)
            break;
        size_t st = i;
        int depth = 0;
        while (i < n && (depth > 0 || s[i] != ',')) {
            if (s[i] == '[' || s[i] == '(')
                depth++;
            else if ((s[i] == ']' || s[i] == ')') && depth > 0)
                depth--;
            i++;
        }
        if (in->n_ops < SG_SASS_MAX_OPERANDS) {
            parse_operand(ps, idx, in->n_ops, s + st, i - st, &in->ops[in->n_ops]);
            in->n_ops++;
        } else {
            strcpy(in->op, "?"); /* more operands than we keep: do not half-model it */
            return;
        }
        if (i < n)
            i++; /* the comma */
    }
}

static int add_label(parser_t *ps, const char *name, size_t n, uint32_t func, uint32_t pc)
{
    int rc = grow((void **)&ps->labels, &ps->cap_labels, ps->n_labels + 1, sizeof *ps->labels);
    if (rc)
        return rc;
    char *nm = strndup(name, n);
    if (!nm)
        return SG_ENOMEM;
    ps->labels[ps->n_labels].name = nm;
    ps->labels[ps->n_labels].func = func;
    ps->labels[ps->n_labels].pc = pc;
    ps->n_labels++;
    return 0;
}

static int cmp_label(const void *a, const void *b)
{
    return strcmp(((const label_t *)a)->name, ((const label_t *)b)->name);
}

static void resolve_labels(parser_t *ps)
{
    sg_sass_listing_t *l = ps->l;
    if (ps->n_labels)
        qsort(ps->labels, ps->n_labels, sizeof *ps->labels, cmp_label);
    for (uint32_t i = 0; i < ps->n_fixes; i++) {
        label_t key = {.name = ps->fixes[i].name};
        label_t *hit = ps->n_labels ? bsearch(&key, ps->labels, ps->n_labels, sizeof *ps->labels,
                                              cmp_label)
                                    : NULL;
        sg_sass_insn_t *in = &l->insns[ps->fixes[i].insn];
        /* only a label of the same section: a name of another function
         * stays unresolved (-1), which the analysis treats as leaving the
         * kernel */
        if (hit && hit->func == ps->fixes[i].func)
            in->ops[ps->fixes[i].op].imm = hit->pc;
    }
}

int sg_sass_parse(const char *text, size_t len, sg_sass_listing_t *out, char *err, size_t errlen)
{
    if (!out || (!text && len))
        return SG_EINVAL;
    memset(out, 0, sizeof *out);
    if (len > MAX_TEXT) {
        seterr(err, errlen, "listing larger than 1 GiB", 0);
        return SG_ELIMIT;
    }
    parser_t ps = {.l = out, .cur_func = UINT32_MAX};
    int rc = 0;
    size_t line_no = 0;
    uint32_t cur_func = UINT32_MAX;
    size_t pos = 0;
    while (pos < len && rc == 0) {
        size_t st = pos;
        while (pos < len && text[pos] != '\n' && text[pos] != 0)
            pos++;
        size_t n = pos - st;
        const char *s = text + st;
        pos++; /* past '\n' (or a NUL, treated as a line end) */
        line_no++;
        while (n && isspace((unsigned char)*s))
            s++, n--;
        while (n && isspace((unsigned char)s[n - 1]))
            n--;
        if (n == 0 || n > MAX_LINE)
            continue;
        /* VLIW pairs print as "{ OP ... ;" and "OP ... }" */
        if (*s == '{') {
            s++, n--;
            while (n && isspace((unsigned char)*s))
                s++, n--;
            if (n == 0)
                continue;
        }
        if (n >= 4 && s[0] == '/' && s[1] == '*' && isxdigit((unsigned char)s[2])) {
            const char *e = s + 2;
            uint64_t pc = 0;
            int digits = 0;
            while (e < s + n && isxdigit((unsigned char)*e) && digits < 16) {
                int c = tolower((unsigned char)*e);
                pc = pc * 16 + (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
                e++, digits++;
            }
            if (e + 2 > s + n || e[0] != '*' || e[1] != '/' || pc > UINT32_MAX)
                continue;
            e += 2;
            const char *end = s + n;
            /* the statement ends at ';' (or '}' for the second half of a pair) */
            const char *semi = memchr(e, ';', (size_t)(end - e));
            if (!semi) {
                const char *br = memchr(e, '}', (size_t)(end - e));
                if (!br)
                    continue; /* a data line (.byte, .word): not code */
                semi = br;
            }
            if (out->n_insns >= MAX_INSNS) {
                seterr(err, errlen, "more than 16M instructions", line_no);
                rc = SG_ELIMIT;
                break;
            }
            rc = grow((void **)&out->insns, &ps.cap_insns, out->n_insns + 1, sizeof *out->insns);
            if (rc)
                break;
            sg_sass_insn_t *in = &out->insns[out->n_insns];
            memset(in, 0, sizeof *in);
            in->pc = (uint32_t)pc;
            in->guard = -1;
            while (e < semi && (isspace((unsigned char)*e) || *e == '{'))
                e++;
            if (e < semi && *e == '@') {
                const char *g = e + 1;
                bool neg = false;
                if (g < semi && *g == '!')
                    neg = true, g++;
                sg_sass_operand_t po = {0};
                const char *ge;
                if (parse_pred(g, &ge, &po)) {
                    if (po.reg != 7) {
                        in->guard = (int8_t)po.reg;
                        in->guard_neg = neg;
                        in->guard_uniform = po.uniform;
                    } else if (neg) {
                        in->guard = 7; /* @!PT: never executes */
                        in->guard_neg = true;
                    }
                    e = ge;
                } else {
                    strcpy(in->op, "?");
                    e = semi;
                }
            }
            if (e < semi)
                parse_insn_body(&ps, out->n_insns, in, e, (size_t)(semi - e));
            else if (!in->op[0])
                strcpy(in->op, "?");
            out->n_insns++;
            if (cur_func != UINT32_MAX)
                out->funcs[cur_func].count++;
            continue;
        }
        if (s[n - 1] == ':' && n > 1) {
            size_t k = n - 1;
            if (k > 7 && !strncmp(s, ".text.", 6)) {
                rc = grow((void **)&out->funcs, &ps.cap_funcs, out->n_funcs + 1,
                          sizeof *out->funcs);
                if (rc)
                    break;
                char *nm = strndup(s + 6, k - 6);
                if (!nm) {
                    rc = SG_ENOMEM;
                    break;
                }
                cur_func = out->n_funcs++;
                ps.cur_func = cur_func;
                out->funcs[cur_func].name = nm;
                out->funcs[cur_func].first = out->n_insns;
                out->funcs[cur_func].count = 0;
                continue;
            }
            bool ok = true;
            for (size_t i = 0; i < k; i++)
                if (!is_ident((unsigned char)s[i]))
                    ok = false;
            if (ok) {
                /* The label's pc is that of the next instruction: the pc printed
                 * on it is not there, so take the running pc of this section. */
                uint32_t pc = 0;
                if (out->n_insns && (cur_func == UINT32_MAX || out->funcs[cur_func].count))
                    pc = out->insns[out->n_insns - 1].pc + 16;
                rc = add_label(&ps, s, k, cur_func, pc);
            }
        }
    }
    if (rc == 0)
        resolve_labels(&ps);
    /* labels of functions inside a section (not branch targets .L_x_N) */
    uint32_t cap_syms = 0;
    for (uint32_t i = 0; rc == 0 && i < ps.n_labels; i++) {
        if (ps.labels[i].func == UINT32_MAX || !strncmp(ps.labels[i].name, ".L", 2))
            continue;
        if ((rc = grow((void **)&out->syms, &cap_syms, out->n_syms + 1, sizeof *out->syms)))
            break;
        out->syms[out->n_syms].name = ps.labels[i].name;
        out->syms[out->n_syms].func = ps.labels[i].func;
        out->syms[out->n_syms].pc = ps.labels[i].pc;
        out->n_syms++;
        ps.labels[i].name = NULL;
    }
    for (uint32_t i = 0; i < ps.n_labels; i++)
        free(ps.labels[i].name);
    free(ps.labels);
    for (uint32_t i = 0; i < ps.n_fixes; i++)
        free(ps.fixes[i].name);
    free(ps.fixes);
    if (rc) {
        if (rc == SG_ENOMEM)
            seterr(err, errlen, "out of memory", line_no);
        sg_sass_listing_free(out);
    }
    return rc;
}

void sg_sass_listing_free(sg_sass_listing_t *l)
{
    if (!l)
        return;
    for (uint32_t i = 0; i < l->n_funcs; i++)
        free(l->funcs[i].name);
    free(l->funcs);
    free(l->insns);
    for (uint32_t i = 0; i < l->n_syms; i++)
        free(l->syms[i].name);
    free(l->syms);
    memset(l, 0, sizeof *l);
}
