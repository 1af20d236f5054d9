/*
 * Collective algorithms as pure step schedules. An algorithm is a function of
 * (rank, nranks, count) that produces, for that rank, the ordered list of steps of
 * an AllReduce over `count` elements. Nothing here touches memory or a network, so
 * unit tests check schedules with a simulated executor.
 *
 * Semantics of one step (the executor's contract):
 *  - every send and receive of a step may be in flight at the same time;
 *  - a send reads buf[off, off+count) as it stands after the previous step completed;
 *  - a receive with SCHED_RECV_REDUCE lands in scratch, then buf[off..] = op(buf, scratch);
 *    with SCHED_RECV_COPY it overwrites buf[off, off+count) directly;
 *  - in an overlap step (step.overlap) sends may name the ranges the step's REDUCE
 *    receives reduce into: those receives stay in scratch until every send of the step
 *    completed (its bytes are out of buf), then the step's reductions are applied;
 *  - step k+1 starts when every transfer and reduction of step k is complete.
 * Offsets and counts are in elements. A transfer with count 0 is never emitted.
 * The executor pipelines by running the schedule over independent pieces of the
 * buffer (chunk_size decides the piece), several pieces in flight; for a staggered
 * schedule (sched.staggered) pieces enter each step in piece order, a bounded number
 * at a time, which cannot deadlock: the lowest unfinished piece is never held back.
 *
 * Guarantees every builder gives (sched_test.c checks them for n = 1..17):
 *  - step indices are global: every rank's schedule has the same nsteps, and a send
 *    from a to b in step k pairs with a receive at b from a in step k (a rank may have
 *    empty steps). When a step holds several sends to one peer, the i-th of them pairs
 *    with that peer's i-th receive from this rank in the same step; `ord` is that i,
 *    and the executor puts it in the tag. Paired transfers have equal counts.
 *  - within a step, no send range overlaps a receive range unless the step is an
 *    overlap step and the receive is a REDUCE one; a COPY receive overlaps no other
 *    receive (REDUCE receives may overlap each other: the op is commutative and the
 *    executor applies them one at a time);
 *  - no transfer names the rank itself;
 *  - each element is reduced exactly once over all ranks, and for REDOP_AVG the
 *    step holding the element's last reduction names it in scale_off/scale_count:
 *    the executor divides that range by nranks after the step's reductions, before
 *    the next step's sends read it (nranks == 1: empty schedule, avg is the identity);
 *  - the REDUCE receives of one step need at most scratch_count elements of scratch,
 *    and scratch_count <= SCHED_SCRATCH_CHUNKS * chunk for pieces cut by
 *    sched_piece_count().
 */
#ifndef GS_COLL_SCHEDULE_H
#define GS_COLL_SCHEDULE_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#define SCHED_MAX_XFER 4
/* Upper bound of one piece's scratch, in chunks, over every algorithm of the table. */
#define SCHED_SCRATCH_CHUNKS 4
/* Tags carry the step index in 12 bits; builders refuse longer schedules (-E2BIG). */
#define SCHED_MAX_STEPS 4096

enum coll_algo {
	ALGO_AUTO = 0,
	ALGO_RING,
	ALGO_TREE,         /* double binary tree */
	ALGO_RHD,          /* recursive halving-doubling, any nranks */
	ALGO_RD,           /* recursive doubling, any nranks (small messages) */
	ALGO_HIERARCHICAL, /* intra-node reduce-scatter, inter-node allreduce, intra-node allgather */
	ALGO_LINEAR,       /* all to rank 0 and back: fewest messages (crowded hosts, small) */
	ALGO_COUNT,
};

enum sched_recv_mode {
	SCHED_RECV_REDUCE = 0,
	SCHED_RECV_COPY,
};

struct sched_xfer {
	int32_t peer;
	uint8_t mode;      /* enum sched_recv_mode (receives only) */
	uint8_t ord;       /* pairing ordinal among this step's transfers with the same peer */
	uint64_t off;      /* element offset in the rank's buffer */
	uint64_t count;    /* elements */
};

struct sched_step {
	uint8_t nsend;
	uint8_t nrecv;
	struct sched_xfer send[SCHED_MAX_XFER];
	struct sched_xfer recv[SCHED_MAX_XFER];
	uint64_t scale_off;   /* REDOP_AVG: divide [scale_off, +scale_count) by nranks */
	uint64_t scale_count; /* after this step's reductions; 0 = nothing to scale */
	bool overlap;         /* sends may overlap REDUCE receives (see the step semantics) */
};

struct sched {
	int algo;              /* enum coll_algo actually used */
	int rank;
	int nranks;
	uint64_t count;
	uint32_t nsteps;
	uint32_t cap;
	struct sched_step *steps;
	uint64_t scratch_count; /* max elements of REDUCE receives in one step */
	int local_size;         /* hierarchical: ranks per node it was built for, else 0 */
	bool staggered;         /* its steps load different links (tree): the executor
				   lets pieces into each step in piece order, at most
				   ceil(channels / nsteps) at once (exec.c), so the pieces
				   in flight spread over the steps and keep every link busy
				   instead of moving in lockstep */
};

/*
 * Build rank's schedule of an AllReduce of count elements with a concrete algorithm.
 * Returns 0, -EINVAL for a bad argument or ALGO_AUTO (resolve it with sched_pick
 * first), -E2BIG beyond SCHED_MAX_STEPS, -ENOMEM.
 * On success the caller owns out->steps and releases it with sched_free.
 *
 * Node layout (the _on variants): local_size ranks per host, ranks grouped host by host
 * in equal blocks (ranks [h*L, (h+1)*L) share host h), which is what our launchers
 * produce; sched_local_size() derives it. Only hierarchical uses it:
 *   local_size 0 (not given, as in sched_build()): -ENOTSUP, one log line;
 *   local_size < 0 or not dividing nranks (no equal blocks): a ring is built instead,
 *   with one log line, and out->algo says ALGO_RING.
 * Hierarchical: 2(L-1) intra-node steps around 2(N-1) inter-node steps (N = nranks / L).
 */
int sched_build(int algo, int rank, int nranks, uint64_t count, struct sched *out);
int sched_build_on(int algo, int rank, int nranks, int local_size, uint64_t count,
		   struct sched *out);
int sched_build_hier(int rank, int nranks, int local_size, uint64_t count, struct sched *out);
/* Is local_size a layout hierarchical can use for nranks (equal blocks)? */
bool sched_hier_layout_ok(int nranks, int local_size);
/*
 * The layout of a job from its host map (transport_env.host_of_rank: equal value = same
 * host): ranks per host when hosts hold equal consecutive blocks of ranks, else -1
 * (hierarchical then runs as a ring). nranks < 1: -1.
 */
int sched_local_size(const int *host_of_rank, int nranks);
void sched_free(struct sched *s);

/* The algorithms table: one row per enum coll_algo, named as the experiment file spells them. */
const char *sched_algo_name(int algo);
const char *sched_algo_help(int algo); /* one line for `gradsync keys` and the README */
/* -EINVAL when the name is unknown, else the enum value. */
int sched_algo_by_name(const char *name);

/*
 * ALGO_AUTO's choice for an AllReduce of `bytes` per rank over nranks ranks:
 *   bytes <= SCHED_AUTO_RD (64 KiB)      -> rd when nranks is a power of two, 2 included
 *                                           (log2 n steps of the whole buffer: the fewest
 *                                           rounds; with 2 ranks one step where ring takes
 *                                           two, for the same bytes on the wire)
 *   nranks <= 2                          -> ring
 *   bytes <= SCHED_AUTO_SMALL (256 KiB)  -> rhd when nranks is a power of two, else tree
 *                                           (latency: 2 log2 n steps instead of 2(n-1); tree
 *                                           avoids rhd's two full-buffer fold steps)
 *   otherwise                            -> ring (bandwidth optimal, 2(n-1)/n S per rank)
 * SCHED_AUTO_RD from tests/bench/bench_algo.sh on the 2-core VM (tests/bench/RESULTS.md,
 * "Where auto switches"): rd led ring (2 ranks) and rhd, tree, ring (4 ranks) at every
 * size up to 64 KiB over tcp and shm; over tcp it fell behind from 128 KiB, where its
 * messages outgrow TCP_EAGER_MAX and wait for a clear-to-send.
 */
#define SCHED_AUTO_RD	 (64ull << 10)
#define SCHED_AUTO_SMALL (256ull << 10)
int sched_pick(int nranks, uint64_t bytes);
/*
 * ALGO_AUTO's choice knowing the job's shape, as the executor asks it: tp_kind the
 * transport (enum transport_kind) every peer is reached over, TP_AUTO when several;
 * crowded: the host's ranks outnumber its CPUs, where the number of hand-overs (a
 * message waits for its receiver to be scheduled) outweighs the rounds and bytes
 * sched_pick weighs. Every rank must pass the same values, or ranks run different
 * schedules and the AllReduce stalls, so the shape counts only for a job on one host
 * (one_host); across hosts it is sched_pick's answer. The executor (exec_pick) and the
 * projection (predict_pick) both ask here. Pure; sched.c holds the measured crossovers.
 */
int sched_pick_on(int nranks, uint64_t bytes, bool one_host, int tp_kind, bool crowded);

/*
 * Elements per pipelined piece for chunk elements per message: ring cuts a piece into
 * nranks chunks; tree (two halves) and rhd (first halving) into 2. The last piece of a
 * buffer is shorter. Returns 0 for ALGO_AUTO and hierarchical (it needs the _on variant).
 */
uint64_t sched_piece_count(int algo, int nranks, uint64_t chunk);
/* Hierarchical: L * min(N, SCHED_SCRATCH_CHUNKS) chunks; ring's with an unequal layout,
 * 0 with local_size 0. */
uint64_t sched_piece_count_on(int algo, int nranks, int local_size, uint64_t chunk);

/*
 * The alpha-beta cost of one AllReduce of S bytes per rank:
 *   t = alpha * steps + beta * S * wire_factor
 * steps: message rounds on the critical path; wire_factor: bytes sent by the busiest
 * rank divided by S (ring 2(n-1)/n; rhd 2(p-1)/p, +1 when n is not a power of two p;
 * tree: its busiest node's up + down halves; linear: the root's n-1 whole buffers). Returns 0 or -EINVAL / -ENOTSUP.
 */
struct sched_cost {
	uint32_t steps;
	double wire_factor;
};
int sched_cost(int algo, int nranks, struct sched_cost *cost);
int sched_cost_on(int algo, int nranks, int local_size, struct sched_cost *cost);
double sched_model_ns(const struct sched_cost *cost, uint64_t bytes, double alpha_ns,
		      double beta_ns_per_byte);

/* ---- used by the builders (ring.c, tree.c, rhd.c) ---- */

/* Start of chunk i when count elements are cut into n balanced chunks (sizes differ by <= 1). */
static inline uint64_t sched_chunk_off(uint64_t count, int n, int i)
{
	return (uint64_t)i * (count / (uint64_t)n) + ((uint64_t)i < count % (uint64_t)n ?
						      (uint64_t)i : count % (uint64_t)n);
}

/* Allocate nsteps empty steps (zeroed); the schedule then holds algo/rank/nranks/count. */
int sched_alloc(struct sched *s, uint32_t nsteps);
/* Append a transfer to step; count 0 is dropped. Returns 0 or -EOVERFLOW (> SCHED_MAX_XFER). */
int sched_add_send(struct sched *s, uint32_t step, int peer, uint64_t off, uint64_t count);
int sched_add_recv(struct sched *s, uint32_t step, int peer, int mode, uint64_t off,
		   uint64_t count);
void sched_set_scale(struct sched *s, uint32_t step, uint64_t off, uint64_t count);

/*
 * Chunks [lo, hi) of the buffer cut into n balanced chunks (sched_chunk_off of s->count):
 * sched_add_send / sched_add_recv / sched_set_scale over that range.
 */
int sched_add_send_chunks(struct sched *s, uint32_t step, int peer, int n, int lo, int hi);
int sched_add_recv_chunks(struct sched *s, uint32_t step, int peer, int mode, int n, int lo,
			  int hi);
void sched_set_scale_chunks(struct sched *s, uint32_t step, int n, int lo, int hi);

/*
 * MPICH's fold for n = p + rem ranks, p the largest power of two <= n (rhd.c, rd.c): the
 * first 2*rem ranks pair up; each even one hands its whole buffer to its odd neighbour in
 * the first step and takes the result back in the last; in between it has nothing to do.
 * Participant v of the p runs on rank sched_fold_rank(v, rem).
 */
struct sched_fold {
	int p;          /* participants */
	int lg;         /* log2 p */
	int rem;        /* ranks past p, folded onto their odd neighbours */
	int v;          /* this rank's participant index (when !done) */
	uint32_t first; /* the exchange's first step: 1 after the fold's step, else 0 */
	bool done;      /* nothing more to add: a single rank, or one folded away */
};
/*
 * Allocate rounds * lg exchange steps, framed by the fold's first and last step when
 * rem > 0, and add this rank's part of the fold. 0 or -errno.
 */
int sched_fold_begin(struct sched *s, int rounds, struct sched_fold *f);
static inline int sched_fold_rank(int v, int rem)
{
	return v < rem ? 2 * v + 1 : v + rem;
}

int sched_build_ring(struct sched *s);
int sched_build_tree(struct sched *s);
int sched_build_rhd(struct sched *s);
int sched_build_rd(struct sched *s);
int sched_build_linear(struct sched *s);
/* hier.c: the hierarchical steps for s->rank/nranks/count, local_size already validated */
int sched_build_hier_steps(struct sched *s, int local_size);
/* Double binary tree (as NCCL): parent and children of rank in tree t (0/1); -1 = none. */
void sched_dtree(int nranks, int rank, int t, int *up, int *down0, int *down1);

#endif
