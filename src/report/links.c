/* Slow links: per-link rates from both ends' waits, the slow ones against the median, named. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/schedule.h"
#include "report/jget.h"
#include "report/links.h"
#include "report/sections.h"
#include "util/common.h"
#include "util/units.h"

bool link_in_flight(const struct link_obs *l)
{
	return l->flight_bytes > 0 && l->flight_s > 0 &&
	       l->flight_err_s <= LINK_CLOCK_TOL * l->flight_s;
}

double link_rate(const struct link_obs *l)
{
	double t = fmin(l->send_s, l->recv_s);

	if (link_in_flight(l))
		return l->flight_bytes / l->flight_s;
	return l->bytes > 0 && t > 0 ? l->bytes / t : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int cmp_slow(const void *a, const void *b)
{
	return cmp_double(&((const struct link_slow *)a)->rate_Bps,
			  &((const struct link_slow *)b)->rate_Bps);
}

double links_median(const struct link_obs *l, int n, int *nused)
{
	double *r = calloc(n > 0 ? (size_t)n : 1, sizeof(*r)), med = 0;
	int m = 0, i;

	if (r) {
		for (i = 0; i < n; i++)
			if (link_rate(&l[i]) > 0)
				r[m++] = link_rate(&l[i]);
		qsort(r, (size_t)m, sizeof(*r), cmp_double);
		if (m)
			med = m % 2 ? r[m / 2] : (r[m / 2 - 1] + r[m / 2]) / 2;
		free(r);
	}
	*nused = m;
	return med;
}

int links_find_slow(const struct link_obs *l, int n, struct link_slow *out, int max)
{
	struct link_slow *all = calloc(n > 0 ? (size_t)n : 1, sizeof(*all));
	struct link_obs *others = calloc(n > 0 ? (size_t)n : 1, sizeof(*others));
	int k = 0, i, j, m, used;

	if (!all || !others)
		goto out_free;
	for (i = 0; i < n; i++) {
		double rate = link_rate(&l[i]), med;

		if (!(rate > 0))
			continue;
		/* against the other links: the slow ones must not drag their own yardstick */
		for (j = 0, m = 0; j < n; j++)
			if (j != i)
				others[m++] = l[j];
		med = links_median(others, m, &used);
		if (used >= 2 && rate * LINK_SLOW_FACTOR < med)
			all[k++] = (struct link_slow){ l[i].from, l[i].to, rate, med };
	}
	qsort(all, (size_t)k, sizeof(*all), cmp_slow);
	k = k < max ? k : max;
	memcpy(out, all, (size_t)k * sizeof(*out));
out_free:
	free(others);
	free(all);
	return k;
}

int links_slow_persistent(struct link_obs *const *obs, const int *nobs, int nsizes,
			  struct link_slow *out, int max, double *min_factor)
{
	struct link_slow cand[64], at[64];
	double fac[64], least = 0;
	int k, m, i, j, z, f;

	if (nsizes < 1)
		return 0;
	k = links_find_slow(obs[nsizes - 1], nobs[nsizes - 1], cand, (int)ARRAY_SIZE(cand));
	for (i = 0; i < k; i++)
		fac[i] = cand[i].median_Bps / cand[i].rate_Bps;
	for (z = 0; z < nsizes - 1 && k; z++) {
		m = links_find_slow(obs[z], nobs[z], at, (int)ARRAY_SIZE(at));
		for (i = 0, j = 0; i < k; i++) {
			for (f = 0; f < m; f++)
				if (at[f].from == cand[i].from && at[f].to == cand[i].to)
					break;
			if (f == m)
				continue; /* not slow at this size: not persistently slow */
			fac[j] = fmin(fac[i], at[f].median_Bps / at[f].rate_Bps);
			cand[j++] = cand[i];
		}
		k = j;
	}
	k = k < max ? k : max;
	memcpy(out, cand, (size_t)k * sizeof(*out));
	for (i = 0; i < k; i++)
		least = i ? fmin(least, fac[i]) : fac[i];
	if (min_factor)
		*min_factor = least;
	return k;
}

int links_common_host(const struct link_slow *s, int n, const int *host_of_rank, int nranks)
{
	int found = -1, c, i;

	/* a single link touches two hosts: it names no one host */
	if (n < 2)
		return -1;
	for (i = 0; i < n; i++)
		if (s[i].from < 0 || s[i].from >= nranks || s[i].to < 0 || s[i].to >= nranks)
			return -1;
	for (c = 0; c < 2; c++) {
		int h = host_of_rank[c ? s[0].to : s[0].from];

		for (i = 1; i < n; i++)
			if (host_of_rank[s[i].from] != h && host_of_rank[s[i].to] != h)
				break;
		if (i < n || h == found)
			continue;
		if (found >= 0)
			return -1; /* both ends of every link: no one host to blame */
		found = h;
	}
	return found;
}

int links_from_json(const json_t *row, struct link_obs *l, int max)
{
	const json_t *a = jget(row, "links"), *x;
	size_t i;
	int n = 0;

	json_array_foreach(a, i, x) {
		if (n >= max)
			break;
		double fb = jget_num(x, "flight_bytes");

		l[n++] = (struct link_obs){ .from = (int)jget_num(x, "from"),
					    .to = (int)jget_num(x, "to"),
					    .bytes = jget_num(x, "bytes"),
					    .send_s = jget_num(x, "send_wait_ms") / 1e3,
					    .recv_s = jget_num(x, "recv_wait_ms") / 1e3 };
		/* absent in reports from before the transfer logs: the waits' rule */
		if (isfinite(fb) && fb > 0) {
			l[n - 1].flight_bytes = fb;
			l[n - 1].flight_s = jget_num(x, "flight_ms") / 1e3;
			l[n - 1].flight_err_s = jget_num(x, "flight_err_ms") / 1e3;
		}
	}
	return n;
}

/* Rank r's hostname in run root, or "?" */
static const char *host_name(const json_t *root, int r)
{
	const json_t *h = json_array_get(jget(root, "hosts"), (size_t)r);
	const char *n = jget_str(h, "hostname");

	return *n ? n : "?";
}


int *links_hosts_of(const json_t *root, int nr)
{
	int *h = calloc(nr > 0 ? (size_t)nr : 1, sizeof(*h));

	for (int j = 0; h && j < nr; j++) {
		double hi = jget_num(json_array_get(jget(root, "hosts"), (size_t)j), "host_index");

		h[j] = isfinite(hi) ? (int)hi : j;
	}
	return h;
}

/* Links between hosts of one row, at most max; 0 when it has none. */
static int row_links(const json_t *row, const int *host_of, int nr, struct link_obs *obs, int max)
{
	int n = links_from_json(row, obs, max), m = 0;

	for (int k = 0; k < n; k++)
		if (obs[k].from >= 0 && obs[k].from < nr && obs[k].to >= 0 && obs[k].to < nr &&
		    host_of[obs[k].from] != host_of[obs[k].to])
			obs[m++] = obs[k];
	return m;
}

#define LINK_SIZES_MAX 64

/*
 * The ring rows a case's verdict rests on, smallest size first: every size from
 * LINK_MIN_SIZE up, or the largest alone when none is that big. Returns how many.
 */
static int ring_rows(const json_t *c, const json_t **rows)
{
	const json_t *r, *big = NULL;
	int n = 0;
	size_t j;

	json_array_foreach(jget(c, "collective"), j, r) {
		if (!json_array_size(jget(r, "links")) ||
		    strcmp(jget_str(r, "algo"), sched_algo_name(ALGO_RING)))
			continue;
		if (!big || jget_num(r, "size") >= jget_num(big, "size"))
			big = r;
		if (jget_num(r, "size") >= (double)LINK_MIN_SIZE && n < LINK_SIZES_MAX)
			rows[n++] = r;
	}
	if (!n && big)
		rows[n++] = big;
	/* rows come in sweep order; the verdict wants the largest last */
	for (int a = 1; a < n; a++)
		for (int b = a; b > 0 && jget_num(rows[b - 1], "size") > jget_num(rows[b], "size"); b--) {
			const json_t *t = rows[b];

			rows[b] = rows[b - 1];
			rows[b - 1] = t;
		}
	return n;
}

/* Say so where a link's rate rests on its ends' waits, not its time in flight. */
static void note_waits_rule(struct rdoc *d, const char *name, struct link_obs *const *obs,
			    const int *nobs, int nrows)
{
	int waits = 0, uncertain = 0, all = 0;

	for (int z = 0; z < nrows; z++)
		for (int k = 0; k < nobs[z]; k++, all++)
			if (!link_in_flight(&obs[z][k])) {
				waits++;
				uncertain += obs[z][k].flight_bytes > 0;
			}
	if (!waits)
		return;
	if (uncertain)
		doc_text(d, RB_ITEM, "%s: %d of %d link rates rest on both ends' waits, not the time in flight: the clock offset between their hosts moves that time by more than %.0f%% of it", name, waits, all, LINK_CLOCK_TOL * 100);
	else
		doc_text(d, RB_ITEM, "%s: %d of %d link rates rest on both ends' waits (no transfer logs in this report): a link next to a slow one can read slow from backpressure", name, waits, all);
}

/*
 * Only links between hosts are judged: inside one host a "link" is two ranks sharing
 * cores and memory, and a slow one is a slow rank, which the per-rank results name.
 */
void section_links(const struct report_set *s, struct rdoc *d)
{
	struct link_slow slow[8];
	bool any = false;
	int i;

	for (i = 0; i < s->ncases; i++) {
		const json_t *c = s->cases[i].json, *root = s->runs[s->cases[i].run].root;
		const json_t *rows[LINK_SIZES_MAX];
		struct link_obs *obs[LINK_SIZES_MAX] = { NULL };
		int nobs[LINK_SIZES_MAX];
		int nr = (int)json_array_size(jget(root, "hosts")), *host_of, nrows, k = 0, common, z;
		char a[64], b[64], sz[32];
		double least = 0;
		bool ok = true;
		size_t j;

		/* ring only: in a tree or rhd, links off the critical path keep one end
		 * waiting long and the other not at all, and read as slow or fast by turns */
		nrows = ring_rows(c, rows);
		host_of = nrows ? links_hosts_of(root, nr) : NULL;
		if (!host_of)
			continue;
		for (z = 0; z < nrows && ok; z++) {
			int cap = (int)json_array_size(jget(rows[z], "links"));

			obs[z] = calloc((size_t)cap + 1, sizeof(*obs[z]));
			ok = obs[z] != NULL;
			if (ok)
				nobs[z] = row_links(rows[z], host_of, nr, obs[z], cap);
			ok = ok && nobs[z] > 0;
		}
		if (ok)
			k = links_slow_persistent(obs, nobs, nrows, slow, 8, &least);
		if (!ok)
			goto next;
		if (!any) {
			doc_text(d, RB_H2, "Links");
			doc_text(d, RB_PARA, "Per link r -> p between hosts, at each ring case's sizes from %s up "
				 "(the largest alone when none is that big): its rate = the bytes of its messages "
				 "over the time their data was in flight (from when both r and p had posted a "
				 "message until p had it; ranks on one kernel share its clock, between kernels the "
				 "offset is bounded by round trips through the bootstrap). A link below 1/%.0f of "
				 "the median of the other links at every one of those sizes is named; a bottleneck "
				 "that moves from link to link between sizes is not a slow link.",
				 units_fmt_size(LINK_MIN_SIZE, sz, sizeof(sz)), LINK_SLOW_FACTOR);
			any = true;
		}
		units_fmt_size((uint64_t)jget_num(rows[nrows - 1], "size"), sz, sizeof(sz));
		note_waits_rule(d, s->cases[i].name, obs, nobs, nrows);
		if (!k) {
			int used;
			double med = links_median(obs[nrows - 1], nobs[nrows - 1], &used);

			doc_text(d, RB_ITEM, "%s: no slow link among %d (median %s MB/s at %s, %d size%s judged)%s",
				 s->cases[i].name, used, fmt_num(med / 1e6, a, sizeof(a)), sz, nrows,
				 nrows == 1 ? "" : "s", used < 3 ? ": too few links to compare" : "");
			goto next;
		}
		for (j = 0; j < (size_t)k; j++) {
			const char *hf = host_name(root, slow[j].from), *ht = host_name(root, slow[j].to);
			char where[160];

			snprintf(where, sizeof(where), "%s's link out or %s's link in", hf, ht);
			doc_text(d, RB_ITEM, "%s: SLOW LINK rank %d (%s) -> rank %d (%s): %s MB/s at %s, median link %s MB/s (%.1fx slower; at least %.1fx at each of %d size%s): %s",
				 s->cases[i].name, slow[j].from, hf, slow[j].to, ht,
				 fmt_num(slow[j].rate_Bps / 1e6, a, sizeof(a)), sz,
				 fmt_num(slow[j].median_Bps / 1e6, b, sizeof(b)),
				 slow[j].median_Bps / slow[j].rate_Bps, least, nrows,
				 nrows == 1 ? "" : "s", where);
		}
		common = links_common_host(slow, k, host_of, nr);
		for (j = 0; common >= 0 && j < (size_t)nr; j++)
			if (host_of[j] == common) {
				doc_text(d, RB_ITEM, "%s: every slow link has host %s at one end: its link is the slow one",
					 s->cases[i].name, host_name(root, (int)j));
				break;
			}
next:
		for (z = 0; z < nrows; z++)
			free(obs[z]);
		free(host_of);
	}
}
