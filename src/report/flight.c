/* A link's time with data in flight, from both ends' transfer logs; clock offsets by rounds. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "report/flight.h"

static int cmp_tag(const void *a, const void *b)
{
	uint64_t x = ((const struct flight_xfer *)a)->tag, y = ((const struct flight_xfer *)b)->tag;

	return (x > y) - (x < y);
}

struct span {
	double a, b;
};

static int cmp_span(const void *a, const void *b)
{
	double x = ((const struct span *)a)->a, y = ((const struct span *)b)->a;

	return (x > y) - (x < y);
}

double flight_busy(struct flight_xfer *snd, int ns, struct flight_xfer *rcv, int nr,
		   double *bytes)
{
	struct span *sp = calloc(ns > 0 ? (size_t)ns : 1, sizeof(*sp));
	double busy = 0, end = -INFINITY, moved = 0;
	int i = 0, j = 0, n = 0;

	if (!sp) {
		*bytes = 0;
		return 0;
	}
	qsort(snd, (size_t)ns, sizeof(*snd), cmp_tag);
	qsort(rcv, (size_t)nr, sizeof(*rcv), cmp_tag);
	while (i < ns && j < nr) {
		if (snd[i].tag != rcv[j].tag) {
			if (snd[i].tag < rcv[j].tag)
				i++;
			else
				j++;
			continue;
		}
		double a = snd[i].post_s > rcv[j].post_s ? snd[i].post_s : rcv[j].post_s;

		moved += rcv[j].bytes;
		/* a receive that completed "before" its send was posted: the clocks'
		 * offset is off by more than the message took; it took ~nothing */
		if (rcv[j].done_s > a)
			sp[n++] = (struct span){ a, rcv[j].done_s };
		i++;
		j++;
	}
	/* several messages are in flight at once (channels): their union */
	qsort(sp, (size_t)n, sizeof(*sp), cmp_span);
	for (i = 0; i < n; i++) {
		double a = sp[i].a > end ? sp[i].a : end;

		if (sp[i].b > a)
			busy += sp[i].b - a;
		if (sp[i].b > end)
			end = sp[i].b;
	}
	free(sp);
	*bytes = moved;
	return busy;
}

int flight_clock_bounds(const int64_t *t0, const int64_t *tr, const int64_t *t1, int k,
			int64_t *lo, int64_t *hi)
{
	int64_t l, h;
	int i, best = 0;

	if (k < 1)
		return -EINVAL;
	l = tr[0] - t1[0];
	h = tr[0] - t0[0];
	for (i = 1; i < k; i++) {
		if (tr[i] - t1[i] > l)
			l = tr[i] - t1[i];
		if (tr[i] - t0[i] < h)
			h = tr[i] - t0[i];
	}
	if (l <= h) {
		*lo = l;
		*hi = h;
		return 0;
	}
	for (i = 1; i < k; i++)
		if (t1[i] - t0[i] < t1[best] - t0[best])
			best = i;
	*lo = tr[best] - t1[best];
	*hi = tr[best] - t0[best];
	return 0;
}
