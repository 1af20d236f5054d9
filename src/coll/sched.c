/*
 * The algorithms table (one row per enum coll_algo), sched_build's dispatch, the
 * step-building helpers every builder uses, ALGO_AUTO's choice and the alpha-beta costs.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "coll/schedule.h"
#include "transport/transport.h"
#include "util/common.h"
#include "util/log.h"

struct algo_row {
	const char *name;
	const char *help;
	int (*build)(struct sched *s);
	int piece_chunks; /* chunks per piece; 0 = nranks, -1 = layout's (hierarchical) */
};

static int build_hier(struct sched *s)
{
	return sched_build_hier_steps(s, s->local_size);
}

static const struct algo_row algo_table[ALGO_COUNT] = {
    [ALGO_AUTO] = {"auto", "pick by ranks, size, transport and CPUs (ring; rd up to 64 KiB, rhd/tree up to 256 KiB; linear for small messages over shm/tcp where one host's ranks outnumber its CPUs)", NULL, 0},
    [ALGO_RING] = {"ring", "ring reduce-scatter + all-gather, 2(n-1) steps", sched_build_ring, 0},
    [ALGO_TREE] = {"tree", "double binary tree (as NCCL), 2 ceil(log2 n) steps", sched_build_tree,
		   2},
    [ALGO_RHD] = {"rhd", "recursive halving-doubling (Rabenseifner), folds non-power-of-2",
		  sched_build_rhd, 2},
    [ALGO_RD] = {"rd", "recursive doubling: log2 n steps of the whole buffer, folds non-power-of-2",
		 sched_build_rd, 1},
    [ALGO_HIERARCHICAL] = {"hierarchical",
			   "intra-node ring reduce-scatter, inter-node ring allreduce, intra-node "
			   "all-gather; needs ranks in equal host blocks (else ring)",
			   build_hier, -1},
    [ALGO_LINEAR] = {"linear",
		     "every rank to rank 0 and back: 2(n-1) messages in all, the fewest "
		     "hand-overs where ranks outnumber CPUs; small messages",
		     sched_build_linear, 1},
};

const char *sched_algo_help(int algo)
{
	if (algo < 0 || algo >= ALGO_COUNT)
		return "";
	return algo_table[algo].help;
}

const char *sched_algo_name(int algo)
{
	if (algo < 0 || algo >= ALGO_COUNT)
		return "?";
	return algo_table[algo].name;
}

int sched_algo_by_name(const char *name)
{
	for (int i = 0; i < ALGO_COUNT; i++)
		if (!strcasecmp(name, algo_table[i].name))
			return i;
	return -EINVAL;
}

void sched_free(struct sched *s)
{
	free(s->steps);
	s->steps = NULL;
	s->nsteps = 0;
	s->cap = 0;
}

int sched_alloc(struct sched *s, uint32_t nsteps)
{
	if (nsteps > SCHED_MAX_STEPS) {
		log_err(LOG_COLL, "schedule %s nranks=%d: %u steps exceed the tag's %d",
			sched_algo_name(s->algo), s->nranks, nsteps, SCHED_MAX_STEPS);
		return -E2BIG;
	}
	s->nsteps = nsteps;
	s->cap = nsteps;
	s->steps = NULL;
	if (!nsteps)
		return 0;
	s->steps = calloc(nsteps, sizeof(*s->steps));
	if (!s->steps) {
		log_err(LOG_COLL, "calloc schedule %s: %u steps", sched_algo_name(s->algo), nsteps);
		return -ENOMEM;
	}
	return 0;
}

static int sched_add(struct sched_xfer *arr, uint8_t *n, int peer, int mode, uint64_t off,
		     uint64_t count)
{
	if (!count)
		return 0;
	if (*n >= SCHED_MAX_XFER)
		return -EOVERFLOW;
	arr[*n] =
	    (struct sched_xfer){.peer = peer, .mode = (uint8_t)mode, .off = off, .count = count};
	(*n)++;
	return 0;
}

int sched_add_send(struct sched *s, uint32_t step, int peer, uint64_t off, uint64_t count)
{
	struct sched_step *st = &s->steps[step];

	return sched_add(st->send, &st->nsend, peer, SCHED_RECV_COPY, off, count);
}

int sched_add_recv(struct sched *s, uint32_t step, int peer, int mode, uint64_t off, uint64_t count)
{
	struct sched_step *st = &s->steps[step];

	return sched_add(st->recv, &st->nrecv, peer, mode, off, count);
}

void sched_set_scale(struct sched *s, uint32_t step, uint64_t off, uint64_t count)
{
	s->steps[step].scale_off = off;
	s->steps[step].scale_count = count;
}

int sched_add_send_chunks(struct sched *s, uint32_t step, int peer, int n, int lo, int hi)
{
	uint64_t off = sched_chunk_off(s->count, n, lo);

	return sched_add_send(s, step, peer, off, sched_chunk_off(s->count, n, hi) - off);
}

int sched_add_recv_chunks(struct sched *s, uint32_t step, int peer, int mode, int n, int lo,
			  int hi)
{
	uint64_t off = sched_chunk_off(s->count, n, lo);

	return sched_add_recv(s, step, peer, mode, off, sched_chunk_off(s->count, n, hi) - off);
}

void sched_set_scale_chunks(struct sched *s, uint32_t step, int n, int lo, int hi)
{
	uint64_t off = sched_chunk_off(s->count, n, lo);

	sched_set_scale(s, step, off, sched_chunk_off(s->count, n, hi) - off);
}

static void sched_number(struct sched_xfer *x, int n)
{
	for (int i = 0; i < n; i++) {
		x[i].ord = 0;
		for (int j = 0; j < i; j++)
			x[i].ord += x[j].peer == x[i].peer;
	}
}

/* Pairing ordinals and the scratch bound, once the builder placed every transfer. */
static void sched_finish(struct sched *s)
{
	s->scratch_count = 0;
	for (uint32_t k = 0; k < s->nsteps; k++) {
		struct sched_step *st = &s->steps[k];
		uint64_t scratch = 0;

		sched_number(st->send, st->nsend);
		sched_number(st->recv, st->nrecv);
		for (int i = 0; i < st->nrecv; i++)
			if (st->recv[i].mode == SCHED_RECV_REDUCE)
				scratch += st->recv[i].count;
		s->scratch_count = GS_MAX(s->scratch_count, scratch);
	}
}

/*
 * Hierarchical needs a layout of equal host blocks; with another one (local_size < 0 or
 * not dividing nranks) it runs as a ring. local_size 0 (not given) is the caller's bug.
 */
static int resolve_layout(int algo, int nranks, int local_size, bool quiet)
{
	if (algo != ALGO_HIERARCHICAL || sched_hier_layout_ok(nranks, local_size))
		return algo;
	if (!local_size)
		return -ENOTSUP;
	if (!quiet)
		log_warn(LOG_COLL,
			 "hierarchical nranks=%d local_size=%d: ranks are not grouped host by "
			 "host in equal blocks, running ring instead",
			 nranks, local_size);
	return ALGO_RING;
}

int sched_build(int algo, int rank, int nranks, uint64_t count, struct sched *out)
{
	return sched_build_on(algo, rank, nranks, 0, count, out);
}

int sched_build_hier(int rank, int nranks, int local_size, uint64_t count, struct sched *out)
{
	return sched_build_on(ALGO_HIERARCHICAL, rank, nranks, local_size, count, out);
}

int sched_build_on(int algo, int rank, int nranks, int local_size, uint64_t count,
		   struct sched *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	if (algo < 0 || algo >= ALGO_COUNT || nranks < 1 || rank < 0 || rank >= nranks) {
		log_err(LOG_COLL, "sched_build algo=%d rank=%d nranks=%d: invalid", algo, rank,
			nranks);
		return -EINVAL;
	}
	if (algo == ALGO_AUTO) {
		log_err(LOG_COLL, "sched_build: algo auto must be resolved with sched_pick first");
		return -EINVAL;
	}
	if (!algo_table[algo].build) {
		log_err(LOG_COLL, "sched_build algo=%s: this algorithm needs the node layout (sched_build_on)",
			algo_table[algo].name);
		return -ENOTSUP;
	}
	algo = resolve_layout(algo, nranks, local_size, false);
	if (algo < 0) {
		log_err(LOG_COLL,
			"sched_build hierarchical nranks=%d: no node layout given "
			"(sched_build_on with local_size)",
			nranks);
		return algo;
	}
	out->algo = algo;
	out->local_size = algo == ALGO_HIERARCHICAL ? local_size : 0;
	out->rank = rank;
	out->nranks = nranks;
	out->count = count;
	ret = algo_table[algo].build(out);
	if (ret) {
		if (ret == -EOVERFLOW)
			log_err(LOG_COLL,
				"schedule %s rank=%d nranks=%d: more than %d transfers in "
				"a step",
				algo_table[algo].name, rank, nranks, SCHED_MAX_XFER);
		sched_free(out);
		return ret;
	}
	sched_finish(out);
	return 0;
}

/* The largest power of two p <= n (its log2 in *lg); returns n - p. */
static int fold_split(int n, int *p, int *lg)
{
	*p = 1;
	*lg = 0;
	while (2 * *p <= n) {
		*p *= 2;
		(*lg)++;
	}
	return n - *p;
}

/* This rank's fold steps: step 0 and `last`; *away: folded away, nothing else to do. */
static int add_fold(struct sched *s, int rem, uint32_t last, bool *away)
{
	int r = s->rank, ret = 0;

	*away = r < 2 * rem && !(r & 1);
	if (*away) {
		ret = sched_add_send(s, 0, r + 1, 0, s->count);
		return ret ? ret : sched_add_recv(s, last, r + 1, SCHED_RECV_COPY, 0, s->count);
	}
	if (r < 2 * rem) {
		ret = sched_add_recv(s, 0, r - 1, SCHED_RECV_REDUCE, 0, s->count);
		if (!ret)
			ret = sched_add_send(s, last, r - 1, 0, s->count);
	}
	return ret;
}

int sched_fold_begin(struct sched *s, int rounds, struct sched_fold *f)
{
	uint32_t nsteps;
	bool away;
	int ret;

	f->rem = fold_split(s->nranks, &f->p, &f->lg);
	f->first = f->rem ? 1 : 0;
	f->done = true;
	nsteps = (uint32_t)rounds * (uint32_t)f->lg + 2 * f->first;
	ret = sched_alloc(s, nsteps);
	if (ret || s->nranks == 1)
		return ret;
	ret = add_fold(s, f->rem, nsteps - 1, &away);
	if (ret || away)
		return ret;
	/* participant v: v = r/2 for r < 2*rem (odd r), else r - rem */
	f->v = s->rank < 2 * f->rem ? s->rank / 2 : s->rank - f->rem;
	f->done = false;
	return 0;
}

static bool is_pow2(int n)
{
	return n > 0 && !(n & (n - 1));
}

int sched_pick(int nranks, uint64_t bytes)
{
	if (nranks < 2)
		return ALGO_RING;
	if (bytes <= SCHED_AUTO_RD && is_pow2(nranks))
		return ALGO_RD;
	if (nranks == 2)
		return ALGO_RING;
	if (bytes <= SCHED_AUTO_SMALL)
		return is_pow2(nranks) ? ALGO_RHD : ALGO_TREE;
	return ALGO_RING;
}

/*
 * Where the job's shape overrides sched_pick: first row that matches wins. Crossovers
 * from tests/bench/bench_algo.sh on the 2-core VM (tests/bench/RESULTS.md, "A linear
 * schedule"): with 4 ranks on 2 CPUs linear led rd, rhd, tree and ring at every size up
 * to 256 KiB over shm (to 512 KiB, where rhd takes over by 1 MiB) and over tcp at 5 of 7
 * sizes to 256 KiB (rd within 1% at the other two), in runs of 9 interleaved
 * repetitions. 2 uncrowded shm ranks have no row: linear, which led them from 16 to 256
 * KiB on that machine loaded by other work (load 6-8), was the slowest of the three at
 * every size from 8 to 512 KiB on the quiet machine, in its slow and its fast state alike
 * (1.3-3x behind; "shm: slots to 1 MiB, 2 ranks without linear"), where sched_pick's rd
 * then ring stayed within 15% of the best. Crowded rows hold
 * 3 to SCHED_MAX_XFER + 1 ranks (one root batch) by the same count of hand-overs; only 4
 * was measured, and past one batch the root's batches add rounds.
 * Above linear's range, crowded tcp keeps the latency schedules (rhd, tree where the rank
 * count is no power of two) where sched_pick turns to ring from 256 KiB: ring's 2(n-1)
 * hand-overs against rhd's 2 log2 n cost more than its bytes save, the more so the more
 * ranks (bench_algo.sh, p50 medians of 3-5 interleaved repetitions, tests/bench/RESULTS.md
 * "Crowded tcp above linear"): at 512 KiB 4 ranks rhd 467-558 us against ring 695-945 in
 * three runs, 3 ranks tree 367 against 464, 8 ranks rhd 1429-1481 against 7393-8535; on to
 * 4 MiB from 4 ranks: with 4 ranks ring and rhd traded places between runs at 1-4 MiB in
 * p50 sweeps, but by each run's mean (what a step and the peers' bench feel; bench_algo.sh
 * STAT=avg, 11 interleaved repetitions) rhd led at 1, 2 and 4 MiB (836 / 1419 / 2825 us
 * against ring's 937 / 1772 / 3060, ahead in 9, 8 and 7 of 11), even with ring at 8-64 MiB
 * (within 5% both ways); 6 ranks tree 1.07-1.28x ring at 1-4 MiB, 8 ranks rhd or tree
 * 1.07-1.5x, ring ahead from 8 MiB (14.0 against 17.2 ms); 3 ranks within 10% of each
 * other at 1-4 MiB, so they keep ring (tests/bench/RESULTS.md "Crowded tcp to 4 MiB").
 */
struct pick_row {
	int tp_kind;		 /* enum transport_kind */
	bool crowded;
	int min_ranks, max_ranks;
	uint64_t min_bytes, max_bytes; /* inclusive */
	int algo;
	int algo_odd; /* for a rank count that is no power of two (0: algo) */
};

static const struct pick_row pick_rows[] = {
    {TP_SHM, true, 3, SCHED_MAX_XFER + 1, 0, 512ull << 10, ALGO_LINEAR, 0},
    {TP_TCP, true, 3, SCHED_MAX_XFER + 1, 0, 256ull << 10, ALGO_LINEAR, 0},
    {TP_TCP, true, 3, INT_MAX, (256ull << 10) + 1, 512ull << 10, ALGO_RHD, ALGO_TREE},
    {TP_TCP, true, 4, INT_MAX, (512ull << 10) + 1, 4ull << 20, ALGO_RHD, ALGO_TREE},
};

int sched_pick_on(int nranks, uint64_t bytes, bool one_host, int tp_kind, bool crowded)
{
	for (size_t i = 0; one_host && i < ARRAY_SIZE(pick_rows); i++) {
		const struct pick_row *p = &pick_rows[i];

		if (p->tp_kind == tp_kind && p->crowded == crowded && nranks >= p->min_ranks &&
		    nranks <= p->max_ranks && bytes >= p->min_bytes && bytes <= p->max_bytes)
			return p->algo_odd && !is_pow2(nranks) ? p->algo_odd : p->algo;
	}
	return sched_pick(nranks, bytes);
}

uint64_t sched_piece_count(int algo, int nranks, uint64_t chunk)
{
	return sched_piece_count_on(algo, nranks, 0, chunk);
}

uint64_t sched_piece_count_on(int algo, int nranks, int local_size, uint64_t chunk)
{
	int pc;

	if (algo <= ALGO_AUTO || algo >= ALGO_COUNT || !algo_table[algo].build || nranks < 1)
		return 0;
	algo = resolve_layout(algo, nranks, local_size, true);
	if (algo < 0)
		return 0;
	if (!chunk)
		chunk = 1;
	pc = algo_table[algo].piece_chunks;
	if (pc < 0) {
		/* intra messages of min(nodes, 4) chunks (the scratch bound), inter ones of
		 * one chunk up to 4 nodes */
		int nodes = nranks / local_size;

		pc = local_size * GS_MIN(nodes, SCHED_SCRATCH_CHUNKS);
	}
	return chunk * (uint64_t)(pc ? pc : nranks);
}

static uint32_t log2_floor(int n)
{
	uint32_t l = 0;

	while ((2 << l) <= n)
		l++;
	return l;
}

static uint32_t log2_ceil(int n)
{
	uint32_t l = log2_floor(n);

	return is_pow2(n) ? l : l + 1;
}

/* Busiest rank of the double binary tree: each tree moves half the data up, then down. */
static double tree_wire_factor(int nranks)
{
	double best = 0;

	for (int r = 0; r < nranks; r++) {
		double f = 0;

		for (int t = 0; t < 2; t++) {
			int up, d0, d1;

			sched_dtree(nranks, r, t, &up, &d0, &d1);
			f += 0.5 * ((up >= 0) + (d0 >= 0) + (d1 >= 0));
		}
		best = GS_MAX(best, f);
	}
	return best;
}

int sched_cost(int algo, int nranks, struct sched_cost *cost)
{
	return sched_cost_on(algo, nranks, 0, cost);
}

int sched_cost_on(int algo, int nranks, int local_size, struct sched_cost *cost)
{
	int p, nodes;

	if (nranks < 1 || algo <= ALGO_AUTO || algo >= ALGO_COUNT)
		return -EINVAL;
	algo = resolve_layout(algo, nranks, local_size, true);
	if (algo < 0)
		return algo;
	cost->steps = 0;
	cost->wire_factor = 0;
	if (nranks == 1)
		return algo_table[algo].build ? 0 : -ENOTSUP;
	switch (algo) {
	case ALGO_RING:
		cost->steps = 2 * (uint32_t)(nranks - 1);
		cost->wire_factor = 2.0 * (nranks - 1) / nranks;
		return 0;
	case ALGO_TREE:
		cost->steps = 2 * log2_ceil(nranks);
		cost->wire_factor = tree_wire_factor(nranks);
		return 0;
	case ALGO_RHD:
		p = 1 << log2_floor(nranks);
		cost->steps = 2 * log2_floor(nranks) + (p != nranks ? 2 : 0);
		cost->wire_factor = 2.0 * (p - 1) / p + (p != nranks ? 1.0 : 0.0);
		return 0;
	case ALGO_RD:
		/* the fold's first and last steps around log2 p whole-buffer exchanges; the
		 * folding ranks send the whole buffer once more */
		p = 1 << log2_floor(nranks);
		cost->steps = log2_floor(nranks) + (p != nranks ? 2 : 0);
		cost->wire_factor = log2_floor(nranks) + (p != nranks ? 1.0 : 0.0);
		return 0;
	case ALGO_LINEAR:
		/* the root's batches of SCHED_MAX_XFER up, then down; it sends S to each */
		cost->steps = 2 * (uint32_t)GS_DIV_ROUND_UP(nranks - 1, SCHED_MAX_XFER);
		cost->wire_factor = nranks - 1;
		return 0;
	case ALGO_HIERARCHICAL:
		/* 2(L-1)/L intra + 2(N-1)/N of a 1/L chunk inter: 2(n-1)/n as a ring, in
		 * 2(L-1) + 2(N-1) steps of which only 2(N-1) cross the network */
		nodes = nranks / local_size;
		cost->steps = 2 * (uint32_t)(local_size - 1) + 2 * (uint32_t)(nodes - 1);
		cost->wire_factor =
		    2.0 * (local_size - 1) / local_size + 2.0 * (nodes - 1) / nodes / local_size;
		return 0;
	default:
		return -ENOTSUP;
	}
}

double sched_model_ns(const struct sched_cost *cost, uint64_t bytes, double alpha_ns,
		      double beta_ns_per_byte)
{
	return alpha_ns * cost->steps + beta_ns_per_byte * (double)bytes * cost->wire_factor;
}
