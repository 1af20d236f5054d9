/*
 * Double binary tree AllReduce, as NCCL builds it: tree 0 is a binary tree whose
 * leaves are the odd ranks; tree 1 mirrors it (n even) or shifts it by one (n odd), so
 * most ranks are a leaf in one tree and an inner node in the other. Tree t reduces
 * half t of the buffer up to its root, which then broadcasts it down.
 *
 * Steps: a node of level L (its lowest set bit; root: ceil(log2 n)) sends up at step L
 * and receives from a child of level l at step l; the broadcast mirrors this, a child
 * of level l receiving at step 2*Lr-1-l. 2*Lr steps in all, both trees side by side.
 */
#include "coll/schedule.h"

/* NCCL's ncclGetBtree: root 0, odd ranks are leaves. */
static void btree(int n, int r, int *up, int *d0, int *d1, int *level)
{
	int bit, low;

	for (bit = 1; bit < n; bit <<= 1)
		if (bit & r)
			break;
	*level = __builtin_ctz((unsigned)bit);
	if (r == 0) {
		*up = -1;
		*d0 = -1;
		*d1 = n > 1 ? bit >> 1 : -1;
		return;
	}
	*up = (r ^ bit) | (bit << 1);
	if (*up >= n)
		*up = r ^ bit;
	low = bit >> 1;
	*d0 = low ? r - low : -1;
	while (low && r + low >= n)
		low >>= 1;
	*d1 = low ? r + low : -1;
}

/* Rank r's position in tree t, and the map back to real ranks. */
static int tree_pos(int n, int r, int t)
{
	if (!t)
		return r;
	return n % 2 ? (r - 1 + n) % n : n - 1 - r;
}

static int tree_rank(int n, int pos, int t)
{
	if (pos < 0 || !t)
		return pos;
	return n % 2 ? (pos + 1) % n : n - 1 - pos;
}

static void dtree_levels(int n, int r, int t, int *up, int *d[2], int lv[3])
{
	int u, c0, c1, l, tmp;
	int pos = tree_pos(n, r, t);

	btree(n, pos, &u, &c0, &c1, &l);
	lv[0] = l;
	*up = tree_rank(n, u, t);
	*d[0] = tree_rank(n, c0, t);
	*d[1] = tree_rank(n, c1, t);
	lv[1] = c0 >= 0 ? (btree(n, c0, &tmp, &tmp, &tmp, &l), l) : -1;
	lv[2] = c1 >= 0 ? (btree(n, c1, &tmp, &tmp, &tmp, &l), l) : -1;
}

void sched_dtree(int nranks, int rank, int t, int *up, int *down0, int *down1)
{
	int *d[2] = {down0, down1};
	int lv[3];

	dtree_levels(nranks, rank, t, up, d, lv);
}

int sched_build_tree(struct sched *s)
{
	int n = s->nranks, r = s->rank;
	uint32_t lr = 0;
	uint64_t half = (s->count + 1) / 2;
	int ret;

	while ((1 << lr) < n)
		lr++;
	ret = sched_alloc(s, 2 * lr);
	if (ret || n == 1)
		return ret;
	/* Level l's step loads only the links of level-l nodes: pieces in lockstep
	 * leave the others idle (the busiest link carried 2.4-2.8 S in the time the
	 * model gives 2 S); staggered, every level is busy at once, as NCCL's
	 * pipelined chunks are. */
	s->staggered = true;
	for (int t = 0; t < 2; t++) {
		uint64_t off = t ? half : 0, cnt = t ? s->count - half : half;
		int up, c[2], lv[3];
		int *d[2] = {&c[0], &c[1]};

		dtree_levels(n, r, t, &up, d, lv);
		/* Reduce up. */
		for (int i = 0; i < 2 && !ret; i++)
			if (c[i] >= 0)
				ret =
				    sched_add_recv(s, lv[i + 1], c[i], SCHED_RECV_REDUCE, off, cnt);
		if (!ret && up >= 0)
			ret = sched_add_send(s, lv[0], up, off, cnt);
		if (up < 0)
			sched_set_scale(s, lr - 1, off, cnt);
		/* Broadcast down. */
		if (!ret && up >= 0)
			ret = sched_add_recv(s, 2 * lr - 1 - lv[0], up, SCHED_RECV_COPY, off, cnt);
		for (int i = 0; i < 2 && !ret; i++)
			if (c[i] >= 0)
				ret = sched_add_send(s, 2 * lr - 1 - lv[i + 1], c[i], off, cnt);
		if (ret)
			return ret;
	}
	return 0;
}
