/*
 * The benchmark modes of a case (model = none): the AllReduce size sweep in the
 * manner of nccl-tests, and the point-to-point write_bw / write_lat modes in the
 * manner of perftest, over whichever transports the case connected.
 *
 * AllReduce timing: before every checked iteration (and the first) the input is
 * restored from a pristine copy (untimed), so checked results stay exact, and the
 * ranks meet in a barrier; other iterations run back to back like nccl-tests' and a
 * training job's. Each iteration is timed on each rank, and rank 0 takes per
 * iteration the ranks' mean time.
 * Point-to-point: each measurement streams `iterations` messages (write_bw) or
 * ping-pongs `iterations` times (write_lat); RUN_P2P_REPS measurements per size.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "coll/verify.h"
#include "coll/gpu_memops.h"
#include "util/common.h"
#include "util/cpus.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "util/units.h"

#define RUN_P2P_REPS 5

struct bench_bufs {
	struct run_dbuf work;
	struct run_dbuf scratch;
	void *pristine;          /* this rank's input: host memory, or GPU memory with a GPU */
	uint64_t max;
};

#define BENCH_GPU_TIMEOUT_MS 60000

/* Restore the input before an iteration (untimed; GPU: a device copy, waited for). */
static int restore_input(struct run_comm *rc, struct bench_bufs *bb, uint64_t bytes)
{
	int ret;

	if (!rc->gpu.ctx) {
		memcpy(bb->work.cb.ptr, bb->pristine, bytes);
		return 0;
	}
	ret = gpu_memcpy_async(bb->work.dev, bb->pristine, bytes, GPU_COPY_D2D, rc->gpu.ctx->comm);
	return ret ? ret : run_gpu_sync(rc->act, rc->gpu.ctx->comm, BENCH_GPU_TIMEOUT_MS);
}

/* Wrong elements of the result (GPU: checked by our kernel where the data is). */
static int check_result(struct run_rank *rr, struct run_comm *rc, struct bench_bufs *bb,
			uint64_t count, uint64_t *bad, uint64_t *first, double *got)
{
	const struct coll_opts *co = &rr->ecase->cfg.collective;
	uint64_t seed = rr->ecase->cfg.experiment.seed;
	unsigned char one[8];
	int ret;

	if (!rc->gpu.ctx) {
		*bad = verify_check(bb->work.cb.ptr, count, 0, co->dtype, co->redop, seed,
				    rr->li.nranks, first);
		*got = *bad ? verify_value(bb->work.cb.ptr, *first, co->dtype) : 0;
		return 0;
	}
	ret = gpu_verify(bb->work.dev, count, 0, co->dtype, co->redop, seed, rr->li.nranks,
			 rc->gpu.ctx->comm, BENCH_GPU_TIMEOUT_MS, bad, first);
	if (ret || !*bad)
		return ret;
	ret = gpu_memcpy(one, (char *)bb->work.dev + *first * dtype_size(co->dtype),
			 dtype_size(co->dtype), GPU_COPY_D2H);
	*got = ret ? 0 : verify_value(one, 0, co->dtype);
	return ret;
}

static uint64_t host_busy_ns(void)
{
	uint64_t ns = 0;

	cpus_host_busy_ns(&ns); /* no /proc: the host figure reads 0 */
	return ns;
}

/* Add the host's busy time since h0 (a timed span began at host_busy_ns() == h0). */
static void samples_host_cpu(struct run_rank *rr, struct run_samples *s, uint64_t h0)
{
	s->host_cpu_ns += host_busy_ns() - h0;
	/* /proc/stat is the kernel's: every rank of that kernel reads the same busy time */
	s->host_ranks = cpus_host_ranks(rr->kernel_of_rank, rr->li.nranks, rr->li.rank);
}

static struct run_samples *samples_new(uint64_t size, int iterations)
{
	struct run_samples *s = calloc(1, sizeof(*s) + iterations * sizeof(uint64_t));

	if (s) {
		/* a rank's write of an iteration's time must not fault: the others wait */
		gs_touch_pages(s, sizeof(*s) + iterations * sizeof(uint64_t));
		s->size = size;
		s->iterations = iterations;
		s->first_wrong = -1;
	}
	return s;
}

/* Gather every rank's samples of one size and append the row (rank 0). */
static int collect_row(struct run_rank *rr, struct run_comm *rc, struct run_samples *s,
		       double bus_factor, const char *op, const char *algo, json_t *rows)
{
	size_t len = sizeof(*s) + s->iterations * sizeof(uint64_t), *lens = NULL;
	struct run_samples **all = NULL;
	int ret, r, n = rr->li.nranks;

	ret = bootstrap_gatherv(rr->bs, s, len, (void ***)&all, &lens);
	if (ret || rr->li.rank != 0)
		return ret;
	for (r = 0; r < n; r++) {
		if (lens[r] != len || all[r]->iterations != s->iterations) {
			log_err(LOG_COLL, "samples of rank %d: %zu bytes, expected %zu", r, lens[r], len);
			ret = -EPROTO;
		}
	}
	if (!ret) {
		json_array_append_new(rows, run_result_row(rr, rc, all, n, bus_factor, op, algo));
		run_case_save_partial(rr, rows);
	}
	for (r = 0; r < n; r++)
		free(all[r]);
	free(all);
	free(lens);
	return ret;
}

/* The nccl-tests style row of a measured size, printed as soon as it is measured. */
/* The columns of print_row, nccl-tests' (README "While a run goes"). */
static void print_header(struct run_rank *rr)
{
	progress_row(&rr->progress, "%10s %12s %5s %4s %11s %11s %11s %8s %8s %7s %7s %6s", "size",
		     "count", "type", "op", "avg us", "p50 us", "p99 us", "algbw", "busbw",
		     "#wrong", "slowest", "spread");
}

static void print_row(struct run_rank *rr, const json_t *row)
{
	const json_t *t = json_object_get(row, "time_us"), *rk = json_object_get(row, "ranks");
	char sz[32], slow[16] = "-", spread[16] = "-", wrong[24] = "-";
	const json_t *w = json_object_get(row, "wrong");

	if (!row)
		return;
	if (json_is_integer(w)) /* null: verify = off, nothing was checked */
		snprintf(wrong, sizeof(wrong), "%lld", (long long)json_integer_value(w));
	units_fmt_size((uint64_t)json_integer_value(json_object_get(row, "size")), sz,
		       sizeof(sz));
	if (json_is_object(rk)) {
		snprintf(slow, sizeof(slow), "%lld",
			 (long long)json_integer_value(json_object_get(rk, "slowest")));
		snprintf(spread, sizeof(spread), "%.2fx",
			 json_number_value(json_object_get(rk, "spread")));
	}
	progress_row(&rr->progress, "%10s %12lld %5s %4s %11.1f %11.1f %11.1f %8.3f %8.3f %7s %7s %6s",
		     sz, (long long)json_integer_value(json_object_get(row, "count")),
		     json_string_value(json_object_get(row, "dtype")),
		     json_string_value(json_object_get(row, "redop")),
		     json_number_value(json_object_get(t, "avg")),
		     json_number_value(json_object_get(t, "p50")),
		     json_number_value(json_object_get(t, "p99")),
		     json_number_value(json_object_get(row, "algbw_GBps")),
		     json_number_value(json_object_get(row, "busbw_GBps")),
		     wrong, slow, spread);
}

/* ETA weight of an iteration: its bytes plus a latency floor worth 64 KiB. */
#define ETA_FLOOR_BYTES 65536.0

/*
 * Size si of the sweep: warm-up and timed AllReduces (restored and checked where verify
 * says), then its row appended to rows (and printed on rank 0). *done advances the
 * progress ETA, out of work.
 */
static int sweep_size(struct run_rank *rr, struct run_comm *rc, struct bench_bufs *bb, int si,
		      const struct run_test_delay *delay, double *done, double work, json_t *rows)
{
	const struct cfg *cfg = &rr->ecase->cfg;
	const struct coll_opts *co = &cfg->collective;
	size_t es = dtype_size(co->dtype);
	int n = rr->li.nranks, i, ret = 0;
	uint64_t count = co->sizes[si] / es, bytes = count * es;
	struct run_samples *s = samples_new(bytes, co->iterations);
	char label[32];
	struct coll_stats cs = { 0 };
	struct tp_stats t0, t1;
	uint64_t cpu = 0, h0 = 0, c0 = 0;
	bool span = false; /* a host CPU span is open (since h0) */
	/* a thread CPU span is open (since c0): its clock is a syscall (~0.8 us on
	 * the VM), so it is read where runs of back-to-back iterations begin and
	 * end, not around each one, where it would delay every next AllReduce */
	bool cpu_span = false;
	struct coll_peer_busy *snap = calloc((size_t)n, sizeof(*snap));

	if (!s || !snap) {
		free(s);
		free(snap);
		return -ENOMEM;
	}
	units_fmt_size(bytes, label, sizeof(label));
	for (i = 0; i < co->warmup + co->iterations && !ret; i++) {
		bool measured = i >= co->warmup;
		bool check = measured && (co->verify == VERIFY_ALL ||
					  (co->verify == VERIFY_FIRST && i == co->warmup));
		uint64_t a;

		/* The input is restored (untimed) only where a check needs it, then
		 * the ranks meet so that one rank's restore is not another's time;
		 * between, iterations run back to back on their own output, as a
		 * training job's AllReduces do (float sums stay full speed). */
		if (i == 0 || check) {
			ret = restore_input(rc, bb, bytes);
			if (i == 0)
				run_links_prepare(rc); /* ms when cold: the barrier absorbs it */
			if (!ret && measured && !span) {
				h0 = host_busy_ns(); /* read before the barrier absorbs it */
				span = true;
			}
			if (!ret)
				ret = bootstrap_barrier(rr->bs);
			if (ret)
				break;
		}
		if (i == co->warmup) {
			run_comm_stats(rc, &t0);
			run_links_snap(rc, snap);
		}
		if (measured && !span) {
			h0 = host_busy_ns();
			span = true;
		}
		*done += bytes + ETA_FLOOR_BYTES;
		progress_tick(&rr->progress, label, i + 1, co->warmup + co->iterations,
			      *done / work);
		run_test_delay_sleep(&rr->act[ACT_THREAD_MAIN], delay, i);
		if (measured && !cpu_span) {
			c0 = time_thread_cpu_ns();
			cpu_span = true;
		}
		a = time_now_ns();
		ret = run_comm_allreduce(rc, &bb->work, 0, &bb->scratch, count, co->dtype,
					 co->redop, co, &cs);
		if (!measured || ret)
			continue;
		s->ns[i - co->warmup] = time_now_ns() - a;
		if (check || i == co->warmup + co->iterations - 1) {
			cpu += time_thread_cpu_ns() - c0;
			cpu_span = false;
		}
		s->bytes_sent += cs.bytes_sent;
		if (check) {
			uint64_t first, bad;
			double got;

			/* host CPU counts the timed spans only, not checks and restores */
			samples_host_cpu(rr, s, h0);
			span = false;

			ret = check_result(rr, rc, bb, count, &bad, &first, &got);
			if (ret)
				break;
			if (bad && s->first_wrong < 0) {
				s->first_wrong = (int64_t)first;
				log_err(LOG_COLL,
					"verification of %llu bytes: %llu wrong elements, first at index %llu (got %g, expected %g)",
					(unsigned long long)bytes, (unsigned long long)bad,
					(unsigned long long)first, got,
					verify_expected(first, co->dtype, co->redop,
							cfg->experiment.seed, n));
			}
			s->wrong += bad;
		}
	}
	if (!ret) {
		if (span)
			samples_host_cpu(rr, s, h0);
		run_comm_stats(rc, &t1);
		s->cpu_ns = cpu + (t1.cpu_ns - t0.cpu_ns);
		ret = collect_row(rr, rc, s, coll_busbw_factor(co->op, n), "allreduce",
				  run_comm_algo_name(rc, cs.algo), rows);
		if (!ret)
			ret = run_links_collect(rr, rc, snap,
						json_array_get(rows, json_array_size(rows) - 1));
		if (!ret && rr->li.rank == 0)
			print_row(rr, json_array_get(rows, json_array_size(rows) - 1));
	}
	free(snap);
	free(s);
	return ret;
}

static int sweep_allreduce(struct run_rank *rr, struct run_comm *rc, struct bench_bufs *bb,
			   json_t *rows)
{
	struct run_test_delay delay = run_test_delay_get(rr->li.rank);
	double work = 0, done = 0;
	const struct cfg *cfg = &rr->ecase->cfg;
	const struct coll_opts *co = &cfg->collective;
	size_t es = dtype_size(co->dtype);
	int n = rr->li.nranks, si, ret = 0;

	if (rc->gpu.ctx) {
		ret = gpu_fill(bb->pristine, bb->max / es, 0, co->dtype, cfg->experiment.seed,
			       rr->li.rank, n, rc->gpu.ctx->comm);
		if (!ret)
			ret = run_gpu_sync(rc->act, rc->gpu.ctx->comm, BENCH_GPU_TIMEOUT_MS);
	} else {
		verify_fill(bb->pristine, bb->max / es, 0, co->dtype, co->redop,
			    cfg->experiment.seed, rr->li.rank, n);
	}
	for (si = 0; si < co->nsizes; si++)
		work += (co->sizes[si] + ETA_FLOOR_BYTES) * (co->warmup + co->iterations);
	print_header(rr);
	for (si = 0; si < co->nsizes && !ret; si++)
		ret = sweep_size(rr, rc, bb, si, &delay, &done, work, rows);
	return ret;
}

/* Every pair of a pairwise row, the slow ones marked, as they are measured. */
static void print_pairs(struct run_rank *rr, const json_t *row)
{
	const json_t *p;
	size_t i;
	char sz[32];

	units_fmt_size((uint64_t)json_integer_value(json_object_get(row, "size")), sz, sizeof(sz));
	json_array_foreach(json_object_get(row, "pairs"), i, p) {
		char pair[24];

		snprintf(pair, sizeof(pair), "%lld-%lld",
			 (long long)json_integer_value(json_object_get(p, "a")),
			 (long long)json_integer_value(json_object_get(p, "b")));
		progress_row(&rr->progress, "%10s %9s %12.3f %10.2f%s", sz, pair,
			     json_number_value(json_object_get(p, "bw_GBps")),
			     json_number_value(json_object_get(p, "lat_us")),
			     json_is_true(json_object_get(p, "slow")) ? "  <- slow" : "");
	}
}

static int sweep_p2p(struct run_rank *rr, struct run_comm *rc, struct bench_bufs *bb,
		     json_t *rows)
{
	const struct coll_opts *co = &rr->ecase->cfg.collective;
	bool bw = co->op == COLL_OP_WRITE_BW;
	int si, rep, ret = 0;

	if (rr->li.nranks < 2) {
		log_err(LOG_COLL, "%s needs 2 ranks (this case has %d)", bw ? "write_bw" : "write_lat",
			rr->li.nranks);
		return -EINVAL;
	}
	if (rc->nccl) {
		log_err(LOG_COLL, "%s is not available with transport = nccl (NCCL is the AllReduce reference)",
			bw ? "write_bw" : "write_lat");
		return -ENOTSUP;
	}
	print_header(rr);
	for (si = 0; si < co->nsizes && !ret; si++) {
		uint64_t bytes = co->sizes[si];
		struct run_samples *s = samples_new(bytes, RUN_P2P_REPS);
		struct tp_stats t0, t1;
		uint64_t ns, c0, h0;

		if (!s)
			return -ENOMEM;
		/* rank 0 sends a byte pattern that rank 1 checks after the last measurement */
		if (rr->li.rank == 0)
			for (uint64_t k = 0; k < bytes; k++)
				((unsigned char *)bb->work.cb.ptr)[k] = (unsigned char)(k * 7 + si);
		else
			memset(bb->work.cb.ptr, 0, bytes);
		ret = bw ? coll_write_bw(rc->coll, &bb->work.cb, bytes, GS_MAX(co->warmup, 1),
					 co->window, &ns)
			 : coll_write_lat(rc->coll, &bb->work.cb, bytes, GS_MAX(co->warmup, 1), &ns);
		if (!ret)
			ret = bootstrap_barrier(rr->bs);
		run_comm_stats(rc, &t0);
		c0 = time_thread_cpu_ns();
		h0 = host_busy_ns();
		for (rep = 0; rep < RUN_P2P_REPS && !ret; rep++) {
			ret = bw ? coll_write_bw(rc->coll, &bb->work.cb, bytes, co->iterations,
						 co->window, &ns)
				 : coll_write_lat(rc->coll, &bb->work.cb, bytes, co->iterations, &ns);
			s->ns[rep] = ns / (bw ? (uint64_t)co->iterations : 2ull * co->iterations);
		}
		run_comm_stats(rc, &t1);
		samples_host_cpu(rr, s, h0);
		s->cpu_ns = time_thread_cpu_ns() - c0 + (t1.cpu_ns - t0.cpu_ns);
		s->bytes_sent = t1.bytes_sent - t0.bytes_sent;
		if (!ret && rr->li.rank == 1) {
			for (uint64_t k = 0; k < bytes; k++) {
				if (((unsigned char *)bb->work.cb.ptr)[k] != (unsigned char)(k * 7 + si)) {
					if (s->first_wrong < 0)
						s->first_wrong = (int64_t)k;
					s->wrong++;
				}
			}
			if (s->wrong)
				log_err(LOG_COLL, "%s of %llu bytes: %llu wrong bytes, first at %lld",
					bw ? "write_bw" : "write_lat", (unsigned long long)bytes,
					(unsigned long long)s->wrong, (long long)s->first_wrong);
		}
		/* ranks beyond 1 take no part: their zero samples must not win the max */
		if (!ret)
			ret = collect_row(rr, rc, s, coll_busbw_factor(co->op, rr->li.nranks),
					  bw ? "write_bw" : "write_lat", "p2p", rows);
		if (!ret && rr->li.rank == 0) /* as each AllReduce size's row: once measured */
			print_row(rr, json_array_get(rows, json_array_size(rows) - 1));
		free(s);
	}
	return ret;
}

/*
 * op = pairwise, like ClusterKit: every pair a < b in turn, a streaming to b (write_bw)
 * and ping-ponging with it (write_lat), the median of RUN_P2P_REPS measurements each,
 * timed on a; rank 0 gathers every rank's pairs into one row per size and names the
 * pairs well below the others (run_pairwise_row).
 */
static int sweep_pairwise(struct run_rank *rr, struct run_comm *rc, struct bench_bufs *bb,
			  json_t *rows)
{
	const struct coll_opts *co = &rr->ecase->cfg.collective;
	int n = rr->li.nranks, npairs = n * (n - 1) / 2, si, a, b, k, rep, ret = 0;
	double *mine = calloc(2 * (size_t)(npairs ? npairs : 1), sizeof(*mine));
	double work = (double)co->nsizes * (npairs ? npairs : 1), done = 0;

	if (!mine)
		return -ENOMEM;
	if (n < 2 || rc->nccl) {
		log_err(LOG_COLL, "pairwise needs 2 ranks or more and a transport of ours (case has %d rank%s%s)",
			n, n == 1 ? "" : "s", rc->nccl ? ", transport = nccl" : "");
		free(mine);
		return -EINVAL;
	}
	progress_row(&rr->progress, "%10s %9s %12s %10s", "size", "pair", "bw GB/s", "lat us");
	for (si = 0; si < co->nsizes && !ret; si++) {
		uint64_t bytes = co->sizes[si];
		double **all = NULL;
		size_t *lens = NULL;
		char label[32];

		units_fmt_size(bytes, label, sizeof(label));
		memset(mine, 0, 2 * (size_t)npairs * sizeof(*mine));
		for (k = 0, a = 0; a < n && !ret; a++) {
			for (b = a + 1; b < n && !ret; b++, k++) {
				double bw[RUN_P2P_REPS], lat[RUN_P2P_REPS];
				uint64_t ns;

				progress_tick(&rr->progress, label, k + 1, npairs, done++ / work);
				ret = coll_write_bw_pair(rc->coll, &bb->work.cb, bytes,
							 GS_MAX(co->warmup, 1), co->window, a, b, &ns);
				for (rep = 0; rep < RUN_P2P_REPS && !ret; rep++) {
					ret = coll_write_bw_pair(rc->coll, &bb->work.cb, bytes,
								 co->iterations, co->window, a, b,
								 &ns);
					bw[rep] = ns ? (double)bytes * co->iterations / ns : 0;
					if (!ret)
						ret = coll_write_lat_pair(rc->coll, &bb->work.cb, bytes,
									  co->iterations, a, b, &ns);
					lat[rep] = ns / 1e3 / (2.0 * co->iterations);
				}
				if (!ret && rr->li.rank == a) {
					mine[2 * k] = run_median(bw, RUN_P2P_REPS);
					mine[2 * k + 1] = run_median(lat, RUN_P2P_REPS);
				}
			}
		}
		if (!ret)
			ret = bootstrap_gatherv(rr->bs, mine, 2 * (size_t)npairs * sizeof(*mine),
						(void ***)&all, &lens);
		if (!ret && rr->li.rank == 0) {
			json_t *row = run_pairwise_row(rr, bytes, co->iterations, all, npairs);

			if (row) {
				print_pairs(rr, row);
				json_array_append_new(rows, row);
				run_case_save_partial(rr, rows);
			}
		}
		for (a = 0; all && a < n; a++)
			free(all[a]);
		free(all);
		free(lens);
	}
	free(mine);
	return ret;
}

int run_bench(struct run_rank *rr, struct run_comm *rc, json_t **results)
{
	const struct coll_opts *co = &rr->ecase->cfg.collective;
	struct bench_bufs bb = { 0 };
	json_t *rows = json_array();
	int si, ret;

	*results = NULL;
	for (si = 0; si < co->nsizes; si++)
		bb.max = GS_MAX(bb.max, co->sizes[si]);
	bb.pristine = rc->gpu.ctx ? gpu_alloc(bb.max) : malloc(bb.max);
	if (!bb.pristine) {
		ret = -ENOMEM;
		goto out;
	}
	if (!rc->gpu.ctx)
		memset(bb.pristine, 0, bb.max);
	/* + 1: the point-to-point handshake byte lives past the largest message */
	ret = run_dbuf_alloc(rc, &bb.work, bb.max + 1, GPU_MIRROR_DATA);
	if (ret)
		goto out;
	if (bb.work.host)
		run_node_verify(rr, bb.work.host, bb.max);
	ret = run_dbuf_alloc(rc, &bb.scratch,
			     coll_scratch_bytes(run_comm_chunk(rc, bb.max), co->channels),
			     GPU_MIRROR_SCRATCH);
	if (ret)
		goto out_work;
	if (co->op == COLL_OP_ALLREDUCE)
		ret = sweep_allreduce(rr, rc, &bb, rows);
	else if (co->op == COLL_OP_PAIRWISE)
		ret = sweep_pairwise(rr, rc, &bb, rows);
	else
		ret = sweep_p2p(rr, rc, &bb, rows);
	run_dbuf_free(rc, &bb.scratch, GPU_MIRROR_SCRATCH);
out_work:
	run_dbuf_free(rc, &bb.work, GPU_MIRROR_DATA);
out:
	if (rc->gpu.ctx)
		gpu_free(bb.pristine);
	else
		free(bb.pristine);
	/* a case that failed part way keeps the sizes it measured */
	if (rr->li.rank == 0)
		*results = rows;
	else
		json_decref(rows);
	return ret;
}
