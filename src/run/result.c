/*
 * Statistics of one measured size: per iteration the ranks' mean time (run_iter_time),
 * then avg / p50 / p99 / min / max, algorithm and bus bandwidth, wrong elements and CPU
 * seconds per GB.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "report/rjson.h"
#include "util/common.h"
#include "util/cpus.h"
#include "util/dtype.h"
#include "util/log.h"

/* mean/p50/p99/min/max of n samples (ns) scaled by scale, NAN when there are none */
void run_stats(const double *v, size_t n, double scale, struct rj_stats *out)
{
	if (!n || rj_stats_from_samples(v, (int)n, out)) {
		*out = (struct rj_stats){ NAN, NAN, NAN, NAN, NAN };
		return;
	}
	rj_stats_scale(out, scale);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double run_median(const double *v, int n)
{
	struct rj_stats s;

	return n > 0 && !rj_stats_from_samples(v, n, &s) ? s.p50 : 0;
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
/* The element type of point-to-point rows: bytes, counted one by one (count = size) */
#define P2P_DTYPE "u8"

#define RUN_RANK_ITERS_MAX 65536
#define RUN_STRAGGLER_ITERS 10
#define RUN_STRAGGLER_SHARE 0.75
#define RUN_STRAGGLER_WAIT 0.1

int run_rank_stats(struct run_samples **per_rank, int nranks, const char *const *hosts,
		   struct rj_rank_stats *rs)
{
	int iters = per_rank[0]->iterations, i, r, best = 0, ret = -ENOMEM;
	int *cnt = calloc((size_t)nranks, sizeof(*cnt));
	double *ratio = calloc((size_t)iters + 1, sizeof(*ratio));
	double *lead = calloc((size_t)iters + 1, sizeof(*lead));
	double *col = calloc((size_t)nranks, sizeof(*col));
	double *mean = calloc((size_t)nranks, sizeof(*mean)), *it = NULL;

	memset(rs, 0, sizeof(*rs));
	rs->straggler.rank = -1;
	if (nranks * iters <= RUN_RANK_ITERS_MAX)
		it = calloc((size_t)nranks * iters + 1, sizeof(*it));
	if (!cnt || !ratio || !lead || !col || !mean || nranks < 1 ||
	    (nranks * iters <= RUN_RANK_ITERS_MAX && !it))
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
	for (r = 0; r < nranks; r++) {
		double sum = 0;

		for (i = 0; i < iters; i++) {
			sum += per_rank[r]->ns[i] / 1e3;
			if (it)
				it[(size_t)r * iters + i] = per_rank[r]->ns[i] / 1e3;
		}
		mean[r] = iters ? sum / iters : 0;
	}
	*rs = (struct rj_rank_stats){
		.nranks = nranks, .iterations = iters, .slowest = best,
		.slowest_share = iters ? (double)cnt[best] / iters : 0,
		.spread = iters ? run_median(ratio, iters) : 1,
		.wait_share = iters ? run_median(lead, iters) : 0,
		.mean_us = mean, .iter_us = it, .straggler = { .rank = -1 },
	};
	if (nranks > 1 && iters >= RUN_STRAGGLER_ITERS && rs->slowest_share >= RUN_STRAGGLER_SHARE &&
	    rs->wait_share >= RUN_STRAGGLER_WAIT)
		rs->straggler = (struct rj_straggler){ .rank = best, .host = hosts ? hosts[best] : "",
						       .share = rs->slowest_share,
						       .wait_share = rs->wait_share };
	mean = it = NULL;
	ret = 0;
out:
	free(cnt);
	free(ratio);
	free(lead);
	free(col);
	free(mean);
	free(it);
	return ret;
}

void run_rank_stats_free(struct rj_rank_stats *rs)
{
	free((void *)rs->mean_us);
	free((void *)rs->iter_us);
	rs->mean_us = rs->iter_us = NULL;
}

/*
 * The time of iteration i of a collective: the mean over ranks of each rank's own time,
 * entry to exit (nccl-tests averages its ranks alike). Iterations run back to back, and
 * without a handshake per message (tcp's eager sends, shm's rings) a rank leaves as soon
 * as its last receive is in: the ranks drift apart by up to a step, and a rank that
 * left early waits that much longer in the next iteration. The slowest rank's time per
 * iteration counted that wait twice (4 hosts, 50 ms links: 367 ms at p50 where every
 * rank's mean was 303-325 ms); the mean counts each rank's time once, and over the run
 * it is the mean of the ranks' elapsed times. A rank that arrives late still shows:
 * the others' waits are in their times, and the ranks' figures (run_rank_stats) name
 * it. write_bw/write_lat are timed by ranks 0 and 1 alone (the others hold zeros):
 * their time is the larger.
 */
double run_iter_time(struct run_samples **per_rank, int nranks, int i, bool p2p)
{
	double t = 0;
	int r;

	for (r = 0; r < nranks; r++)
		t = p2p ? GS_MAX(t, (double)per_rank[r]->ns[i]) : t + (double)per_rank[r]->ns[i];
	return p2p || nranks < 1 ? t : t / nranks;
}

double run_host_cpu_s_per_GB(double host_cpu_s, double GB, uint64_t tick_ns)
{
	/*
	 * /proc/stat charges whole ticks to whoever held the CPU: a figure of n ticks is off
	 * by about 1/sqrt(n), and from 1-3 ticks (a span of a few ms) it is noise.
	 */
	if (!(GB > 0) || !(host_cpu_s > 0) || !tick_ns ||
	    host_cpu_s * 1e9 < CPUS_HOST_MIN_TICKS * (double)tick_ns)
		return NAN;
	return host_cpu_s / GB;
}

json_t *run_result_row(const struct run_rank *rr, const struct run_comm *rc,
		       struct run_samples **per_rank, int nranks, double bus_factor,
		       const char *op, const char *algo)
{
	const struct coll_opts *co = &rr->ecase->cfg.collective;
	int iters = per_rank[0]->iterations, i, r;
	double *t = calloc(iters ? iters : 1, sizeof(*t));
	double sum = 0, avg_s, algbw, cpu = 0, host_cpu = 0, bytes = 0;
	bool p2p = strcmp(op, "allreduce") != 0;
	struct rj_coll_row row = {
		/* write_bw/lat move bytes: [collective] dtype and reduce_op are not read, and
		 * a count in their units grouped one run's rows apart from another's */
		.op = op, .algo = algo, .dtype = p2p ? P2P_DTYPE : dtype_name(co->dtype),
		.redop = p2p ? "none" : redop_name(co->redop), .size = per_rank[0]->size,
		.count = p2p ? per_rank[0]->size : per_rank[0]->size / dtype_size(co->dtype),
		/* write_bw/lat: the configured messages (round trips) per measurement, and
		 * how many measurements the times summarise; times are per message */
		.iterations = p2p ? co->iterations : iters, .samples = p2p ? iters : 0,
		.first_wrong = -1,
		/* write_bw/lat check every message they write, whatever verify says */
		.unchecked = !p2p && co->verify == VERIFY_OFF,
		/* NCCL cuts its own chunks */
		.chunk_bytes = rc->nccl ? 0 : run_comm_chunk(rc, per_rank[0]->size),
	};
	struct rj_rank_stats rs;
	json_t *j;

	if (!t)
		return NULL;
	for (i = 0; i < iters; i++) {
		t[i] = run_iter_time(per_rank, nranks, i, p2p);
		sum += t[i];
	}
	for (r = 0; r < nranks; r++) {
		row.wrong += per_rank[r]->wrong;
		if (per_rank[r]->first_wrong >= 0 &&
		    (row.first_wrong < 0 || per_rank[r]->first_wrong < row.first_wrong))
			row.first_wrong = per_rank[r]->first_wrong;
		cpu += per_rank[r]->cpu_ns / 1e9;
		host_cpu += per_rank[r]->host_cpu_ns / 1e9 / GS_MAX(per_rank[r]->host_ranks, 1);
		bytes += per_rank[r]->bytes_sent / 1e9;
	}
	avg_s = iters ? sum / iters / 1e9 : 0;
	algbw = avg_s > 0 ? per_rank[0]->size / avg_s / 1e9 : 0;
	run_stats(t, iters, 1e-3, &row.time_us);
	row.algbw_GBps = algbw;
	row.busbw_GBps = algbw * bus_factor;
	row.cpu_s_per_GB = bytes > 0 ? cpu / bytes : NAN;
	row.host_cpu_s_per_GB = run_host_cpu_s_per_GB(host_cpu, bytes, cpus_host_tick_ns());
	if (nranks > 1 && !p2p) {
		const char **hosts = calloc((size_t)nranks, sizeof(*hosts));

		for (r = 0; hosts && r < nranks; r++)
			hosts[r] = rr->hosts ? rr->hosts[r].hostname : "";
		if (hosts && !run_rank_stats(per_rank, nranks, hosts, &rs)) {
			row.ranks = &rs;
			if (rs.straggler.rank >= 0)
				log_warn(LOG_COLL, "straggler at %llu bytes: rank %d (host %s) arrives last in %.0f%% of the iterations; the others wait %.0f%% of their time for it",
					 (unsigned long long)per_rank[0]->size, rs.straggler.rank,
					 rs.straggler.host, 100 * rs.straggler.share,
					 100 * rs.straggler.wait_share);
		}
		j = rj_coll_row_json(&row);
		run_rank_stats_free(&rs);
		free(hosts);
	} else {
		j = rj_coll_row_json(&row);
	}
	free(t);
	return j;
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
	int n = rr->li.nranks, a, b, k;
	double *bw = calloc((size_t)npairs + 1, sizeof(*bw));
	double *lat = calloc((size_t)npairs + 1, sizeof(*lat));
	struct rj_pair *pairs = calloc((size_t)npairs + 1, sizeof(*pairs));
	struct rj_coll_row row = {
		.op = "pairwise", .algo = "p2p", .dtype = P2P_DTYPE, .redop = "none", .size = size,
		.count = size,
		.iterations = iterations, .first_wrong = -1, .cpu_s_per_GB = NAN,
		.host_cpu_s_per_GB = NAN, .pairs = pairs, .npairs = npairs,
	};
	json_t *j = NULL;

	if (!bw || !lat || !pairs)
		goto out;
	for (k = 0, a = 0; a < n; a++)
		for (b = a + 1; b < n; b++, k++) {
			bw[k] = per_rank[a][2 * k];
			lat[k] = per_rank[a][2 * k + 1];
		}
	row.algbw_GBps = row.busbw_GBps = run_median(bw, npairs);
	run_stats(lat, (size_t)npairs, 1, &row.time_us);
	for (k = 0, a = 0; a < n; a++)
		for (b = a + 1; b < n; b++, k++) {
			struct rj_pair *p = &pairs[k];

			*p = (struct rj_pair){
				.a = a, .b = b, .host_a = rr->hosts ? rr->hosts[a].hostname : "",
				.host_b = rr->hosts ? rr->hosts[b].hostname : "",
				.bw_GBps = bw[k], .lat_us = lat[k],
				.slow = npairs > 2 && (bw[k] < RUN_PAIR_SLOW_BW * row.busbw_GBps ||
						       lat[k] > RUN_PAIR_SLOW_LAT * row.time_us.p50),
			};
			if (p->slow)
				log_warn(LOG_COLL, "slow pair at %llu bytes: ranks %d-%d (%s - %s) %.3f GB/s, %.2f us against the pairs' median %.3f GB/s, %.2f us",
					 (unsigned long long)size, a, b, p->host_a, p->host_b, bw[k],
					 lat[k], row.busbw_GBps, row.time_us.p50);
		}
	j = rj_coll_row_json(&row);
out:
	free(bw);
	free(lat);
	free(pairs);
	return j;
}
