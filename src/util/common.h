/* Small helpers every layer may use: array sizes, min/max, attribute shorthands. */
#ifndef GS_UTIL_COMMON_H
#define GS_UTIL_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* A macro's value as a string literal (GS_XSTR(X) with #define X 1: "1"). */
#define GS_STR(x) #x
#define GS_XSTR(x) GS_STR(x)

#define GS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GS_MAX(a, b) ((a) > (b) ? (a) : (b))
#define GS_DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define GS_ALIGN_UP(n, a) (GS_DIV_ROUND_UP(n, a) * (a))
#define GS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define GS_UNUSED __attribute__((unused))

/*
 * Write a zero into every page of [p, p + len) now, so that the data path never takes
 * a page's first-touch fault (~15 us on small VMs). memset(p, 0, len) right after malloc
 * does not do it: the compiler folds the pair into calloc, which leaves pages fresh from
 * mmap untouched (the transfer log of coll_comm took one fault every 51 AllReduces so,
 * 20 us each). Volatile stores are kept.
 */
static inline void gs_touch_pages(void *p, size_t len)
{
	volatile char *b = p;

	for (size_t i = 0; i < len; i += 4096)
		b[i] = 0;
}

/* Exit codes of the gradsync binary (documented in the README). */
enum gs_exit {
	GS_EXIT_OK = 0,     /* everything ran and passed */
	GS_EXIT_FAIL = 1,   /* the run failed: transport error, wrong result, threshold missed */
	GS_EXIT_USAGE = 2,  /* bad command line or experiment file */
};

#endif
