/*
 * The benchmark modes of a case (model = none): the AllReduce size sweep in the
 * manner of nccl-tests, and the point-to-point write_bw / write_lat modes in the
 * manner of perftest, over whichever transports the case connected.
 *
 * AllReduce timing: before every iteration the input is restored from a pristine
 * copy (untimed), so results stay exact and verifiable; each iteration is timed on
 * each rank, and rank 0 takes per iteration the slowest rank's time.
 * Point-to-point: each measurement streams `iterations` messages (write_bw) or
 * ping-pongs `iterations` times (write_lat); RUN_P2P_REPS measurements per size.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/run.h"
#include "coll/verify.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

#define RUN_P2P_REPS 5

struct bench_bufs {
	struct coll_buf work;
	struct coll_buf scratch;
	void *pristine;
	uint64_t max;
};

static struct run_samples *samples_new(uint64_t size, int iterations)
{
	struct run_samples *s = calloc(1, sizeof(*s) + iterations * sizeof(uint64_t));

	if (s) {
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

	ret = run_gather(rr, s, len, (void ***)&all, &lens);
	if (ret || rr->li.rank != 0)
		return ret;
	for (r = 0; r < n; r++) {
		if (lens[r] != len || all[r]->iterations != s->iterations) {
			log_err(LOG_COLL, "samples of rank %d: %zu bytes, expected %zu", r, lens[r], len);
			ret = -EPROTO;
		}
	}
	if (!ret)
		json_array_append_new(rows, run_result_row(rr, rc, all, n, bus_factor, op, algo));
	for (r = 0; r < n; r++)
		free(all[r]);
	free(all);
	free(lens);
	return ret;
}

static int sweep_allreduce(struct run_rank *rr, struct run_comm *rc, struct bench_bufs *bb,
			   json_t *rows)
{
	const struct cfg *cfg = &rr->ecase->cfg;
	const struct coll_opts *co = &cfg->collective;
	size_t es = dtype_size(co->dtype);
	int n = rr->li.nranks, si, i, ret = 0;

	verify_fill(bb->pristine, bb->max / es, 0, co->dtype, co->redop, cfg->experiment.seed,
		    rr->li.rank, n);
	for (si = 0; si < co->nsizes && !ret; si++) {
		uint64_t count = co->sizes[si] / es, bytes = count * es;
		struct run_samples *s = samples_new(bytes, co->iterations);
		struct coll_stats cs = { 0 };
		struct tp_stats t0, t1;
		uint64_t cpu = 0;

		if (!s)
			return -ENOMEM;
		for (i = 0; i < co->warmup + co->iterations && !ret; i++) {
			bool measured = i >= co->warmup;
			uint64_t a, c0;

			memcpy(bb->work.ptr, bb->pristine, bytes);
			if (i == co->warmup) {
				ret = bootstrap_barrier(rr->bs);
				run_comm_stats(rc, &t0);
				if (ret)
					break;
			}
			c0 = time_thread_cpu_ns();
			a = time_now_ns();
			ret = coll_allreduce(rc->coll, &bb->work, 0, &bb->scratch, count, co->dtype,
					     co->redop, co->algo, co->chunk_size, co->channels, &cs);
			if (!measured || ret)
				continue;
			s->ns[i - co->warmup] = time_now_ns() - a;
			cpu += time_thread_cpu_ns() - c0;
			s->bytes_sent += cs.bytes_sent;
			if (co->verify == VERIFY_ALL || (co->verify == VERIFY_FIRST && i == co->warmup)) {
				uint64_t first;
				uint64_t bad = verify_check(bb->work.ptr, count, 0, co->dtype, co->redop,
							    cfg->experiment.seed, n, &first);

				if (bad && s->first_wrong < 0) {
					s->first_wrong = (int64_t)first;
					log_err(LOG_COLL,
						"verification of %llu bytes: %llu wrong elements, first at index %llu (got %g, expected %g)",
						(unsigned long long)bytes, (unsigned long long)bad,
						(unsigned long long)first,
						verify_value(bb->work.ptr, first, co->dtype),
						verify_expected(first, co->dtype, co->redop,
								cfg->experiment.seed, n));
				}
				s->wrong += bad;
			}
		}
		if (!ret) {
			run_comm_stats(rc, &t1);
			s->cpu_ns = cpu + (t1.cpu_ns - t0.cpu_ns);
			ret = collect_row(rr, rc, s, n > 1 ? 2.0 * (n - 1) / n : 0.0, "allreduce",
					  sched_algo_name(cs.algo), rows);
		}
		free(s);
	}
	return ret;
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
	for (si = 0; si < co->nsizes && !ret; si++) {
		uint64_t bytes = co->sizes[si];
		struct run_samples *s = samples_new(bytes, RUN_P2P_REPS);
		struct tp_stats t0, t1;
		uint64_t ns, c0;

		if (!s)
			return -ENOMEM;
		/* rank 0 sends a byte pattern that rank 1 checks after the last measurement */
		if (rr->li.rank == 0)
			for (uint64_t k = 0; k < bytes; k++)
				((unsigned char *)bb->work.ptr)[k] = (unsigned char)(k * 7 + si);
		else
			memset(bb->work.ptr, 0, bytes);
		ret = bw ? coll_write_bw(rc->coll, &bb->work, bytes, GS_MAX(co->warmup, 1),
					 co->window, &ns)
			 : coll_write_lat(rc->coll, &bb->work, bytes, GS_MAX(co->warmup, 1), &ns);
		if (!ret)
			ret = bootstrap_barrier(rr->bs);
		run_comm_stats(rc, &t0);
		c0 = time_thread_cpu_ns();
		for (rep = 0; rep < RUN_P2P_REPS && !ret; rep++) {
			ret = bw ? coll_write_bw(rc->coll, &bb->work, bytes, co->iterations,
						 co->window, &ns)
				 : coll_write_lat(rc->coll, &bb->work, bytes, co->iterations, &ns);
			s->ns[rep] = ns / (bw ? (uint64_t)co->iterations : 2ull * co->iterations);
		}
		run_comm_stats(rc, &t1);
		s->cpu_ns = time_thread_cpu_ns() - c0 + (t1.cpu_ns - t0.cpu_ns);
		s->bytes_sent = t1.bytes_sent - t0.bytes_sent;
		if (!ret && rr->li.rank == 1) {
			for (uint64_t k = 0; k < bytes; k++) {
				if (((unsigned char *)bb->work.ptr)[k] != (unsigned char)(k * 7 + si)) {
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
			ret = collect_row(rr, rc, s, 1.0, bw ? "write_bw" : "write_lat", "p2p", rows);
		free(s);
	}
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
	bb.pristine = malloc(bb.max);
	if (!bb.pristine) {
		ret = -ENOMEM;
		goto out;
	}
	memset(bb.pristine, 0, bb.max);
	/* + 1: the point-to-point handshake byte lives past the largest message */
	ret = run_buf_alloc(rc, &bb.work, bb.max + 1);
	if (ret)
		goto out;
	run_node_verify(rr, bb.work.ptr, bb.max);
	ret = run_buf_alloc(rc, &bb.scratch, coll_scratch_bytes(co->chunk_size, co->channels));
	if (ret)
		goto out_work;
	if (co->op == COLL_OP_ALLREDUCE)
		ret = sweep_allreduce(rr, rc, &bb, rows);
	else
		ret = sweep_p2p(rr, rc, &bb, rows);
	run_buf_free(rc, &bb.scratch);
out_work:
	run_buf_free(rc, &bb.work);
out:
	free(bb.pristine);
	if (rr->li.rank == 0 && !ret)
		*results = rows;
	else
		json_decref(rows);
	return ret;
}
