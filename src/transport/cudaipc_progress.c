/* cudaipc transport progress: CTS matching, device copies, FIN completions, dead peers. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "transport/cudaipc_priv.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

void cipc_complete(struct cipc_priv *s, struct cipc_req *r, int status)
{
	r->status = status;
	s->peers[r->peer].outstanding--;
	s->outstanding--;
	cq_push(&s->done, r);
}

void cipc_flush_cts(struct cipc_priv *s GS_UNUSED, struct cipc_peer *pe)
{
	struct cipc_seg_hdr *h = pe->rx.hdr;
	uint64_t head = atomic_load_explicit(&h->cts_head, memory_order_relaxed);
	uint64_t fin = atomic_load_explicit(&h->fin_tail, memory_order_relaxed);
	struct cipc_req *r;

	/* at most CIPC_CAP announced and unfinished: the FIN queue can never overflow */
	while (pe->cts_wait.head && head - fin < CIPC_CAP) {
		r = cq_pop(&pe->cts_wait);
		r->cts.seq = head;
		h->cts[head % CIPC_CAP] = r->cts;
		pe->posted[head % CIPC_CAP] = r;
		head++;
	}
	atomic_store_explicit(&h->cts_head, head, memory_order_release);
}

static void fin_push(struct cipc_peer *pe, uint64_t seq, int status)
{
	struct cipc_seg_hdr *h = pe->tx.hdr;
	uint64_t head = atomic_load_explicit(&h->fin_head, memory_order_relaxed);

	h->fin[head % CIPC_CAP] = (struct cipc_fin){.seq = seq, .status = status};
	atomic_store_explicit(&h->fin_head, head + 1, memory_order_release);
}

/* The peer allocation behind h mapped here: cached, least recently used idle one evicted. */
static int map_get(struct cipc_priv *s, struct cipc_peer *pe, int p, const struct gpu_ipc_handle *h,
		   struct cipc_map **out)
{
	struct cipc_map *unused = NULL, *idle = NULL, *victim;
	void *ptr;
	int err;

	for (int i = 0; i < CIPC_MAPS; i++) {
		struct cipc_map *m = &pe->maps[i];

		if (m->used && !memcmp(m->h.bytes, h->bytes, sizeof(h->bytes))) {
			m->stamp = ++s->stamp;
			*out = m;
			return 0;
		}
		if (!m->used && !unused)
			unused = m;
		else if (m->used && !m->busy && (!idle || m->stamp < idle->stamp))
			idle = m;
	}
	victim = unused ? unused : idle;
	if (!victim)
		return -EAGAIN; /* every mapping has copies in flight: retry after they land */
	if (victim->used) {
		s->dev->ipc_close(victim->ptr);
		victim->used = false;
	}
	err = s->dev->ipc_open(h, &ptr);
	if (err) {
		log_err(LOG_TRANSPORT, "cudaipc peer=%d: cannot map its buffer: %s", p,
			strerror(-err));
		return err;
	}
	*victim = (struct cipc_map){.used = true, .stamp = ++s->stamp, .h = *h, .ptr = ptr};
	*out = victim;
	return 0;
}

/* Sender side: take CTS entries, match, issue copies, publish FIN for finished ones. */
static int progress_tx(struct cipc_priv *s, struct cipc_peer *pe, int p, bool *moved)
{
	struct cipc_seg_hdr *h = pe->tx.hdr;
	uint64_t ct = atomic_load_explicit(&h->cts_tail, memory_order_relaxed);
	uint64_t ch = atomic_load_explicit(&h->cts_head, memory_order_acquire);
	struct cipc_req *r;
	int err;

	for (; ct != ch; ct++) {
		const struct cipc_cts *e = &h->cts[ct % CIPC_CAP];

		r = cq_take(&pe->sends, e->tag);
		if (!r) {
			r = creq_get(s);
			if (!r)
				break; /* retry on the next poll once requests are free */
			*r = (struct cipc_req){.kind = CIPC_CTS, .peer = p, .tag = e->tag};
			r->cts = *e;
			cq_push(&pe->cts, r);
		} else {
			r->cts = *e;
			cq_push(&pe->ready, r);
		}
		*moved = true;
	}
	atomic_store_explicit(&h->cts_tail, ct, memory_order_release);

	while ((r = pe->ready.head)) {
		if (r->len != r->cts.len) {
			cq_pop(&pe->ready);
			fin_push(pe, r->cts.seq, -EMSGSIZE);
			cipc_complete(s, r, -EMSGSIZE);
			*moved = true;
			continue;
		}
		if (!s->nfree_events)
			break;
		err = map_get(s, pe, p, &r->cts.h, &r->map);
		if (err == -EAGAIN)
			break;
		if (err)
			return err;
		if (r->len) {
			err = s->dev->copy(r->map->ptr + r->cts.alloc_off, r->src, r->len,
					   pe->stream);
			if (err) {
				log_err(LOG_TRANSPORT, "cudaipc send peer=%d tag=%llu: copy failed",
					p, (unsigned long long)r->tag);
				return err;
			}
		}
		r->ev = s->events[--s->nfree_events];
		err = s->dev->event_record(r->ev, pe->stream);
		if (err) {
			s->events[s->nfree_events++] = r->ev;
			return err;
		}
		r->map->busy++;
		s->copies++;
		cq_pop(&pe->ready);
		cq_push(&pe->inflight, r);
		*moved = true;
	}

	/* one stream per peer: copies finish in issue order */
	while ((r = pe->inflight.head)) {
		err = s->dev->event_query(r->ev);
		if (err == -EBUSY)
			break;
		if (err) {
			log_err(LOG_TRANSPORT, "cudaipc send peer=%d tag=%llu: copy failed: %s", p,
				(unsigned long long)r->tag, strerror(-err));
			return err;
		}
		cq_pop(&pe->inflight);
		s->events[s->nfree_events++] = r->ev;
		r->ev = NULL;
		r->map->busy--;
		fin_push(pe, r->cts.seq, 0);
		s->bytes_sent += r->len;
		cipc_complete(s, r, 0);
		*moved = true;
	}
	return 0;
}

/* Receiver side: complete announced receives whose FIN arrived. */
static int progress_rx(struct cipc_priv *s, struct cipc_peer *pe, int p, bool *moved)
{
	struct cipc_seg_hdr *h = pe->rx.hdr;
	uint64_t tail = atomic_load_explicit(&h->fin_tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&h->fin_head, memory_order_acquire);
	uint64_t announced = atomic_load_explicit(&h->cts_head, memory_order_relaxed);

	for (; tail != head; tail++) {
		struct cipc_fin f = h->fin[tail % CIPC_CAP];
		struct cipc_req *r;

		r = f.seq < announced && announced - f.seq <= CIPC_CAP
			? pe->posted[f.seq % CIPC_CAP]
			: NULL;
		if (!r || r->cts.seq != f.seq) {
			log_err(LOG_TRANSPORT,
				"cudaipc recv peer=%d: completion for unknown seq %llu", p,
				(unsigned long long)f.seq);
			return -EPROTO;
		}
		pe->posted[f.seq % CIPC_CAP] = NULL;
		if (!f.status)
			s->bytes_recv += r->len;
		cipc_complete(s, r, (int)f.status);
		*moved = true;
	}
	atomic_store_explicit(&h->fin_tail, tail, memory_order_release);
	return 0;
}

static bool peer_dead(struct cipc_peer *pe)
{
	struct pollfd pfd = {.fd = pe->pidfd, .events = POLLIN};

	if (pe->pidfd >= 0)
		return poll(&pfd, 1, 0) > 0;
	return kill(pe->pid, 0) < 0 && errno == ESRCH;
}

int cipc_progress(struct cipc_priv *s)
{
	uint64_t now = 0;

	for (int p = 0; p < s->env->nranks; p++) {
		struct cipc_peer *pe = &s->peers[p];
		bool moved = false;
		int err;

		if (!pe->active)
			continue;
		err = progress_rx(s, pe, p, &moved);
		if (!err)
			err = progress_tx(s, pe, p, &moved);
		if (err)
			return err;
		if (pe->cts_wait.head)
			cipc_flush_cts(s, pe);
		if (moved || !pe->outstanding) {
			pe->last_progress_ns = 0;
			continue;
		}
		/* stalled with work pending: is the peer still alive? (cheap, rate-limited) */
		now = now ? now : time_now_ns();
		if (!pe->last_progress_ns) {
			pe->last_progress_ns = now;
			pe->last_check_ns = now;
			continue;
		}
		if (now - pe->last_check_ns < CIPC_DEAD_CHECK_NS)
			continue;
		pe->last_check_ns = now;
		if (peer_dead(pe)) {
			log_err(LOG_TRANSPORT, "cudaipc poll peer=%d: process %d is gone", p,
				pe->pid);
			return -ECONNRESET;
		}
	}
	return 0;
}
