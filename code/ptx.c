/* ptx.c: the PTX parser (see ptx.h): a recursive-descent reader over the
 * tokens of ptx_lex.c that builds the module IR in one arena.
 *
 * Errors leave the parser through one longjmp to sg_ptx_parse, which frees
 * everything; all temporary vectors live in the parser state so that path
 * leaks nothing. Names are resolved while parsing (registers, parameters,
 * variables, in block scope), except labels and symbols declared later,
 * which are resolved at the end of their function or of the module.
 */
#include "ptx.h"

#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "ptx_internal.h"

/* ---- arena ------------------------------------------------------------------ */

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t cap, pos;
    _Alignas(16) unsigned char data[];
} arena_chunk_t;

struct sg_ptx_arena {
    arena_chunk_t *head;
    uint64_t used, limit;
    bool over;
};

struct sg_ptx_arena *sg_ptx_arena_create(uint64_t limit)
{
    struct sg_ptx_arena *a = calloc(1, sizeof(*a));
    if (a) a->limit = limit;
    return a;
}

void sg_ptx_arena_destroy(struct sg_ptx_arena *a)
{
    if (!a) return;
    for (arena_chunk_t *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a);
}

void *sg_ptx_arena_alloc(struct sg_ptx_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    arena_chunk_t *c = a->head;
    if (!c || c->cap - c->pos < n) {
        size_t cap = n > (64u << 10) ? n : (64u << 10);
        if (a->used + cap + sizeof(*c) > a->limit) {
            a->over = true;
            return NULL;
        }
        c = malloc(sizeof(*c) + cap);
        if (!c) return NULL;
        c->cap = cap;
        c->pos = 0;
        c->next = a->head;
        a->head = c;
        a->used += cap + sizeof(*c);
    }
    void *p = c->data + c->pos;
    c->pos += n;
    memset(p, 0, n);
    return p;
}

bool sg_ptx_arena_over_limit(const struct sg_ptx_arena *a)
{
    return a->over;
}

/* ---- tables ------------------------------------------------------------------ */

static const char *const type_names[SG_PTX_T_COUNT] = {
    "", ".b8", ".b16", ".b32", ".b64", ".b128", ".u8", ".u16", ".u32", ".u64",
    ".s8", ".s16", ".s32", ".s64", ".f16", ".f16x2", ".bf16", ".bf16x2", ".tf32",
    ".f32", ".f64", ".e4m3", ".e5m2", ".e4m3x2", ".e5m2x2", ".pred",
    ".texref", ".samplerref", ".surfref"};
static const uint8_t type_sizes[SG_PTX_T_COUNT] = {
    0, 1, 2, 4, 8, 16, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 2, 4, 4, 4, 8, 1, 1, 2, 2, 0, 0, 0, 0};

const char *sg_ptx_type_name(sg_ptx_type_t t)
{
    return (unsigned)t < SG_PTX_T_COUNT ? type_names[t] : "";
}

uint32_t sg_ptx_type_size(sg_ptx_type_t t)
{
    return (unsigned)t < SG_PTX_T_COUNT ? type_sizes[t] : 0;
}

bool sg_ptx_type_is_int(sg_ptx_type_t t)
{
    return t >= SG_PTX_T_B8 && t <= SG_PTX_T_S64;
}

bool sg_ptx_type_is_signed(sg_ptx_type_t t)
{
    return t >= SG_PTX_T_S8 && t <= SG_PTX_T_S64;
}

bool sg_ptx_type_is_float(sg_ptx_type_t t)
{
    return t >= SG_PTX_T_F16 && t <= SG_PTX_T_E5M2X2;
}

static sg_ptx_type_t type_from(const char *s, size_t n)
{
    for (int t = 1; t < SG_PTX_T_COUNT; t++)
        if (strlen(type_names[t]) == n && memcmp(type_names[t], s, n) == 0)
            return (sg_ptx_type_t)t;
    return SG_PTX_T_NONE;
}

static const char *const space_names[SG_PTX_SPACE_COUNT] = {
    "", ".reg", ".sreg", ".const", ".global", ".local", ".param", ".shared",
    ".shared::cluster", ".tex"};

const char *sg_ptx_space_name(sg_ptx_space_t s)
{
    return (unsigned)s < SG_PTX_SPACE_COUNT ? space_names[s] : "";
}

static sg_ptx_space_t space_from(const char *s, size_t n)
{
#define SP(str, v)                                                                                 \
    if (n == sizeof(str) - 1 && memcmp(s, str, n) == 0) return v
    SP(".global", SG_PTX_SPACE_GLOBAL);
    SP(".shared", SG_PTX_SPACE_SHARED);
    SP(".shared::cta", SG_PTX_SPACE_SHARED);
    SP(".shared::cluster", SG_PTX_SPACE_SHARED_CLUSTER);
    SP(".local", SG_PTX_SPACE_LOCAL);
    SP(".param", SG_PTX_SPACE_PARAM);
    SP(".param::entry", SG_PTX_SPACE_PARAM);
    SP(".param::func", SG_PTX_SPACE_PARAM);
    SP(".const", SG_PTX_SPACE_CONST);
    SP(".tex", SG_PTX_SPACE_TEX);
#undef SP
    return SG_PTX_SPACE_NONE;
}

/* Sorted by name (the enum is in the same order; a unit test checks it). */
static const char *const opcode_names[SG_PTX_OP_COUNT] = {
    "", "abs", "activemask", "add", "addc", "alloca", "and", "applypriority", "atom", "bar",
    "barrier", "bfe", "bfi", "bfind", "bra", "brev", "brkpt", "brx", "call", "clz", "cnot",
    "copysign", "cos", "cp", "createpolicy", "cvt", "cvta", "discard", "div", "dp2a", "dp4a",
    "elect", "ex2", "exit", "fence", "fma", "fns", "getctarank", "griddepcontrol", "isspacep",
    "ld", "ldmatrix", "ldu", "lg2", "lop3", "mad", "mad24", "madc", "mapa", "match", "max",
    "mbarrier", "membar", "min", "mma", "mov", "mul", "mul24", "multimem", "nanosleep", "neg",
    "not", "or", "pmevent", "popc", "prefetch", "prefetchu", "prmt", "rcp", "red", "redux",
    "rem", "ret", "rsqrt", "sad", "selp", "set", "setmaxnreg", "setp", "shf", "shfl", "shl",
    "shr", "sin", "slct", "sqrt", "st", "stackrestore", "stacksave", "stmatrix", "sub", "subc",
    "suld", "suq", "sured", "sust", "szext", "tanh", "tcgen05", "tensormap", "testp", "tex",
    "tld4", "trap", "txq", "vote", "wgmma", "wmma", "xor"};

const char *sg_ptx_opcode_name(sg_ptx_opcode_t op)
{
    return (unsigned)op < SG_PTX_OP_COUNT ? opcode_names[op] : "";
}

static sg_ptx_opcode_t opcode_from(const char *s, size_t n)
{
    int lo = 1, hi = SG_PTX_OP_COUNT - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const char *m = opcode_names[mid];
        size_t ml = strlen(m);
        int c = memcmp(s, m, n < ml ? n : ml);
        if (c == 0) c = (n > ml) - (n < ml);
        if (c == 0) return (sg_ptx_opcode_t)mid;
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return SG_PTX_OP_OTHER;
}

typedef struct {
    const char *name;
    sg_ptx_sreg_t sreg;
    bool has_comp; /* takes .x/.y/.z */
} sreg_entry_t;

static const sreg_entry_t sregs[] = {
    {"%tid", SG_PTX_SREG_TID_X, true},
    {"%ntid", SG_PTX_SREG_NTID_X, true},
    {"%ctaid", SG_PTX_SREG_CTAID_X, true},
    {"%nctaid", SG_PTX_SREG_NCTAID_X, true},
    {"%laneid", SG_PTX_SREG_LANEID, false},
    {"%warpid", SG_PTX_SREG_WARPID, false},
    {"%nwarpid", SG_PTX_SREG_NWARPID, false},
    {"%smid", SG_PTX_SREG_SMID, false},
    {"%nsmid", SG_PTX_SREG_NSMID, false},
    {"%gridid", SG_PTX_SREG_GRIDID, false},
    {"%clock", SG_PTX_SREG_CLOCK, false},
    {"%clock_hi", SG_PTX_SREG_CLOCK, false},
    {"%clock64", SG_PTX_SREG_CLOCK64, false},
    {"%globaltimer", SG_PTX_SREG_GLOBALTIMER, false},
    {"%globaltimer_lo", SG_PTX_SREG_GLOBALTIMER, false},
    {"%globaltimer_hi", SG_PTX_SREG_GLOBALTIMER, false},
    {"%lanemask_eq", SG_PTX_SREG_LANEMASK, false},
    {"%lanemask_le", SG_PTX_SREG_LANEMASK, false},
    {"%lanemask_lt", SG_PTX_SREG_LANEMASK, false},
    {"%lanemask_ge", SG_PTX_SREG_LANEMASK, false},
    {"%lanemask_gt", SG_PTX_SREG_LANEMASK, false},
    {"%dynamic_smem_size", SG_PTX_SREG_DYNAMIC_SMEM_SIZE, false},
    {"%total_smem_size", SG_PTX_SREG_TOTAL_SMEM_SIZE, false},
    {"%aggr_smem_size", SG_PTX_SREG_AGGR_SMEM_SIZE, false},
    {"%cluster_ctaid", SG_PTX_SREG_CLUSTER, true},
    {"%cluster_nctaid", SG_PTX_SREG_CLUSTER, true},
    {"%cluster_ctarank", SG_PTX_SREG_CLUSTER, false},
    {"%cluster_nctarank", SG_PTX_SREG_CLUSTER, false},
    {"%clusterid", SG_PTX_SREG_CLUSTER, true},
    {"%nclusterid", SG_PTX_SREG_CLUSTER, true},
    {"%is_explicit_cluster", SG_PTX_SREG_CLUSTER, false},
    {"%current_graph_exec", SG_PTX_SREG_OTHER, false},
    {"%reserved_smem_offset_begin", SG_PTX_SREG_OTHER, false},
    {"%reserved_smem_offset_end", SG_PTX_SREG_OTHER, false},
    {"%reserved_smem_offset_cap", SG_PTX_SREG_OTHER, false},
};

/* Special register named s[0..n), or -1. Numbered families (%envregN,
 * %pmN, %pmN_64, %reserved_smem_offset_N) are matched by prefix. */
static int sreg_lookup(const char *s, size_t n, bool *has_comp)
{
    *has_comp = false;
    if (n < 3 || s[0] != '%') return -1;
    for (size_t i = 0; i < sizeof(sregs) / sizeof(sregs[0]); i++) {
        if (strlen(sregs[i].name) == n && memcmp(sregs[i].name, s, n) == 0) {
            *has_comp = sregs[i].has_comp;
            return (int)i;
        }
    }
    *has_comp = false;
    struct {
        const char *prefix;
        sg_ptx_sreg_t sreg;
    } fam[] = {{"%envreg", SG_PTX_SREG_ENVREG},
               {"%pm", SG_PTX_SREG_PM},
               {"%reserved_smem_offset_", SG_PTX_SREG_OTHER}};
    for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
        size_t pl = strlen(fam[i].prefix);
        if (n > pl && memcmp(s, fam[i].prefix, pl) == 0 && s[pl] >= '0' && s[pl] <= '9') {
            size_t j = pl;
            while (j < n && s[j] >= '0' && s[j] <= '9') j++;
            if (j == n || (fam[i].sreg == SG_PTX_SREG_PM && n - j == 3 && !memcmp(s + j, "_64", 3)))
                return 1000 + (int)fam[i].sreg;
        }
    }
    return -1;
}

void sg_ptx_limits_default(sg_ptx_limits_t *lim)
{
    lim->max_bytes = 256u << 20;
    lim->max_statements = 8u << 20;
    lim->max_depth = 64;
    lim->max_operands = 512;
    lim->max_registers = 4u << 20;
    lim->max_functions = 1u << 20;
    lim->max_memory = 4ull << 30;
}

/* ---- names: open addressing, with a block-scope undo log ---------------------- */

typedef enum {
    NAME_NONE = 0,
    NAME_REG,       /* single register: idx = id */
    NAME_REG_RANGE, /* idx = reg decl index */
    NAME_PARAM,
    NAME_RET,
    NAME_LOCAL_VAR,
    NAME_MODULE_VAR,
    NAME_FUNC,
    NAME_LABEL,
} name_kind_t;

typedef struct {
    const char *key; /* arena string */
    uint32_t len;
    uint32_t hash;
    name_kind_t kind;
    uint32_t idx;
} name_slot_t;

typedef struct {
    name_slot_t *slots;
    uint32_t cap, used;
} names_t;

typedef struct {
    const char *key; /* the slot's key (arena string): slots move when the table grows */
    uint32_t len, depth, idx;
    name_kind_t kind;
} undo_t;

static uint32_t hash_str(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static name_slot_t *names_find(const names_t *t, const char *s, size_t n, uint32_t h)
{
    if (!t->cap) return NULL;
    for (uint32_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        name_slot_t *e = &t->slots[i];
        if (!e->key) return NULL;
        if (e->hash == h && e->len == n && memcmp(e->key, s, n) == 0) return e;
    }
}

/* ---- parser state --------------------------------------------------------------- */

typedef struct {
    void *data;
    uint32_t n, cap;
    size_t elem;
} vec_t;

typedef struct {
    jmp_buf jmp;
    sg_ptx_error_t *err;
    sg_ptx_limits_t lim;
    sg_lexer_t lx;
    sg_tok_t tok;       /* current token */
    sg_tok_t nxt;       /* one-token look-ahead, valid when have_nxt */
    bool have_nxt;
    sg_ptx_module_t *m;
    struct sg_ptx_arena *a;
    const char *src;
    locale_t cloc;
    uint32_t depth;     /* block/expression nesting for the limit */
    uint32_t total_stmts;
    /* module-level collections */
    vec_t mvars, funcs;
    names_t mnames;
    /* the function being parsed */
    sg_ptx_func_t *fn;  /* points into funcs.data while parsing it */
    uint32_t fn_index;
    vec_t stmts, params, rets, regdecls, fvars, labels, dirs;
    names_t fnames;
    vec_t undo;         /* undo_t */
    uint32_t block_depth;
    vec_t scratch;      /* sg_ptx_operand_t stack for composite operands */
    vec_t mods;         /* const char * */
    vec_t pending;      /* sg_ptx_operand_t * awaiting labels/later symbols */
    vec_t mpending;     /* operands awaiting module-level symbols (after the module) */
    vec_t fpending_fn;  /* function index of each mpending entry (uint32_t) */
} parser_t;

static void fail_at(parser_t *p, int code, uint32_t line, uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6), noreturn));

static void fail_at(parser_t *p, int code, uint32_t line, uint32_t col, const char *fmt, ...)
{
    if (p->err) {
        char msg[160];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        p->err->code = code;
        p->err->line = line;
        p->err->column = col;
        if (line)
            snprintf(p->err->message, sizeof p->err->message, "%u:%u: %s", line, col, msg);
        else
            snprintf(p->err->message, sizeof p->err->message, "%s", msg);
    }
    longjmp(p->jmp, code);
}

#define FAIL(p, ...) fail_at(p, SG_EFORMAT, (p)->tok.line, (p)->tok.col, __VA_ARGS__)

static void oom(parser_t *p)
{
    if (sg_ptx_arena_over_limit(p->a))
        fail_at(p, SG_ELIMIT, p->tok.line, p->tok.col, "PTX needs more than %llu bytes of IR",
                (unsigned long long)p->lim.max_memory);
    fail_at(p, SG_ENOMEM, p->tok.line, p->tok.col, "out of memory");
}

static void *alloc(parser_t *p, size_t n)
{
    void *q = sg_ptx_arena_alloc(p->a, n);
    if (!q) oom(p);
    return q;
}

static void *vec_push(parser_t *p, vec_t *v)
{
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 16;
        if (cap < v->cap) oom(p);
        void *d = realloc(v->data, (size_t)cap * v->elem);
        if (!d) oom(p);
        v->data = d;
        v->cap = cap;
    }
    void *e = (char *)v->data + (size_t)v->n++ * v->elem;
    memset(e, 0, v->elem);
    return e;
}

static void *vec_at(const vec_t *v, uint32_t i)
{
    return (char *)v->data + (size_t)i * v->elem;
}

/* Copies the vector into the arena (NULL when empty) and empties it. */
static void *vec_finish(parser_t *p, vec_t *v, uint32_t *n)
{
    *n = v->n;
    void *out = NULL;
    if (v->n) {
        out = alloc(p, (size_t)v->n * v->elem);
        memcpy(out, v->data, (size_t)v->n * v->elem);
    }
    v->n = 0;
    return out;
}

static char *str_dup(parser_t *p, const char *s, size_t n)
{
    char *d = alloc(p, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static void names_grow(parser_t *p, names_t *t)
{
    uint32_t cap = t->cap ? t->cap * 2 : 64;
    name_slot_t *s = calloc(cap, sizeof(*s));
    if (!s) oom(p);
    for (uint32_t i = 0; i < t->cap; i++) {
        name_slot_t *e = &t->slots[i];
        if (!e->key) continue;
        uint32_t j = e->hash & (cap - 1);
        while (s[j].key) j = (j + 1) & (cap - 1);
        s[j] = *e;
    }
    free(t->slots);
    t->slots = s;
    t->cap = cap;
}

/* The slot of name s (inserted empty if absent). */
static name_slot_t *names_slot(parser_t *p, names_t *t, const char *s, size_t n)
{
    uint32_t h = hash_str(s, n);
    name_slot_t *e = names_find(t, s, n, h);
    if (e) return e;
    if ((t->used + 1) * 2 > t->cap) names_grow(p, t);
    uint32_t i = h & (t->cap - 1);
    while (t->slots[i].key) i = (i + 1) & (t->cap - 1);
    e = &t->slots[i];
    e->key = str_dup(p, s, n);
    e->len = (uint32_t)n;
    e->hash = h;
    e->kind = NAME_NONE;
    t->used++;
    return e;
}

static void names_clear(names_t *t)
{
    free(t->slots);
    t->slots = NULL;
    t->cap = t->used = 0;
}

/* Declare a function-scope name (register, parameter, variable) at the
 * current block depth; inside a { } block it shadows an outer one until the
 * block closes. Labels are declared at the end of the body (declare_labels). */
static void declare_fn(parser_t *p, const char *s, size_t n, name_kind_t kind, uint32_t idx,
                       const sg_tok_t *at)
{
    name_slot_t *e = names_slot(p, &p->fnames, s, n);
    if (e->kind != NAME_NONE && p->block_depth == 0)
        fail_at(p, SG_EFORMAT, at->line, at->col, "'%.*s' is declared twice", (int)n, s);
    if (p->block_depth > 0) {
        undo_t *u = vec_push(p, &p->undo);
        u->key = e->key;
        u->len = e->len;
        u->depth = p->block_depth;
        u->kind = e->kind;
        u->idx = e->idx;
    }
    e->kind = kind;
    e->idx = idx;
}

/* Restore what the declarations of the closing block shadowed. */
static void close_scope(parser_t *p)
{
    while (p->undo.n) {
        undo_t *u = vec_at(&p->undo, p->undo.n - 1);
        if (u->depth < p->block_depth) break;
        name_slot_t *e = names_find(&p->fnames, u->key, u->len, hash_str(u->key, u->len));
        if (e) {
            e->kind = u->kind;
            e->idx = u->idx;
        }
        p->undo.n--;
    }
}

/* ---- tokens ------------------------------------------------------------------------ */

static void next(parser_t *p)
{
    if (p->have_nxt) {
        p->tok = p->nxt;
        p->have_nxt = false;
    } else {
        p->tok = sg_lex_next(&p->lx);
    }
    if (p->tok.kind == SG_TOK_ERROR)
        FAIL(p, "%s", p->lx.error ? p->lx.error : "bad token");
}

static const sg_tok_t *peek(parser_t *p)
{
    if (!p->have_nxt) {
        p->nxt = sg_lex_next(&p->lx);
        p->have_nxt = true;
    }
    return &p->nxt;
}

static bool is_punct(const sg_tok_t *t, char c)
{
    return t->kind == SG_TOK_PUNCT && t->ch == c;
}

static bool tok_is(parser_t *p, const sg_tok_t *t, const char *s)
{
    size_t n = strlen(s);
    return t->len == n && memcmp(p->src + t->off, s, n) == 0;
}

static const char *tok_text(parser_t *p, const sg_tok_t *t)
{
    return p->src + t->off;
}

static void expect_punct(parser_t *p, char c, const char *what)
{
    if (!is_punct(&p->tok, c)) {
        if (p->tok.kind == SG_TOK_EOF) FAIL(p, "unexpected end of PTX: expected '%c' %s", c, what);
        FAIL(p, "expected '%c' %s, found '%.*s'", c, what, (int)(p->tok.len > 40 ? 40 : p->tok.len),
             tok_text(p, &p->tok));
    }
    next(p);
}

static void enter(parser_t *p)
{
    if (++p->depth > p->lim.max_depth)
        fail_at(p, SG_ELIMIT, p->tok.line, p->tok.col, "nesting deeper than %u",
                p->lim.max_depth);
}

static void leave(parser_t *p)
{
    p->depth--;
}

static void count_stmt(parser_t *p)
{
    if (++p->total_stmts > p->lim.max_statements)
        fail_at(p, SG_ELIMIT, p->tok.line, p->tok.col, "more than %u statements",
                p->lim.max_statements);
}

/* Integer token value. */
static uint64_t int_value(parser_t *p, const sg_tok_t *t)
{
    const char *s = tok_text(p, t);
    size_t n = t->len, i = 0;
    if (n && (s[n - 1] == 'U' || s[n - 1] == 'u')) n--;
    unsigned base = 10;
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        i = 2;
    } else if (n > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
        base = 2;
        i = 2;
    } else if (n > 1 && s[0] == '0') {
        base = 8;
        i = 1;
    }
    if (i >= n) fail_at(p, SG_EFORMAT, t->line, t->col, "malformed number");
    uint64_t v = 0;
    for (; i < n; i++) {
        char c = s[i];
        unsigned d = (c >= '0' && c <= '9')   ? (unsigned)(c - '0')
                     : (c >= 'a' && c <= 'f') ? (unsigned)(c - 'a' + 10)
                     : (c >= 'A' && c <= 'F') ? (unsigned)(c - 'A' + 10)
                                              : 99;
        if (d >= base) fail_at(p, SG_EFORMAT, t->line, t->col, "malformed number");
        if (v > (UINT64_MAX - d) / base)
            fail_at(p, SG_EFORMAT, t->line, t->col, "integer does not fit in 64 bits");
        v = v * base + d;
    }
    return v;
}

static uint64_t expect_uint(parser_t *p, const char *what)
{
    if (p->tok.kind != SG_TOK_INT) FAIL(p, "expected an integer %s", what);
    uint64_t v = int_value(p, &p->tok);
    next(p);
    return v;
}

/* ---- constant expressions ------------------------------------------------------------ */

static int64_t cexpr(parser_t *p, int prec);

static int64_t cprimary(parser_t *p)
{
    const sg_tok_t t = p->tok;
    if (t.kind == SG_TOK_INT) {
        next(p);
        return (int64_t)int_value(p, &t);
    }
    if (t.kind == SG_TOK_IDENT && tok_is(p, &t, "WARP_SZ")) {
        next(p);
        return 32;
    }
    if (is_punct(&t, '(')) {
        enter(p);
        next(p);
        int64_t v = cexpr(p, 0);
        expect_punct(p, ')', "to close the expression");
        leave(p);
        return v;
    }
    if (is_punct(&t, '-') || is_punct(&t, '~') || is_punct(&t, '!') || is_punct(&t, '+')) {
        enter(p);
        next(p);
        int64_t v = cprimary(p);
        leave(p);
        if (t.ch == '-') return (int64_t)(0 - (uint64_t)v);
        if (t.ch == '~') return ~v;
        if (t.ch == '!') return !v;
        return v;
    }
    FAIL(p, "expected a constant expression");
}

/* Binary operators by precedence level (0 lowest). */
static int binop_prec(parser_t *p, char *op2)
{
    const sg_tok_t *t = &p->tok;
    *op2 = 0;
    if (t->kind != SG_TOK_PUNCT) return -1;
    switch (t->ch) {
    case '|': return 0;
    case '^': return 1;
    case '&': return 2;
    case '<':
    case '>': {
        const sg_tok_t *n = peek(p);
        if (is_punct(n, t->ch) && n->off == t->off + 1) {
            *op2 = t->ch;
            return 3;
        }
        return -1;
    }
    case '+':
    case '-': return 4;
    case '*':
    case '/':
    case '%': return 5;
    default: return -1;
    }
}

static int64_t cexpr(parser_t *p, int prec)
{
    int64_t l = cprimary(p);
    for (;;) {
        char op2;
        int bp = binop_prec(p, &op2);
        if (bp < prec || bp < 0) return l;
        char op = p->tok.ch;
        next(p);
        if (op2) next(p);
        enter(p);
        int64_t r = cexpr(p, bp + 1);
        leave(p);
        uint64_t ul = (uint64_t)l, ur = (uint64_t)r;
        switch (op) {
        case '|': l = (int64_t)(ul | ur); break;
        case '^': l = (int64_t)(ul ^ ur); break;
        case '&': l = (int64_t)(ul & ur); break;
        case '<': l = ur >= 64 ? 0 : (int64_t)(ul << ur); break;
        case '>': l = ur >= 64 ? (l < 0 ? -1 : 0) : (l >> ur); break;
        case '+': l = (int64_t)(ul + ur); break;
        case '-': l = (int64_t)(ul - ur); break;
        case '*': l = (int64_t)(ul * ur); break;
        case '/':
        case '%':
            if (r == 0) FAIL(p, "division by zero in a constant expression");
            if (l == INT64_MIN && r == -1)
                l = op == '/' ? INT64_MIN : 0;
            else
                l = op == '/' ? l / r : l % r;
            break;
        }
    }
}

/* ---- operands ----------------------------------------------------------------------- */

static sg_ptx_operand_t *scratch_push(parser_t *p)
{
    if (p->scratch.n >= p->lim.max_operands * 4u + 64u)
        fail_at(p, SG_ELIMIT, p->tok.line, p->tok.col, "operand too large");
    return vec_push(p, &p->scratch);
}

/* Resolve an identifier used as an operand: register, special register,
 * function-scope symbol; otherwise left pending (sym_kind NONE). */
static bool lookup_reg(parser_t *p, const char *s, size_t n, uint32_t *id)
{
    uint32_t h = hash_str(s, n);
    name_slot_t *e = names_find(&p->fnames, s, n, h);
    if (e && e->kind == NAME_REG) {
        *id = e->idx;
        return true;
    }
    /* a numbered name from a range declaration: try each split of the digits */
    size_t d = n;
    while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9') d--;
    for (size_t cut = d; cut < n; cut++) {
        if (cut == 0) continue;
        if (s[cut] == '0' && cut + 1 < n) continue; /* %r01 is not %r1 */
        name_slot_t *r = names_find(&p->fnames, s, cut, hash_str(s, cut));
        if (!r || r->kind != NAME_REG_RANGE) continue;
        const sg_ptx_regdecl_t *rd = vec_at(&p->regdecls, r->idx);
        uint64_t num = 0;
        for (size_t i = cut; i < n; i++) {
            num = num * 10 + (uint64_t)(s[i] - '0');
            if (num > UINT32_MAX) break;
        }
        if (num < rd->count) {
            *id = rd->base + (uint32_t)num;
            return true;
        }
    }
    return false;
}

static void resolve_name(parser_t *p, sg_ptx_operand_t *o, const char *s, size_t n,
                         bool in_fn)
{
    uint32_t id;
    if (in_fn && lookup_reg(p, s, n, &id)) {
        o->kind = SG_PTX_OPND_REG;
        o->reg = id;
        return;
    }
    o->kind = SG_PTX_OPND_SYMBOL;
    o->sym = SG_PTX_NONE;
    o->sym_kind = SG_PTX_SYM_NONE;
    if (in_fn) {
        name_slot_t *e = names_find(&p->fnames, s, n, hash_str(s, n));
        if (e) {
            switch (e->kind) {
            case NAME_PARAM: o->sym_kind = SG_PTX_SYM_PARAM; o->sym = e->idx; return;
            case NAME_RET: o->sym_kind = SG_PTX_SYM_RET; o->sym = e->idx; return;
            case NAME_LOCAL_VAR: o->sym_kind = SG_PTX_SYM_LOCAL_VAR; o->sym = e->idx; return;
            default: break;
            }
        }
    }
    /* labels, module symbols: resolved at the end of the function */
}

static void parse_operand(parser_t *p, sg_ptx_operand_t *o, bool call_ctx, bool in_fn);

/* Parses elements up to `close` into the scratch stack and moves them to the arena. */
static void parse_elems(parser_t *p, sg_ptx_operand_t *o, char close, bool call_ctx, bool in_fn)
{
    uint32_t start = p->scratch.n;
    if (!is_punct(&p->tok, close)) {
        for (;;) {
            if (p->scratch.n - start >= p->lim.max_operands)
                fail_at(p, SG_ELIMIT, p->tok.line, p->tok.col, "more than %u elements",
                        p->lim.max_operands);
            sg_ptx_operand_t tmp;
            parse_operand(p, &tmp, call_ctx, in_fn);
            *(sg_ptx_operand_t *)scratch_push(p) = tmp;
            if (!is_punct(&p->tok, ',')) break;
            next(p);
        }
    }
    uint32_t n = p->scratch.n - start;
    if (n) {
        sg_ptx_operand_t *e = alloc(p, (size_t)n * sizeof(*e));
        memcpy(e, vec_at(&p->scratch, start), (size_t)n * sizeof(*e));
        o->elems = e;
        o->n_elems = n;
    }
    p->scratch.n = start;
}

static void parse_float_tok(parser_t *p, sg_ptx_operand_t *o, const sg_tok_t *t, bool neg)
{
    const char *s = tok_text(p, t);
    o->kind = SG_PTX_OPND_FLOAT;
    if (t->kind == SG_TOK_HEXFLOAT) {
        uint64_t bits = 0;
        for (uint32_t i = 2; i < t->len; i++) {
            char c = s[i];
            unsigned d = (c >= '0' && c <= '9') ? (unsigned)(c - '0')
                         : (c >= 'a' && c <= 'f') ? (unsigned)(c - 'a' + 10)
                                                  : (unsigned)(c - 'A' + 10);
            bits = (bits << 4) | d;
        }
        o->fbits = bits;
        if (t->len == 10) {
            uint32_t b32 = (uint32_t)bits;
            float f;
            memcpy(&f, &b32, 4);
            o->fval = f;
            o->fwidth = 32;
        } else {
            double d;
            memcpy(&d, &bits, 8);
            o->fval = d;
            o->fwidth = 64;
        }
    } else {
        char buf[80];
        size_t n = t->len < sizeof buf - 1 ? t->len : sizeof buf - 1;
        memcpy(buf, s, n);
        buf[n] = '\0';
        o->fval = p->cloc ? strtod_l(buf, NULL, p->cloc) : strtod(buf, NULL);
    }
    if (neg) o->fval = -o->fval;
}

static void parse_operand(parser_t *p, sg_ptx_operand_t *o, bool call_ctx, bool in_fn)
{
    memset(o, 0, sizeof(*o));
    o->reg = SG_PTX_NONE;
    o->sym = SG_PTX_NONE;
    uint32_t start = p->tok.off;
    enter(p);
    const sg_tok_t t = p->tok;
    if (is_punct(&t, '!') || (is_punct(&t, '-') && peek(p)->kind == SG_TOK_IDENT &&
                              !tok_is(p, peek(p), "WARP_SZ"))) {
        next(p);
        parse_operand(p, o, call_ctx, in_fn);
        uint32_t e = o->off + o->len;
        o->neg = true;
        o->off = start;
        o->len = e - start;
        leave(p);
        return;
    }
    uint32_t end;
    if (is_punct(&t, '{')) {
        next(p);
        o->kind = SG_PTX_OPND_VECTOR;
        parse_elems(p, o, '}', call_ctx, in_fn);
        end = p->tok.off + p->tok.len;
        expect_punct(p, '}', "to close the vector");
    } else if (is_punct(&t, '[')) {
        next(p);
        o->kind = SG_PTX_OPND_ADDRESS;
        if (p->tok.kind == SG_TOK_IDENT) {
            const sg_tok_t b = p->tok;
            next(p);
            sg_ptx_operand_t base;
            memset(&base, 0, sizeof base);
            bool comp = false;
            int sr = sreg_lookup(tok_text(p, &b), b.len, &comp);
            if (sr >= 0) FAIL(p, "a special register cannot be an address");
            resolve_name(p, &base, tok_text(p, &b), b.len, in_fn);
            o->name = str_dup(p, tok_text(p, &b), b.len);
            if (base.kind == SG_PTX_OPND_REG) {
                o->reg = base.reg;
            } else {
                o->sym_kind = base.sym_kind;
                o->sym = base.sym;
            }
            if (is_punct(&p->tok, '+') || is_punct(&p->tok, '-')) {
                bool minus = p->tok.ch == '-';
                next(p);
                int64_t v = cexpr(p, 0);
                o->ival = minus ? (int64_t)(0 - (uint64_t)v) : v;
            }
        } else {
            o->ival = cexpr(p, 0);
        }
        if (is_punct(&p->tok, ',')) {
            next(p);
            parse_elems(p, o, ']', call_ctx, in_fn);
        }
        end = p->tok.off + p->tok.len;
        expect_punct(p, ']', "to close the address");
    } else if (is_punct(&t, '(') && call_ctx) {
        next(p);
        o->kind = SG_PTX_OPND_LIST;
        parse_elems(p, o, ')', call_ctx, in_fn);
        end = p->tok.off + p->tok.len;
        expect_punct(p, ')', "to close the list");
    } else if (t.kind == SG_TOK_FLOAT || t.kind == SG_TOK_HEXFLOAT) {
        next(p);
        parse_float_tok(p, o, &t, false);
        end = t.off + t.len;
    } else if (is_punct(&t, '-') &&
               (peek(p)->kind == SG_TOK_FLOAT || peek(p)->kind == SG_TOK_HEXFLOAT)) {
        next(p);
        const sg_tok_t f = p->tok;
        next(p);
        parse_float_tok(p, o, &f, true);
        end = f.off + f.len;
    } else if (t.kind == SG_TOK_INT || is_punct(&t, '(') || is_punct(&t, '-') ||
               is_punct(&t, '~') || is_punct(&t, '+') ||
               (t.kind == SG_TOK_IDENT && tok_is(p, &t, "WARP_SZ"))) {
        o->kind = SG_PTX_OPND_INT;
        o->ival = cexpr(p, 0);
        end = 0; /* where the expression's last token ended: found below */
    } else if (t.kind == SG_TOK_IDENT) {
        next(p);
        const char *s = tok_text(p, &t);
        end = t.off + t.len;
        bool has_comp = false;
        int sr = sreg_lookup(s, t.len, &has_comp);
        if (t.len == 1 && s[0] == '_') {
            o->kind = SG_PTX_OPND_SINK;
        } else if (sr >= 0) {
            o->kind = SG_PTX_OPND_SREG;
            o->name = str_dup(p, s, t.len);
            o->sreg = sr >= 1000 ? (sg_ptx_sreg_t)(sr - 1000) : sregs[sr].sreg;
            if (has_comp && p->tok.kind == SG_TOK_DOT && p->tok.len == 2) {
                char c = tok_text(p, &p->tok)[1];
                int k = c == 'x' ? 0 : c == 'y' ? 1 : c == 'z' ? 2 : -1;
                if (k < 0) FAIL(p, "expected .x, .y or .z after %.*s", (int)t.len, s);
                if (o->sreg != SG_PTX_SREG_CLUSTER) o->sreg = (sg_ptx_sreg_t)(o->sreg + k);
                o->comp = (uint8_t)(k + 1);
                end = p->tok.off + p->tok.len;
                next(p);
            } else if (has_comp) {
                FAIL(p, "%.*s needs a component (.x, .y or .z)", (int)t.len, s);
            }
        } else {
            o->name = str_dup(p, s, t.len);
            resolve_name(p, o, s, t.len, in_fn);
            if (o->kind == SG_PTX_OPND_REG && p->tok.kind == SG_TOK_DOT && p->tok.len == 2) {
                char c = tok_text(p, &p->tok)[1];
                int k = c == 'x' || c == 'r' ? 1 : c == 'y' || c == 'g' ? 2
                        : c == 'z' || c == 'b' ? 3 : c == 'w' || c == 'a' ? 4 : 0;
                if (k) {
                    o->comp = (uint8_t)k;
                    end = p->tok.off + p->tok.len;
                    next(p);
                }
            }
            if (o->kind == SG_PTX_OPND_SYMBOL && (is_punct(&p->tok, '+') ||
                                                  (is_punct(&p->tok, '-') &&
                                                   peek(p)->kind == SG_TOK_INT))) {
                bool minus = p->tok.ch == '-';
                next(p);
                int64_t v = cexpr(p, 0);
                o->ival = minus ? (int64_t)(0 - (uint64_t)v) : v;
                end = 0;
            }
        }
    } else if (t.kind == SG_TOK_EOF) {
        FAIL(p, "unexpected end of PTX in an operand");
    } else {
        FAIL(p, "unexpected '%.*s' in an operand", (int)(t.len > 40 ? 40 : t.len),
             tok_text(p, &t));
    }
    if (end == 0) {
        /* ends where the last consumed token ended: scan back over blanks */
        uint32_t e = p->tok.off;
        while (e > start && (p->src[e - 1] == ' ' || p->src[e - 1] == '\t' ||
                             p->src[e - 1] == '\n' || p->src[e - 1] == '\r'))
            e--;
        end = e;
    }
    o->off = start;
    o->len = end > start ? end - start : 0;
    /* a|b destination pairs */
    if ((o->kind == SG_PTX_OPND_REG || o->kind == SG_PTX_OPND_SINK) && is_punct(&p->tok, '|')) {
        next(p);
        sg_ptx_operand_t second;
        parse_operand(p, &second, call_ctx, in_fn);
        if (second.kind != SG_PTX_OPND_REG && second.kind != SG_PTX_OPND_SINK)
            FAIL(p, "expected a register after '|'");
        sg_ptx_operand_t *pair = alloc(p, 2 * sizeof(*pair));
        pair[0] = *o;
        pair[1] = second;
        memset(o, 0, sizeof(*o));
        o->kind = SG_PTX_OPND_PAIR;
        o->reg = SG_PTX_NONE;
        o->sym = SG_PTX_NONE;
        o->elems = pair;
        o->n_elems = 2;
        o->off = start;
        o->len = second.off + second.len - start;
    }
    leave(p);
}

/* Register every operand still naming an unresolved symbol. */
static void collect_pending(parser_t *p, const sg_ptx_operand_t *ops, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        const sg_ptx_operand_t *o = &ops[i];
        if ((o->kind == SG_PTX_OPND_SYMBOL ||
             (o->kind == SG_PTX_OPND_ADDRESS && o->name && o->reg == SG_PTX_NONE)) &&
            o->sym_kind == SG_PTX_SYM_NONE) {
            *(const sg_ptx_operand_t **)vec_push(p, &p->pending) = o;
        }
        if (o->n_elems) collect_pending(p, o->elems, o->n_elems);
    }
}

/* ---- declarations ------------------------------------------------------------------- */

static sg_ptx_linkage_t linkage_from(parser_t *p, const sg_tok_t *t)
{
    if (tok_is(p, t, ".visible")) return SG_PTX_LINK_VISIBLE;
    if (tok_is(p, t, ".extern")) return SG_PTX_LINK_EXTERN;
    if (tok_is(p, t, ".weak")) return SG_PTX_LINK_WEAK;
    if (tok_is(p, t, ".common")) return SG_PTX_LINK_COMMON;
    return SG_PTX_LINK_NONE;
}

/* Skips a balanced ( ... ) starting at the current '('. */
static void skip_parens(parser_t *p)
{
    int d = 0;
    do {
        if (p->tok.kind == SG_TOK_EOF) FAIL(p, "unexpected end of PTX inside ( )");
        if (is_punct(&p->tok, '(')) {
            if (++d > (int)p->lim.max_depth) FAIL(p, "nesting too deep");
        }
        if (is_punct(&p->tok, ')')) d--;
        next(p);
    } while (d > 0);
}

/* `.attribute( ... )`: only .managed is recorded. */
static bool parse_attribute(parser_t *p, bool *managed)
{
    if (!tok_is(p, &p->tok, ".attribute")) return false;
    next(p);
    if (!is_punct(&p->tok, '(')) FAIL(p, "expected '(' after .attribute");
    uint32_t from = p->tok.off;
    skip_parens(p);
    const char *s = p->src + from;
    size_t n = p->tok.off - from;
    if (managed && memmem(s, n, ".managed", 8)) *managed = true;
    return true;
}

static uint32_t align_up(uint32_t v, uint32_t a)
{
    return a > 1 ? (v + a - 1) / a * a : v;
}

/* The part of a declaration after its state space: [.align N] [.vN] [.ptr ...]
 * type name [dims] — the attributes may come in any order. Fills v. */
static void parse_decl_body(parser_t *p, sg_ptx_var_t *v, bool allow_init)
{
    bool ptr = false;
    v->vec = 1;
    for (;;) {
        if (p->tok.kind == SG_TOK_DOT) {
            const sg_tok_t t = p->tok;
            if (tok_is(p, &t, ".align")) {
                next(p);
                uint64_t a = expect_uint(p, "after .align");
                if (a == 0 || a > (1u << 20) || (a & (a - 1)))
                    fail_at(p, SG_EFORMAT, t.line, t.col, "bad alignment %llu",
                            (unsigned long long)a);
                if (ptr)
                    v->ptr_align = (uint32_t)a;
                else
                    v->align = (uint32_t)a;
                continue;
            }
            if (tok_is(p, &t, ".ptr")) {
                ptr = true;
                next(p);
                continue;
            }
            if (tok_is(p, &t, ".v2") || tok_is(p, &t, ".v4") || tok_is(p, &t, ".v8")) {
                v->vec = (uint32_t)(tok_text(p, &t)[2] - '0');
                next(p);
                continue;
            }
            if (parse_attribute(p, &v->managed)) continue;
            sg_ptx_space_t sp = space_from(tok_text(p, &t), t.len);
            if (ptr && sp != SG_PTX_SPACE_NONE) {
                v->ptr_space = sp;
                next(p);
                continue;
            }
            sg_ptx_type_t ty = type_from(tok_text(p, &t), t.len);
            if (ty != SG_PTX_T_NONE && v->type == SG_PTX_T_NONE) {
                v->type = ty;
                next(p);
                continue;
            }
            FAIL(p, "unexpected '%.*s' in a declaration", (int)(t.len > 40 ? 40 : t.len),
                 tok_text(p, &t));
        }
        break;
    }
    if (v->type == SG_PTX_T_NONE) FAIL(p, "declaration without a type");
    if (p->tok.kind != SG_TOK_IDENT) FAIL(p, "expected a name in the declaration");
    v->name = str_dup(p, tok_text(p, &p->tok), p->tok.len);
    v->line = p->tok.line;
    next(p);
    v->size = (uint64_t)sg_ptx_type_size(v->type) * v->vec;
    bool unsized = false;
    while (is_punct(&p->tok, '[')) {
        if (v->n_dims == 4) FAIL(p, "more than 4 array dimensions");
        next(p);
        uint64_t d = 0;
        if (!is_punct(&p->tok, ']')) {
            int64_t e = cexpr(p, 0);
            if (e <= 0 || e > (int64_t)(1ull << 40)) FAIL(p, "bad array size");
            d = (uint64_t)e;
        } else {
            unsized = true;
        }
        expect_punct(p, ']', "after the array size");
        v->dims[v->n_dims++] = d;
        if (d && v->size > (1ull << 42) / d) FAIL(p, "array too large");
        v->size *= d;
    }
    if (unsized) v->size = 0;
    if (is_punct(&p->tok, '=')) {
        if (!allow_init) FAIL(p, "an initialiser is not allowed here");
        next(p);
        uint32_t from = p->tok.off;
        int d = 0;
        while (!(d == 0 && (is_punct(&p->tok, ',') || is_punct(&p->tok, ';')))) {
            if (p->tok.kind == SG_TOK_EOF) FAIL(p, "unexpected end of PTX in an initialiser");
            if (is_punct(&p->tok, '{') || is_punct(&p->tok, '(')) {
                if (++d > (int)p->lim.max_depth) FAIL(p, "initialiser nested too deep");
            } else if (is_punct(&p->tok, '}') || is_punct(&p->tok, ')')) {
                if (--d < 0) FAIL(p, "unbalanced initialiser");
            }
            uint32_t e = p->tok.off + p->tok.len;
            next(p);
            v->init_len = e - from;
        }
        v->init_off = from;
    }
}

/* One parameter of an entry or function: (.param|.reg) decl-body. */
static void parse_param(parser_t *p, sg_ptx_var_t *v)
{
    v->off = p->tok.off;
    v->line = p->tok.line;
    if (tok_is(p, &p->tok, ".param"))
        v->space = SG_PTX_SPACE_PARAM;
    else if (tok_is(p, &p->tok, ".reg"))
        v->space = SG_PTX_SPACE_REG;
    else
        FAIL(p, "expected .param or .reg in a parameter list");
    next(p);
    parse_decl_body(p, v, false);
    uint32_t e = p->tok.off;
    while (e > v->off && (p->src[e - 1] == ' ' || p->src[e - 1] == '\t' ||
                          p->src[e - 1] == '\n' || p->src[e - 1] == '\r'))
        e--;
    v->len = e - v->off;
}

/* ( param, param ) into vec `into`; returns the span. */
static void parse_param_list(parser_t *p, vec_t *into, uint32_t *off, uint32_t *len)
{
    *off = p->tok.off;
    expect_punct(p, '(', "to open the parameter list");
    if (!is_punct(&p->tok, ')')) {
        for (;;) {
            if (into->n >= 65536) fail_at(p, SG_ELIMIT, p->tok.line, p->tok.col,
                                          "more than 65536 parameters");
            sg_ptx_var_t *v = vec_push(p, into);
            parse_param(p, v);
            if (!is_punct(&p->tok, ',')) break;
            next(p);
        }
    }
    *len = p->tok.off + p->tok.len - *off;
    expect_punct(p, ')', "to close the parameter list");
}

/* Offsets of entry parameters in the parameter buffer: natural alignment
 * (or .align), like a C struct. */
static uint32_t layout_params(sg_ptx_var_t *ps, uint32_t n)
{
    uint64_t off = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t a = ps[i].align ? ps[i].align : sg_ptx_type_size(ps[i].type) * ps[i].vec;
        if (a == 0) a = 1;
        off = align_up((uint32_t)off, a);
        ps[i].param_offset = (uint32_t)off;
        off += ps[i].size;
        if (off > UINT32_MAX / 2) off = UINT32_MAX / 2;
    }
    return (uint32_t)off;
}

/* ---- statements in a body ------------------------------------------------------------ */

static sg_ptx_stmt_t *new_stmt(parser_t *p, sg_ptx_stmt_kind_t kind, const sg_tok_t *first)
{
    count_stmt(p);
    sg_ptx_stmt_t *s = vec_push(p, &p->stmts);
    s->kind = kind;
    s->off = first->off;
    s->line = first->line;
    s->col = first->col;
    s->depth = p->block_depth;
    s->block = SG_PTX_NONE;
    return s;
}

static void end_stmt(parser_t *p, sg_ptx_stmt_t *s, uint32_t end)
{
    s->len = end - s->off;
}

/* Statement pointers move when the vector grows: index-based access. */
#define STMT(p, i) ((sg_ptx_stmt_t *)vec_at(&(p)->stmts, (i)))

static void parse_reg_decl(parser_t *p, const sg_tok_t *first)
{
    uint32_t si = p->stmts.n;
    sg_ptx_stmt_t *s = new_stmt(p, SG_PTX_STMT_REG_DECL, first);
    s->u.decl.first = p->regdecls.n;
    next(p); /* .reg */
    sg_ptx_type_t ty = SG_PTX_T_NONE;
    uint32_t vec = 1;
    while (p->tok.kind == SG_TOK_DOT) {
        if (tok_is(p, &p->tok, ".v2") || tok_is(p, &p->tok, ".v4") || tok_is(p, &p->tok, ".v8")) {
            vec = (uint32_t)(tok_text(p, &p->tok)[2] - '0');
        } else {
            sg_ptx_type_t t = type_from(tok_text(p, &p->tok), p->tok.len);
            if (t == SG_PTX_T_NONE || ty != SG_PTX_T_NONE)
                FAIL(p, "unexpected '%.*s' in .reg", (int)p->tok.len, tok_text(p, &p->tok));
            ty = t;
        }
        next(p);
    }
    if (ty == SG_PTX_T_NONE) FAIL(p, ".reg without a type");
    for (;;) {
        if (p->tok.kind != SG_TOK_IDENT) FAIL(p, "expected a register name");
        const sg_tok_t nm = p->tok;
        next(p);
        uint32_t count = 0;
        if (is_punct(&p->tok, '<')) {
            next(p);
            uint64_t c = expect_uint(p, "in the register range");
            expect_punct(p, '>', "to close the register range");
            if (c == 0) FAIL(p, "empty register range");
            count = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
        }
        uint32_t n = count ? count : 1;
        if (p->fn->n_regs + (uint64_t)n > p->lim.max_registers)
            fail_at(p, SG_ELIMIT, nm.line, nm.col, "more than %u registers in one function",
                    p->lim.max_registers);
        sg_ptx_regdecl_t *rd = vec_push(p, &p->regdecls);
        rd->name = str_dup(p, tok_text(p, &nm), nm.len);
        rd->count = count;
        rd->base = p->fn->n_regs;
        rd->type = ty;
        rd->vec = vec;
        rd->stmt = si;
        p->fn->n_regs += n;
        declare_fn(p, tok_text(p, &nm), nm.len, count ? NAME_REG_RANGE : NAME_REG,
                   count ? p->regdecls.n - 1 : rd->base, &nm);
        if (!is_punct(&p->tok, ',')) break;
        next(p);
    }
    s = STMT(p, si);
    s->u.decl.n = p->regdecls.n - s->u.decl.first;
    end_stmt(p, s, p->tok.off + p->tok.len);
    expect_punct(p, ';', "after .reg");
}

/* .local/.shared/.param/.const/.global/.tex declarations inside a body. */
static void parse_var_decl(parser_t *p, const sg_tok_t *first, sg_ptx_linkage_t link)
{
    uint32_t si = p->stmts.n;
    sg_ptx_stmt_t *s = new_stmt(p, SG_PTX_STMT_VAR_DECL, first);
    s->u.decl.first = p->fvars.n;
    sg_ptx_space_t sp = space_from(tok_text(p, &p->tok), p->tok.len);
    next(p);
    for (;;) {
        sg_ptx_var_t *v = vec_push(p, &p->fvars);
        uint32_t vi = p->fvars.n - 1;
        v->space = sp;
        v->linkage = link;
        v->off = first->off;
        sg_ptx_var_t tmp = *v;
        parse_decl_body(p, &tmp, true);
        v = vec_at(&p->fvars, vi);
        *v = tmp;
        declare_fn(p, v->name, strlen(v->name), NAME_LOCAL_VAR, vi, first);
        if (!is_punct(&p->tok, ',')) break;
        next(p);
    }
    s = STMT(p, si);
    s->u.decl.n = p->fvars.n - s->u.decl.first;
    end_stmt(p, s, p->tok.off + p->tok.len);
    for (uint32_t i = s->u.decl.first; i < p->fvars.n; i++) {
        sg_ptx_var_t *v = vec_at(&p->fvars, i);
        v->len = s->len;
    }
    expect_punct(p, ';', "after the declaration");
}

/* A directive statement kept as text up to ';' (or to the end of the line
 * for .loc/.file, which have none). */
static void parse_directive_stmt(parser_t *p, const sg_tok_t *first)
{
    uint32_t si = p->stmts.n;
    sg_ptx_stmt_t *s = new_stmt(p, SG_PTX_STMT_DIRECTIVE, first);
    s->u.ins.opcode = str_dup(p, tok_text(p, first), first->len);
    s->u.ins.guard = SG_PTX_NONE;
    s->u.ins.vec = 1;
    if (tok_is(p, first, ".loc") || tok_is(p, first, ".file")) {
        p->have_nxt = false;
        sg_lex_skip_line(&p->lx, first);
        uint32_t e = (uint32_t)p->lx.pos;
        while (e > first->off && (p->src[e - 1] == '\r' || p->src[e - 1] == ' ' ||
                                  p->src[e - 1] == '\t'))
            e--;
        s->len = e - first->off;
        next(p);
        return;
    }
    next(p);
    if (tok_is(p, first, ".branchtargets") || tok_is(p, first, ".calltargets")) {
        sg_ptx_operand_t lst;
        memset(&lst, 0, sizeof lst);
        uint32_t start = p->scratch.n;
        for (;;) {
            sg_ptx_operand_t tmp;
            parse_operand(p, &tmp, false, true);
            if (tmp.kind != SG_PTX_OPND_SYMBOL) FAIL(p, "expected a label in %s",
                                                     STMT(p, si)->u.ins.opcode);
            *(sg_ptx_operand_t *)scratch_push(p) = tmp;
            if (p->scratch.n - start > p->lim.max_operands)
                fail_at(p, SG_ELIMIT, p->tok.line, p->tok.col, "too many targets");
            if (!is_punct(&p->tok, ',')) break;
            next(p);
        }
        uint32_t n = p->scratch.n - start;
        sg_ptx_operand_t *ops = alloc(p, (size_t)n * sizeof(*ops));
        memcpy(ops, vec_at(&p->scratch, start), (size_t)n * sizeof(*ops));
        p->scratch.n = start;
        s = STMT(p, si);
        s->u.ins.opnds = ops;
        s->u.ins.n_opnds = n;
        collect_pending(p, ops, n);
    } else {
        int d = 0;
        while (!(d == 0 && is_punct(&p->tok, ';'))) {
            if (p->tok.kind == SG_TOK_EOF) FAIL(p, "unexpected end of PTX in a directive");
            if (is_punct(&p->tok, '(') || is_punct(&p->tok, '{')) {
                if (++d > (int)p->lim.max_depth) FAIL(p, "directive nested too deep");
            }
            if (is_punct(&p->tok, ')') || is_punct(&p->tok, '}')) d--;
            if (d < 0) FAIL(p, "unbalanced directive");
            next(p);
        }
    }
    s = STMT(p, si);
    end_stmt(p, s, p->tok.off + p->tok.len);
    expect_punct(p, ';', "after the directive");
}

static void decode_mods(sg_ptx_instr_t *ins)
{
    ins->vec = 1;
    for (uint32_t i = 0; i < ins->n_mods; i++) {
        const char *m = ins->mods[i];
        size_t n = strlen(m);
        sg_ptx_space_t sp = space_from(m, n);
        if (sp != SG_PTX_SPACE_NONE && ins->space == SG_PTX_SPACE_NONE) {
            ins->space = sp;
            continue;
        }
        if (n == 3 && m[1] == 'v' && (m[2] == '2' || m[2] == '4' || m[2] == '8')) {
            ins->vec = (uint8_t)(m[2] - '0');
            continue;
        }
        sg_ptx_type_t t = type_from(m, n);
        if (t != SG_PTX_T_NONE) {
            if (ins->type == SG_PTX_T_NONE)
                ins->type = t;
            else if (ins->type2 == SG_PTX_T_NONE)
                ins->type2 = t;
        }
    }
}

static void parse_instr(parser_t *p, const sg_tok_t *first)
{
    uint32_t si = p->stmts.n;
    sg_ptx_stmt_t *s = new_stmt(p, SG_PTX_STMT_INSTR, first);
    uint32_t guard = SG_PTX_NONE;
    bool guard_neg = false;
    if (is_punct(&p->tok, '@')) {
        next(p);
        if (is_punct(&p->tok, '!')) {
            guard_neg = true;
            next(p);
        }
        if (p->tok.kind != SG_TOK_IDENT) FAIL(p, "expected a predicate after '@'");
        if (!lookup_reg(p, tok_text(p, &p->tok), p->tok.len, &guard))
            FAIL(p, "undeclared predicate '%.*s'", (int)p->tok.len, tok_text(p, &p->tok));
        next(p);
    }
    if (p->tok.kind != SG_TOK_IDENT)
        FAIL(p, "expected an instruction, found '%.*s'", (int)(p->tok.len > 40 ? 40 : p->tok.len),
             tok_text(p, &p->tok));
    const sg_tok_t op = p->tok;
    next(p);
    p->mods.n = 0;
    while (p->tok.kind == SG_TOK_DOT) {
        if (p->mods.n >= 64) FAIL(p, "more than 64 modifiers");
        *(const char **)vec_push(p, &p->mods) = str_dup(p, tok_text(p, &p->tok), p->tok.len);
        next(p);
    }
    sg_ptx_instr_t ins;
    memset(&ins, 0, sizeof ins);
    ins.opcode = str_dup(p, tok_text(p, &op), op.len);
    ins.op = opcode_from(tok_text(p, &op), op.len);
    ins.guard = guard;
    ins.guard_neg = guard_neg;
    uint32_t nm;
    ins.mods = vec_finish(p, &p->mods, &nm);
    ins.n_mods = nm;
    decode_mods(&ins);
    bool call_ctx = ins.op == SG_PTX_OP_CALL;
    uint32_t start = p->scratch.n;
    if (is_punct(&p->tok, '}') || p->tok.kind == SG_TOK_EOF)
        FAIL(p, "expected ';' after the instruction");
    if (!is_punct(&p->tok, ';')) {
        for (;;) {
            if (p->scratch.n - start >= p->lim.max_operands)
                fail_at(p, SG_ELIMIT, p->tok.line, p->tok.col, "more than %u operands",
                        p->lim.max_operands);
            sg_ptx_operand_t tmp;
            parse_operand(p, &tmp, call_ctx, true);
            *(sg_ptx_operand_t *)scratch_push(p) = tmp;
            if (!is_punct(&p->tok, ',')) break;
            next(p);
        }
    }
    uint32_t n = p->scratch.n - start;
    if (n) {
        sg_ptx_operand_t *ops = alloc(p, (size_t)n * sizeof(*ops));
        memcpy(ops, vec_at(&p->scratch, start), (size_t)n * sizeof(*ops));
        ins.opnds = ops;
        ins.n_opnds = n;
        collect_pending(p, ops, n);
    }
    p->scratch.n = start;
    s = STMT(p, si);
    s->u.ins = ins;
    end_stmt(p, s, p->tok.off + p->tok.len);
    expect_punct(p, ';', "after the instruction");
}

static void parse_body(parser_t *p)
{
    expect_punct(p, '{', "to open the function body");
    p->block_depth = 0;
    for (;;) {
        const sg_tok_t t = p->tok;
        if (t.kind == SG_TOK_EOF) FAIL(p, "unexpected end of PTX: function body not closed");
        if (is_punct(&t, '}')) {
            if (p->block_depth == 0) {
                next(p);
                return;
            }
            sg_ptx_stmt_t *s = new_stmt(p, SG_PTX_STMT_BLOCK_END, &t);
            close_scope(p);
            p->block_depth--;
            s->depth = p->block_depth;
            s->len = 1;
            leave(p);
            next(p);
            continue;
        }
        if (is_punct(&t, '{')) {
            sg_ptx_stmt_t *s = new_stmt(p, SG_PTX_STMT_BLOCK_BEGIN, &t);
            s->len = 1;
            enter(p);
            p->block_depth++;
            next(p);
            continue;
        }
        if (t.kind == SG_TOK_IDENT && is_punct(peek(p), ':')) {
            sg_ptx_stmt_t *s = new_stmt(p, SG_PTX_STMT_LABEL, &t);
            s->u.label = p->labels.n;
            sg_ptx_label_t *l = vec_push(p, &p->labels);
            l->name = str_dup(p, tok_text(p, &t), t.len);
            l->stmt = p->stmts.n - 1;
            l->block = SG_PTX_NONE;
            next(p);
            s = STMT(p, p->stmts.n - 1);
            s->len = p->tok.off + 1 - t.off;
            next(p); /* ':' */
            continue;
        }
        if (t.kind == SG_TOK_DOT) {
            if (tok_is(p, &t, ".reg")) {
                parse_reg_decl(p, &t);
                continue;
            }
            sg_ptx_linkage_t link = linkage_from(p, &t);
            if (link != SG_PTX_LINK_NONE) next(p);
            sg_ptx_space_t sp = space_from(tok_text(p, &p->tok), p->tok.len);
            if (sp != SG_PTX_SPACE_NONE && p->tok.kind == SG_TOK_DOT) {
                parse_var_decl(p, &t, link);
                continue;
            }
            if (link != SG_PTX_LINK_NONE) FAIL(p, "expected a state space after the linkage");
            if (tok_is(p, &t, ".pragma") || tok_is(p, &t, ".loc") || tok_is(p, &t, ".file") ||
                tok_is(p, &t, ".branchtargets") || tok_is(p, &t, ".calltargets") ||
                tok_is(p, &t, ".callprototype") || tok_is(p, &t, ".section")) {
                parse_directive_stmt(p, &t);
                continue;
            }
            FAIL(p, "unexpected directive '%.*s' in a function body", (int)(t.len > 40 ? 40 : t.len),
                 tok_text(p, &t));
        }
        if (is_punct(&t, '@') && is_punct(peek(p), '@')) { /* @@DWARF line */
            p->have_nxt = false;
            sg_lex_skip_line(&p->lx, &t);
            next(p);
            continue;
        }
        parse_instr(p, &t);
    }
}

/* ---- functions -------------------------------------------------------------------- */

static void parse_perf_directives(parser_t *p)
{
    for (;;) {
        const sg_tok_t t = p->tok;
        if (t.kind != SG_TOK_DOT) return;
        bool known = tok_is(p, &t, ".maxntid") || tok_is(p, &t, ".reqntid") ||
                     tok_is(p, &t, ".minnctapersm") || tok_is(p, &t, ".maxnctapersm") ||
                     tok_is(p, &t, ".maxnreg") || tok_is(p, &t, ".reqnctapercluster") ||
                     tok_is(p, &t, ".maxclusterrank") || tok_is(p, &t, ".explicitcluster") ||
                     tok_is(p, &t, ".noreturn") || tok_is(p, &t, ".pragma") ||
                     tok_is(p, &t, ".blocksareclusters");
        if (!known) return;
        if (p->dirs.n >= 64) FAIL(p, "more than 64 directives");
        sg_ptx_directive_t *d = vec_push(p, &p->dirs);
        d->name = str_dup(p, tok_text(p, &t), t.len);
        d->off = t.off;
        uint32_t end = t.off + t.len;
        next(p);
        if (tok_is(p, &t, ".pragma")) {
            while (!is_punct(&p->tok, ';')) {
                if (p->tok.kind == SG_TOK_EOF) FAIL(p, "unexpected end of PTX in .pragma");
                next(p);
            }
            end = p->tok.off + 1;
            next(p);
        } else {
            while (p->tok.kind == SG_TOK_INT) {
                if (d->n_values == 3) FAIL(p, "too many values for %s", d->name);
                end = p->tok.off + p->tok.len;
                d->values[d->n_values++] = int_value(p, &p->tok);
                next(p);
                if (!is_punct(&p->tok, ',')) break;
                next(p);
            }
        }
        d->len = end - d->off;
        sg_ptx_func_t *f = p->fn;
        uint32_t v[3] = {0, 1, 1};
        for (uint32_t i = 0; i < d->n_values; i++)
            v[i] = d->values[i] > UINT32_MAX ? UINT32_MAX : (uint32_t)d->values[i];
        if (!strcmp(d->name, ".maxntid")) {
            memcpy(f->maxntid, v, sizeof v);
        } else if (!strcmp(d->name, ".reqntid")) {
            memcpy(f->reqntid, v, sizeof v);
        } else if (!strcmp(d->name, ".reqnctapercluster")) {
            memcpy(f->reqnctapercluster, v, sizeof v);
        } else if (!strcmp(d->name, ".minnctapersm")) {
            f->minnctapersm = v[0];
        } else if (!strcmp(d->name, ".maxnctapersm")) {
            f->maxnctapersm = v[0];
        } else if (!strcmp(d->name, ".maxnreg")) {
            f->maxnreg = v[0];
        } else if (!strcmp(d->name, ".maxclusterrank")) {
            f->maxclusterrank = v[0];
        } else if (!strcmp(d->name, ".explicitcluster")) {
            f->explicitcluster = true;
        } else if (!strcmp(d->name, ".noreturn")) {
            f->noreturn = true;
        }
    }
}

static void resolve_pending_in_fn(parser_t *p)
{
    for (uint32_t i = 0; i < p->pending.n; i++) {
        sg_ptx_operand_t *o = *(sg_ptx_operand_t **)vec_at(&p->pending, i);
        const char *nm = o->name;
        size_t n = strlen(nm);
        bool found = false; /* labels of this function first */
        name_slot_t *e = names_find(&p->fnames, nm, n, hash_str(nm, n));
        if (e && e->kind == NAME_LABEL) {
            o->sym_kind = SG_PTX_SYM_LABEL;
            o->sym = e->idx;
            found = true;
        }
        if (!found) {
            e = names_find(&p->mnames, nm, n, hash_str(nm, n));
            if (e && (e->kind == NAME_MODULE_VAR || e->kind == NAME_FUNC)) {
                o->sym_kind = e->kind == NAME_FUNC ? SG_PTX_SYM_FUNC : SG_PTX_SYM_MODULE_VAR;
                o->sym = e->idx;
                found = true;
            }
        }
        if (!found) {
            /* maybe declared later in the module: try again at the end */
            *(sg_ptx_operand_t **)vec_push(p, &p->mpending) = o;
            *(uint32_t *)vec_push(p, &p->fpending_fn) = p->fn_index;
        }
    }
    p->pending.n = 0;
}

/* Labels are declared once the body is read (branches may jump forward).
 * Only names not found while parsing are looked up as labels, so a label
 * spelled like a register never changes what an operand resolved to. */
static void declare_labels(parser_t *p)
{
    for (uint32_t i = 0; i < p->labels.n; i++) {
        sg_ptx_label_t *l = vec_at(&p->labels, i);
        name_slot_t *e = names_slot(p, &p->fnames, l->name, strlen(l->name));
        if (e->kind == NAME_LABEL) {
            const sg_ptx_stmt_t *s = STMT(p, l->stmt);
            fail_at(p, SG_EFORMAT, s->line, s->col, "label '%s' is defined twice", l->name);
        }
        if (e->kind == NAME_NONE || e->kind == NAME_PARAM || e->kind == NAME_LOCAL_VAR ||
            e->kind == NAME_REG || e->kind == NAME_REG_RANGE || e->kind == NAME_RET) {
            /* a label named like a variable: the label wins for pending
               references, which are exactly the names not found earlier */
            e->kind = NAME_LABEL;
            e->idx = i;
        }
    }
}

static void parse_function(parser_t *p, sg_ptx_linkage_t link, uint32_t start_off,
                           const sg_tok_t *start_tok)
{
    if (p->funcs.n >= p->lim.max_functions)
        fail_at(p, SG_ELIMIT, p->tok.line, p->tok.col, "more than %u functions",
                p->lim.max_functions);
    sg_ptx_func_t *f = vec_push(p, &p->funcs);
    p->fn_index = p->funcs.n - 1;
    p->fn = f;
    f->linkage = link;
    f->off = start_off;
    f->line = start_tok->line;
    f->col = start_tok->col;
    f->kw_off = p->tok.off;
    f->kw_len = p->tok.len;
    f->is_entry = tok_is(p, &p->tok, ".entry");
    next(p);
    while (parse_attribute(p, NULL)) {
    }
    if (!f->is_entry && is_punct(&p->tok, '(')) {
        parse_param_list(p, &p->rets, &f->rets_off, &f->rets_len);
    }
    if (p->tok.kind != SG_TOK_IDENT) FAIL(p, "expected the function name");
    f = p->fn = vec_at(&p->funcs, p->fn_index);
    f->name = str_dup(p, tok_text(p, &p->tok), p->tok.len);
    f->name_off = p->tok.off;
    f->name_len = p->tok.len;
    next(p);
    if (is_punct(&p->tok, '(')) {
        uint32_t o, l;
        parse_param_list(p, &p->params, &o, &l);
        f = p->fn = vec_at(&p->funcs, p->fn_index);
        f->params_off = o;
        f->params_len = l;
    }
    parse_perf_directives(p);
    f = p->fn = vec_at(&p->funcs, p->fn_index);
    /* declare parameters in the function scope */
    names_clear(&p->fnames);
    for (uint32_t i = 0; i < p->params.n; i++) {
        sg_ptx_var_t *v = vec_at(&p->params, i);
        if (v->space == SG_PTX_SPACE_REG) {
            sg_ptx_regdecl_t *rd = vec_push(p, &p->regdecls);
            rd->name = v->name;
            rd->base = f->n_regs++;
            rd->type = v->type;
            rd->vec = v->vec;
            rd->stmt = SG_PTX_NONE;
            declare_fn(p, v->name, strlen(v->name), NAME_REG, rd->base, start_tok);
        } else {
            declare_fn(p, v->name, strlen(v->name), NAME_PARAM, i, start_tok);
        }
    }
    for (uint32_t i = 0; i < p->rets.n; i++) {
        sg_ptx_var_t *v = vec_at(&p->rets, i);
        if (v->space == SG_PTX_SPACE_REG) {
            sg_ptx_regdecl_t *rd = vec_push(p, &p->regdecls);
            rd->name = v->name;
            rd->base = f->n_regs++;
            rd->type = v->type;
            rd->vec = v->vec;
            rd->stmt = SG_PTX_NONE;
            declare_fn(p, v->name, strlen(v->name), NAME_REG, rd->base, start_tok);
        } else {
            declare_fn(p, v->name, strlen(v->name), NAME_RET, i, start_tok);
        }
    }
    /* the function is visible to itself (recursion) and to later code */
    name_slot_t *me = names_slot(p, &p->mnames, f->name, strlen(f->name));
    if (me->kind == NAME_NONE || (me->kind == NAME_FUNC && is_punct(&p->tok, '{'))) {
        me->kind = NAME_FUNC;
        me->idx = p->fn_index;
    }
    if (is_punct(&p->tok, '{')) {
        f->has_body = true;
        f->body_off = p->tok.off;
        parse_body(p);
        f = p->fn = vec_at(&p->funcs, p->fn_index);
        /* body_len: up to and including the closing brace, just consumed */
        uint32_t e = p->tok.off;
        while (e > f->body_off && p->src[e - 1] != '}') e--;
        f->body_len = e - f->body_off;
        f->len = e - f->off;
    } else {
        f->len = p->tok.off + p->tok.len - f->off;
        expect_punct(p, ';', "after the function declaration");
        f = p->fn = vec_at(&p->funcs, p->fn_index);
    }
    declare_labels(p);
    resolve_pending_in_fn(p);
    uint32_t n;
    f->params = vec_finish(p, &p->params, &n);
    f->n_params = n;
    f->rets = vec_finish(p, &p->rets, &n);
    f->n_rets = n;
    if (f->is_entry) f->params_size = layout_params(f->params, f->n_params);
    f->dirs = vec_finish(p, &p->dirs, &n);
    f->n_dirs = n;
    f->stmts = vec_finish(p, &p->stmts, &n);
    f->n_stmts = n;
    p->m->n_stmts += n;
    f->reg_decls = vec_finish(p, &p->regdecls, &n);
    f->n_reg_decls = n;
    f->vars = vec_finish(p, &p->fvars, &n);
    f->n_vars = n;
    f->labels = vec_finish(p, &p->labels, &n);
    f->n_labels = n;
    p->undo.n = 0;
    names_clear(&p->fnames);
    p->fn = NULL;
}

/* Module-scope variable declaration after its linkage: space decl (, decl)* ; */
static void parse_module_var(parser_t *p, sg_ptx_linkage_t link, uint32_t start_off)
{
    sg_ptx_space_t sp = space_from(tok_text(p, &p->tok), p->tok.len);
    next(p);
    uint32_t first = p->mvars.n;
    for (;;) {
        count_stmt(p);
        sg_ptx_var_t tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.space = sp;
        tmp.linkage = link;
        tmp.off = start_off;
        parse_decl_body(p, &tmp, true);
        sg_ptx_var_t *v = vec_push(p, &p->mvars);
        *v = tmp;
        name_slot_t *e = names_slot(p, &p->mnames, v->name, strlen(v->name));
        if (e->kind == NAME_NONE) {
            e->kind = NAME_MODULE_VAR;
            e->idx = p->mvars.n - 1;
        } else if (e->kind == NAME_MODULE_VAR) {
            /* .extern declaration followed by the definition: keep the later one */
            e->idx = p->mvars.n - 1;
        } else {
            FAIL(p, "'%s' is declared twice", v->name);
        }
        if (!is_punct(&p->tok, ',')) break;
        next(p);
    }
    uint32_t end = p->tok.off + p->tok.len;
    for (uint32_t i = first; i < p->mvars.n; i++) {
        sg_ptx_var_t *v = vec_at(&p->mvars, i);
        v->len = end - v->off;
    }
    expect_punct(p, ';', "after the declaration");
}

static void parse_target(parser_t *p)
{
    sg_ptx_module_t *m = p->m;
    uint32_t from = p->tok.off, end = from;
    bool first = true;
    for (;;) {
        if (p->tok.kind != SG_TOK_IDENT) FAIL(p, "expected a target name after .target");
        const char *s = tok_text(p, &p->tok);
        size_t n = p->tok.len;
        if (first) {
            if (n < 4 || (memcmp(s, "sm_", 3) && memcmp(s, "compute_", 8)))
                FAIL(p, "unknown target '%.*s'", (int)(n > 40 ? 40 : n), s);
            size_t i = s[0] == 's' ? 3 : 8;
            uint32_t arch = 0;
            while (i < n && s[i] >= '0' && s[i] <= '9' && arch < 100000)
                arch = arch * 10 + (uint32_t)(s[i++] - '0');
            if (arch == 0) FAIL(p, "unknown target '%.*s'", (int)(n > 40 ? 40 : n), s);
            m->target_arch = arch;
            if (i < n) m->target_suffix = s[i];
        } else if (n == 5 && !memcmp(s, "debug", 5)) {
            m->target_debug = true;
        }
        first = false;
        end = p->tok.off + p->tok.len;
        next(p);
        if (!is_punct(&p->tok, ',')) break;
        next(p);
    }
    size_t n = end - from < sizeof m->target - 1 ? end - from : sizeof m->target - 1;
    memcpy(m->target, p->src + from, n);
    m->target[n] = '\0';
}

static void parse_module(parser_t *p)
{
    sg_ptx_module_t *m = p->m;
    bool have_version = false, have_target = false;
    next(p);
    while (p->tok.kind != SG_TOK_EOF) {
        const sg_tok_t t = p->tok;
        if (is_punct(&t, '@') && is_punct(peek(p), '@')) {
            p->have_nxt = false;
            sg_lex_skip_line(&p->lx, &t);
            next(p);
            continue;
        }
        if (t.kind != SG_TOK_DOT) {
            if (!have_version)
                FAIL(p, "not PTX: expected .version, found '%.*s'", (int)(t.len > 40 ? 40 : t.len),
                     tok_text(p, &t));
            FAIL(p, "expected a directive at module scope, found '%.*s'",
                 (int)(t.len > 40 ? 40 : t.len), tok_text(p, &t));
        }
        if (tok_is(p, &t, ".version")) {
            next(p);
            if (p->tok.kind != SG_TOK_FLOAT) FAIL(p, "expected major.minor after .version");
            const char *s = tok_text(p, &p->tok);
            uint32_t i = 0, maj = 0, min = 0;
            while (i < p->tok.len && s[i] != '.' && maj < 1000) maj = maj * 10 + (uint32_t)(s[i++] - '0');
            if (i >= p->tok.len || s[i] != '.') FAIL(p, "expected major.minor after .version");
            for (i++; i < p->tok.len && s[i] >= '0' && s[i] <= '9' && min < 1000; i++)
                min = min * 10 + (uint32_t)(s[i] - '0');
            m->version_major = maj;
            m->version_minor = min;
            have_version = true;
            next(p);
            continue;
        }
        if (!have_version) FAIL(p, "not PTX: the first directive must be .version");
        if (tok_is(p, &t, ".target")) {
            next(p);
            parse_target(p);
            have_target = true;
            continue;
        }
        if (tok_is(p, &t, ".address_size")) {
            next(p);
            uint64_t a = expect_uint(p, "after .address_size");
            if (a != 32 && a != 64) fail_at(p, SG_EFORMAT, t.line, t.col, "address size must be 32 or 64");
            m->address_size = (uint32_t)a;
            continue;
        }
        if (tok_is(p, &t, ".file") || tok_is(p, &t, ".loc")) {
            p->have_nxt = false;
            sg_lex_skip_line(&p->lx, &t);
            next(p);
            continue;
        }
        if (tok_is(p, &t, ".section")) {
            next(p);
            while (p->tok.kind == SG_TOK_DOT || p->tok.kind == SG_TOK_IDENT) next(p);
            if (!is_punct(&p->tok, '{')) FAIL(p, "expected '{' after .section");
            int d = 0;
            do {
                if (p->tok.kind == SG_TOK_EOF) FAIL(p, "unexpected end of PTX in .section");
                if (is_punct(&p->tok, '{')) d++;
                if (is_punct(&p->tok, '}')) d--;
                next(p);
            } while (d > 0);
            continue;
        }
        if (tok_is(p, &t, ".alias") || tok_is(p, &t, ".pragma")) {
            while (!is_punct(&p->tok, ';')) {
                if (p->tok.kind == SG_TOK_EOF) FAIL(p, "unexpected end of PTX in %.*s",
                                                    (int)t.len, tok_text(p, &t));
                next(p);
            }
            next(p);
            continue;
        }
        if (!have_target) FAIL(p, "expected .target before '%.*s'", (int)(t.len > 40 ? 40 : t.len),
                               tok_text(p, &t));
        sg_ptx_linkage_t link = SG_PTX_LINK_NONE;
        while (p->tok.kind == SG_TOK_DOT && linkage_from(p, &p->tok) != SG_PTX_LINK_NONE) {
            sg_ptx_linkage_t l = linkage_from(p, &p->tok);
            if (link == SG_PTX_LINK_NONE || l == SG_PTX_LINK_EXTERN) link = l;
            next(p);
        }
        if (tok_is(p, &p->tok, ".entry") || tok_is(p, &p->tok, ".func")) {
            parse_function(p, link, t.off, &t);
            continue;
        }
        if (p->tok.kind == SG_TOK_DOT &&
            space_from(tok_text(p, &p->tok), p->tok.len) != SG_PTX_SPACE_NONE &&
            !tok_is(p, &p->tok, ".param")) {
            parse_module_var(p, link, t.off);
            continue;
        }
        FAIL(p, "unknown directive '%.*s' at module scope", (int)(p->tok.len > 40 ? 40 : p->tok.len),
             tok_text(p, &p->tok));
    }
    if (!have_version) FAIL(p, "not PTX: no .version directive");
    if (!have_target) FAIL(p, "no .target directive");
}

/* Symbols used before their module-level declaration. */
static void resolve_module_pending(parser_t *p)
{
    for (uint32_t i = 0; i < p->mpending.n; i++) {
        sg_ptx_operand_t *o = *(sg_ptx_operand_t **)vec_at(&p->mpending, i);
        size_t n = strlen(o->name);
        name_slot_t *e = names_find(&p->mnames, o->name, n, hash_str(o->name, n));
        if (e && (e->kind == NAME_MODULE_VAR || e->kind == NAME_FUNC)) {
            o->sym_kind = e->kind == NAME_FUNC ? SG_PTX_SYM_FUNC : SG_PTX_SYM_MODULE_VAR;
            o->sym = e->idx;
            continue;
        }
        /* report at the operand's position */
        uint32_t line = 1, col = 1;
        for (uint32_t k = 0; k < o->off && k < p->m->src_len; k++) {
            if (p->src[k] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        fail_at(p, SG_EFORMAT, line, col, "undeclared identifier '%s'", o->name);
    }
}

static void parser_free(parser_t *p)
{
    vec_t *vs[] = {&p->mvars, &p->funcs, &p->stmts, &p->params, &p->rets, &p->regdecls,
                   &p->fvars, &p->labels, &p->dirs, &p->undo, &p->scratch, &p->mods,
                   &p->pending, &p->mpending, &p->fpending_fn};
    for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) free(vs[i]->data);
    names_clear(&p->mnames);
    names_clear(&p->fnames);
    if (p->cloc) freelocale(p->cloc);
}

int sg_ptx_parse(const char *text, size_t len, const sg_ptx_limits_t *lim,
                 sg_ptx_module_t **out, sg_ptx_error_t *err)
{
    sg_ptx_error_t dummy;
    if (!err) err = &dummy;
    memset(err, 0, sizeof(*err));
    if (out) *out = NULL;
    if (!out || (!text && len)) {
        err->code = SG_EINVAL;
        snprintf(err->message, sizeof err->message, "bad arguments");
        return SG_EINVAL;
    }
    parser_t *p = calloc(1, sizeof(*p));
    if (!p) return SG_ENOMEM;
    if (lim)
        p->lim = *lim;
    else
        sg_ptx_limits_default(&p->lim);
    if (p->lim.max_depth < 4) p->lim.max_depth = 4;
    if (p->lim.max_operands < 8) p->lim.max_operands = 8;
    p->err = err;
    if (len > p->lim.max_bytes) {
        err->code = SG_ELIMIT;
        snprintf(err->message, sizeof err->message, "PTX is %zu bytes, more than the limit %zu",
                 len, p->lim.max_bytes);
        free(p);
        return SG_ELIMIT;
    }
    p->mvars.elem = sizeof(sg_ptx_var_t);
    p->funcs.elem = sizeof(sg_ptx_func_t);
    p->stmts.elem = sizeof(sg_ptx_stmt_t);
    p->params.elem = p->rets.elem = p->fvars.elem = sizeof(sg_ptx_var_t);
    p->regdecls.elem = sizeof(sg_ptx_regdecl_t);
    p->labels.elem = sizeof(sg_ptx_label_t);
    p->dirs.elem = sizeof(sg_ptx_directive_t);
    p->undo.elem = sizeof(undo_t);
    p->scratch.elem = sizeof(sg_ptx_operand_t);
    p->mods.elem = sizeof(const char *);
    p->pending.elem = p->mpending.elem = sizeof(sg_ptx_operand_t *);
    p->fpending_fn.elem = sizeof(uint32_t);
    p->cloc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);

    volatile int rc = 0;
    struct sg_ptx_arena *volatile arena = sg_ptx_arena_create(p->lim.max_memory);
    sg_ptx_module_t *volatile m = NULL;
    if (!arena) {
        parser_free(p);
        free(p);
        return SG_ENOMEM;
    }
    p->a = arena;
    if ((rc = setjmp(p->jmp)) == 0) {
        m = alloc(p, sizeof(*m));
        p->m = m;
        m->arena = arena;
        char *copy = alloc(p, len + 1);
        if (len) memcpy(copy, text, len);
        copy[len] = '\0';
        m->src = copy;
        m->src_len = len;
        m->address_size = 64;
        p->src = copy;
        sg_lex_init(&p->lx, copy, len);
        parse_module(p);
        resolve_module_pending(p);
        uint32_t n;
        m->vars = vec_finish(p, &p->mvars, &n);
        m->n_vars = n;
        m->funcs = vec_finish(p, &p->funcs, &n);
        m->n_funcs = n;
        for (uint32_t i = 0; i < m->n_funcs; i++) {
            sg_ptx_func_t *f = &m->funcs[i];
            if (!f->has_body) continue;
            int r = sg_ptx_build_cfg(arena, f);
            if (r == SG_ENOMEM) oom(p);
            if (r) fail_at(p, r, f->line, f->col, "control flow of %s is too large", f->name);
        }
        rc = 0;
    }
    parser_free(p);
    free(p);
    if (rc) {
        sg_ptx_arena_destroy(arena);
        return rc;
    }
    *out = m;
    return SG_OK;
}

void sg_ptx_module_free(sg_ptx_module_t *m)
{
    if (m) sg_ptx_arena_destroy(m->arena);
}

const sg_ptx_func_t *sg_ptx_find_func(const sg_ptx_module_t *m, const char *name)
{
    const sg_ptx_func_t *decl = NULL;
    if (!m || !name) return NULL;
    for (uint32_t i = 0; i < m->n_funcs; i++) {
        if (strcmp(m->funcs[i].name, name)) continue;
        if (m->funcs[i].has_body) return &m->funcs[i];
        if (!decl) decl = &m->funcs[i];
    }
    return decl;
}

bool sg_ptx_instr_has_mod(const sg_ptx_instr_t *ins, const char *mod)
{
    for (uint32_t i = 0; i < ins->n_mods; i++)
        if (!strcmp(ins->mods[i], mod)) return true;
    return false;
}
