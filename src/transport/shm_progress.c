/*
 * shm transport data movement: CTS exchange and slot copies, run from post/poll.
 *
 * Protocol of one directed pair S -> R, all through the segment R created:
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
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "transport/shm_priv.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

void shm_req_complete(struct shm_priv *s, struct shm_req *r, int status)
{
	r->status = status;
	s->peers[r->peer].outstanding--;
	s->outstanding--;
	q_push(&s->done, r);
}

void shm_flush_cts(struct shm_peer *pe)
{
	struct shm_seg_hdr *h = pe->rx.hdr;
	uint64_t head = atomic_load_explicit(&h->cts_head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&h->cts_tail, memory_order_acquire);
	struct shm_req *r;

	while (pe->cts_wait.head && head - tail < SHM_CTS_CAP) {
		r = q_pop(&pe->cts_wait);
		h->cts[head % SHM_CTS_CAP] = (struct shm_cts){r->tag, r->len};
		head++;
		q_push(&pe->posted, r);
	}
	atomic_store_explicit(&h->cts_head, head, memory_order_release);
}

/* Sender side: take CTS entries, match them, copy ready messages into free slots. */
static bool progress_tx(struct shm_priv *s, struct shm_peer *pe)
{
	struct shm_seg_hdr *h = pe->tx.hdr;
	uint64_t ct = atomic_load_explicit(&h->cts_tail, memory_order_relaxed);
	uint64_t ch = atomic_load_explicit(&h->cts_head, memory_order_acquire);
	uint64_t head, tail;
	bool moved = false;
	struct shm_req *r;

	for (; ct != ch; ct++) {
		struct shm_cts e = h->cts[ct % SHM_CTS_CAP];

		r = q_take(&pe->sends, e.tag);
		if (r) {
			r->cts_len = e.len;
			q_push(&pe->ready, r);
		} else {
			r = req_get(s);
			if (!r)
				break; /* retry on the next poll once requests are free */
			*r = (struct shm_req){.tag = e.tag, .len = e.len, .kind = SHM_CTS};
			q_push(&pe->cts, r);
		}
		moved = true;
	}
	atomic_store_explicit(&h->cts_tail, ct, memory_order_release);

	head = atomic_load_explicit(&h->head, memory_order_relaxed);
	tail = atomic_load_explicit(&h->tail, memory_order_acquire);
	while ((r = pe->ready.head) && head - tail < h->nslots) {
		struct shm_desc *d = &h->desc[head % h->nslots];
		size_t n = GS_MIN(r->len - r->done, (size_t)h->slot_size);

		d->tag = r->tag;
		d->msg_len = r->len;
		d->off = r->done;
		d->flags = r->len != r->cts_len ? SHM_DESC_MISMATCH : 0;
		d->len = d->flags ? 0 : (uint32_t)n;
		if (d->len)
			memcpy(pe->tx.data + (head % h->nslots) * (size_t)h->slot_size,
			       r->buf + r->done, n);
		r->done += d->len;
		head++;
		atomic_store_explicit(&h->head, head, memory_order_release);
		s->bytes_sent += d->len;
		moved = true;
		if (d->flags || r->done == r->len) {
			q_pop(&pe->ready);
			shm_req_complete(s, r, d->flags ? -EMSGSIZE : 0);
		}
		if (head - tail >= h->nslots)
			tail = atomic_load_explicit(&h->tail, memory_order_acquire);
	}
	return moved;
}

/* Receiver side: copy published slots into the posted buffers, release them. */
static int progress_rx(struct shm_priv *s, struct shm_peer *pe, int p, bool *moved)
{
	struct shm_seg_hdr *h = pe->rx.hdr;
	uint64_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&h->head, memory_order_acquire);
	struct shm_req *r;

	for (; tail != head; tail++) {
		const struct shm_desc *d = &h->desc[tail % h->nslots];

		r = pe->rx_cur;
		if (!r) {
			r = q_take(&pe->posted, d->tag);
			if (!r) {
				log_err(LOG_TRANSPORT,
					"shm recv peer=%d: data for unposted tag %llu", p,
					(unsigned long long)d->tag);
				return -EPROTO;
			}
			pe->rx_cur = r;
		}
		*moved = true;
		if (d->flags & SHM_DESC_MISMATCH) {
			pe->rx_cur = NULL;
			shm_req_complete(s, r, -EMSGSIZE);
			atomic_store_explicit(&h->tail, tail + 1, memory_order_release);
			continue;
		}
		if (d->len > h->slot_size || d->off + d->len > r->len || d->tag != r->tag) {
			log_err(LOG_TRANSPORT, "shm recv peer=%d: slot outside message tag %llu", p,
				(unsigned long long)r->tag);
			return -EPROTO;
		}
		if (d->len)
			memcpy(r->buf + d->off,
			       pe->rx.data + (tail % h->nslots) * (size_t)h->slot_size, d->len);
		r->done += d->len;
		s->bytes_recv += d->len;
		if (r->done == r->len) {
			pe->rx_cur = NULL;
			shm_req_complete(s, r, 0);
		}
		/* free each slot at once so the sender refills it while we copy the next */
		atomic_store_explicit(&h->tail, tail + 1, memory_order_release);
	}
	return 0;
}

static bool peer_dead(struct shm_peer *pe)
{
	struct pollfd pfd = {.fd = pe->pidfd, .events = POLLIN};

	if (pe->pidfd >= 0)
		return poll(&pfd, 1, 0) > 0;
	return kill(pe->pid, 0) < 0 && errno == ESRCH;
}

int shm_progress(struct shm_priv *s)
{
	uint64_t now = 0;

	for (int p = 0; p < s->env->nranks; p++) {
		struct shm_peer *pe = &s->peers[p];
		bool moved = false;
		int err;

		if (!pe->active)
			continue;
		if (pe->cts_wait.head)
			shm_flush_cts(pe);
		moved = progress_tx(s, pe);
		err = progress_rx(s, pe, p, &moved);
		if (err)
			return err;
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
		if (now - pe->last_check_ns < SHM_DEAD_CHECK_NS)
			continue;
		pe->last_check_ns = now;
		if (peer_dead(pe)) {
			log_err(LOG_TRANSPORT, "shm poll peer=%d: process %d is gone", p, pe->pid);
			return -ECONNRESET;
		}
	}
	return 0;
}
