/*
 * A copy whose stores bypass the cache (non-temporal): for a destination nobody reads
 * again soon, it writes each line once where a plain copy first reads it in (write
 * allocate) and later writes it back, a third of a large copy's memory traffic.
 */
#ifndef GS_UTIL_COPY_STREAM_H
#define GS_UTIL_COPY_STREAM_H

#include <stddef.h>

/* memcpy(dst, src, n) with streaming stores for whole 64-byte lines of dst (x86-64;
 * elsewhere memcpy). Ordered before the caller's next store like memcpy's (sfence).
 * Any alignment; dst and src must not overlap. */
void gs_copy_stream(void *dst, const void *src, size_t n);

#endif
