/*
 * The algorithms table (one row per enum coll_algo), sched_build's dispatch, the
 * step-building helpers every builder uses, ALGO_AUTO's choice and the alpha-beta costs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "coll/schedule.h"
#include "util/common.h"
#include "util/log.h"

struct algo_row {
	const char *name;
	const char *help;
	int (*build)(struct sched *s);
	int piece_chunks; /* chunks per piece; 0 = nranks */
};

static const struct algo_row algo_table[ALGO_COUNT] = {
    [ALGO_AUTO] = {"auto", "pick by ranks and size (ring, or rhd/tree up to 256 KiB)", NULL, 0},
    [ALGO_RING] = {"ring", "ring reduce-scatter + all-gather, 2(n-1) steps", sched_build_ring, 0},
    [ALGO_TREE] = {"tree", "double binary tree (as NCCL), 2 ceil(log2 n) steps", sched_build_tree,
		   2},
    [ALGO_RHD] = {"rhd", "recursive halving-doubling (Rabenseifner), folds non-power-of-2",
		  sched_build_rhd, 2},
    [ALGO_HIERARCHICAL] = {"hierarchical",
			   "intra-node reduce-scatter, inter-node allreduce, intra-node "
			   "all-gather (not implemented yet)",
			   NULL, 0},
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

int sched_build(int algo, int rank, int nranks, uint64_t count, struct sched *out)
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
		log_err(LOG_COLL, "sched_build algo=%s: not implemented by the coll layer yet",
			algo_table[algo].name);
		return -ENOTSUP;
	}
	out->algo = algo;
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

static bool is_pow2(int n)
{
	return n > 0 && !(n & (n - 1));
}

int sched_pick(int nranks, uint64_t bytes)
{
	if (nranks <= 2)
		return ALGO_RING;
	if (bytes <= SCHED_AUTO_SMALL)
		return is_pow2(nranks) ? ALGO_RHD : ALGO_TREE;
	return ALGO_RING;
}

uint64_t sched_piece_count(int algo, int nranks, uint64_t chunk)
{
	if (algo <= ALGO_AUTO || algo >= ALGO_COUNT || !algo_table[algo].build)
		return 0;
	if (!chunk)
		chunk = 1;
	return chunk *
	       (uint64_t)(algo_table[algo].piece_chunks ? algo_table[algo].piece_chunks : nranks);
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
	int p;

	if (nranks < 1 || algo <= ALGO_AUTO || algo >= ALGO_COUNT)
		return -EINVAL;
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
	default:
		return -ENOTSUP;
	}
}

double sched_model_ns(const struct sched_cost *cost, uint64_t bytes, double alpha_ns,
		      double beta_ns_per_byte)
{
	return alpha_ns * cost->steps + beta_ns_per_byte * (double)bytes * cost->wire_factor;
}
