/*
 * The min_busbw acceptance threshold, one parser for [report] min_busbw and
 * `report --min-busbw`: "20GB/s" (a rate) or "80%" (of each case's bound), optionally
 * followed by "@ RANGE" naming the sizes it applies to: "@ 64MiB.." (64 MiB and up),
 * "@ ..1MiB", "@ 4KiB..1MiB", "@ 1GiB" (that size). Without a range every size is held.
 */
#ifndef GS_UTIL_THRESHOLD_H
#define GS_UTIL_THRESHOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct threshold {
	double abs_GBps;   /* NAN when a percentage */
	double pct;        /* NAN when a rate */
	uint64_t lo, hi;   /* sizes held, inclusive; 0..UINT64_MAX without a range */
};

/* 0, or -EINVAL with the reason in err (which may be NULL). */
int threshold_parse(const char *s, struct threshold *t, char *err, size_t errlen);
/* The size lies in the threshold's range. */
bool threshold_covers(const struct threshold *t, uint64_t size);
/* "80% @ 64MiB.." as written back: the range part only ("" without one). */
void threshold_range_text(const struct threshold *t, char *buf, size_t len);

#endif
