/*
 * shm transport data movement: slot copies or direct reads, run from post/poll.
 *
 * Protocol of one directed pair S -> R, all through the segment R created (setup and
 * the CTS queue are shm_pair.h's):
 *   0. At connect R checks that it may take S's descriptors (pidfd_getfd) and sets
 *      direct_ok in the segment.
 *   1. R posts a receive: it appends CTS {tag, len} to the segment's CTS queue.
 *   2. S pops CTS entries and matches them to its posted sends by tag (FIFO per tag).
 *   3. Slots: S copies a matched message into ring slots (desc {tag, msg_len, off, len,
 *      slot}), publishing each with a release store of `head`, and completes the send
 *      once the last byte is in. Data slots are taken in turn from slot 0 again whenever
 *      the ring is empty (head == tail), so a flow of small messages reuses slot 0's
 *      pages instead of cycling through every slot's (shm_slot_take). A length mismatch
 *      is sent as one desc with SHM_DESC_MISMATCH and no data; both sides complete
 *      -EMSGSIZE.
 *      Direct (shm_use_direct: direct_ok, S's buffer is a shmem allocation, the size):
 *      S publishes one desc with SHM_DESC_DIRECT naming its allocation {fd, id, size}
 *      and the message's offset, no data; the send completes once R released that desc.
 *   4. R copies (or reduces) each slot out into the posted buffer and frees it (release
 *      store of `tail`). A direct desc: R maps S's allocation once (pidfd_getfd, mmap
 *      read-only, kept per id), reduces or copies the message straight from it in one
 *      pass (a large collective's copy with streaming stores, shm_use_stream), then frees the desc.
 *      Only CTS'd messages enter the ring, so R never blocks on its head.
 * Single producer / single consumer on every index; C11 acquire/release orders the
 * slot bytes (and, direct, S's buffer as it stood when the send was posted) against the
 * index that publishes them. The executor leaves a sent range alone until the send
 * completed (schedule.h), so R reads it unchanged.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "transport/shm/shm_priv.h"
#include "util/common.h"
#include "util/copy_stream.h"
#include "util/log.h"

bool shm_use_direct(int copy, uint64_t len, bool shared, bool reachable)
{
	if (!shared || !reachable || !len || copy == TP_SHM_COPY_SLOTS)
		return false;
	return copy == TP_SHM_COPY_DIRECT || len >= SHM_DIRECT_MIN;
}

bool shm_use_stream(uint64_t coll_bytes, bool crowded)
{
	return !crowded && coll_bytes >= SHM_STREAM_MIN;
}

void shm_coll_begin(struct transport *t, uint64_t bytes)
{
	struct shm_priv *s = t->priv;

	s->stream = shm_use_stream(bytes, s->c.env->crowded);
}

uint32_t shm_slot_take(uint32_t *next, uint32_t nslots, bool empty)
{
	uint32_t slot = empty ? 0 : *next;

	*next = slot + 1 == nslots ? 0 : slot + 1;
	return slot;
}

/* Sender side: complete direct sends the receiver is done with. */
static bool tx_reap_direct(struct shm_priv *s, struct shm_pair_q *q, uint64_t tail)
{
	struct shm_pair_req *r;
	bool moved = false;

	while ((r = pair_q_first(q)) && tail > s->src[pair_req_index(&s->c, r)].slot) {
		pair_q_pop(q);
		shm_pair_complete(&s->c, r, 0);
		moved = true;
	}
	return moved;
}

/* Sender side: publish ready messages, direct or copied into free slots. */
static bool progress_tx(struct shm_priv *s, struct shm_pair_link *l, int p)
{
	struct shm_pair_core *c = &s->c;
	struct shm_seg_hdr *h = shm_hdr(&l->tx);
	char *data = (char *)h + h->data_off;
	uint64_t head = atomic_load_explicit(&h->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&h->tail, memory_order_acquire);
	bool reachable = atomic_load_explicit(&h->direct_ok, memory_order_relaxed);
	bool moved = tx_reap_direct(s, &s->direct[p], tail);
	struct shm_pair_req *r;

	while ((r = pair_q_first(&l->ready)) && head - tail < h->nslots) {
		struct shm_desc *d = &h->desc[head % h->nslots];
		size_t n = GS_MIN(r->len - r->done, (size_t)h->slot_size);
		struct shm_src *src = &s->src[pair_req_index(c, r)];

		d->tag = r->tag;
		d->msg_len = r->len;
		d->off = r->done;
		d->flags = r->len != r->cts_len ? SHM_DESC_MISMATCH : 0;
		if (!d->flags && !r->done &&
		    shm_use_direct(s->copy, r->len, src->shared, reachable)) {
			d->flags = SHM_DESC_DIRECT;
			d->len = 0;
			d->src_fd = src->loc.fd;
			d->src_id = src->loc.id;
			d->src_size = src->loc.size;
			d->src_off = src->loc.off;
			src->slot = head;
			r->done = r->len;
			head++;
			atomic_store_explicit(&h->head, head, memory_order_release);
			c->bytes_sent += r->len;
			moved = true;
			pair_q_pop(&l->ready);
			pair_q_push(&s->direct[p], r);
			if (head - tail >= h->nslots)
				tail = atomic_load_explicit(&h->tail, memory_order_acquire);
			continue;
		}
		d->len = d->flags ? 0 : (uint32_t)n;
		if (d->len) {
			d->slot = shm_slot_take(&s->slot_next[p], h->nslots, head == tail);
			shm_pair_work_begin(c);
			memcpy(data + d->slot * (size_t)h->slot_size, r->buf + r->done, n);
		}
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

/* Receiver side: sender p's allocation of desc d mapped here, or NULL after one log line. */
static const char *rx_map(struct shm_priv *s, struct shm_pair_link *l, int p,
			  const struct shm_desc *d)
{
	struct shm_map *maps = &s->maps[(size_t)p * SHM_MAPS], *m = &maps[0];
	const char *ptr;
	int fd, err;

	for (int i = 0; i < SHM_MAPS; i++) {
		if (maps[i].id == d->src_id) {
			maps[i].stamp = ++s->stamp;
			return maps[i].ptr;
		}
		if (maps[i].stamp < m->stamp)
			m = &maps[i];
	}
	/* a new allocation of the peer: map it once, the least recently used one goes */
	fd = (int)syscall(SYS_pidfd_getfd, l->pidfd, d->src_fd, 0);
	if (fd < 0) {
		err = errno;
		log_err(LOG_TRANSPORT, "shm recv peer=%d: pidfd_getfd fd=%d: %s", p, d->src_fd,
			strerror(err));
		return NULL;
	}
	ptr = mmap(NULL, d->src_size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
	err = errno;
	close(fd);
	if (ptr == MAP_FAILED) {
		log_err(LOG_TRANSPORT, "shm recv peer=%d: mmap of its buffer (%llu bytes): %s", p,
			(unsigned long long)d->src_size, strerror(err));
		return NULL;
	}
	if (m->id)
		munmap((void *)m->ptr, m->size);
	*m =
	    (struct shm_map){.id = d->src_id, .ptr = ptr, .size = d->src_size, .stamp = ++s->stamp};
	return ptr;
}

/* Receiver side: a direct message, reduced or copied from the sender's buffer. */
static int rx_direct(struct shm_priv *s, struct shm_pair_link *l, int p, const struct shm_desc *d,
		     struct shm_pair_req *r)
{
	const char *src;

	if (l->pidfd < 0 || d->off || d->msg_len != r->len || d->tag != r->tag || !d->src_id ||
	    d->src_off > d->src_size || r->len > d->src_size - d->src_off) {
		log_err(LOG_TRANSPORT, "shm recv peer=%d: direct tag %llu outside its buffer", p,
			(unsigned long long)r->tag);
		return -EPROTO;
	}
	shm_pair_work_begin(&s->c);
	src = rx_map(s, l, p, d);
	if (!src)
		return -EIO;
	src += d->src_off;
	if (r->red)
		r->red(r->buf, src, r->len / dtype_size(r->dt), r->dt);
	else if (s->stream)
		gs_copy_stream(r->buf, src, r->len);
	else
		memcpy(r->buf, src, r->len);
	r->done = r->len;
	s->c.bytes_recv += r->len;
	return 0;
}

/* Receiver side: copy published slots into the posted buffers, release them. */
static int progress_rx(struct shm_priv *s, struct shm_pair_link *l, int p, bool *moved)
{
	struct shm_pair_core *c = &s->c;
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
		if (d->flags & SHM_DESC_DIRECT) {
			int err = rx_direct(s, l, p, d, r);

			if (err)
				return err;
			l->rx_cur = NULL;
			shm_pair_complete(c, r, 0);
			atomic_store_explicit(&h->tail, tail + 1, memory_order_release);
			continue;
		}
		if (d->len > h->slot_size || d->off + d->len > r->len || d->tag != r->tag ||
		    (d->len && d->slot >= h->nslots)) {
			log_err(LOG_TRANSPORT, "shm recv peer=%d: slot outside message tag %llu", p,
				(unsigned long long)r->tag);
			return -EPROTO;
		}
		if (d->len) {
			const char *slot = data + d->slot * (size_t)h->slot_size;

			shm_pair_work_begin(c);
			if (r->red)
				r->red(r->buf + d->off, slot, d->len / dtype_size(r->dt), r->dt);
			else
				memcpy(r->buf + d->off, slot, d->len);
		}
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
	struct shm_priv *s = (struct shm_priv *)c;
	uint64_t now = 0;

	shm_cpu_publish(s);
	for (int p = 0; p < c->env->nranks; p++) {
		struct shm_pair_link *l = &c->links[p];
		struct shm_seg_hdr *tx = shm_hdr(&l->tx), *rx = shm_hdr(&l->rx);
		bool moved, rx_moved = false;
		int err;

		if (!l->active)
			continue;
		if (pair_q_first(&l->cts_wait)) {
			shm_pair_flush_cts(c, l);
			rx_moved = true;
		}
		moved = shm_pair_take_cts(c, l, p);
		moved |= progress_tx(s, l, p);
		/* the peer may sleep waiting for what we published (shm_wait.c) */
		if (moved)
			shm_bell_ring(c, &tx->bell_r, &tx->r_sleeps);
		err = progress_rx(s, l, p, &rx_moved);
		if (rx_moved)
			shm_bell_ring(c, &rx->bell_s, &rx->s_sleeps);
		moved |= rx_moved;
		if (!err)
			err = shm_pair_watch(c, l, p, moved, &now);
		if (err)
			return err;
	}
	return 0;
}
