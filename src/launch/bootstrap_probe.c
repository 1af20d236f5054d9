/*
 * Rank 0's probe of the ranks after a failure (bootstrap_probe): a PING to each live
 * rank, whose reader thread answers with what its application's threads do; asked again
 * while a thread's verdict is still early, so that a rank slow to return from the case
 * is told from one that never will; rank 0's own threads read last.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "launch/bootstrap_int.h"
#include "util/common.h"
#include "util/timeutil.h"

/* PING seq to each rank in ask[], clearing ask[r] for one gone or whose send failed. */
static void ping(struct bootstrap *b, bool *ask, uint32_t seq, uint64_t deadline)
{
	for (int r = 1; r < b->nranks; r++) {
		bool live;

		if (!ask[r])
			continue;
		pthread_mutex_lock(&b->lock);
		live = b->peers[r].fd >= 0 && !b->peers[r].gone;
		pthread_mutex_unlock(&b->lock);
		ask[r] = live && !bs_peer_send(b, r, BS_PING, BS_OP_NONE, seq, NULL, 0, deadline);
	}
}

/* Lock held: has every rank asked answered PING seq, or left? */
static bool all_in(struct bootstrap *b, const bool *ask, uint32_t seq)
{
	for (int r = 1; r < b->nranks; r++)
		if (ask[r] && !b->peers[r].gone && b->peers[r].pong_seq != seq)
			return false;
	return true;
}

/* The longest a thread of this answer may still take to return (0: its verdict is known). */
static uint32_t still_early_ms(const struct bootstrap_rank_state *s, uint32_t grace_ms)
{
	uint32_t most = 0, w;

	for (int i = 0; i < s->nact; i++)
		if (act_judge(&s->act[i], s->abort_age_ms, grace_ms, &w) == ACT_EARLY)
			most = GS_MAX(most, w);
	return most;
}

int bootstrap_probe(struct bootstrap *b, int wait_ms, int grace_ms,
		    struct bootstrap_rank_state *st)
{
	uint64_t end, wait_ns = (uint64_t)GS_MAX(wait_ms, 0) * 1000000ull;
	uint32_t grace = (uint32_t)GS_MAX(grace_ms, 0);
	bool *ask;

	if (!b || b->rank != 0)
		return -EINVAL;
	for (int r = 0; r < b->nranks; r++)
		st[r] = (struct bootstrap_rank_state){ .heard = BS_HEARD_NONE };
	if (b->nranks < 2) {
		bs_self_state(b, time_now_ns(), &st[0]);
		return 0;
	}
	ask = calloc((size_t)b->nranks, sizeof(*ask));
	if (!ask)
		return -ENOMEM;
	for (int r = 1; r < b->nranks; r++)
		ask[r] = true;
	end = time_now_ns() + 2 * wait_ns + (uint64_t)grace * 1000000ull;
	for (;;) {
		uint32_t seq = ++b->probe_seq;
		uint64_t sent = time_now_ns(), deadline = GS_MIN(sent + wait_ns, end), due = 0, now;
		bool any = false;

		ping(b, ask, seq, deadline);
		pthread_mutex_lock(&b->lock);
		while (!all_in(b, ask, seq) && bs_cond_wait_until(b, deadline))
			;
		/* a rank that closed meanwhile exited: its own story, told by the watchdog */
		for (int r = 1; r < b->nranks; r++) {
			struct bs_peer *p = &b->peers[r];

			if (!ask[r])
				continue;
			if (p->gone) {
				st[r] = (struct bootstrap_rank_state){ .heard = BS_HEARD_NONE };
			} else if (p->pong_seq != seq) {
				st[r] = (struct bootstrap_rank_state){ .heard = BS_HEARD_SILENT };
			} else {
				st[r].heard = BS_HEARD_ANSWERED;
				st[r].abort_age_ms = p->pong_abort_age_ms;
				st[r].nact = p->npong;
				memcpy(st[r].act, p->pong, sizeof(st[r].act));
			}
			ask[r] = st[r].heard == BS_HEARD_ANSWERED && still_early_ms(&st[r], grace);
			/* its ages were taken about when the PING went */
			if (ask[r])
				due = GS_MAX(due, sent + still_early_ms(&st[r], grace) * 1000000ull);
			any |= ask[r];
		}
		pthread_mutex_unlock(&b->lock);
		now = time_now_ns();
		if (!any || now >= end)
			break;
		/* ask again once the slowest verdict is due */
		if (due > now)
			time_sleep_ns(GS_MIN(due, end) - now);
	}
	/* rank 0 answers for itself, as of now: a thread of its own may not have returned */
	bs_self_state(b, time_now_ns(), &st[0]);
	free(ask);
	return 0;
}
