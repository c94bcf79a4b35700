/* zstd_trace.c: zstd's tracing hooks, defined here as "never trace".
 *
 * libzstd.a (linked statically into the shim) calls ZSTD_trace_* when they
 * are defined, through weak references: left undefined, they would stay in
 * the shim's dynamic symbol table, and any program that defines them (its
 * own zstd built with tracing) would receive the shim's compression calls.
 * Hidden definitions bind them inside the shim. The prototypes are those of
 * zstd's private lib/common/zstd_trace.h (1.5): a begin hook returning 0
 * turns tracing off for that call, so the end hooks are never reached. */
#include <stddef.h>

typedef unsigned long long sg_zstd_trace_ctx_t;
struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

#define SG_ZSTD_HOOK __attribute__((visibility("hidden")))

SG_ZSTD_HOOK sg_zstd_trace_ctx_t ZSTD_trace_compress_begin(const struct ZSTD_CCtx_s *cctx);
SG_ZSTD_HOOK void ZSTD_trace_compress_end(sg_zstd_trace_ctx_t ctx, const void *trace);
SG_ZSTD_HOOK sg_zstd_trace_ctx_t ZSTD_trace_decompress_begin(const struct ZSTD_DCtx_s *dctx);
SG_ZSTD_HOOK void ZSTD_trace_decompress_end(sg_zstd_trace_ctx_t ctx, const void *trace);

sg_zstd_trace_ctx_t ZSTD_trace_compress_begin(const struct ZSTD_CCtx_s *cctx)
{
    (void)cctx;
    return 0;
}

void ZSTD_trace_compress_end(sg_zstd_trace_ctx_t ctx, const void *trace)
{
    (void)ctx;
    (void)trace;
}

sg_zstd_trace_ctx_t ZSTD_trace_decompress_begin(const struct ZSTD_DCtx_s *dctx)
{
    (void)dctx;
    return 0;
}

void ZSTD_trace_decompress_end(sg_zstd_trace_ctx_t ctx, const void *trace)
{
    (void)ctx;
    (void)trace;
}
