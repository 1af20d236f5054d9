/*
 * The AllReduce executor: cuts the buffer into pieces, runs the cached schedule of
 * each piece in one of `channels` slots, and drives every slot from the poll loop of
 * the calling thread (contract in exec.h, step semantics in schedule.h).
 *
 * Cookie of a post: piece(40) | slot(8) | step(12) | is_send(1) | index(3); every
 * completion must name the current step of an active slot, so a stray or duplicate
 * completion is caught (-EPROTO) instead of corrupting a later step.
 */
#include <errno.h>
#include <string.h>

#include "coll/comm.h"
#include "coll/reduce.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

/* Longest staggered schedule the gate covers (tree: 2 ceil(log2 n) steps, 4096 ranks
 * need 24); longer ones run ungated. */
#define EXEC_GATE_STEPS 64

struct run {
	struct coll_comm *c;
	const struct coll_buf *buf;
	const struct coll_buf *scratch;
	char *data;   /* buf->ptr + off */
	uint64_t off; /* bytes into buf */
	size_t es;
	enum dtype dt;
	enum redop op;
	uint32_t seq;
	int algo;
	uint64_t count;
	uint64_t piece; /* elements per full piece */
	uint64_t npieces;
	uint64_t next_piece;
	uint64_t pieces_done;
	const struct sched *full;
	const struct sched *tail; /* last, shorter piece; NULL when count divides */
	int channels;
	uint64_t slot_bytes; /* scratch bytes per slot */
	struct coll_stats *st;
	/* staggered schedules (schedule.h): pieces enter step k in piece order, at most
	 * gate_cap at once; gate_cap 0 = no gate */
	uint32_t gate_cap;
	uint8_t in_step[EXEC_GATE_STEPS];  /* slots inside step k */
	uint64_t entered[EXEC_GATE_STEPS]; /* pieces that entered step k */
	uint64_t now; /* clock of this round's posts or completions (run_now), 0 = unread */
};

/* The clock of posts and completions (a vDSO read is ~60 ns here, four per small
 * AllReduce otherwise): read once before a round's posts and once before its
 * completions, and again after memops work, so idle rounds read none. */
static uint64_t run_now(struct run *r)
{
	if (!r->now)
		r->now = time_now_ns();
	return r->now;
}

/* Memops work since t0 ended now: its time is the memops', and later posts see the clock. */
static void mem_done(struct run *r, uint64_t t0)
{
	r->now = time_now_ns();
	r->st->mem_ns += r->now - t0;
}

/* Where the slot keeps receive or send idx's entry in the comm's transfer log. */
static uint32_t *slot_xlog(struct comm_slot *sl, bool is_send, int idx)
{
	return &sl->xlog[is_send ? SCHED_MAX_XFER + idx : idx];
}

static uint64_t make_cookie(uint64_t piece, int slot, uint32_t step, bool is_send, int idx)
{
	return (piece << 24) | ((uint64_t)slot << 16) | ((uint64_t)(step & 0xfff) << 4) |
	       ((uint64_t)is_send << 3) | (uint64_t)idx;
}

/* Scratch places of this step's REDUCE receives, one after another in the slot's region. */
static void step_prepare(struct run *r, struct comm_slot *sl)
{
	const struct sched_step *st = &sl->s->steps[sl->step];
	uint64_t at = 0;

	sl->posted = 0;
	sl->done = 0;
	sl->fused = 0;
	for (int i = 0; i < st->nrecv; i++) {
		sl->rscratch[i] = at;
		if (st->recv[i].mode == SCHED_RECV_REDUCE)
			at += st->recv[i].count * r->es;
	}
}

/* Run a piece hook (when the memops has one) and wait on query before going on. */
static int slot_hook(struct run *r, struct comm_slot *sl, int chan,
		     int (*hook)(void *ctx, int chan, uint64_t off, uint64_t bytes),
		     const char *what)
{
	const struct coll_memops *m = r->c->mem;
	uint64_t t0, off = r->off + sl->base * r->es;
	int ret;

	sl->mem_wait = true;
	if (!hook)
		return 0;
	t0 = time_now_ns();
	ret = hook(m->ctx, chan, off, sl->s->count * r->es);
	mem_done(r, t0);
	if (ret)
		log_err(LOG_COLL, "memops %s %s piece=%llu: %s", m->name, what,
			(unsigned long long)sl->piece, strerror(-ret));
	return ret;
}

static int slot_start(struct run *r, struct comm_slot *sl, int chan)
{
	uint64_t p = r->next_piece++;

	sl->active = true;
	sl->mem_wait = false;
	sl->phase = PHASE_START;
	sl->piece = p;
	sl->base = p * r->piece;
	sl->s = (p == r->npieces - 1 && r->tail) ? r->tail : r->full;
	sl->step = 0;
	sl->gated_in = false;
	sl->scratch_off = (uint64_t)chan * r->slot_bytes;
	return slot_hook(r, sl, chan, r->c->mem->piece_start, "piece_start");
}

/*
 * A receive that reduces: added into buf by the transport as the bytes arrive where it
 * can (host memory, host memops), saving the copy into scratch; a transport without
 * post_recv_reduce says -EOPNOTSUPP (its registry stub) and the bytes land in scratch
 * for the memops' reduce. An overlap step's sends still read buf, so it reduces from
 * scratch once they are done.
 */
static int post_reduce(struct run *r, struct comm_slot *sl, struct transport *t, int ti,
		       const struct sched_xfer *x, uint64_t tag, size_t len, int idx,
		       uint64_t cookie)
{
	int ret = -EOPNOTSUPP;

	if (r->c->mem == &coll_host_memops && r->buf->kind == MEM_HOST &&
	    !sl->s->steps[sl->step].overlap) {
		ret = t->ops->post_recv_reduce(t, x->peer, tag, r->buf->mr[ti],
					       r->off + (sl->base + x->off) * r->es, len, r->dt,
					       reduce_sum, cookie);
		if (!ret)
			sl->fused |= (uint8_t)(1u << idx);
	}
	if (ret == -EOPNOTSUPP)
		ret = t->ops->post_recv(t, x->peer, tag, r->scratch->mr[ti],
					sl->scratch_off + sl->rscratch[idx], len, cookie);
	return ret;
}

static int post_one(struct run *r, struct comm_slot *sl, int chan, const struct sched_xfer *x,
		    bool is_send, int idx)
{
	struct coll_comm *c = r->c;
	struct transport *t = c->peer_tp[x->peer];
	int ti = c->peer_ti[x->peer];
	uint64_t tag = comm_tag(r->seq, sl->piece, sl->step, x->ord);
	uint64_t cookie = make_cookie(sl->piece, chan, sl->step, is_send, idx);
	size_t len = x->count * r->es;
	int ret;

	if (is_send)
		ret = t->ops->post_send(t, x->peer, tag, r->buf->mr[ti],
					r->off + (sl->base + x->off) * r->es, len, cookie);
	else if (x->mode == SCHED_RECV_REDUCE)
		ret = post_reduce(r, sl, t, ti, x, tag, len, idx, cookie);
	else
		ret = t->ops->post_recv(t, x->peer, tag, r->buf->mr[ti],
					r->off + (sl->base + x->off) * r->es, len, cookie);
	if (ret == -EAGAIN) {
		r->st->eagain++;
		return ret;
	}
	if (ret) {
		log_err(LOG_COLL, "%s %s peer=%d seq=%u piece=%llu step=%u: %s", t->ops->name,
			is_send ? "post_send" : "post_recv", x->peer, r->seq,
			(unsigned long long)sl->piece, sl->step, strerror(-ret));
		return ret;
	}
	r->st->posts++;
	*slot_xlog(sl, is_send, idx) = comm_wait_open(c, x->peer, is_send, len, tag,
							   run_now(r));
	if (is_send)
		r->st->bytes_sent += len;
	else
		r->st->bytes_recv += len;
	return 0;
}

/* Post what is not posted yet; -EAGAIN leaves the rest for the next round. */
static int slot_post(struct run *r, struct comm_slot *sl, int chan)
{
	const struct sched_step *st = &sl->s->steps[sl->step];
	int ret;

	for (int i = 0; i < st->nrecv; i++) {
		if (sl->posted & (1u << i))
			continue;
		ret = post_one(r, sl, chan, &st->recv[i], false, i);
		if (ret == -EAGAIN)
			break;
		if (ret)
			return ret;
		sl->posted |= (uint8_t)(1u << i);
	}
	for (int i = 0; i < st->nsend; i++) {
		if (sl->posted & (1u << (4 + i)))
			continue;
		ret = post_one(r, sl, chan, &st->send[i], true, i);
		if (ret == -EAGAIN)
			break;
		if (ret)
			return ret;
		sl->posted |= (uint8_t)(1u << (4 + i));
	}
	return 0;
}

static int mem_call_scale(struct run *r, struct comm_slot *sl, int chan,
			  const struct sched_step *st)
{
	const struct coll_memops *m = r->c->mem;
	uint64_t t0 = time_now_ns();
	int ret = m->scale(m->ctx, chan, r->data + (sl->base + st->scale_off) * r->es,
			   st->scale_count, r->dt, (uint32_t)r->c->nranks);

	mem_done(r, t0);
	if (ret)
		log_err(LOG_COLL, "memops %s scale piece=%llu step=%u: %s", m->name,
			(unsigned long long)sl->piece, sl->step, strerror(-ret));
	return ret;
}

static int mem_call_reduce(struct run *r, struct comm_slot *sl, int chan, int idx)
{
	const struct sched_xfer *x = &sl->s->steps[sl->step].recv[idx];
	const struct coll_memops *m = r->c->mem;
	uint64_t t0 = time_now_ns();
	int ret = m->reduce(m->ctx, chan, r->data + (sl->base + x->off) * r->es,
			    (char *)r->scratch->ptr + sl->scratch_off + sl->rscratch[idx], x->count,
			    r->dt);

	mem_done(r, t0);
	if (ret)
		log_err(LOG_COLL, "memops %s reduce piece=%llu step=%u: %s", m->name,
			(unsigned long long)sl->piece, sl->step, strerror(-ret));
	return ret;
}

/* The memops work a slot waited on is done: enter the next phase or step. */
static int slot_next(struct run *r, struct comm_slot *sl, int chan)
{
	sl->mem_wait = false;
	if (sl->phase == PHASE_START) {
		sl->phase = PHASE_STEPS;
		sl->step = 0;
	} else if (sl->phase == PHASE_STEPS) {
		if (sl->gated_in) {
			r->in_step[sl->step]--;
			sl->gated_in = false;
		}
		sl->step++;
	} else {
		sl->active = false;
		r->pieces_done++;
		return 0;
	}
	if (sl->step < sl->s->nsteps) {
		step_prepare(r, sl);
		return 0;
	}
	sl->phase = PHASE_DONE;
	return slot_hook(r, sl, chan, r->c->mem->piece_done, "piece_done");
}

/*
 * May the slot work on its current step? Pieces enter each step of a staggered
 * schedule in piece order (the lowest unfinished piece is never held back on any
 * rank, so every rank's pieces keep moving) and at most gate_cap at a time.
 */
static bool gate_enter(struct run *r, struct comm_slot *sl)
{
	uint32_t k = sl->step;

	if (!r->gate_cap || sl->gated_in)
		return true;
	if (r->entered[k] != sl->piece || r->in_step[k] >= r->gate_cap)
		return false;
	r->entered[k]++;
	r->in_step[k]++;
	sl->gated_in = true;
	return true;
}

/* Move a slot along as far as it can go without waiting. */
static int slot_advance(struct run *r, struct comm_slot *sl, int chan, bool *progress)
{
	const struct coll_memops *m = r->c->mem;
	int ret;

	while (sl->active) {
		if (!sl->mem_wait) {
			const struct sched_step *st = &sl->s->steps[sl->step];
			uint8_t all =
			    (uint8_t)(((1u << st->nrecv) - 1) | (((1u << st->nsend) - 1) << 4));

			if (!gate_enter(r, sl))
				return 0;
			if (sl->posted != all) {
				ret = slot_post(r, sl, chan);
				if (ret)
					return ret;
			}
			if (sl->done != all)
				return 0;
			/* overlap step: its sends are out of buf, the reductions may go in now */
			for (int i = 0; st->overlap && i < st->nrecv; i++) {
				if (st->recv[i].mode != SCHED_RECV_REDUCE)
					continue;
				ret = mem_call_reduce(r, sl, chan, i);
				if (ret)
					return ret;
			}
			if (r->op == REDOP_AVG && st->scale_count) {
				ret = mem_call_scale(r, sl, chan, st);
				if (ret)
					return ret;
			}
			sl->mem_wait = true;
		}
		ret = m->query(m->ctx, chan);
		if (ret < 0) {
			log_err(LOG_COLL, "memops %s query piece=%llu step=%u: %s", m->name,
				(unsigned long long)sl->piece, sl->step, strerror(-ret));
			return ret;
		}
		if (!ret)
			return 0;
		*progress = true;
		ret = slot_next(r, sl, chan);
		if (ret)
			return ret;
	}
	return 0;
}

static int on_completion(struct run *r, const struct tp_completion *cp)
{
	int idx = (int)(cp->cookie & 7), chan = (int)((cp->cookie >> 16) & 0xff);
	bool is_send = (cp->cookie >> 3) & 1;
	uint32_t step = (uint32_t)((cp->cookie >> 4) & 0xfff);
	uint64_t piece = cp->cookie >> 24;
	struct comm_slot *sl = chan < r->channels ? &r->c->slots[chan] : NULL;
	uint8_t bit = (uint8_t)(1u << (is_send ? 4 + idx : idx));
	const struct sched_xfer *x;

	if (!sl || !sl->active || sl->phase != PHASE_STEPS || sl->piece != piece ||
	    (sl->step & 0xfff) != step || sl->mem_wait || !(sl->posted & bit) || (sl->done & bit)) {
		log_err(LOG_COLL, "allreduce seq=%u: stray completion peer=%d cookie=%#llx", r->seq,
			cp->peer, (unsigned long long)cp->cookie);
		return -EPROTO;
	}
	x = is_send ? &sl->s->steps[sl->step].send[idx] : &sl->s->steps[sl->step].recv[idx];
	comm_wait_close(r->c, x->peer, is_send, *slot_xlog(sl, is_send, idx), run_now(r));
	if (cp->status) {
		log_err(LOG_COLL, "allreduce seq=%u piece=%llu step=%u: %s peer %d failed: %s",
			r->seq, (unsigned long long)piece, sl->step,
			is_send ? "send to" : "recv from", x->peer, strerror(-cp->status));
		return cp->status;
	}
	/* an overlap step reduces once its sends are done too (slot_advance) */
	if (!is_send && x->mode == SCHED_RECV_REDUCE && !(sl->fused & bit) &&
	    !sl->s->steps[sl->step].overlap) {
		int ret = mem_call_reduce(r, sl, chan, idx);

		if (ret)
			return ret;
	}
	sl->done |= bit;
	return 0;
}

/* What a stalled collective waits on (stall_find). */
struct stall {
	const struct comm_slot *sl;  /* NULL: no transfer pending in any slot */
	const struct sched_xfer *x;  /* the transfer; NULL: the slot's memops */
	bool is_send;
	bool posted;
};

/* The first active slot's memops hook, else its first transfer not done, else its memops
 * wait; false when no slot waits on anything. Never blocks. */
static bool stall_find(const struct run *r, struct stall *w)
{
	*w = (struct stall){ 0 };
	for (int ch = 0; ch < r->channels; ch++) {
		const struct comm_slot *sl = &r->c->slots[ch];
		const struct sched_step *st;

		if (!sl->active)
			continue;
		w->sl = sl;
		if (sl->phase != PHASE_STEPS)
			return true;
		st = &sl->s->steps[sl->step];
		for (int i = 0; i < 2 * SCHED_MAX_XFER; i++) {
			bool is_send = i >= SCHED_MAX_XFER;
			int k = i % SCHED_MAX_XFER;
			uint8_t bit = (uint8_t)(1u << (is_send ? 4 + k : k));

			if (k >= (is_send ? st->nsend : st->nrecv) || (sl->done & bit))
				continue;
			w->x = is_send ? &st->send[k] : &st->recv[k];
			w->is_send = is_send;
			w->posted = sl->posted & bit;
			return true;
		}
		if (sl->mem_wait)
			return true;
	}
	w->sl = NULL;
	return false;
}

/* One line naming what the stalled collective waits on. */
static void log_stall(struct run *r, int err, uint64_t idle_ns)
{
	struct stall w;
	char why[512];

	if (!stall_find(r, &w)) {
		log_err(LOG_COLL, "allreduce seq=%u %s: %s with no transfer pending", r->seq,
			sched_algo_name(r->algo), strerror(-err));
	} else if (w.sl->phase != PHASE_STEPS) {
		log_err(LOG_COLL, "allreduce seq=%u: %s: piece %llu waits on memops %s %s", r->seq,
			strerror(-err), (unsigned long long)w.sl->piece, r->c->mem->name,
			w.sl->phase == PHASE_START ? "piece_start" : "piece_done");
	} else if (w.x) {
		log_err(LOG_COLL,
			"allreduce seq=%u %s: %s after %llu ms idle: piece %llu "
			"step %u/%u waits on %s peer %d (%llu elements%s)%s",
			r->seq, sched_algo_name(r->algo), strerror(-err),
			(unsigned long long)(idle_ns / 1000000), (unsigned long long)w.sl->piece,
			w.sl->step, w.sl->s->nsteps, w.is_send ? "send to" : "recv from", w.x->peer,
			(unsigned long long)w.x->count, w.posted ? "" : ", not posted",
			comm_pending(r->c, w.x->peer, why, sizeof(why)));
	} else {
		log_err(LOG_COLL, "allreduce seq=%u: %s: piece %llu step %u waits on memops %s",
			r->seq, strerror(-err), (unsigned long long)w.sl->piece, w.sl->step,
			r->c->mem->name);
	}
}

/*
 * A wait that lasted EXEC_NOTE_WAIT_NS goes into the calling thread's activity record,
 * naming the peer (or memops) it waits on since it began: rank 0's probe after a failure
 * can then say what a rank that never returned was waiting on. Once per such wait, far
 * off the data path (a wait this long naps already).
 */
#define EXEC_NOTE_WAIT_NS COMM_NAP_AFTER_NS

static void note_wait(struct run *r, uint64_t since, bool at_end)
{
	struct stall w;

	if (at_end) /* every piece done: the memops' coll_end */
		act_set(r->c->act, ACT_MEMOPS, -1, r->seq, since);
	else if (!stall_find(r, &w)) /* nothing pending (held back by the gate, -EAGAIN) */
		act_set(r->c->act, ACT_ALLREDUCE, -1, r->seq, since);
	else if (!w.x)
		act_set(r->c->act, ACT_MEMOPS, -1, r->seq, since);
	else
		act_set(r->c->act, w.is_send ? ACT_SEND : ACT_RECV, w.x->peer, r->seq, since);
}

/* After comm_idle said to go on: note a wait that lasted (once; *noted). */
static void note_if_long(struct run *r, uint64_t idle_since, bool at_end, bool *noted)
{
	if (!*noted && r->c->act && idle_since &&
	    r->c->idle_now - idle_since >= EXEC_NOTE_WAIT_NS) {
		note_wait(r, idle_since, at_end);
		*noted = true;
	}
}

static int run_loop(struct run *r)
{
	struct coll_comm *c = r->c;
	struct tp_completion comps[COMM_POLL_BATCH];
	uint64_t idle_since = 0;
	uint32_t spins = 0;
	bool noted = false; /* this wait is in the activity record (note_if_long) */
	int ret;

	while (r->pieces_done < r->npieces) {
		bool progress = false;

		r->now = 0;
		for (int ch = 0; ch < r->channels; ch++) {
			struct comm_slot *sl = &c->slots[ch];

			if (!sl->active) {
				if (r->next_piece >= r->npieces)
					continue;
				ret = slot_start(r, sl, ch);
				if (ret)
					return ret;
				progress = true;
			}
			ret = slot_advance(r, sl, ch, &progress);
			if (ret)
				return ret;
		}
		/* the last piece ended in this pass: no poll after it (on loopback tcp one
		 * epoll_wait of five syscalls per small AllReduce) */
		if (r->pieces_done == r->npieces)
			break;
		r->now = 0; /* a poll may have copied for a while */
		for (int i = 0; i < c->ntp; i++) {
			struct transport *t = c->tps[i];
			int n = t->ops->poll(t, comps, COMM_POLL_BATCH);

			if (n < 0) {
				log_err(LOG_COLL, "%s poll seq=%u: %s", t->ops->name, r->seq,
					strerror(-n));
				return n;
			}
			for (int j = 0; j < n; j++) {
				ret = on_completion(r, &comps[j]);
				if (ret)
					return ret;
			}
			progress |= n > 0;
		}
		if (progress) {
			idle_since = 0;
			spins = 0;
			if (noted) /* the wait ended: moving again */
				act_set(c->act, ACT_ALLREDUCE, -1, r->seq, time_now_ns());
			noted = false;
			continue;
		}
		ret = comm_idle(c, &idle_since, &spins);
		if (ret) {
			log_stall(r, ret, time_now_ns() - idle_since);
			return ret;
		}
		note_if_long(r, idle_since, false, &noted);
	}
	return 0;
}

/* The memops' end of the collective (coll_memops.coll_end), waited for like a step. */
static int run_end(struct run *r)
{
	const struct coll_memops *m = r->c->mem;
	uint64_t idle_since = 0;
	uint32_t spins = 0;
	bool noted = false;
	int ret;

	if (!m->coll_end)
		return 0;
	while ((ret = m->coll_end(m->ctx)) == 0) {
		ret = comm_idle(r->c, &idle_since, &spins);
		if (ret)
			break;
		note_if_long(r, idle_since, true, &noted);
	}
	if (ret < 0)
		log_err(LOG_COLL, "allreduce seq=%u: memops %s coll_end: %s", r->seq, m->name,
			strerror(-ret));
	return ret < 0 ? ret : 0;
}

static int run_setup(struct run *r, uint64_t chunk_bytes, int channels)
{
	struct coll_comm *c = r->c;
	uint64_t chunk = GS_MAX(chunk_bytes / r->es, 1), rest;
	int err = 0;

	r->piece = sched_piece_count_on(r->algo, c->nranks, c->local_size, chunk);
	if (!r->piece) {
		log_err(LOG_COLL, "allreduce algo=%s: no schedule for this rank layout",
			sched_algo_name(r->algo));
		return -ENOTSUP;
	}
	r->npieces = GS_DIV_ROUND_UP(r->count, r->piece);
	rest = r->count % r->piece;
	r->full = comm_sched(c, r->algo, GS_MIN(r->piece, r->count), &err);
	if (!r->full)
		return err;
	r->tail = NULL;
	if (rest && r->npieces > 1) {
		r->tail = comm_sched(c, r->algo, rest, &err);
		if (!r->tail)
			return err;
	}
	r->channels = (int)GS_MIN((uint64_t)GS_MIN(channels, c->max_channels), r->npieces);
	r->slot_bytes = r->scratch ? r->scratch->bytes / (uint64_t)r->channels / 64 * 64 : 0;
	if (r->full->scratch_count * r->es > r->slot_bytes ||
	    (r->tail && r->tail->scratch_count * r->es > r->slot_bytes)) {
		log_err(LOG_COLL,
			"allreduce %s: scratch of %llu bytes too small for %d channels "
			"of %llu-byte chunks (need coll_scratch_bytes)",
			sched_algo_name(r->algo),
			(unsigned long long)(r->scratch ? r->scratch->bytes : 0), r->channels,
			(unsigned long long)chunk_bytes);
		return -ENOSPC;
	}
	for (int ch = 0; ch < r->channels; ch++)
		c->slots[ch].active = false;
	r->gate_cap = 0;
	if (r->full->staggered && r->full->nsteps <= EXEC_GATE_STEPS &&
	    (!r->tail || r->tail->nsteps == r->full->nsteps)) {
		r->gate_cap = (uint32_t)GS_DIV_ROUND_UP(r->channels, r->full->nsteps);
		memset(r->in_step, 0, sizeof(r->in_step));
		memset(r->entered, 0, sizeof(r->entered));
	}
	return 0;
}

/*
 * ALGO_AUTO for this comm. sched_pick_on's inputs must agree on every rank: on one host
 * (the layout's one block) every rank counts the same ranks and CPUs, and each pair
 * picked its transport by the same preference order.
 */
static int exec_pick(const struct coll_comm *c, uint64_t bytes)
{
	return sched_pick_on(c->nranks, bytes, c->local_size == c->nranks,
			     c->ntp == 1 ? c->tps[0]->ops->kind : TP_AUTO, c->crowded);
}

int coll_allreduce(struct coll_comm *c, const struct coll_buf *buf, uint64_t off,
		   const struct coll_buf *scratch, uint64_t count, enum dtype dt, enum redop op,
		   int algo, uint64_t chunk_bytes, int channels, struct coll_stats *st)
{
	struct coll_stats dummy;
	struct run r = {
	    .c = c,
	    .buf = buf,
	    .scratch = scratch,
	    .off = off,
	    .dt = dt,
	    .op = op,
	    .seq = c->seq++,
	    .count = count,
	    .algo = algo,
	};
	uint64_t t0 = time_now_ns(), t1;
	struct act_mark mark;
	int ret;

	r.st = st ? st : &dummy;
	memset(r.st, 0, sizeof(*r.st));
	if ((unsigned)dt >= DT_COUNT || (unsigned)op >= REDOP_COUNT || algo < 0 ||
	    algo >= ALGO_COUNT || channels < 1) {
		log_err(LOG_COLL, "allreduce dtype=%d op=%d algo=%d channels=%d: invalid", dt, op,
			algo, channels);
		return -EINVAL;
	}
	r.es = dtype_size(dt);
	if (off > buf->bytes || count > (buf->bytes - off) / r.es) {
		log_err(LOG_COLL,
			"allreduce: %llu elements at offset %llu overrun a %llu-byte "
			"buffer",
			(unsigned long long)count, (unsigned long long)off,
			(unsigned long long)buf->bytes);
		return -EINVAL;
	}
	if (buf->kind != MEM_HOST && c->mem == &coll_host_memops) {
		log_err(LOG_COLL, "allreduce: device buffer with the host memops (the GPU layer's "
				  "memops must be given to coll_comm_create)");
		return -EINVAL;
	}
	r.data = (char *)buf->ptr + off;
	if (r.algo == ALGO_AUTO)
		r.algo = exec_pick(c, count * r.es);
	r.st->algo = r.algo;
	/* One rank: the sum is the input, and avg divides by 1. */
	if (c->nranks == 1 || !count)
		return 0;
	act_enter(c->act, ACT_ALLREDUCE, -1, r.seq, t0, &mark);
	ret = run_setup(&r, chunk_bytes, channels);
	for (int i = 0; !ret && i < c->ntp; i++)
		c->tps[i]->ops->coll_begin(c->tps[i], count * r.es);
	if (!ret && c->mem->coll_begin) {
		ret = c->mem->coll_begin(c->mem->ctx, off, count * r.es);
		if (ret)
			log_err(LOG_COLL, "allreduce seq=%u: memops %s coll_begin: %s", r.seq,
				c->mem->name, strerror(-ret));
	}
	if (!ret)
		ret = run_loop(&r);
	if (!ret)
		ret = run_end(&r);
	r.st->pieces = r.npieces;
	t1 = time_now_ns();
	r.st->ns = t1 - t0;
	act_leave(c->act, &mark, t1);
	return ret;
}
