/*
 * shm transport data movement: slot copies, run from post/poll.
 *
 * Protocol of one directed pair S -> R, all through the segment R created (setup and
 * the CTS queue are shm_pair.h's):
 *   1. R posts a receive: it appends CTS {tag, len} to the segment's CTS queue.
 *   2. S pops CTS entries and matches them to its posted sends by tag (FIFO per tag).
 *   3. S copies a matched message into ring slots (desc {tag, msg_len, off, len}),
 *      publishing each slot with a release store of `head`. A length mismatch is sent
 *      as one desc with SHM_DESC_MISMATCH and no data; both sides complete -EMSGSIZE.
 *   4. R copies each slot out into the posted buffer and frees it (release store of
 *      `tail`). Only CTS'd messages enter the ring, so R never blocks on its head.
 * Single producer / single consumer on every index; C11 acquire/release orders the
 * slot bytes against the index that publishes them.
 */
#include <errno.h>
#include <string.h>

#include "transport/shm/shm_priv.h"
#include "util/common.h"
#include "util/log.h"

/* Sender side: copy ready messages into free slots. */
static bool progress_tx(struct shm_pair_core *c, struct shm_pair_link *l)
{
	struct shm_seg_hdr *h = shm_hdr(&l->tx);
	char *data = (char *)h + h->data_off;
	uint64_t head = atomic_load_explicit(&h->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&h->tail, memory_order_acquire);
	bool moved = false;
	struct shm_pair_req *r;

	while ((r = l->ready.head) && head - tail < h->nslots) {
		struct shm_desc *d = &h->desc[head % h->nslots];
		size_t n = GS_MIN(r->len - r->done, (size_t)h->slot_size);

		d->tag = r->tag;
		d->msg_len = r->len;
		d->off = r->done;
		d->flags = r->len != r->cts_len ? SHM_DESC_MISMATCH : 0;
		d->len = d->flags ? 0 : (uint32_t)n;
		if (d->len)
			memcpy(data + (head % h->nslots) * (size_t)h->slot_size, r->buf + r->done,
			       n);
		r->done += d->len;
		head++;
		atomic_store_explicit(&h->head, head, memory_order_release);
		c->bytes_sent += d->len;
		moved = true;
		if (d->flags || r->done == r->len) {
			pair_q_pop(&l->ready);
			shm_pair_complete(c, r, d->flags ? -EMSGSIZE : 0);
		}
		if (head - tail >= h->nslots)
			tail = atomic_load_explicit(&h->tail, memory_order_acquire);
	}
	return moved;
}

/* Receiver side: copy published slots into the posted buffers, release them. */
static int progress_rx(struct shm_pair_core *c, struct shm_pair_link *l, int p, bool *moved)
{
	struct shm_seg_hdr *h = shm_hdr(&l->rx);
	const char *data = (const char *)h + h->data_off;
	uint64_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&h->head, memory_order_acquire);
	struct shm_pair_req *r;

	for (; tail != head; tail++) {
		const struct shm_desc *d = &h->desc[tail % h->nslots];

		r = l->rx_cur;
		if (!r) {
			r = pair_q_take(&l->posted, d->tag, false);
			if (!r) {
				log_err(LOG_TRANSPORT,
					"shm recv peer=%d: data for unposted tag %llu", p,
					(unsigned long long)d->tag);
				return -EPROTO;
			}
			l->rx_cur = r;
		}
		*moved = true;
		if (d->flags & SHM_DESC_MISMATCH) {
			l->rx_cur = NULL;
			shm_pair_complete(c, r, -EMSGSIZE);
			atomic_store_explicit(&h->tail, tail + 1, memory_order_release);
			continue;
		}
		if (d->len > h->slot_size || d->off + d->len > r->len || d->tag != r->tag) {
			log_err(LOG_TRANSPORT, "shm recv peer=%d: slot outside message tag %llu", p,
				(unsigned long long)r->tag);
			return -EPROTO;
		}
		if (d->len && r->red)
			r->red(r->buf + d->off, data + (tail % h->nslots) * (size_t)h->slot_size,
			       d->len / dtype_size(r->dt), r->dt);
		else if (d->len)
			memcpy(r->buf + d->off, data + (tail % h->nslots) * (size_t)h->slot_size,
			       d->len);
		r->done += d->len;
		c->bytes_recv += d->len;
		if (r->done == r->len) {
			l->rx_cur = NULL;
			shm_pair_complete(c, r, 0);
		}
		/* free each slot at once so the sender refills it while we copy the next */
		atomic_store_explicit(&h->tail, tail + 1, memory_order_release);
	}
	return 0;
}

int shm_progress(struct shm_pair_core *c)
{
	uint64_t now = 0;

	for (int p = 0; p < c->env->nranks; p++) {
		struct shm_pair_link *l = &c->links[p];
		bool moved;
		int err;

		if (!l->active)
			continue;
		if (l->cts_wait.head)
			shm_pair_flush_cts(c, l);
		moved = shm_pair_take_cts(c, l, p);
		moved |= progress_tx(c, l);
		err = progress_rx(c, l, p, &moved);
		if (!err)
			err = shm_pair_watch(c, l, p, moved, &now);
		if (err)
			return err;
	}
	return 0;
}
