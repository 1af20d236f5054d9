/*
 * Hierarchical AllReduce over nodes of local_size ranks each (ranks grouped host by host
 * in equal blocks, as our launchers place them): ring reduce-scatter inside the node,
 * ring AllReduce across nodes among the ranks with the same local index (each on the
 * node-reduced chunk it owns), ring all-gather inside the node.
 */
#include "coll/schedule.h"

/* A ring over `size` members: member i is rank base + i * stride; `me` is my index. */
struct hier_ring {
	int base, stride, size, me;
};

static int hring_mod(int a, int n)
{
	return ((a % n) + n) % n;
}

static int hring_rank(const struct hier_ring *g, int i)
{
	return g->base + hring_mod(i, g->size) * g->stride;
}

/* Chunk i (mod n) of region [off, off + len) cut into n balanced chunks: start and length. */
static void hring_chunk(uint64_t off, uint64_t len, int n, int i, uint64_t *o, uint64_t *c)
{
	i = hring_mod(i, n);
	*o = off + sched_chunk_off(len, n, i);
	*c = sched_chunk_off(len, n, i + 1) - sched_chunk_off(len, n, i);
}

/*
 * Ring reduce-scatter of [off, off + len) over g from step0 (g->size - 1 steps); afterwards
 * member me owns chunk me + 1 reduced over the ring.
 */
static int hring_rs(struct sched *s, const struct hier_ring *g, uint32_t step0, uint64_t off,
		    uint64_t len)
{
	int n = g->size, next = hring_rank(g, g->me + 1), prev = hring_rank(g, g->me - 1), ret;

	for (int k = 0; k < n - 1; k++) {
		uint64_t so, sc, ro, rc;

		hring_chunk(off, len, n, g->me - k, &so, &sc);
		hring_chunk(off, len, n, g->me - k - 1, &ro, &rc);
		ret = sched_add_send(s, step0 + (uint32_t)k, next, so, sc);
		if (!ret)
			ret =
			    sched_add_recv(s, step0 + (uint32_t)k, prev, SCHED_RECV_REDUCE, ro, rc);
		if (ret)
			return ret;
	}
	return 0;
}

/* Ring all-gather of [off, off + len) over g from step0, member me starting with chunk me + 1. */
static int hring_ag(struct sched *s, const struct hier_ring *g, uint32_t step0, uint64_t off,
		    uint64_t len)
{
	int n = g->size, next = hring_rank(g, g->me + 1), prev = hring_rank(g, g->me - 1), ret;

	for (int k = 0; k < n - 1; k++) {
		uint64_t so, sc, ro, rc;

		hring_chunk(off, len, n, g->me + 1 - k, &so, &sc);
		hring_chunk(off, len, n, g->me - k, &ro, &rc);
		ret = sched_add_send(s, step0 + (uint32_t)k, next, so, sc);
		if (!ret)
			ret = sched_add_recv(s, step0 + (uint32_t)k, prev, SCHED_RECV_COPY, ro, rc);
		if (ret)
			return ret;
	}
	return 0;
}

bool sched_hier_layout_ok(int nranks, int local_size)
{
	return nranks >= 1 && local_size >= 1 && local_size <= nranks && nranks % local_size == 0;
}

int sched_local_size(const int *host_of_rank, int nranks)
{
	int L = 1;

	if (nranks < 1 || !host_of_rank)
		return -1;
	while (L < nranks && host_of_rank[L] == host_of_rank[0])
		L++;
	if (nranks % L)
		return -1;
	for (int r = 0; r < nranks; r++) {
		int first = r / L * L;

		if (host_of_rank[r] != host_of_rank[first])
			return -1;
		/* a host appearing in two blocks is not a block layout either */
		for (int b = 0; r == first && b < first; b += L)
			if (host_of_rank[b] == host_of_rank[first])
				return -1;
	}
	return L;
}

int sched_build_hier_steps(struct sched *s, int local_size)
{
	int L = local_size, N = s->nranks / L, node = s->rank / L, l = s->rank % L, ret;
	struct hier_ring intra = {.base = node * L, .stride = 1, .size = L, .me = l};
	struct hier_ring inter = {.base = l, .stride = L, .size = N, .me = node};
	uint32_t rs_end = (uint32_t)(L - 1), ar_end = rs_end + 2 * (uint32_t)(N - 1);
	uint64_t own_off, own_len, sub_off, sub_len;

	ret = sched_alloc(s, ar_end + (uint32_t)(L - 1));
	if (ret || s->nranks == 1)
		return ret;
	/* 1. inside the node: this rank ends owning chunk l + 1 of L, summed over the node */
	ret = hring_rs(s, &intra, 0, 0, s->count);
	if (ret)
		return ret;
	hring_chunk(0, s->count, L, l + 1, &own_off, &own_len);
	/* 2. across nodes, on that chunk: ranks with local index l all own the same one */
	ret = hring_rs(s, &inter, rs_end, own_off, own_len);
	if (!ret)
		ret = hring_ag(s, &inter, rs_end + (uint32_t)(N - 1), own_off, own_len);
	if (ret)
		return ret;
	/* the element's last reduction: end of the inter-node (or, on one node, intra) phase */
	if (N > 1) {
		hring_chunk(own_off, own_len, N, node + 1, &sub_off, &sub_len);
		sched_set_scale(s, rs_end + (uint32_t)(N - 2), sub_off, sub_len);
	} else {
		sched_set_scale(s, rs_end - 1, own_off, own_len);
	}
	/* 3. inside the node: spread the L finished chunks */
	return hring_ag(s, &intra, ar_end, 0, s->count);
}
