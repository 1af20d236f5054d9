/* cudaipc transport progress: device copies of matched sends, FIN completions. */
#include <errno.h>
#include <string.h>

#include "transport/cudaipc/cudaipc_priv.h"
#include "util/common.h"
#include "util/log.h"

static void fin_push(struct shm_pair_link *l, uint64_t seq, int status)
{
	struct cipc_seg_hdr *h = cipc_hdr(&l->tx);
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

/* Sender side: issue copies for matched sends, publish FIN for finished ones. */
static int progress_tx(struct cipc_priv *s, int p, bool *moved)
{
	struct shm_pair_link *l = &s->c.links[p];
	struct cipc_peer *pe = &s->peers[p];
	struct shm_pair_where *w;
	struct cipc_copy *cp;
	struct shm_pair_req *r;
	int err;

	while ((r = pair_q_first(&l->ready))) {
		if (r->len != r->cts_len) {
			pair_q_pop(&l->ready);
			fin_push(l, r->seq, -EMSGSIZE);
			shm_pair_complete(&s->c, r, -EMSGSIZE);
			*moved = true;
			continue;
		}
		if (!s->nfree_events)
			break;
		w = &s->c.where[pair_req_index(&s->c, r)];
		cp = &s->copy[pair_req_index(&s->c, r)];
		err = map_get(s, pe, p, &w->h, &cp->map);
		if (err == -EAGAIN)
			break;
		if (err)
			return err;
		if (r->len) {
			err = s->dev->copy(cp->map->ptr + w->alloc_off, r->buf, r->len, pe->stream);
			if (err) {
				log_err(LOG_TRANSPORT, "cudaipc send peer=%d tag=%llu: copy failed",
					p, (unsigned long long)r->tag);
				return err;
			}
		}
		cp->ev = s->events[--s->nfree_events];
		err = s->dev->event_record(cp->ev, pe->stream);
		if (err) {
			s->events[s->nfree_events++] = cp->ev;
			return err;
		}
		cp->map->busy++;
		s->copies++;
		pair_q_pop(&l->ready);
		pair_q_push(&pe->inflight, r);
		*moved = true;
	}

	/* one stream per peer: copies finish in issue order */
	while ((r = pair_q_first(&pe->inflight))) {
		cp = &s->copy[pair_req_index(&s->c, r)];
		err = s->dev->event_query(cp->ev);
		if (err == -EBUSY)
			break;
		if (err) {
			log_err(LOG_TRANSPORT, "cudaipc send peer=%d tag=%llu: copy failed: %s", p,
				(unsigned long long)r->tag, strerror(-err));
			return err;
		}
		pair_q_pop(&pe->inflight);
		s->events[s->nfree_events++] = cp->ev;
		cp->map->busy--;
		*cp = (struct cipc_copy){0};
		fin_push(l, r->seq, 0);
		s->c.bytes_sent += r->len;
		shm_pair_complete(&s->c, r, 0);
		*moved = true;
	}
	return 0;
}

/* Receiver side: complete announced receives whose FIN arrived. */
static int progress_rx(struct shm_pair_core *c, struct shm_pair_link *l, int p, bool *moved)
{
	struct cipc_seg_hdr *h = cipc_hdr(&l->rx);
	uint64_t tail = atomic_load_explicit(&h->fin_tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&h->fin_head, memory_order_acquire);

	for (; tail != head; tail++) {
		struct cipc_fin f = h->fin[tail % CIPC_CAP];
		/* FIN comes in copy order, which is announce order unless tags interleave */
		struct shm_pair_req *r = pair_q_take(&l->posted, f.seq, true);

		if (!r) {
			log_err(LOG_TRANSPORT,
				"cudaipc recv peer=%d: completion for unknown seq %llu", p,
				(unsigned long long)f.seq);
			return -EPROTO;
		}
		if (!f.status)
			c->bytes_recv += r->len;
		shm_pair_complete(c, r, (int)f.status);
		*moved = true;
	}
	atomic_store_explicit(&h->fin_tail, tail, memory_order_release);
	return 0;
}

int cipc_progress(struct shm_pair_core *c)
{
	struct cipc_priv *s = (struct cipc_priv *)c;
	uint64_t now = 0;

	for (int p = 0; p < c->env->nranks; p++) {
		struct shm_pair_link *l = &c->links[p];
		bool moved = false;
		int err;

		if (!l->active)
			continue;
		err = progress_rx(c, l, p, &moved);
		if (!err) {
			moved |= shm_pair_take_cts(c, l, p);
			err = progress_tx(s, p, &moved);
		}
		if (err)
			return err;
		if (pair_q_first(&l->cts_wait))
			shm_pair_flush_cts(c, l);
		err = shm_pair_watch(c, l, p, moved, &now);
		if (err)
			return err;
	}
	return 0;
}
