/* Small helpers every layer may use: array sizes, min/max, attribute shorthands. */
#ifndef GS_UTIL_COMMON_H
#define GS_UTIL_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define GS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GS_MAX(a, b) ((a) > (b) ? (a) : (b))
#define GS_DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define GS_ALIGN_UP(n, a) (GS_DIV_ROUND_UP(n, a) * (a))
#define GS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define GS_UNUSED __attribute__((unused))

/* Exit codes of the gradsync binary (documented in the README). */
enum gs_exit {
	GS_EXIT_OK = 0,     /* everything ran and passed */
	GS_EXIT_FAIL = 1,   /* the run failed: transport error, wrong result, threshold missed */
	GS_EXIT_USAGE = 2,  /* bad command line or experiment file */
};

#endif
