/*
 * Bootstrap collectives through rank 0 (a star): UP to rank 0, DOWN from it, each
 * bounded by timeout_ms. Any failure other than an abort already under way aborts
 * the job, because the ranks' sequence of collectives is out of step after it. A
 * collective whose every message is in completes even when an abort came meanwhile (a
 * rank sent its part, then died: the reader saw its bytes and its end in one read): what
 * it carries is whole; the abort fails the calls after it (check_call), except on rank 0
 * one whose messages came before it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "launch/bootstrap_int.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"

static bool aborted(struct bootstrap *b)
{
	return __atomic_load_n(&b->abort_flag, __ATOMIC_ACQUIRE) != 0;
}

/* Log the failure, abort the job with it as the reason; returns err. */
static int fail(struct bootstrap *b, int err, int culprit, const char *reason)
{
	if (aborted(b))
		return -ECANCELED;
	log_err(LOG_LAUNCH, "%s", reason);
	bs_raise_abort(b, culprit, reason, -1, true);
	return err;
}

static struct bs_msg *pop(struct bs_peer *p)
{
	struct fifo_link *x = fifo_pop(&p->queue);

	return x ? fifo_entry(x, struct bs_msg, link) : NULL;
}

/* Rank r > 0 has not sent its UP yet (str_int_set's predicate over gather_up's msgs). */
static bool up_missing(int r, const void *msgs)
{
	return r > 0 && !((struct bs_msg *const *)msgs)[r];
}

/* Rank 0: one UP {op, seq} from every other rank into msgs[1..n-1]. */
static int gather_up(struct bootstrap *b, uint8_t op, uint32_t seq, struct bs_msg **msgs)
{
	uint64_t deadline = time_now_ns() + b->timeout_ns;
	char reason[BS_REASON_LEN], list[200];
	int missing, left = -1, ret = 0, shown = -1;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		missing = 0;
		for (int r = 1; r < b->nranks; r++) {
			if (!msgs[r])
				msgs[r] = pop(&b->peers[r]);
			if (!msgs[r]) {
				missing++;
				if (b->peers[r].bye)
					left = r;
			}
		}
		bs_arrival(b, b->nranks - missing, &shown);
		if (!missing)
			ret = 0;
		else if (b->abort_flag)
			ret = -ECANCELED;
		else if (left >= 0)
			ret = -EPIPE;
		else if (bs_cond_wait_until(b, deadline))
			continue;
		else
			ret = -ETIMEDOUT;
		break;
	}
	pthread_mutex_unlock(&b->lock);
	if (ret == -ECANCELED)
		return ret;
	if (ret == -EPIPE) {
		snprintf(reason, sizeof(reason),
			 "bootstrap: rank %d closed the bootstrap before "
			 "joining %s #%u",
			 left, bs_op_name(op), seq);
		return fail(b, ret, left, reason);
	}
	if (ret == -ETIMEDOUT) {
		snprintf(reason, sizeof(reason),
			 "bootstrap: timed out after %.3gs waiting for "
			 "rank%s %s (%s)",
			 b->timeout_ms / 1e3, missing > 1 ? "s" : "",
			 str_int_set(up_missing, msgs, b->nranks, list, sizeof(list)), bs_op_name(op));
		return fail(b, ret, -1, reason);
	}
	for (int r = 1; r < b->nranks; r++) {
		if (msgs[r]->h.op != op || msgs[r]->h.seq != seq) {
			snprintf(reason, sizeof(reason),
				 "bootstrap: rank %d is in %s #%u while "
				 "rank 0 is in %s #%u",
				 r, bs_op_name(msgs[r]->h.op), msgs[r]->h.seq, bs_op_name(op), seq);
			return fail(b, -EPROTO, r, reason);
		}
	}
	return 0;
}

/* Rank r > 0: the DOWN {op, seq} from rank 0. */
static int recv_down(struct bootstrap *b, uint8_t op, uint32_t seq, struct bs_msg **out)
{
	/* A little longer than rank 0 waits, so its verdict (naming the late ranks) lands first. */
	uint64_t grace = GS_MIN(b->timeout_ns / 10, 2000000000ull);
	uint64_t deadline = time_now_ns() + b->timeout_ns + grace;
	struct bs_peer *p = &b->peers[0];
	char reason[BS_REASON_LEN];
	struct bs_msg *m = NULL;
	int ret = 0;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		m = pop(p);
		if (m)
			ret = 0;
		else if (b->abort_flag)
			ret = -ECANCELED;
		else if (p->bye)
			ret = -EPIPE;
		else if (bs_cond_wait_until(b, deadline))
			continue;
		else
			ret = -ETIMEDOUT;
		break;
	}
	pthread_mutex_unlock(&b->lock);
	if (ret) {
		bs_msg_free(m);
		if (ret == -ECANCELED)
			return ret;
		if (ret == -EPIPE)
			snprintf(reason, sizeof(reason),
				 "bootstrap: rank 0 closed the bootstrap "
				 "during %s #%u",
				 bs_op_name(op), seq);
		else
			snprintf(reason, sizeof(reason),
				 "bootstrap: timed out after %.3gs waiting "
				 "for rank 0 (%s)",
				 (b->timeout_ns + grace) / 1e9, bs_op_name(op));
		return fail(b, ret, 0, reason);
	}
	if (m->h.op != op || m->h.seq != seq) {
		snprintf(reason, sizeof(reason),
			 "bootstrap: rank 0 is in %s #%u while rank %d is "
			 "in %s #%u",
			 bs_op_name(m->h.op), m->h.seq, b->rank, bs_op_name(op), seq);
		bs_msg_free(m);
		return fail(b, -EPROTO, b->rank, reason);
	}
	*out = m;
	return 0;
}

static int send_up(struct bootstrap *b, uint8_t op, uint32_t seq, const void *data, size_t len)
{
	char reason[BS_REASON_LEN];
	int ret;

	ret = bs_peer_send(b, 0, BS_UP, op, seq, data, len, time_now_ns() + b->timeout_ns);
	if (!ret)
		return 0;
	snprintf(reason, sizeof(reason), "bootstrap: rank %d sending %s to rank 0: %s", b->rank,
		 bs_op_name(op), strerror(-ret));
	return fail(b, ret, 0, reason);
}

/*
 * Rank 0: DOWN to every rank. A failed send usually means the rank died: give the reader
 * a moment to report that (with the proper reason) before blaming the send.
 */
static int bcast_down(struct bootstrap *b, uint8_t op, uint32_t seq, const void *data, size_t len)
{
	uint64_t deadline = time_now_ns() + b->timeout_ns;
	char reason[BS_REASON_LEN];
	int bad = -1, err = 0;

	for (int r = 1; r < b->nranks; r++) {
		int ret = bs_peer_send(b, r, BS_DOWN, op, seq, data, len, deadline);

		if (ret && bad < 0) {
			bad = r;
			err = ret;
		}
	}
	if (bad < 0)
		return 0;
	pthread_mutex_lock(&b->lock);
	while (!b->abort_flag && bs_cond_wait_until(b, time_now_ns() + 200000000ull))
		if (b->peers[bad].gone)
			break;
	pthread_mutex_unlock(&b->lock);
	snprintf(reason, sizeof(reason), "bootstrap: sending %s to rank %d: %s", bs_op_name(op),
		 bad, strerror(-err));
	return fail(b, err, bad, reason);
}

/* Rank 0: every other rank's next message is in (the abort came after they sent). */
static bool all_up_queued(struct bootstrap *b)
{
	bool all = b->rank == 0;

	pthread_mutex_lock(&b->lock);
	for (int r = 1; all && r < b->nranks; r++)
		all = !fifo_empty(&b->peers[r].queue);
	pthread_mutex_unlock(&b->lock);
	return all;
}

/* A call's arguments, and the abort: after one, later calls fail at once, except on
 * rank 0 a call that gathers (up) whose messages are all in already. */
static int check_call(struct bootstrap *b, size_t total, bool up, const char *what)
{
	if (!b)
		return -EINVAL;
	if (aborted(b) && !(up && all_up_queued(b)))
		return -ECANCELED;
	if (total > BS_MAX_PAYLOAD) {
		log_err(LOG_LAUNCH, "bootstrap: %s of %zu bytes is over the %u-byte limit", what,
			total, BS_MAX_PAYLOAD);
		return -EMSGSIZE;
	}
	return 0;
}

/* allgather and barrier: UP from every rank, the concatenation DOWN to every rank. */
static int exchange(struct bootstrap *b, uint8_t op, const void *mine, void *all, size_t len)
{
	size_t total = len * (size_t)b->nranks;
	char reason[BS_REASON_LEN];
	struct bs_msg **msgs, *m = NULL;
	uint32_t seq;
	int ret;

	ret = check_call(b, len > BS_MAX_PAYLOAD ? (size_t)-1 : total, true, bs_op_name(op));
	if (ret)
		return ret;
	if (len)
		memmove((char *)all + (size_t)b->rank * len, mine, len);
	if (b->nranks == 1)
		return 0;
	seq = ++b->seq;
	if (b->rank) {
		ret = send_up(b, op, seq, mine, len);
		if (!ret)
			ret = recv_down(b, op, seq, &m);
		if (ret)
			return ret;
		if (m->h.len != total) {
			snprintf(reason, sizeof(reason),
				 "bootstrap: rank 0 sent %u bytes of %s, "
				 "rank %d expected %zu",
				 m->h.len, bs_op_name(op), b->rank, total);
			bs_msg_free(m);
			return fail(b, -EPROTO, b->rank, reason);
		}
		if (total)
			memcpy(all, m->data, total);
		bs_msg_free(m);
		return 0;
	}
	msgs = calloc((size_t)b->nranks, sizeof(*msgs));
	if (!msgs)
		return -ENOMEM;
	ret = gather_up(b, op, seq, msgs);
	for (int r = 1; !ret && r < b->nranks; r++) {
		if (msgs[r]->h.len != len) {
			snprintf(reason, sizeof(reason),
				 "bootstrap: rank %d gave %u bytes to %s, "
				 "rank 0 %zu",
				 r, msgs[r]->h.len, bs_op_name(op), len);
			ret = fail(b, -EPROTO, r, reason);
		} else if (len) {
			memcpy((char *)all + (size_t)r * len, msgs[r]->data, len);
		}
	}
	for (int r = 1; r < b->nranks; r++)
		bs_msg_free(msgs[r]);
	free(msgs);
	return ret ? ret : bcast_down(b, op, seq, all, total);
}

int bootstrap_allgather(struct bootstrap *b, const void *mine, void *all, size_t len)
{
	return exchange(b, BS_OP_ALLGATHER, mine, all, len);
}

int bootstrap_barrier(struct bootstrap *b)
{
	return exchange(b, BS_OP_BARRIER, NULL, NULL, 0);
}

int bootstrap_gatherv(struct bootstrap *b, const void *mine, size_t len, void ***all, size_t **lens)
{
	struct bs_msg **msgs;
	uint32_t seq;
	int ret;

	*all = NULL;
	*lens = NULL;
	ret = check_call(b, len, true, "gatherv");
	if (ret)
		return ret;
	seq = b->nranks > 1 ? ++b->seq : 0;
	if (b->rank)
		return send_up(b, BS_OP_GATHERV, seq, mine, len);
	msgs = calloc((size_t)b->nranks, sizeof(*msgs));
	*all = calloc((size_t)b->nranks, sizeof(**all));
	*lens = calloc((size_t)b->nranks, sizeof(**lens));
	ret = -ENOMEM;
	if (!msgs || !*all || !*lens || !((*all)[0] = malloc(len ? len : 1)))
		goto out_free;
	if (len)
		memcpy((*all)[0], mine, len);
	(*lens)[0] = len;
	ret = b->nranks > 1 ? gather_up(b, BS_OP_GATHERV, seq, msgs) : 0;
	if (ret)
		goto out_free;
	/* The payloads change hands: the caller frees them. */
	for (int r = 1; r < b->nranks; r++) {
		(*lens)[r] = msgs[r]->h.len;
		(*all)[r] = msgs[r]->data ? msgs[r]->data : malloc(1);
		msgs[r]->data = NULL;
		bs_msg_free(msgs[r]);
		msgs[r] = NULL;
		if (!(*all)[r])
			ret = -ENOMEM;
	}
	if (!ret) {
		free(msgs);
		return 0;
	}
out_free:
	for (int r = 0; msgs && r < b->nranks; r++)
		bs_msg_free(msgs[r]);
	for (int r = 0; *all && r < b->nranks; r++)
		free((*all)[r]);
	free(*all);
	free(*lens);
	free(msgs);
	*all = NULL;
	*lens = NULL;
	return ret;
}

int bootstrap_bcast(struct bootstrap *b, void *buf, size_t len)
{
	char reason[BS_REASON_LEN];
	struct bs_msg *m;
	uint32_t seq;
	int ret;

	ret = check_call(b, len, false, "bcast");
	if (ret || b->nranks == 1)
		return ret;
	seq = ++b->seq;
	if (!b->rank)
		return bcast_down(b, BS_OP_BCAST, seq, buf, len);
	ret = recv_down(b, BS_OP_BCAST, seq, &m);
	if (ret)
		return ret;
	if (m->h.len != len) {
		snprintf(reason, sizeof(reason),
			 "bootstrap: rank 0 broadcast %u bytes, rank %d "
			 "expected %zu",
			 m->h.len, b->rank, len);
		bs_msg_free(m);
		return fail(b, -EPROTO, b->rank, reason);
	}
	if (len)
		memcpy(buf, m->data, len);
	bs_msg_free(m);
	return 0;
}

void bootstrap_abort(struct bootstrap *b, const char *why)
{
	char reason[BS_REASON_LEN];

	if (!b)
		return;
	snprintf(reason, sizeof(reason), "rank %d aborted: %s", b->rank, why ? why : "");
	bs_raise_abort(b, b->rank, reason, -1, true);
}

volatile const int *bootstrap_abort_flag(struct bootstrap *b)
{
	return &b->abort_flag;
}

const char *bootstrap_abort_reason(struct bootstrap *b)
{
	return aborted(b) ? b->abort_reason : "";
}
