/*
 * The synthetic DDP training loop: forward, backward walking the compute timeline in
 * gradient-ready order, each bucket's AllReduce launched when its last gradient is
 * ready (overlap = on, DDP's behaviour, buckets in order) or all after backward
 * (overlap = off), and the optimizer step waiting for every bucket.
 *
 * Threads: the caller's thread plays compute; a comm thread owned by this module runs
 * the buckets' AllReduces one after another through ddp_ops.allreduce (the executor,
 * bound by the caller), so compute and communication overlap as in training. Every
 * wait for it is bounded, its return included: one that never returns from allreduce
 * is left running (ddp_result.comm_stuck).
 */
#ifndef GS_WORKLOAD_DDP_H
#define GS_WORKLOAD_DDP_H

#include <stdbool.h>
#include <stdint.h>

#include "util/activity.h"
#include "util/dtype.h"
#include "workload/bucket.h"
#include "workload/timeline.h"
#include "workload/workload.h"

/* How compute is played; the caller supplies GPU kernels for gemm/spin. */
struct ddp_iter;

struct ddp_ops {
	void *arg;
	/* AllReduce (avg) of count elements at buf; runs on the comm thread. 0 or -errno. */
	int (*allreduce)(void *arg, void *buf, uint64_t count, enum dtype dt);
	/* Play `seconds` of compute of layer `layer` (NULL: sleep). May only queue the work
	 * (GPU): compute_wait then waits for it before a bucket is declared ready. 0 or -errno. */
	int (*compute)(void *arg, uint32_t layer, int backward, double seconds);
	int (*compute_wait)(void *arg);  /* NULL: compute returns when done */
	/* Verification of gradients the CPU cannot read (GPU memory); NULL: coll/verify.c on
	 * grads. fill: this rank's input pattern; check: *wrong elements, *first index. */
	int (*fill)(void *arg, uint64_t count, enum dtype dt, uint64_t seed, int rank, int nranks);
	int (*check)(void *arg, uint64_t count, enum dtype dt, uint64_t seed, int nranks,
		     uint64_t *wrong, uint64_t *first);
	/* All ranks meet (NULL: none): after verification's fill and check, which each rank
	 * takes at its own pace off the timed span, so the next timed iteration starts
	 * together instead of one rank's wait for a slower one's check counting as its
	 * communication. 0 or -errno. */
	int (*realign)(void *arg);
	/* Non-zero when the job is aborting (a peer died). */
	volatile const int *abort_flag;
	uint64_t timeout_ns;           /* bound of every wait for a bucket, and (twice it)
					* of the wait for the comm thread to return */
	/* The comm thread's activity record, written by allreduce (NULL: none): named when
	 * the thread does not return. */
	const struct activity *comm_act;
	/* After each iteration (warmup ones too): i of total, this rank's time; NULL = none.
	 * Called on the rank's main thread, between iterations (off the timed span). */
	void (*on_iter)(void *arg, int i, int total, int warmup, const struct ddp_iter *it);
};

/* Times of one iteration on this rank, in ns since the iteration started. */
struct ddp_iter {
	uint64_t fwd_end;
	uint64_t bwd_end;
	uint64_t end;                  /* last bucket done (optimizer step starts) */
	uint64_t start_abs;            /* CLOCK_MONOTONIC at the iteration's start */
};

struct ddp_bucket_times {
	uint64_t ready;
	uint64_t start;
	uint64_t end;
};

/* One rank's measurements: iterations[i], buckets[i * nbuckets + b]. */
struct ddp_result {
	int iterations;
	uint32_t nbuckets;
	struct ddp_iter *iter;
	struct ddp_bucket_times *bucket;
	uint64_t wrong;                /* verification of the first measured iteration */
	int64_t first_wrong;
	/* ddp_run failed with -ETIMEDOUT because the comm thread did not return from
	 * ops->allreduce within its bound: it still runs, detached, and everything that
	 * call reaches (ops->arg and what it points to, grads, the transports) must stay
	 * allocated for as long as the process lives. Set even after ddp_result_free. */
	bool comm_stuck;
};

/*
 * Run warmup + iterations of the loop over grads (plan->bytes bytes, one slice per
 * bucket, registered by the caller). Fills *res (caller frees with ddp_result_free).
 * verify: fill a known pattern before the first measured iteration and check the
 * average bit-exactly after it. Returns 0 or -errno (timeout, abort, transport error);
 * -ETIMEDOUT with res->comm_stuck when the comm thread did not return (see there).
 */
int ddp_run(const struct workload_opts *w, const struct bucket_plan *plan,
	    const struct compute_timeline *ct, void *grads, const struct ddp_ops *ops, int rank,
	    int nranks, uint64_t seed, int verify, struct ddp_result *res);
void ddp_result_free(struct ddp_result *res);

/*
 * The fields of PyTorch DDP's logging (ddp._get_ddp_logging_data()), averaged over the
 * measured iterations of one rank, in ns, with DDP's definitions:
 *   avg_forward_compute_time   forward start .. backward start
 *   avg_backward_compute_time  backward start .. last gradient ready
 *   avg_backward_comm_time     first bucket's AllReduce start .. last one's end
 *   avg_backward_compute_comm_overlap_time  first AllReduce start .. last gradient ready
 *                              (negative when communication starts after backward, as
 *                              DDP's own number would be with overlap off)
 */
struct ddp_logging {
	double avg_forward_compute_time;
	double avg_backward_compute_time;
	double avg_backward_comm_time;
	double avg_backward_compute_comm_overlap_time;
};

void ddp_logging_fields(const struct ddp_result *res, struct ddp_logging *out);

#endif
