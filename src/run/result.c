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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
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
	if (row) {
		json_object_set_new(row, "cpu_s_per_GB", bytes > 0 ? json_real(cpu / bytes) : json_null());
		json_object_set_new(row, "host_cpu_s_per_GB",
				    bytes > 0 && host_cpu > 0 ? json_real(host_cpu / bytes) : json_null());
		if (!rc->nccl) /* NCCL cuts its own chunks */
			json_object_set_new(row, "chunk_bytes",
					    json_integer((json_int_t)run_comm_chunk(rc, co, per_rank[0]->size)));
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
