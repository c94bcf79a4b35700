/* ptx_lex.c: the PTX tokenizer (see ptx_internal.h). It never reads past
 * src[len]; the parser hands it a NUL-terminated copy anyway. */
#include "ptx_internal.h"

static bool is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%';
}

static bool is_ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

void sg_lex_init(sg_lexer_t *lx, const char *src, size_t len)
{
    lx->src = src;
    lx->len = len;
    lx->pos = 0;
    lx->line = 1;
    lx->col = 1;
    lx->error = NULL;
}

static char at(const sg_lexer_t *lx, size_t i)
{
    return i < lx->len ? lx->src[i] : '\0';
}

static void advance(sg_lexer_t *lx, size_t n)
{
    for (size_t i = 0; i < n && lx->pos < lx->len; i++) {
        if (lx->src[lx->pos] == '\n') {
            lx->line++;
            lx->col = 1;
        } else {
            lx->col++;
        }
        lx->pos++;
    }
}

/* Skips whitespace and comments; false on an unterminated block comment. */
static bool skip_space(sg_lexer_t *lx)
{
    for (;;) {
        char c = at(lx, lx->pos);
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
            advance(lx, 1);
        } else if (c == '/' && at(lx, lx->pos + 1) == '/') {
            while (lx->pos < lx->len && lx->src[lx->pos] != '\n') advance(lx, 1);
        } else if (c == '/' && at(lx, lx->pos + 1) == '*') {
            size_t start = lx->pos;
            uint32_t line = lx->line, col = lx->col;
            advance(lx, 2);
            for (;;) {
                if (lx->pos >= lx->len) {
                    /* report where the comment began */
                    lx->pos = start;
                    lx->line = line;
                    lx->col = col;
                    return false;
                }
                if (lx->src[lx->pos] == '*' && at(lx, lx->pos + 1) == '/') {
                    advance(lx, 2);
                    break;
                }
                advance(lx, 1);
            }
        } else {
            return true;
        }
    }
}

/* Length of a number starting at p, and its kind. */
static size_t lex_number(const sg_lexer_t *lx, size_t p, sg_tok_kind_t *kind)
{
    size_t i = p;
    char c1 = at(lx, p + 1);
    if (at(lx, p) == '0' && (c1 == 'f' || c1 == 'F' || c1 == 'd' || c1 == 'D')) {
        size_t want = (c1 == 'f' || c1 == 'F') ? 8 : 16, n = 0;
        while (n < want && is_hex(at(lx, p + 2 + n))) n++;
        if (n == want && !is_ident_char(at(lx, p + 2 + n))) {
            *kind = SG_TOK_HEXFLOAT;
            return 2 + want;
        }
    }
    if (at(lx, p) == '0' && (c1 == 'x' || c1 == 'X')) {
        i = p + 2;
        while (is_hex(at(lx, i))) i++;
    } else if (at(lx, p) == '0' && (c1 == 'b' || c1 == 'B') &&
               (at(lx, p + 2) == '0' || at(lx, p + 2) == '1')) {
        i = p + 2;
        while (at(lx, i) == '0' || at(lx, i) == '1') i++;
    } else {
        while (is_digit(at(lx, i))) i++;
        bool flt = false;
        if (at(lx, i) == '.' && is_digit(at(lx, i + 1))) {
            flt = true;
            i++;
            while (is_digit(at(lx, i))) i++;
        }
        if ((at(lx, i) == 'e' || at(lx, i) == 'E') &&
            (is_digit(at(lx, i + 1)) ||
             ((at(lx, i + 1) == '+' || at(lx, i + 1) == '-') && is_digit(at(lx, i + 2))))) {
            flt = true;
            i += 2;
            while (is_digit(at(lx, i))) i++;
        }
        if (flt) {
            *kind = SG_TOK_FLOAT;
            return i - p;
        }
    }
    if (at(lx, i) == 'U' || at(lx, i) == 'u') i++;
    *kind = SG_TOK_INT;
    return i - p;
}

sg_tok_t sg_lex_next(sg_lexer_t *lx)
{
    sg_tok_t t = {0};
    if (!skip_space(lx)) {
        t.kind = SG_TOK_ERROR;
        t.off = (uint32_t)lx->pos;
        t.line = lx->line;
        t.col = lx->col;
        lx->error = "unterminated comment";
        return t;
    }
    t.off = (uint32_t)lx->pos;
    t.line = lx->line;
    t.col = lx->col;
    if (lx->pos >= lx->len) {
        t.kind = SG_TOK_EOF;
        return t;
    }
    char c = lx->src[lx->pos];
    size_t n = 1;
    if (is_ident_start(c) && (c != '%' || is_ident_char(at(lx, lx->pos + 1)))) {
        t.kind = SG_TOK_IDENT;
        while (is_ident_char(at(lx, lx->pos + n))) n++;
    } else if (c == '.' && is_ident_char(at(lx, lx->pos + 1))) {
        t.kind = SG_TOK_DOT;
        for (;;) {
            while (is_ident_char(at(lx, lx->pos + n))) n++;
            if (at(lx, lx->pos + n) == ':' && at(lx, lx->pos + n + 1) == ':' &&
                is_ident_char(at(lx, lx->pos + n + 2)))
                n += 2;
            else
                break;
        }
    } else if (is_digit(c)) {
        n = lex_number(lx, lx->pos, &t.kind);
    } else if (c == '"') {
        t.kind = SG_TOK_STRING;
        for (;;) {
            char d = at(lx, lx->pos + n);
            if (lx->pos + n >= lx->len || d == '\n') {
                t.kind = SG_TOK_ERROR;
                lx->error = "unterminated string";
                break;
            }
            n++;
            if (d == '\\' && lx->pos + n < lx->len) {
                n++;
            } else if (d == '"') {
                break;
            }
        }
    } else if (c == ',' || c == ';' || c == ':' || c == '{' || c == '}' || c == '[' ||
               c == ']' || c == '(' || c == ')' || c == '+' || c == '-' || c == '!' ||
               c == '@' || c == '<' || c == '>' || c == '=' || c == '|' || c == '&' ||
               c == '^' || c == '~' || c == '*' || c == '/' || c == '%' || c == '?') {
        t.kind = SG_TOK_PUNCT;
        t.ch = c;
    } else {
        t.kind = SG_TOK_ERROR;
        lx->error = "unexpected character";
    }
    t.len = (uint32_t)n;
    advance(lx, n);
    return t;
}

void sg_lex_reset(sg_lexer_t *lx, const sg_tok_t *t)
{
    lx->pos = (size_t)t->off;
    lx->line = t->line;
    lx->col = t->col;
    advance(lx, t->len);
}

void sg_lex_skip_line(sg_lexer_t *lx, const sg_tok_t *t)
{
    sg_lex_reset(lx, t);
    while (lx->pos < lx->len && lx->src[lx->pos] != '\n') advance(lx, 1);
}
