/* ptx_internal.h: what code/ptx*.c share and nobody else uses: the
 * tokenizer, the IR arena, and the control-flow builder.
 *
 * Tokens are produced on demand from a NUL-terminated copy of the text.
 * A PTX directive or modifier (".global", ".shared::cluster",
 * ".L2::cache_hint") is one DOT token; "%tid.x" is an IDENT followed by a DOT.
 * Comments (// and block) are skipped. Numbers keep their spelling; the
 * parser converts them.
 */
#ifndef SGCAP_CODE_PTX_INTERNAL_H
#define SGCAP_CODE_PTX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptx.h"

typedef enum {
    SG_TOK_EOF = 0,
    SG_TOK_IDENT,    /* [A-Za-z_$%][A-Za-z0-9_$]* */
    SG_TOK_DOT,      /* .name(::name)* */
    SG_TOK_INT,      /* 12, 0x1F, 017, 0b101, with an optional U */
    SG_TOK_FLOAT,    /* 1.5, 2e3 */
    SG_TOK_HEXFLOAT, /* 0f3F800000 (8 hex digits), 0d... (16) */
    SG_TOK_STRING,   /* "..." */
    SG_TOK_PUNCT,    /* one character: , ; : { } [ ] ( ) + - ! @ < > = | & ^ ~ * / % ? */
    SG_TOK_ERROR     /* a byte that cannot start a token, or an unterminated comment/string */
} sg_tok_kind_t;

typedef struct {
    sg_tok_kind_t kind;
    uint32_t off, len; /* span in the text */
    uint32_t line, col;
    char ch;           /* PUNCT: the character */
} sg_tok_t;

typedef struct {
    const char *src;
    size_t len;
    size_t pos;
    uint32_t line, col;
    const char *error; /* what the last ERROR token was */
} sg_lexer_t;

void sg_lex_init(sg_lexer_t *lx, const char *src, size_t len);
/* The next token. At the end, EOF forever. */
sg_tok_t sg_lex_next(sg_lexer_t *lx);
/* Continue lexing right after token t (undoing any look-ahead). */
void sg_lex_reset(sg_lexer_t *lx, const sg_tok_t *t);
/* Skip from the end of token t to the end of its line (for .loc, .file). */
void sg_lex_skip_line(sg_lexer_t *lx, const sg_tok_t *t);

/* ---- the IR arena: every string and array of a module ------------------- */

struct sg_ptx_arena;
struct sg_ptx_arena *sg_ptx_arena_create(uint64_t limit);
void sg_ptx_arena_destroy(struct sg_ptx_arena *a);
/* Zeroed, 16-byte aligned; NULL when out of memory or past the limit. */
void *sg_ptx_arena_alloc(struct sg_ptx_arena *a, size_t n);
bool sg_ptx_arena_over_limit(const struct sg_ptx_arena *a);

/* ---- control flow (ptx_cfg.c) ---------------------------------------------- */

/* Builds f's blocks, edges and reverse post-order from its statements and
 * labels (labels already resolved). 0, SG_ENOMEM or SG_ELIMIT. */
int sg_ptx_build_cfg(struct sg_ptx_arena *a, sg_ptx_func_t *f);

#endif /* SGCAP_CODE_PTX_INTERNAL_H */
