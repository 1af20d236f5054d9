/*
 * Statistics of one measured size: per iteration the slowest rank's time (a
 * collective is done when its last rank is done), then avg / p50 / p99 / min / max,
 * algorithm and bus bandwidth, wrong elements and CPU seconds per GB.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "util/common.h"
#include "util/dtype.h"
#include "util/log.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double run_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n ? v[(n - 1) / 2] : 0;
}

/* Nearest-rank percentile of sorted v. */
static double percentile(const double *v, size_t n, double p)
{
	size_t i = (size_t)ceil(p / 100.0 * n);

	return v[i ? i - 1 : 0];
}

json_t *run_stats_json(double *v, size_t n, double scale, const char *mean_key)
{
	double sum = 0;
	size_t i;

	if (!n)
		return json_null();
	qsort(v, n, sizeof(*v), cmp_double);
	for (i = 0; i < n; i++)
		sum += v[i];
	return json_pack("{s:f, s:f, s:f, s:f, s:f}", mean_key, sum / n * scale, "p50",
			 percentile(v, n, 50) * scale, "p99", percentile(v, n, 99) * scale, "min",
			 v[0] * scale, "max", v[n - 1] * scale);
}

/*
 * Per-rank figures of one size. A rank's time of an iteration runs from its own entry
 * to its own exit; every rank leaves within a step of the others, so the rank with
 * the shortest time entered last: the others waited for it. That rank is the
 * iteration's slowest; the row names the rank slowest in most iterations, the share
 * of iterations it was, the spread (median over iterations of the longest rank time
 * over the shortest), every rank's mean, and per rank every iteration's time while
 * ranks x iterations <= RUN_RANK_ITERS_MAX. A straggler is a slowest rank that is so
 * in >= 75% of at least 10 iterations (by chance alone, one of 4 ranks is so in 15 of
 * 20 with odds near 1e-6) and the others wait >= 10% of their median time for it.
 */
#define RUN_RANK_ITERS_MAX 65536
#define RUN_STRAGGLER_ITERS 10
#define RUN_STRAGGLER_SHARE 0.75
#define RUN_STRAGGLER_WAIT 0.1

json_t *run_rank_stats(struct run_samples **per_rank, int nranks, const char *const *hosts,
		       struct run_straggler *st)
{
	int iters = per_rank[0]->iterations, i, r, best = 0;
	int *cnt = calloc((size_t)nranks, sizeof(*cnt));
	double *ratio = calloc((size_t)iters + 1, sizeof(*ratio));
	double *lead = calloc((size_t)iters + 1, sizeof(*lead));
	double *col = calloc((size_t)nranks, sizeof(*col));
	json_t *o = NULL, *means, *iter_us = NULL;

	memset(st, 0, sizeof(*st));
	st->rank = -1;
	if (!cnt || !ratio || !lead || !col || nranks < 1)
		goto out;
	for (i = 0; i < iters; i++) {
		double lo = INFINITY, hi = 0;
		int who = 0;

		for (r = 0; r < nranks; r++) {
			double t = (double)per_rank[r]->ns[i];

			col[r] = t;
			if (t < lo) {
				lo = t;
				who = r;
			}
			hi = GS_MAX(hi, t);
		}
		cnt[who]++;
		ratio[i] = lo > 0 ? hi / lo : 1;
		/* how long the others waited for it: their median time minus its time */
		qsort(col, (size_t)nranks, sizeof(*col), cmp_double);
		lead[i] = col[nranks / 2] > 0 ? (col[nranks / 2] - lo) / col[nranks / 2] : 0;
	}
	for (r = 1; r < nranks; r++)
		if (cnt[r] > cnt[best])
			best = r;
	st->share = iters ? (double)cnt[best] / iters : 0;
	st->lead = iters ? run_median(lead, iters) : 0;
	o = json_object();
	means = json_array();
	if (nranks * iters <= RUN_RANK_ITERS_MAX)
		iter_us = json_array();
	for (r = 0; r < nranks; r++) {
		double sum = 0;
		json_t *a = iter_us ? json_array() : NULL;

		for (i = 0; i < iters; i++) {
			sum += per_rank[r]->ns[i] / 1e3;
			if (a)
				json_array_append_new(a, json_real(per_rank[r]->ns[i] / 1e3));
		}
		json_array_append_new(means, json_real(iters ? sum / iters : 0));
		if (a)
			json_array_append_new(iter_us, a);
	}
	json_object_set_new(o, "slowest", json_integer(best));
	json_object_set_new(o, "slowest_share", json_real(st->share));
	json_object_set_new(o, "spread", json_real(iters ? run_median(ratio, iters) : 1));
	json_object_set_new(o, "wait_share", json_real(st->lead));
	json_object_set_new(o, "mean_us", means);
	json_object_set_new(o, "iter_us", iter_us ? iter_us : json_null());
	if (nranks > 1 && iters >= RUN_STRAGGLER_ITERS && st->share >= RUN_STRAGGLER_SHARE &&
	    st->lead >= RUN_STRAGGLER_WAIT) {
		st->rank = best;
		snprintf(st->host, sizeof(st->host), "%s", hosts ? hosts[best] : "");
		json_object_set_new(o, "straggler",
				    json_pack("{s:i, s:s, s:f, s:f}", "rank", best, "host", st->host,
					      "share", st->share, "wait_share", st->lead));
	} else {
		json_object_set_new(o, "straggler", json_null());
	}
out:
	free(cnt);
	free(ratio);
	free(lead);
	free(col);
	return o;
}

json_t *run_result_row(const struct run_rank *rr, const struct run_comm *rc,
		       struct run_samples **per_rank, int nranks, double bus_factor,
		       const char *op, const char *algo)
{
	const struct coll_opts *co = &rr->ecase->cfg.collective;
	int iters = per_rank[0]->iterations, i, r;
	double *t = calloc(iters ? iters : 1, sizeof(*t));
	double sum = 0, avg_s, algbw, cpu = 0, host_cpu = 0, bytes = 0;
	uint64_t wrong = 0;
	int64_t first_wrong = -1;
	json_t *row;

	if (!t)
		return NULL;
	for (i = 0; i < iters; i++) {
		for (r = 0; r < nranks; r++)
			t[i] = GS_MAX(t[i], (double)per_rank[r]->ns[i]);
		sum += t[i];
	}
	for (r = 0; r < nranks; r++) {
		wrong += per_rank[r]->wrong;
		if (per_rank[r]->first_wrong >= 0 &&
		    (first_wrong < 0 || per_rank[r]->first_wrong < first_wrong))
			first_wrong = per_rank[r]->first_wrong;
		cpu += per_rank[r]->cpu_ns / 1e9;
		host_cpu += per_rank[r]->host_cpu_ns / 1e9 / GS_MAX(per_rank[r]->host_ranks, 1);
		bytes += per_rank[r]->bytes_sent / 1e9;
	}
	avg_s = iters ? sum / iters / 1e9 : 0;
	algbw = avg_s > 0 ? per_rank[0]->size / avg_s / 1e9 : 0;
	row = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:i, s:o, s:f, s:f, s:I, s:I}", "op", op,
			"algo", algo, "dtype", dtype_name(co->dtype), "redop", redop_name(co->redop),
			"size", (json_int_t)per_rank[0]->size, "count",
			(json_int_t)(per_rank[0]->size / dtype_size(co->dtype)), "iterations", iters,
			"time_us", run_stats_json(t, iters, 1e-3, "avg"), "algbw_GBps", algbw, "busbw_GBps",
			algbw * bus_factor, "wrong", (json_int_t)wrong, "first_wrong",
			(json_int_t)first_wrong);
	if (row && nranks > 1 && strcmp(op, "allreduce") == 0) {
		const char **hosts = calloc((size_t)nranks, sizeof(*hosts));
		struct run_straggler st;

		for (r = 0; hosts && r < nranks; r++)
			hosts[r] = rr->hosts ? rr->hosts[r].hostname : "";
		json_object_set_new(row, "ranks", run_rank_stats(per_rank, nranks, hosts, &st));
		free(hosts);
		if (st.rank >= 0)
			log_warn(LOG_COLL, "straggler at %llu bytes: rank %d (host %s) arrives last in %.0f%% of the iterations; the others wait %.0f%% of their time for it",
				 (unsigned long long)per_rank[0]->size, st.rank, st.host,
				 100 * st.share, 100 * st.lead);
	}
	if (row) {
		json_object_set_new(row, "cpu_s_per_GB", bytes > 0 ? json_real(cpu / bytes) : json_null());
		json_object_set_new(row, "host_cpu_s_per_GB",
				    bytes > 0 && host_cpu > 0 ? json_real(host_cpu / bytes) : json_null());
		if (!rc->nccl) /* NCCL cuts its own chunks */
			json_object_set_new(row, "chunk_bytes",
					    json_integer((json_int_t)run_comm_chunk(rc, per_rank[0]->size)));
		if (strcmp(op, "allreduce") != 0) {
			/* write_bw/lat: the configured messages (round trips) per measurement,
			 * and how many measurements the times summarise; times are per message */
			json_object_set_new(row, "iterations", json_integer(co->iterations));
			json_object_set_new(row, "samples", json_integer(iters));
		}
	}
	free(t);
	return row;
}

/*
 * A pairwise size: every pair's bandwidth and latency as its sender measured them
 * (per_rank[a][2k], [2k + 1] for pair k = (a, b), a < b, in order). A pair is slow when
 * its bandwidth is below RUN_PAIR_SLOW_BW of the pairs' median, or its latency above
 * RUN_PAIR_SLOW_LAT times the median; the row's figures are the medians over pairs.
 */
#define RUN_PAIR_SLOW_BW 0.6
#define RUN_PAIR_SLOW_LAT 3.0

json_t *run_pairwise_row(const struct run_rank *rr, uint64_t size, int iterations,
			 double **per_rank, int npairs)
{
	const struct coll_opts *co = &rr->ecase->cfg.collective;
	int n = rr->li.nranks, a, b, k;
	double *bw = calloc((size_t)npairs + 1, sizeof(*bw));
	double *lat = calloc((size_t)npairs + 1, sizeof(*lat));
	double *sbw = calloc((size_t)npairs + 1, sizeof(*sbw));
	double *slat = calloc((size_t)npairs + 1, sizeof(*slat));
	double mbw, mlat;
	json_t *row = NULL, *pairs, *slow;

	if (!bw || !lat || !sbw || !slat)
		goto out;
	for (k = 0, a = 0; a < n; a++)
		for (b = a + 1; b < n; b++, k++) {
			bw[k] = sbw[k] = per_rank[a][2 * k];
			lat[k] = slat[k] = per_rank[a][2 * k + 1];
		}
	mbw = run_median(sbw, npairs);
	mlat = run_median(slat, npairs);
	pairs = json_array();
	slow = json_array();
	for (k = 0, a = 0; a < n; a++)
		for (b = a + 1; b < n; b++, k++) {
			const char *ha = rr->hosts ? rr->hosts[a].hostname : "";
			const char *hb = rr->hosts ? rr->hosts[b].hostname : "";
			bool is_slow = npairs > 2 && (bw[k] < RUN_PAIR_SLOW_BW * mbw ||
						      lat[k] > RUN_PAIR_SLOW_LAT * mlat);
			json_t *p = json_pack("{s:i, s:i, s:s, s:s, s:f, s:f, s:b}", "a", a, "b", b,
					      "host_a", ha, "host_b", hb, "bw_GBps", bw[k],
					      "lat_us", lat[k], "slow", is_slow);

			if (is_slow) {
				json_array_append(slow, p);
				log_warn(LOG_COLL, "slow pair at %llu bytes: ranks %d-%d (%s - %s) %.3f GB/s, %.2f us against the pairs' median %.3f GB/s, %.2f us",
					 (unsigned long long)size, a, b, ha, hb, bw[k], lat[k], mbw, mlat);
			}
			json_array_append_new(pairs, p);
		}
	row = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:i, s:o, s:f, s:f, s:I, s:I, s:o, s:o}",
			"op", "pairwise", "algo", "p2p", "dtype", dtype_name(co->dtype), "redop",
			redop_name(co->redop), "size", (json_int_t)size, "count",
			(json_int_t)(size / dtype_size(co->dtype)), "iterations", iterations,
			"time_us", run_stats_json(lat, (size_t)npairs, 1, "avg"), "algbw_GBps", mbw,
			"busbw_GBps", mbw, "wrong", (json_int_t)0, "first_wrong", (json_int_t)-1,
			"pairs", pairs, "slow_pairs", slow);
out:
	free(bw);
	free(lat);
	free(sbw);
	free(slat);
	return row;
}
