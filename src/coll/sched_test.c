/*
 * Schedules under a simulated executor: every algorithm, n = 1..17, odd counts, and
 * hierarchical over (nodes x local) layouts, run in memory with per-rank buffers whose
 * elements are contribution bitmasks, following schedule.h's step semantics exactly.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "coll/schedule.h"
#include "transport/transport.h"
#include "util/common.h"

#define SIM_MAX_RANKS 17
#define SCALED	      (1u << 31)

struct sim_msg {
	int src, dst, ord;
	bool used;
	uint64_t count;
	uint32_t *data;
};

static const int algos[] = {ALGO_RING, ALGO_TREE, ALGO_RHD, ALGO_RD, ALGO_LINEAR};

static bool overlap(const struct sched_xfer *a, const struct sched_xfer *b)
{
	return a->off < b->off + b->count && b->off < a->off + a->count;
}

/* Static checks of one step of one rank: peers, ranges, overlap rules. */
static void check_step(const struct sched *s, const struct sched_step *st)
{
	uint64_t scratch = 0;

	for (int i = 0; i < st->nsend; i++) {
		const struct sched_xfer *x = &st->send[i];

		assert_true(x->peer >= 0 && x->peer < s->nranks);
		assert_int_not_equal(x->peer, s->rank);
		assert_true(x->count > 0);
		assert_true(x->off + x->count <= s->count);
		for (int j = 0; j < st->nrecv; j++)
			assert_false(overlap(x, &st->recv[j]) &&
				     !(st->overlap && st->recv[j].mode == SCHED_RECV_REDUCE));
	}
	for (int i = 0; i < st->nrecv; i++) {
		const struct sched_xfer *x = &st->recv[i];

		assert_true(x->peer >= 0 && x->peer < s->nranks);
		assert_int_not_equal(x->peer, s->rank);
		assert_true(x->count > 0);
		assert_true(x->off + x->count <= s->count);
		if (x->mode == SCHED_RECV_REDUCE)
			scratch += x->count;
		for (int j = 0; j < st->nrecv; j++)
			if (j != i &&
			    (x->mode == SCHED_RECV_COPY || st->recv[j].mode == SCHED_RECV_COPY))
				assert_false(overlap(x, &st->recv[j]));
	}
	assert_true(scratch <= s->scratch_count);
	assert_true(st->scale_off + st->scale_count <= s->count);
}

/* Run one AllReduce of count elements over n simulated ranks (local_size ranks per
 * node, hierarchical only); asserts everything. */
static void simulate_on(int algo, int n, int local_size, uint64_t count)
{
	struct sched sc[SIM_MAX_RANKS];
	uint32_t *buf[SIM_MAX_RANKS];
	struct sim_msg *msgs = calloc((size_t)n * SCHED_MAX_XFER, sizeof(*msgs));
	uint32_t full = (uint32_t)((1ull << n) - 1);
	uint64_t max_sent = 0;
	struct sched_cost cost;

	assert_non_null(msgs);
	for (int r = 0; r < n; r++) {
		uint64_t sent = 0;

		assert_int_equal(sched_build_on(algo, r, n, local_size, count, &sc[r]), 0);
		assert_int_equal(sc[r].algo, algo);
		assert_int_equal(sc[r].nsteps, sc[0].nsteps);
		buf[r] = malloc(count * sizeof(uint32_t));
		assert_non_null(buf[r]);
		for (uint64_t e = 0; e < count; e++)
			buf[r][e] = 1u << r;
		for (uint32_t k = 0; k < sc[r].nsteps; k++) {
			check_step(&sc[r], &sc[r].steps[k]);
			for (int i = 0; i < sc[r].steps[k].nsend; i++)
				sent += sc[r].steps[k].send[i].count;
		}
		max_sent = GS_MAX(max_sent, sent);
	}
	/* The alpha-beta figures describe these schedules. */
	assert_int_equal(sched_cost_on(algo, n, local_size, &cost), 0);
	assert_int_equal(cost.steps, sc[0].nsteps);
	{
		double model = cost.wire_factor * (double)count;

		assert_true((double)max_sent <= model + 2.0 * sc[0].nsteps + 1e-9);
		assert_true((double)max_sent >= model - 2.0 * sc[0].nsteps - 1e-9);
	}
	for (uint32_t k = 0; k < sc[0].nsteps; k++) {
		int nmsg = 0;

		/* Sends read the buffers as the previous step left them. */
		for (int a = 0; a < n; a++) {
			const struct sched_step *st = &sc[a].steps[k];

			for (int i = 0; i < st->nsend; i++) {
				struct sim_msg *m = &msgs[nmsg++];

				m->src = a;
				m->dst = st->send[i].peer;
				m->ord = st->send[i].ord;
				m->count = st->send[i].count;
				m->used = false;
				m->data = malloc(m->count * sizeof(uint32_t));
				assert_non_null(m->data);
				memcpy(m->data, buf[a] + st->send[i].off,
				       m->count * sizeof(uint32_t));
			}
		}
		for (int b = 0; b < n; b++) {
			const struct sched_step *st = &sc[b].steps[k];

			for (int i = 0; i < st->nrecv; i++) {
				const struct sched_xfer *x = &st->recv[i];
				struct sim_msg *m = NULL;
				uint32_t *d = buf[b] + x->off;

				for (int j = 0; j < nmsg; j++)
					if (msgs[j].src == x->peer && msgs[j].dst == b &&
					    msgs[j].ord == x->ord) {
						assert_null(m); /* exactly one pairs */
						m = &msgs[j];
					}
				assert_non_null(m);
				assert_false(m->used);
				assert_int_equal(m->count, x->count);
				m->used = true;
				if (x->mode == SCHED_RECV_COPY) {
					memcpy(d, m->data, x->count * sizeof(uint32_t));
					continue;
				}
				for (uint64_t e = 0; e < x->count; e++) {
					/* Reduced once: disjoint contributors, nothing scaled yet.
					 */
					assert_int_equal(d[e] & m->data[e], 0);
					d[e] |= m->data[e];
				}
			}
			for (uint64_t e = 0; e < st->scale_count; e++) {
				assert_int_equal(buf[b][st->scale_off + e], full);
				buf[b][st->scale_off + e] |= SCALED;
			}
		}
		for (int j = 0; j < nmsg; j++) {
			assert_true(msgs[j].used);
			free(msgs[j].data);
		}
	}
	for (int r = 0; r < n; r++) {
		for (uint64_t e = 0; e < count; e++)
			if (buf[r][e] != (n > 1 ? full | SCALED : full))
				fail_msg("algo %s n=%d count=%llu: rank %d elem %llu = %#x",
					 sched_algo_name(algo), n, (unsigned long long)count, r,
					 (unsigned long long)e, buf[r][e]);
		free(buf[r]);
		sched_free(&sc[r]);
	}
	free(msgs);
}

static void simulate(int algo, int n, uint64_t count)
{
	simulate_on(algo, n, 0, count);
}

/* Which peers a hierarchical rank talks to: its node's ring, and its local index's ring. */
static void check_hier_peers(int n, int L, uint64_t count)
{
	int N = n / L;

	for (int r = 0; r < n; r++) {
		struct sched s;
		uint32_t inter_steps = 0;

		assert_int_equal(sched_build_hier(r, n, L, count, &s), 0);
		assert_int_equal(s.algo, ALGO_HIERARCHICAL);
		assert_int_equal(s.nsteps, 2 * (L - 1) + 2 * (N - 1));
		for (uint32_t k = 0; k < s.nsteps; k++) {
			const struct sched_step *st = &s.steps[k];
			bool inter = k >= (uint32_t)(L - 1) && k < (uint32_t)(L - 1 + 2 * (N - 1));

			for (int i = 0; i < st->nsend + st->nrecv; i++) {
				int p =
				    i < st->nsend ? st->send[i].peer : st->recv[i - st->nsend].peer;

				if (inter)
					assert_int_equal(p % L, r % L); /* same local index */
				else
					assert_int_equal(p / L, r / L); /* same node */
			}
			inter_steps += inter && st->nsend;
		}
		/* with count >= n every inter-node step carries data */
		if (count >= (uint64_t)n)
			assert_int_equal(inter_steps, 2 * (N - 1));
		sched_free(&s);
	}
}

static void test_hierarchical(void **state)
{
	static const struct {
		int nodes, local;
	} layouts[] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {2, 4}, {4, 2}, {3, 2},
		       {2, 3}, {3, 5}, {4, 4}, {2, 8}, {5, 3}, {8, 2}, {1, 17}};
	const uint64_t counts[] = {1, 2, 3, 7, 16, 17, 64, 1001, 100003};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(layouts); i++) {
		int n = layouts[i].nodes * layouts[i].local;

		for (size_t c = 0; c < ARRAY_SIZE(counts); c++) {
			simulate_on(ALGO_HIERARCHICAL, n, layouts[i].local, counts[c]);
			check_hier_peers(n, layouts[i].local, counts[c]);
		}
	}
}

/* The layout derived from host maps: equal consecutive blocks, else -1. */
static void test_local_size(void **state)
{
	static const struct {
		int n;
		int hosts[8];
		int want;
	} cases[] = {
	    {1, {5}, 1},
	    {4, {7, 7, 7, 7}, 4},
	    {4, {1, 2, 3, 4}, 1},
	    {6, {0, 0, 1, 1, 2, 2}, 2},
	    {8, {3, 3, 3, 3, 9, 9, 9, 9}, 4},
	    {6, {0, 0, 0, 1, 1, 2}, -1}, /* unequal blocks */
	    {4, {0, 1, 0, 1}, -1},	 /* round-robin placement */
	    {6, {0, 0, 1, 1, 0, 0}, -1}, /* a host in two blocks */
	    {5, {0, 0, 1, 1, 2}, -1},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_int_equal(sched_local_size(cases[i].hosts, cases[i].n), cases[i].want);
	assert_int_equal(sched_local_size(NULL, 4), -1);
}

/* Layouts that are not equal host blocks run a ring (and say so in s.algo). */
static void test_hierarchical_fallback(void **state)
{
	static const struct {
		int n, local;
	} bad[] = {{8, 3}, {6, -1}, {4, 5}, {5, 2}};
	struct sched s, ring;
	struct sched_cost c1, c2;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_false(sched_hier_layout_ok(bad[i].n, bad[i].local));
		assert_int_equal(sched_build_hier(1, bad[i].n, bad[i].local, 1000, &s), 0);
		assert_int_equal(sched_build(ALGO_RING, 1, bad[i].n, 1000, &ring), 0);
		assert_int_equal(s.algo, ALGO_RING);
		assert_int_equal(s.nsteps, ring.nsteps);
		assert_memory_equal(s.steps, ring.steps, s.nsteps * sizeof(*s.steps));
		assert_int_equal(
		    sched_piece_count_on(ALGO_HIERARCHICAL, bad[i].n, bad[i].local, 10),
		    sched_piece_count(ALGO_RING, bad[i].n, 10));
		assert_int_equal(sched_cost_on(ALGO_HIERARCHICAL, bad[i].n, bad[i].local, &c1), 0);
		assert_int_equal(sched_cost(ALGO_RING, bad[i].n, &c2), 0);
		assert_int_equal(c1.steps, c2.steps);
		sched_free(&s);
		sched_free(&ring);
	}
	/* 4 nodes x 8: 14 + 6 steps, ring's wire factor, pieces of 8 x 4 chunks */
	assert_true(sched_hier_layout_ok(32, 8));
	assert_int_equal(sched_cost_on(ALGO_HIERARCHICAL, 32, 8, &c1), 0);
	assert_int_equal(c1.steps, 20);
	assert_true(c1.wire_factor > 2.0 * 31 / 32 - 1e-12 &&
		    c1.wire_factor < 2.0 * 31 / 32 + 1e-12);
	assert_int_equal(sched_piece_count_on(ALGO_HIERARCHICAL, 32, 8, 10), 320);
	assert_int_equal(sched_piece_count_on(ALGO_HIERARCHICAL, 64, 4, 10), 160);
	assert_int_equal(sched_piece_count_on(ALGO_HIERARCHICAL, 4, 2, 10), 40);
}

static void test_all_algorithms(void **state)
{
	(void)state;
	for (size_t a = 0; a < ARRAY_SIZE(algos); a++) {
		for (int n = 1; n <= SIM_MAX_RANKS; n++) {
			const uint64_t counts[] = {
			    1, 2, 3, 7, (uint64_t)(n > 1 ? n - 1 : 5), (uint64_t)n + 1, 64, 1001};

			for (size_t c = 0; c < ARRAY_SIZE(counts); c++)
				simulate(algos[a], n, counts[c]);
		}
	}
}

static void test_large_count(void **state)
{
	const int ns[] = {2, 3, 5, 8, 12, 17};

	(void)state;
	for (size_t a = 0; a < ARRAY_SIZE(algos); a++)
		for (size_t i = 0; i < ARRAY_SIZE(ns); i++)
			simulate(algos[a], ns[i], 1000003);
}

/* Tree alone is staggered (its levels load different links), with the same number of
 * steps for every count, so the executor's gate covers full and tail pieces alike. */
static void test_staggered(void **state)
{
	const uint64_t counts[] = {1, 2, 7, 1000};

	(void)state;
	for (size_t a = 0; a < ARRAY_SIZE(algos); a++)
		for (int n = 2; n <= SIM_MAX_RANKS; n++) {
			uint32_t nsteps = 0;

			for (size_t c = 0; c < ARRAY_SIZE(counts); c++) {
				struct sched s;

				assert_int_equal(sched_build(algos[a], n - 1, n, counts[c], &s), 0);
				assert_true(s.staggered == (algos[a] == ALGO_TREE));
				if (c && s.staggered)
					assert_int_equal(s.nsteps, nsteps);
				nsteps = s.nsteps;
				sched_free(&s);
			}
		}
}

/* Pieces cut by sched_piece_count need at most SCHED_SCRATCH_CHUNKS chunks of scratch. */
static void test_scratch_bound(void **state)
{
	const uint64_t chunks[] = {1, 2, 3, 16, 1000};

	(void)state;
	for (size_t a = 0; a < ARRAY_SIZE(algos); a++)
		for (int n = 1; n <= SIM_MAX_RANKS; n++)
			for (size_t c = 0; c < ARRAY_SIZE(chunks); c++) {
				uint64_t piece = sched_piece_count(algos[a], n, chunks[c]);

				for (uint64_t len = piece; len; len = len * 2 / 3) {
					struct sched s;

					assert_int_equal(sched_build(algos[a], n - 1, n, len, &s),
							 0);
					assert_true(s.scratch_count <=
						    SCHED_SCRATCH_CHUNKS * chunks[c]);
					sched_free(&s);
				}
			}
	/* hierarchical, every equal-block layout up to 17 ranks */
	for (int n = 1; n <= SIM_MAX_RANKS; n++)
		for (int L = 1; L <= n; L++)
			for (size_t c = 0; L && n % L == 0 && c < ARRAY_SIZE(chunks); c++) {
				uint64_t piece =
				    sched_piece_count_on(ALGO_HIERARCHICAL, n, L, chunks[c]);

				for (uint64_t len = piece; len; len = len * 2 / 3)
					for (int r = 0; r < n; r++) {
						struct sched s;

						assert_int_equal(sched_build_hier(r, n, L, len, &s),
								 0);
						assert_true(s.scratch_count <=
							    SCHED_SCRATCH_CHUNKS * chunks[c]);
						sched_free(&s);
					}
			}
}

static void test_table_and_errors(void **state)
{
	struct sched s;
	struct sched_cost cost;

	(void)state;
	for (int a = 0; a < ALGO_COUNT; a++)
		assert_int_equal(sched_algo_by_name(sched_algo_name(a)), a);
	assert_string_equal(sched_algo_name(ALGO_HIERARCHICAL), "hierarchical");
	assert_int_equal(sched_algo_by_name("butterfly"), -EINVAL);
	/* no layout given: hierarchical cannot run */
	assert_int_equal(sched_build(ALGO_HIERARCHICAL, 0, 4, 100, &s), -ENOTSUP);
	assert_null(s.steps);
	assert_int_equal(sched_piece_count(ALGO_HIERARCHICAL, 4, 10), 0);
	assert_int_equal(sched_build(ALGO_AUTO, 0, 4, 100, &s), -EINVAL);
	assert_int_equal(sched_build(ALGO_RING, 4, 4, 100, &s), -EINVAL);
	assert_int_equal(sched_build(ALGO_RING, 0, 3000, 100, &s), -E2BIG);
	assert_int_equal(sched_cost(ALGO_HIERARCHICAL, 4, &cost), -ENOTSUP);
	assert_int_equal(sched_piece_count(ALGO_RING, 8, 10), 80);
	assert_int_equal(sched_piece_count(ALGO_TREE, 8, 10), 20);
	assert_int_equal(sched_piece_count(ALGO_AUTO, 8, 10), 0);
}

static void test_pick_and_cost(void **state)
{
	struct sched_cost c;

	(void)state;
	assert_int_equal(sched_pick(1, 1), ALGO_RING);
	assert_int_equal(sched_pick(2, 1), ALGO_RD);
	assert_int_equal(sched_pick(2, SCHED_AUTO_RD), ALGO_RD);
	assert_int_equal(sched_pick(2, SCHED_AUTO_RD + 1), ALGO_RING);
	assert_int_equal(sched_pick(2, SCHED_AUTO_SMALL), ALGO_RING);
	assert_int_equal(sched_pick(3, 4096), ALGO_TREE);
	assert_int_equal(sched_pick(8, 4096), ALGO_RD);
	assert_int_equal(sched_pick(4, SCHED_AUTO_RD), ALGO_RD);
	assert_int_equal(sched_pick(4, SCHED_AUTO_RD + 1), ALGO_RHD);
	assert_int_equal(sched_pick(6, 4096), ALGO_TREE);
	assert_int_equal(sched_pick(8, 64ull << 20), ALGO_RING);
	assert_int_equal(sched_pick(8, SCHED_AUTO_SMALL + 1), ALGO_RING);
	assert_int_equal(sched_cost(ALGO_RING, 8, &c), 0);
	assert_int_equal(c.steps, 14);
	assert_true(c.wire_factor == 2.0 * 7 / 8);
	assert_int_equal(sched_cost(ALGO_RHD, 6, &c), 0);
	assert_int_equal(c.steps, 6);
	assert_true(c.wire_factor == 2.0 * 3 / 4 + 1);
	assert_int_equal(sched_cost(ALGO_RD, 8, &c), 0);
	assert_int_equal(c.steps, 3);
	assert_true(c.wire_factor == 3);
	assert_int_equal(sched_cost(ALGO_RD, 6, &c), 0);
	assert_int_equal(c.steps, 4);
	assert_true(c.wire_factor == 3);
	assert_int_equal(sched_cost(ALGO_TREE, 8, &c), 0);
	assert_int_equal(c.steps, 6);
	/* linear: one batch of up to SCHED_MAX_XFER peers up and down, two from 6 ranks */
	assert_int_equal(sched_cost(ALGO_LINEAR, 5, &c), 0);
	assert_int_equal(c.steps, 2);
	assert_true(c.wire_factor == 4);
	assert_int_equal(sched_cost(ALGO_LINEAR, 6, &c), 0);
	assert_int_equal(c.steps, 4);
	/* 1000 ns per step, 1 ns per byte: ring 14 steps + 1.75 * 1000 bytes. */
	assert_int_equal(sched_cost(ALGO_RING, 8, &c), 0);
	assert_true(sched_model_ns(&c, 1000, 1000.0, 1.0) == 14000.0 + 1750.0);
}

/* The job's shape: crowded one-host tcp/shm take linear up to their crossovers, crowded tcp
 * rhd (tree) on to 512 KiB (4 MiB from 4 ranks); everything else is sched_pick's
 * answer. */
static void test_pick_on(void **state)
{
	const struct {
		int n;
		uint64_t bytes;
		int kind;
		bool crowded;
		int want;
	} cases[] = {
	    {4, 4096, TP_SHM, true, ALGO_LINEAR},
	    {4, 512 << 10, TP_SHM, true, ALGO_LINEAR},
	    {4, (512 << 10) + 1, TP_SHM, true, ALGO_RING},
	    {4, 256 << 10, TP_TCP, true, ALGO_LINEAR},
	    {4, (256 << 10) + 1, TP_TCP, true, ALGO_RHD}, /* crowded tcp: latency on */
	    {4, 512 << 10, TP_TCP, true, ALGO_RHD},
	    {4, (512 << 10) + 1, TP_TCP, true, ALGO_RHD}, /* from 4 ranks to 4 MiB */
	    {4, 4 << 20, TP_TCP, true, ALGO_RHD},
	    {4, (4 << 20) + 1, TP_TCP, true, ALGO_RING},
	    {3, 512 << 10, TP_TCP, true, ALGO_TREE},
	    {3, (512 << 10) + 1, TP_TCP, true, ALGO_RING}, /* 3 ranks: within 10%, ring */
	    {6, 1 << 20, TP_TCP, true, ALGO_TREE},
	    {8, 2 << 20, TP_TCP, true, ALGO_RHD},
	    {12, 1 << 20, TP_TCP, true, ALGO_TREE},
	    {16, (4 << 20) + 1, TP_TCP, true, ALGO_RING},
	    {6, 4096, TP_TCP, true, ALGO_TREE},	 /* two root batches: sched_pick */
	    {4, 1 << 20, TP_TCP, false, ALGO_RING},	 /* a CPU per rank: sched_pick */
	    {4, 1 << 20, TP_SHM, true, ALGO_RING},	 /* shm: measured mixed, sched_pick */
	    {3, 4096, TP_TCP, true, ALGO_LINEAR},
	    {5, 4096, TP_SHM, true, ALGO_LINEAR},
	    {6, 4096, TP_SHM, true, ALGO_TREE},	 /* two root batches: not measured */
	    {2, 4096, TP_SHM, true, ALGO_RD},	 /* crowded pairs: not measured */
	    {4, 4096, TP_SHM, false, ALGO_RD},	 /* a CPU per rank: sched_pick */
	    {4, 4096, TP_IB, true, ALGO_RD},	 /* other transports: sched_pick */
	    {4, 4096, TP_AUTO, true, ALGO_RD},	 /* several transports */
	    {2, 64 << 10, TP_SHM, false, ALGO_RD},	 /* 2 uncrowded shm ranks: sched_pick */
	    {2, (64 << 10) + 1, TP_SHM, false, ALGO_RING},
	    {2, 256 << 10, TP_SHM, false, ALGO_RING},
	    {2, 16 << 10, TP_TCP, false, ALGO_RD},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int got = sched_pick_on(cases[i].n, cases[i].bytes, true, cases[i].kind,
					cases[i].crowded);

		if (got != cases[i].want)
			print_error("case %zu: n=%d bytes=%llu kind=%d crowded=%d: %s, want %s\n", i,
				    cases[i].n, (unsigned long long)cases[i].bytes, cases[i].kind,
				    cases[i].crowded, sched_algo_name(got),
				    sched_algo_name(cases[i].want));
		assert_int_equal(got, cases[i].want);
		/* across hosts the shape never counts: every rank must agree without it */
		assert_int_equal(sched_pick_on(cases[i].n, cases[i].bytes, false, cases[i].kind,
					       cases[i].crowded),
				 sched_pick(cases[i].n, cases[i].bytes));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table_and_errors),	  cmocka_unit_test(test_pick_and_cost),
	    cmocka_unit_test(test_pick_on),
	    cmocka_unit_test(test_scratch_bound),	  cmocka_unit_test(test_all_algorithms),
	    cmocka_unit_test(test_staggered),
	    cmocka_unit_test(test_large_count),		  cmocka_unit_test(test_hierarchical),
	    cmocka_unit_test(test_hierarchical_fallback), cmocka_unit_test(test_local_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
