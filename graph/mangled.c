/* mangled.c: which parameters of a C++ kernel are pointers to const, read
 * straight from its Itanium-ABI mangled name (views.h:
 * sg_kernel_const_pointer_params). Capture asks this inside the app, where
 * no C++ runtime may be linked (docs/ARCHITECTURE.md), so this is not a
 * demangler: it parses the grammar far enough to know each parameter's
 * type structure (pointer, qualifiers, template parameter, pack expansion),
 * keeps the substitution table exact (S_, S0_, ... name earlier
 * components), and treats every other type as opaque. Its answers are those
 * a demangler gives when the demangled text is read: a parameter is a
 * pointer to const when it prints as "T const*" (so "T const volatile*" is
 * not, and neither is "T const* const"). tests/unit/test_graph.c holds it
 * against libstdc++'s demangler on thousands of real kernel names.
 *
 * Anything outside the parsed subset (vendor qualifiers, C++20 template
 * lambdas, clone suffixes, malformed input) gives -1: the caller then
 * records "unknown", never a wrong "read". The input is untrusted: every
 * read is bounded by its length, recursion by SG_MANGLED_MAX_DEPTH, memory
 * by one arena sized from the input. */
#include "views.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Names longer than this are not read (as with the demangler before). */
#define SG_MANGLED_MAX_INPUT 16384
#define SG_MANGLED_MAX_DEPTH 200
#define SG_MANGLED_MAX_PARAMS 256

enum { Q_RESTRICT = 1, Q_VOLATILE = 2, Q_CONST = 4 };

typedef enum {
    N_OTHER = 0,  /* any type that prints as something other than the kinds below */
    N_POINTER,    /* P <type> */
    N_QUAL,       /* <CV-qualifiers> <type> */
    N_PARAM,      /* T_ / T<n>_: the function's template parameter `index` */
    N_EXPANSION,  /* Dp <type>: one parameter per element of a pack */
    N_PACK,       /* J ... E: a template argument pack; also a template argument list */
    N_CELL,       /* one element of a PACK */
    N_PAREN,      /* an array or function type: a pointer to it prints "T (*) [n]";
                   * also a ref-qualified nested name, which prints with "&" after */
    N_VOID,       /* v: a parameter list of only void is empty */
} kind_t;

typedef struct mnode {
    uint8_t kind, quals;
    uint8_t last, count; /* N_QUAL: the qualifier printed last, how many were written */
    uint32_t index;       /* N_PARAM */
    uint64_t params;      /* N_EXPANSION: template parameters its pattern names (bits < 64) */
    const struct mnode *child; /* POINTER, QUAL, EXPANSION: the type; PACK: first CELL; CELL: the element */
    const struct mnode *next;  /* CELL */
} mnode_t;

static const mnode_t other_node = {N_OTHER, 0, 0, 0, 0, 0, NULL, NULL};
static const mnode_t paren_node = {N_PAREN, 0, 0, 0, 0, 0, NULL, NULL};
static const mnode_t void_node = {N_VOID, 0, 0, 0, 0, 0, NULL, NULL};
#define OTHER (&other_node)
#define PAREN (&paren_node)

typedef struct {
    const char *s;
    size_t len, pos;
    mnode_t *nodes;
    size_t n_nodes, cap_nodes;
    const mnode_t **subs;
    size_t n_subs, cap_subs;
    unsigned depth;
    uint64_t params_seen; /* template parameters named since the innermost Dp began */
    bool closure;         /* the last unqualified name was a closure or unnamed type */
    bool bad;
} mp_t;

static char peek(const mp_t *p)
{
    return p->pos < p->len ? p->s[p->pos] : '\0';
}

static char peek2(const mp_t *p)
{
    return p->pos + 1 < p->len ? p->s[p->pos + 1] : '\0';
}

static bool eat(mp_t *p, char c)
{
    if (peek(p) != c) return false;
    p->pos++;
    return true;
}

static const mnode_t *bad(mp_t *p)
{
    p->bad = true;
    return NULL;
}

static mnode_t *node(mp_t *p, kind_t kind)
{
    if (p->n_nodes == p->cap_nodes) {
        p->bad = true;
        return NULL;
    }
    mnode_t *n = &p->nodes[p->n_nodes++];
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)kind;
    return n;
}

static void add_sub(mp_t *p, const mnode_t *n)
{
    if (p->bad) return;
    if (p->n_subs == p->cap_subs) {
        p->bad = true;
        return;
    }
    p->subs[p->n_subs++] = n;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_upper(char c)
{
    return c >= 'A' && c <= 'Z';
}

static bool is_lower(char c)
{
    return c >= 'a' && c <= 'z';
}

/* [n] <digits>: a decimal number (n = negative). */
static bool number(mp_t *p, uint64_t *out)
{
    eat(p, 'n');
    if (!is_digit(peek(p))) return false;
    uint64_t v = 0;
    while (is_digit(peek(p))) {
        if (v > (UINT64_MAX - 9) / 10) return false;
        v = v * 10 + (uint64_t)(p->s[p->pos++] - '0');
    }
    if (out) *out = v;
    return true;
}

/* <seq-id> _ (base 36, upper case), or just _: 0 for "_", seq + 1 otherwise. */
static bool seq_id(mp_t *p, uint64_t *out)
{
    if (eat(p, '_')) {
        *out = 0;
        return true;
    }
    uint64_t v = 0;
    bool any = false;
    while (is_digit(peek(p)) || is_upper(peek(p))) {
        char c = p->s[p->pos++];
        if (v > UINT32_MAX) return false;
        v = v * 36 + (uint64_t)(is_digit(c) ? c - '0' : c - 'A' + 10);
        any = true;
    }
    if (!any || !eat(p, '_')) return false;
    *out = v + 1;
    return true;
}

static bool source_name(mp_t *p)
{
    uint64_t n;
    if (!is_digit(peek(p)) || !number(p, &n) || n == 0 || n > p->len - p->pos) return false;
    p->pos += (size_t)n;
    return true;
}

static const mnode_t *type(mp_t *p);
static const mnode_t *name(mp_t *p, bool substable, const mnode_t **targs, bool *is_template,
                           bool *no_return);
static bool expression(mp_t *p);
static const mnode_t *template_args(mp_t *p);

static bool enter(mp_t *p)
{
    if (++p->depth > SG_MANGLED_MAX_DEPTH) {
        p->bad = true;
        return false;
    }
    return true;
}

#define LEAVE(p, v) ((p)->depth--, (v))

/* T_ / T<n>_, n decimal (the 'T' read). */
static const mnode_t *template_param(mp_t *p)
{
    uint64_t id = 0;
    if (!eat(p, '_')) {
        if (!is_digit(peek(p)) || !number(p, &id) || !eat(p, '_') || id >= UINT32_MAX)
            return bad(p);
        id++;
    }
    mnode_t *n = node(p, N_PARAM);
    if (!n) return NULL;
    n->index = (uint32_t)id;
    if (id < 64) p->params_seen |= 1ull << id;
    return n;
}

/* S_ / S<n>_ / Sa, Sb, Ss, Si, So, Sd (the 'S' not yet read; St is not a
 * substitution). */
static const mnode_t *substitution(mp_t *p)
{
    char c = peek(p);
    if (c == 'a' || c == 'b' || c == 's' || c == 'i' || c == 'o' || c == 'd') {
        p->pos++;
        return OTHER;
    }
    uint64_t id;
    if (!seq_id(p, &id) || id >= p->n_subs) return bad(p);
    return p->subs[id];
}

/* The operator codes of the ABI, with their arity in expressions (0 where
 * they are not expression operators: "cv", "li", "v"). */
static int operator_arity(char a, char b)
{
    static const struct {
        char code[3];
        int arity;
    } ops[] = {
        {"nw", 0}, {"na", 0}, {"dl", 1}, {"da", 1}, {"ps", 1}, {"ng", 1}, {"ad", 1}, {"de", 1},
        {"co", 1}, {"pl", 2}, {"mi", 2}, {"ml", 2}, {"dv", 2}, {"rm", 2}, {"an", 2}, {"or", 2},
        {"eo", 2}, {"aS", 2}, {"pL", 2}, {"mI", 2}, {"mL", 2}, {"dV", 2}, {"rM", 2}, {"aN", 2},
        {"oR", 2}, {"eO", 2}, {"ls", 2}, {"rs", 2}, {"lS", 2}, {"rS", 2}, {"eq", 2}, {"ne", 2},
        {"lt", 2}, {"gt", 2}, {"le", 2}, {"ge", 2}, {"ss", 2}, {"nt", 1}, {"aa", 2}, {"oo", 2},
        {"pp", 1}, {"mm", 1}, {"cm", 2}, {"pm", 2}, {"pt", 2}, {"cl", 0}, {"ix", 2}, {"qu", 3},
        {"aw", 1}, {"cv", 0}, {"li", 0},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ops[i].code[0] == a && ops[i].code[1] == b) return ops[i].arity;
    return -1;
}

/* <operator-name> as an unqualified name (the two letters not yet read). */
static bool operator_name(mp_t *p)
{
    char a = peek(p), b = peek2(p);
    if (a == 'v' && is_digit(b)) {
        p->pos += 2;
        return source_name(p);
    }
    if (operator_arity(a, b) < 0) return false;
    p->pos += 2;
    if (a == 'c' && b == 'v') return type(p) != NULL;
    if (a == 'l' && b == 'i') return source_name(p);
    return true;
}

static bool abi_tags(mp_t *p)
{
    while (eat(p, 'B'))
        if (!source_name(p)) return false;
    return true;
}

/* <unqualified-name>. *ctor_dtor is set for constructors, destructors and
 * conversion operators (their encodings carry no return type). */
static bool unqualified_name(mp_t *p, bool *no_return)
{
    if (!enter(p)) return false;
    eat(p, 'L'); /* internal linkage */
    char c = peek(p), d = peek2(p);
    bool ok = true;
    if (is_digit(c)) {
        ok = source_name(p);
    } else if (c == 'U' && d == 't') {
        p->pos += 2;
        number(p, NULL);
        ok = eat(p, '_');
    } else if (c == 'U' && d == 'l') {
        /* closure type: Ul <parameter types> E [n] _ (C++20 template
         * parameter declarations, "Ty" and friends, are not read) */
        p->pos += 2;
        if (peek(p) == 'T' && (peek2(p) == 'y' || peek2(p) == 'n' || peek2(p) == 't' ||
                               peek2(p) == 'p' || peek2(p) == 'k'))
            return LEAVE(p, false);
        do {
            if (!type(p)) return LEAVE(p, false);
        } while (peek(p) != 'E' && !p->bad);
        p->pos++;
        number(p, NULL);
        ok = eat(p, '_');
    } else if (c == 'C' && (d == '1' || d == '2' || d == '3' || d == '4' || d == '5')) {
        p->pos += 2;
        if (no_return) *no_return = true;
    } else if (c == 'C' && d == 'I') {
        p->pos += 2;
        ok = (eat(p, '1') || eat(p, '2')) && type(p) != NULL;
        if (no_return) *no_return = true;
    } else if (c == 'D' && (d == '0' || d == '1' || d == '2' || d == '4' || d == '5')) {
        p->pos += 2;
        if (no_return) *no_return = true;
    } else if (c == 'D' && d == 'C') {
        p->pos += 2;
        do {
            if (!source_name(p)) return LEAVE(p, false);
        } while (peek(p) != 'E');
        p->pos++;
    } else if (is_lower(c)) {
        if (c == 'c' && d == 'v' && no_return) *no_return = true;
        ok = operator_name(p);
    } else {
        ok = false;
    }
    p->closure = c == 'U';
    return LEAVE(p, ok && abi_tags(p));
}

/* N [CV] [ref] <prefix> <unqualified-name> E (the 'N' read). Every prefix
 * but the whole name is a substitution candidate; the caller adds the
 * whole name when it is a type. */
static bool nested_name(mp_t *p, const mnode_t **targs, bool *is_template, bool *no_return,
                        char *quals)
{
    *quals = peek(p);
    while (peek(p) == 'r' || peek(p) == 'V' || peek(p) == 'K')
        p->pos++;
    if (peek(p) == 'R' || peek(p) == 'O') {
        *quals = peek(p);
        p->pos++;
    }
    bool have = false;
    for (;;) {
        char c = peek(p);
        if (c == 'E') break;
        bool was_template = false;
        const mnode_t *component = OTHER;
        if (c == 'D' && (peek2(p) == 't' || peek2(p) == 'T')) {
            if (have || !type(p)) return false;
        } else if (c == 'I') {
            if (!have) return false;
            const mnode_t *a = template_args(p);
            if (!a) return false;
            if (targs) *targs = a;
            was_template = true;
        } else if (c == 'T') {
            p->pos++;
            if (have || !(component = template_param(p))) return false;
        } else if (c == 'M') {
            p->pos++;
            continue;
        } else if (c == 'S') {
            p->pos++;
            if (eat(p, 't')) continue; /* std:: */
            if (have || !substitution(p)) return false;
            have = true;
            continue;
        } else {
            if (no_return) *no_return = false;
            if (!unqualified_name(p, no_return)) return false;
        }
        have = true;
        if (is_template) *is_template = was_template;
        if (peek(p) == 'E') break;
        add_sub(p, component);
        if (p->bad) return false;
    }
    return have && eat(p, 'E');
}

/* Types up to (not including) `end`, as a function's parameters. */
static bool types_until(mp_t *p, char end)
{
    while (peek(p) != end) {
        if (p->pos >= p->len || !type(p)) return false;
    }
    return true;
}

/* Z <encoding> E <entity> [<discriminator>] (the 'Z' read). */
static bool local_name(mp_t *p)
{
    bool is_template = false, no_return = false;
    if (!name(p, false, NULL, &is_template, &no_return)) return false;
    /* the function's parameters (a data object, like main's, has none) */
    if (!types_until(p, 'E')) return false;
    p->pos++;
    if (eat(p, 's')) {
        /* string literal */
    } else if (eat(p, 'd')) {
        number(p, NULL);
        if (!eat(p, '_') || !name(p, false, NULL, NULL, NULL)) return false;
    } else if (!name(p, false, NULL, NULL, NULL)) {
        return false;
    }
    /* discriminator: _ <digit> | __ <number> _ (closures and unnamed types
     * carry their number inside) */
    if (p->closure) {
        /* none */
    } else if (peek(p) == '_' && is_digit(peek2(p))) {
        p->pos += 2;
    } else if (peek(p) == '_' && peek2(p) == '_') {
        p->pos += 2;
        if (!number(p, NULL) || !eat(p, '_')) return false;
    }
    return true;
}

/* <name>. substable: it is a type (class or enum), so the whole name is a
 * substitution candidate. *targs gets its last template arguments (what
 * T_ means in a function template's signature), *is_template whether it
 * ends in template arguments. */
static const mnode_t *name(mp_t *p, bool substable, const mnode_t **targs, bool *is_template,
                           bool *no_return)
{
    if (!enter(p)) return NULL;
    bool subst = false, tmpl = false;
    const mnode_t *result = OTHER;
    char c = peek(p);
    if (c == 'N') {
        p->pos++;
        char q = 0;
        if (!nested_name(p, targs, &tmpl, no_return, &q)) return LEAVE(p, bad(p));
        /* a qualified nested name (N K ... E) as a type prints "Name const" */
        if (substable && (q == 'R' || q == 'O')) result = PAREN;
        if (substable && (q == 'r' || q == 'V' || q == 'K')) {
            mnode_t *n = node(p, N_QUAL);
            if (!n) return LEAVE(p, NULL);
            n->quals = q == 'r' ? Q_RESTRICT : q == 'V' ? Q_VOLATILE : Q_CONST;
            n->last = n->quals;
            n->count = 1;
            n->child = OTHER;
            result = n;
        }
    } else if (c == 'Z') {
        p->pos++;
        if (!local_name(p)) return LEAVE(p, bad(p));
    } else {
        if (c == 'S' && peek2(p) == 't') {
            p->pos += 2;
            if (!unqualified_name(p, no_return)) return LEAVE(p, bad(p));
        } else if (c == 'S') {
            p->pos++;
            if (!substitution(p)) return LEAVE(p, NULL);
            subst = true;
        } else if (!unqualified_name(p, no_return)) {
            return LEAVE(p, bad(p));
        }
        if (peek(p) == 'I') {
            if (!subst) add_sub(p, OTHER);
            const mnode_t *a = template_args(p);
            if (!a) return LEAVE(p, NULL);
            if (targs) *targs = a;
            tmpl = true;
            subst = false;
        }
    }
    if (is_template) *is_template = tmpl;
    if (substable && !subst) add_sub(p, result);
    return LEAVE(p, p->bad ? NULL : result);
}

/* L <type> <value> E | L <mangled-name> E | L <type> E (the 'L' read). */
static bool expr_primary(mp_t *p)
{
    if (peek(p) == '_' && peek2(p) == 'Z') {
        p->pos += 2;
        bool is_template = false, no_return = false;
        if (!name(p, false, NULL, &is_template, &no_return)) return false;
        if (!types_until(p, 'E')) return false;
        return eat(p, 'E');
    }
    if (!type(p)) return false;
    /* the value: digits, hex float digits, 'n', '_' ... up to E */
    while (p->pos < p->len && peek(p) != 'E')
        p->pos++;
    return eat(p, 'E');
}

/* <template-arg> */
static const mnode_t *template_arg(mp_t *p)
{
    char c = peek(p);
    if (c == 'X') {
        p->pos++;
        if (!expression(p) || !eat(p, 'E')) return bad(p);
        return OTHER;
    }
    if (c == 'L') {
        p->pos++;
        if (!expr_primary(p)) return bad(p);
        return OTHER;
    }
    if (c == 'J') {
        p->pos++;
        mnode_t *pack = node(p, N_PACK);
        if (!pack) return NULL;
        const mnode_t **tail = &pack->child;
        while (peek(p) != 'E') {
            if (p->pos >= p->len) return bad(p);
            const mnode_t *a = template_arg(p);
            if (!a) return NULL;
            mnode_t *cell = node(p, N_CELL);
            if (!cell) return NULL;
            cell->child = a;
            *tail = cell;
            tail = &cell->next;
        }
        p->pos++;
        return pack;
    }
    return type(p);
}

/* I <template-arg>+ E, as a PACK whose elements are the arguments. */
static const mnode_t *template_args(mp_t *p)
{
    if (!eat(p, 'I') || !enter(p)) return bad(p);
    mnode_t *list = node(p, N_PACK);
    if (!list) return LEAVE(p, NULL);
    const mnode_t **tail = &list->child;
    while (peek(p) != 'E') {
        if (p->pos >= p->len) return LEAVE(p, bad(p));
        const mnode_t *a = template_arg(p);
        if (!a) return LEAVE(p, NULL);
        mnode_t *cell = node(p, N_CELL);
        if (!cell) return LEAVE(p, NULL);
        cell->child = a;
        *tail = cell;
        tail = &cell->next;
    }
    p->pos++;
    return LEAVE(p, list);
}

/* ---- expressions: only skipped, with their substitutions and template
 * parameters accounted for ------------------------------------------------ */

/* <simple-id> | on <operator-name> [targs] | dn <destructor-name> */
static bool base_unresolved_name(mp_t *p)
{
    if (peek(p) == 'o' && peek2(p) == 'n') {
        p->pos += 2;
        if (!operator_name(p)) return false;
    } else if (peek(p) == 'd' && peek2(p) == 'n') {
        p->pos += 2;
        if (is_digit(peek(p))) {
            if (!source_name(p)) return false;
        } else if (!type(p)) {
            return false;
        }
    } else if (!source_name(p)) {
        return false;
    }
    if (peek(p) == 'I' && !template_args(p)) return false;
    return true;
}

/* <unresolved-type>: a template parameter or decltype (with optional
 * template arguments), or a substitution; a substitution candidate. */
static bool unresolved_type(mp_t *p)
{
    char c = peek(p);
    if (c == 'T') {
        p->pos++;
        if (!template_param(p)) return false;
        add_sub(p, OTHER);
        if (peek(p) == 'I') {
            if (!template_args(p)) return false;
            add_sub(p, OTHER);
        }
        return true;
    }
    if (c == 'D' && (peek2(p) == 't' || peek2(p) == 'T')) return type(p) != NULL;
    if (c == 'S') {
        p->pos++;
        if (peek(p) == 't') {
            p->pos++;
            return source_name(p);
        }
        if (!substitution(p)) return false;
        if (peek(p) == 'I') {
            if (!template_args(p)) return false;
            add_sub(p, OTHER);
        }
        return true;
    }
    return false;
}

/* <unresolved-name> (after an optional "gs"). */
static bool unresolved_name(mp_t *p)
{
    if (peek(p) == 'g' && peek2(p) == 's') p->pos += 2;
    if (!(peek(p) == 's' && peek2(p) == 'r')) return base_unresolved_name(p);
    p->pos += 2;
    if (eat(p, 'N')) {
        if (!unresolved_type(p)) return false;
        while (peek(p) != 'E') {
            if (!source_name(p)) return false;
            if (peek(p) == 'I' && !template_args(p)) return false;
        }
        p->pos++;
        return base_unresolved_name(p);
    }
    if (is_digit(peek(p))) {
        /* sr <unresolved-qualifier-level>+ E <base-unresolved-name> */
        while (peek(p) != 'E') {
            if (!source_name(p)) return false;
            if (peek(p) == 'I' && !template_args(p)) return false;
        }
        p->pos++;
        return base_unresolved_name(p);
    }
    if (!unresolved_type(p)) return false;
    return base_unresolved_name(p);
}

static bool expressions_until_e(mp_t *p)
{
    while (peek(p) != 'E') {
        if (p->pos >= p->len || !expression(p)) return false;
    }
    p->pos++;
    return true;
}

static bool braced_expression(mp_t *p)
{
    if (peek(p) == 'd' && peek2(p) == 'i') {
        p->pos += 2;
        return source_name(p) && braced_expression(p);
    }
    if (peek(p) == 'd' && peek2(p) == 'x') {
        p->pos += 2;
        return expression(p) && braced_expression(p);
    }
    if (peek(p) == 'd' && peek2(p) == 'X') {
        p->pos += 2;
        return expression(p) && expression(p) && braced_expression(p);
    }
    return expression(p);
}

/* fp [CV] [n] _ | fL <n> p [CV] [n] _ (the "fp"/"fL" read) */
static bool function_param(mp_t *p, bool level)
{
    if (level) {
        if (!number(p, NULL) || !eat(p, 'p')) return false;
    }
    while (peek(p) == 'r' || peek(p) == 'V' || peek(p) == 'K')
        p->pos++;
    number(p, NULL);
    return eat(p, '_');
}

static bool expression(mp_t *p)
{
    if (!enter(p)) return false;
    char a = peek(p), b = peek2(p);
    bool ok = false;
    if (a == 'L') {
        p->pos++;
        ok = expr_primary(p);
    } else if (a == 'T') {
        p->pos++;
        ok = template_param(p) != NULL;
    } else if (a == 'f' && b == 'p') {
        p->pos += 2;
        ok = function_param(p, false);
    } else if (a == 'f' && b == 'L' && is_digit(p->pos + 2 < p->len ? p->s[p->pos + 2] : 0)) {
        p->pos += 2;
        ok = function_param(p, true);
    } else if (a == 'f' && (b == 'l' || b == 'r' || b == 'L' || b == 'R')) {
        /* folds: fl/fr <op> <expr>, fL/fR <op> <expr> <expr> */
        p->pos += 2;
        if (operator_arity(peek(p), peek2(p)) < 0) return LEAVE(p, false);
        p->pos += 2;
        ok = expression(p) && ((b == 'l' || b == 'r') || expression(p));
    } else if (a == 's' && b == 'p') {
        p->pos += 2;
        ok = expression(p);
    } else if ((a == 'd' || a == 'p') && b == 't') {
        p->pos += 2;
        ok = expression(p) && unresolved_name(p);
    } else if (a == 'd' && b == 's') {
        p->pos += 2;
        ok = expression(p) && expression(p);
    } else if (a == 'c' && b == 'v') {
        p->pos += 2;
        if (!type(p)) return LEAVE(p, false);
        ok = eat(p, '_') ? expressions_until_e(p) : expression(p);
    } else if (a == 't' && b == 'l') {
        p->pos += 2;
        if (!type(p)) return LEAVE(p, false);
        ok = true;
        while (ok && peek(p) != 'E')
            ok = p->pos < p->len && braced_expression(p);
        ok = ok && eat(p, 'E');
    } else if (a == 'i' && b == 'l') {
        p->pos += 2;
        ok = true;
        while (ok && peek(p) != 'E')
            ok = p->pos < p->len && braced_expression(p);
        ok = ok && eat(p, 'E');
    } else if (a == 'g' && b == 's' && p->pos + 3 < p->len && p->s[p->pos + 2] == 'n') {
        p->pos += 2;
        ok = expression(p);
    } else if (a == 'n' && (b == 'w' || b == 'a')) {
        p->pos += 2;
        while (peek(p) != '_') {
            if (p->pos >= p->len || !expression(p)) return LEAVE(p, false);
        }
        p->pos++;
        if (!type(p)) return LEAVE(p, false);
        if (eat(p, 'E')) {
            ok = true;
        } else if (peek(p) == 'p' && peek2(p) == 'i') {
            p->pos += 2;
            ok = expressions_until_e(p);
        } else if (peek(p) == 'i' && peek2(p) == 'l') {
            ok = expression(p);
        }
    } else if ((a == 'd' || a == 's' || a == 'c' || a == 'r') && b == 'c') {
        p->pos += 2;
        ok = type(p) && expression(p);
    } else if ((a == 't' && b == 'i') || (a == 's' && b == 't') || (a == 'a' && b == 't')) {
        p->pos += 2;
        ok = type(p) != NULL;
    } else if ((a == 't' && b == 'e') || (a == 's' && b == 'z') || (a == 'a' && b == 'z') ||
               (a == 'n' && b == 'x') || (a == 't' && b == 'w')) {
        p->pos += 2;
        ok = expression(p);
    } else if (a == 't' && b == 'r') {
        p->pos += 2;
        ok = true;
    } else if (a == 's' && b == 'Z') {
        p->pos += 2;
        if (eat(p, 'T'))
            ok = template_param(p) != NULL;
        else if (peek(p) == 'f' && peek2(p) == 'p') {
            p->pos += 2;
            ok = function_param(p, false);
        }
    } else if (a == 's' && b == 'P') {
        p->pos += 2;
        ok = true;
        while (ok && peek(p) != 'E')
            ok = p->pos < p->len && template_arg(p) != NULL;
        ok = ok && eat(p, 'E');
    } else if (a == 'c' && b == 'l') {
        p->pos += 2;
        ok = expression(p) && expressions_until_e(p);
    } else if (a == 'u') {
        p->pos++;
        ok = source_name(p);
        while (ok && peek(p) != 'E')
            ok = p->pos < p->len && template_arg(p) != NULL;
        ok = ok && eat(p, 'E');
    } else if (is_digit(a) || (a == 's' && b == 'r') || (a == 'g' && b == 's') ||
               (a == 'o' && b == 'n') || (a == 'd' && b == 'n')) {
        ok = unresolved_name(p);
    } else {
        int arity = operator_arity(a, b);
        if (arity > 0) {
            p->pos += 2;
            /* prefix ++/-- are written pp_ / mm_ */
            if ((a == 'p' && b == 'p') || (a == 'm' && b == 'm')) eat(p, '_');
            ok = true;
            for (int i = 0; i < arity && ok; i++)
                ok = expression(p);
        }
    }
    return LEAVE(p, ok && !p->bad);
}

/* ---- types ----------------------------------------------------------------- */

static bool is_builtin(char c)
{
    return c && strchr("vwbcahstijlmxynofdegz", c) != NULL;
}

/* F [Y] <types> [R|O] E, the 'F' read. */
static bool function_type(mp_t *p)
{
    eat(p, 'Y');
    while (peek(p) != 'E') {
        if ((peek(p) == 'R' || peek(p) == 'O') && peek2(p) == 'E') {
            p->pos++;
            continue;
        }
        if (p->pos >= p->len || !type(p)) return false;
    }
    p->pos++;
    return true;
}

static const mnode_t *type_(mp_t *p)
{
    char c = peek(p), d = peek2(p);
    if (is_builtin(c)) {
        p->pos++;
        return c == 'v' ? &void_node : OTHER;
    }
    mnode_t *n;
    const mnode_t *t;
    switch (c) {
    case 'u':
        p->pos++;
        if (!source_name(p)) return bad(p);
        if (peek(p) == 'I' && !template_args(p)) return NULL;
        add_sub(p, OTHER);
        return OTHER;
    case 'r':
    case 'V':
    case 'K': {
        /* One candidate for the whole run of qualifiers (a demangler reads
         * "KK" as one group too); it prints in reverse, so the qualifier
         * printed last is the first one written. */
        uint8_t q = 0, count = 0;
        char first = c;
        while (peek(p) == 'r' || peek(p) == 'V' || peek(p) == 'K') {
            char x = p->s[p->pos++];
            q |= x == 'r' ? Q_RESTRICT : x == 'V' ? Q_VOLATILE : Q_CONST;
            if (count < UINT8_MAX) count++;
        }
        /* qualifiers of a function type belong to it: one candidate */
        if (peek(p) == 'F') {
            p->pos++;
            if (!function_type(p)) return bad(p);
            add_sub(p, PAREN);
            return PAREN;
        }
        if (!(t = type(p))) return NULL;
        if (!(n = node(p, N_QUAL))) return NULL;
        n->quals = q;
        n->last = first == 'r' ? Q_RESTRICT : first == 'V' ? Q_VOLATILE : Q_CONST;
        n->count = count;
        n->child = t;
        add_sub(p, n);
        return n;
    }
    case 'P':
        p->pos++;
        if (!(t = type(p))) return NULL;
        if (!(n = node(p, N_POINTER))) return NULL;
        n->child = t;
        add_sub(p, n);
        return n;
    case 'R':
    case 'O':
    case 'C':
    case 'G':
        p->pos++;
        if (!type(p)) return NULL;
        add_sub(p, OTHER);
        return OTHER;
    case 'F':
        p->pos++;
        if (!function_type(p)) return bad(p);
        add_sub(p, PAREN);
        return PAREN;
    case 'A':
        p->pos++;
        if (is_digit(peek(p))) {
            number(p, NULL);
        } else if (peek(p) != '_' && !expression(p)) {
            return bad(p);
        }
        if (!eat(p, '_') || !type(p)) return bad(p);
        add_sub(p, PAREN);
        return PAREN;
    case 'M':
        p->pos++;
        if (!type(p) || !type(p)) return NULL;
        add_sub(p, OTHER);
        return OTHER;
    case 'T':
        if (d == 's' || d == 'u' || d == 'e') {
            p->pos += 2;
            return name(p, true, NULL, NULL, NULL);
        }
        p->pos++;
        if (!(t = template_param(p))) return NULL;
        add_sub(p, t);
        if (peek(p) == 'I') {
            if (!template_args(p)) return NULL;
            add_sub(p, OTHER);
            return OTHER;
        }
        return t;
    case 'S':
        if (is_digit(d) || is_upper(d) || d == '_') {
            p->pos++;
            if (!(t = substitution(p))) return NULL;
            if (peek(p) == 'I') {
                if (!template_args(p)) return NULL;
                add_sub(p, OTHER);
                return OTHER;
            }
            return t;
        }
        return name(p, true, NULL, NULL, NULL);
    case 'D':
        switch (d) {
        case 'd':
        case 'e':
        case 'f':
        case 'h':
        case 'i':
        case 's':
        case 'u':
        case 'a':
        case 'c':
        case 'n':
            p->pos += 2;
            return OTHER;
        case 'F':
            /* DF <bits> _ | DF <bits> x | DF16b */
            p->pos += 2;
            if (!number(p, NULL)) return bad(p);
            if (!eat(p, '_') && !eat(p, 'x') && !eat(p, 'b')) return bad(p);
            return OTHER;
        case 'B':
        case 'U':
            p->pos += 2;
            if (is_digit(peek(p)))
                number(p, NULL);
            else if (!expression(p))
                return bad(p);
            if (!eat(p, '_')) return bad(p);
            return OTHER;
        case 'p': {
            p->pos += 2;
            uint64_t outer = p->params_seen;
            p->params_seen = 0;
            t = type(p);
            uint64_t inner = p->params_seen;
            p->params_seen = outer | inner;
            if (!t) return NULL;
            if (!(n = node(p, N_EXPANSION))) return NULL;
            n->child = t;
            n->params = inner;
            add_sub(p, n);
            return n;
        }
        case 't':
        case 'T':
            p->pos += 2;
            if (!expression(p) || !eat(p, 'E')) return bad(p);
            add_sub(p, OTHER);
            return OTHER;
        case 'v':
            p->pos += 2;
            if (eat(p, '_')) {
                if (!expression(p)) return bad(p);
            } else if (!number(p, NULL)) {
                return bad(p);
            }
            if (!eat(p, '_') || !type(p)) return bad(p);
            add_sub(p, OTHER);
            return OTHER;
        case 'x':
        case 'o':
        case 'O':
        case 'w':
            /* transaction-safe / exception specifications of a function type */
            p->pos += 2;
            if (d == 'O' && (!expression(p) || !eat(p, 'E'))) return bad(p);
            if (d == 'w' && !types_until(p, 'E')) return bad(p);
            if (d == 'w') p->pos++;
            if (peek(p) == 'D' && peek2(p) == 'x') p->pos += 2;
            if (!eat(p, 'F') || !function_type(p)) return bad(p);
            add_sub(p, PAREN);
            return PAREN;
        default:
            return bad(p);
        }
    default:
        if (is_digit(c) || c == 'N' || c == 'Z') return name(p, true, NULL, NULL, NULL);
        return bad(p);
    }
}

static const mnode_t *type(mp_t *p)
{
    if (p->bad || p->pos >= p->len || !enter(p)) return bad(p);
    const mnode_t *t = type_(p);
    p->depth--;
    return p->bad ? NULL : t;
}

/* ---- what the parameters print as -------------------------------------- */

typedef struct {
    const mnode_t *targs; /* the function's template arguments (a PACK), or NULL */
    uint32_t bound;       /* while expanding a pack: the parameter being expanded */
    const mnode_t *elem;  /* ... and the element standing for it, else NULL */
} env_t;

static const mnode_t *targ(const mnode_t *list, uint32_t i)
{
    const mnode_t *c = list ? list->child : NULL;
    for (; c && i; i--)
        c = c->next;
    return c ? c->child : NULL;
}

/* Follow template parameters to what they stand for; NULL when one has no
 * argument (or a chain does not end). */
static const mnode_t *resolve(const mnode_t *n, const env_t *e)
{
    for (int hops = 0; n && n->kind == N_PARAM; hops++) {
        if (hops > 64) return NULL;
        n = e->elem && n->index == e->bound ? e->elem : targ(e->targs, n->index);
    }
    return n;
}

/* 1: prints as "... const*" (optionally followed by one restrict), 0: does
 * not, -1: cannot tell. */
static int is_const_pointer(const mnode_t *t, const env_t *e)
{
    const mnode_t *n = resolve(t, e);
    if (!n || n->kind == N_PACK || n->kind == N_EXPANSION) return -1;
    if (n->kind == N_QUAL) {
        if (n->quals != Q_RESTRICT || n->count != 1) return 0;
        n = resolve(n->child, e); /* a restrict pointer prints "T const* restrict" */
        if (!n || n->kind == N_PACK || n->kind == N_EXPANSION) return -1;
    }
    if (n->kind != N_POINTER) return 0;
    const mnode_t *pointee = resolve(n->child, e);
    if (!pointee || pointee->kind == N_PACK || pointee->kind == N_EXPANSION) return -1;
    if (pointee->kind != N_QUAL || pointee->last != Q_CONST) return 0;
    /* a pointer (to pointers) to an array prints "T const (* const*) [n]" */
    const mnode_t *base = pointee;
    for (int hops = 0; base && (base->kind == N_QUAL || base->kind == N_POINTER); hops++) {
        if (hops > SG_MANGLED_MAX_DEPTH) return -1;
        base = resolve(base->child, e);
    }
    if (!base || base->kind == N_PACK || base->kind == N_EXPANSION) return -1;
    return base->kind != N_PAREN;
}

/* One parameter of the signature: appends 1 entry per printed parameter
 * (several for a pack expansion) to ro[]; returns false when it cannot. */
static bool add_param(const mnode_t *t, const env_t *e, bool *ro, uint32_t *count)
{
    const mnode_t *n = resolve(t, e);
    if (n && n->kind == N_EXPANSION) {
        const mnode_t *pack = NULL;
        uint32_t which = 0;
        for (uint32_t i = 0; i < 64 && !pack; i++) {
            const mnode_t *a = (n->params >> i & 1) ? targ(e->targs, i) : NULL;
            if (a && a->kind == N_PACK) {
                pack = a;
                which = i;
            }
        }
        if (!pack) return false;
        for (const mnode_t *c = pack->child; c; c = c->next) {
            env_t inner = {e->targs, which, c->child};
            int r = is_const_pointer(n->child, &inner);
            if (r < 0 || *count >= SG_MANGLED_MAX_PARAMS) return false;
            ro[(*count)++] = r == 1;
        }
        return true;
    }
    int r = is_const_pointer(t, e);
    if (r < 0 || *count >= SG_MANGLED_MAX_PARAMS) return false;
    ro[(*count)++] = r == 1;
    return true;
}

int sg_kernel_const_pointer_params(const char *mangled, uint32_t n_params, bool *ro)
{
    for (uint32_t i = 0; i < n_params; i++)
        ro[i] = false;
    if (!mangled || strncmp(mangled, "_Z", 2) != 0) return -1;
    size_t len = strnlen(mangled, SG_MANGLED_MAX_INPUT + 1);
    if (len > SG_MANGLED_MAX_INPUT) return -1;

    /* One allocation: every node consumes at least one character of the
     * name, and so does every substitution candidate and parameter. */
    mp_t p = {.s = mangled, .len = len, .pos = 2};
    p.cap_nodes = len + 16;
    p.cap_subs = len + 16;
    size_t bytes = p.cap_nodes * sizeof *p.nodes + p.cap_subs * sizeof *p.subs +
                   (len + 1) * sizeof(const mnode_t *) + SG_MANGLED_MAX_PARAMS * sizeof(bool);
    void *block = malloc(bytes);
    int rc = -1;
    if (!block) return -1;
    p.nodes = block;
    p.subs = (const mnode_t **)(p.nodes + p.cap_nodes);
    const mnode_t **params = p.subs + p.cap_subs;
    bool *tmp = (bool *)(params + len + 1);

    const mnode_t *targs = NULL;
    bool is_template = false, no_return = false;
    if (!name(&p, false, &targs, &is_template, &no_return) || p.bad) goto out;
    /* a function template's encoding starts with its return type */
    if (is_template && !no_return && !type(&p)) goto out;
    size_t n = 0;
    while (p.pos < p.len) {
        if (p.s[p.pos] == '.') goto out; /* clone suffix: not a plain function */
        const mnode_t *t = type(&p);
        if (!t) goto out;
        params[n++] = t;
    }
    if (n == 0) goto out; /* a data object, not a function */
    env_t e = {targs, 0, NULL};
    uint32_t count = 0;
    /* a parameter list of only void (written, or a template parameter) is empty */
    const mnode_t *only = n == 1 ? resolve(params[0], &e) : NULL;
    bool is_void = only && only->kind == N_VOID;
    if (!is_void)
        for (size_t i = 0; i < n; i++)
            if (!add_param(params[i], &e, tmp, &count)) goto out;
    if (count != n_params) goto out;
    for (uint32_t i = 0; i < count; i++)
        ro[i] = tmp[i];
    rc = 0;
out:
    free(block);
    return rc;
}

const char *sg_kernel_plain_name(const char *mangled, char *buf, size_t n)
{
    if (!n) return buf;
    if (!mangled) mangled = "";
    if (mangled[0] == '_' && mangled[1] == 'Z') {
        const char *p = mangled + 2;
        size_t len = 0;
        while (*p >= '0' && *p <= '9' && len < 100000)
            len = len * 10 + (size_t)(*p++ - '0');
        if (len && strnlen(p, len) == len) {
            snprintf(buf, n, "%.*s", (int)len, p);
            return buf;
        }
    }
    snprintf(buf, n, "%s", mangled);
    return buf;
}
