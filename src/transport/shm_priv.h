/*
 * shm transport internals shared by shm.c (ops, setup, posts) and shm_progress.c
 * (moving bytes through the rings): request queues and per-peer state. Single
 * threaded: everything here runs on the caller's thread inside post/poll.
 */
#ifndef GS_TRANSPORT_SHM_PRIV_H
#define GS_TRANSPORT_SHM_PRIV_H

#include <stdbool.h>
#include <sys/types.h>

#include "transport/shm_seg.h"
#include "transport/transport.h"

#define SHM_NREQS	  8192
#define SHM_DEAD_CHECK_NS (50ull * 1000 * 1000) /* idle time before asking if a peer lives */

enum shm_req_kind { SHM_SEND, SHM_RECV, SHM_CTS };

struct shm_req {
	struct shm_req *next;
	uint64_t tag;
	uint64_t cookie;
	char *buf;
	size_t len;
	size_t done;
	size_t cts_len; /* send: the receiver's length, from its CTS */
	int peer;
	int status;
	enum shm_req_kind kind;
};

struct shm_q {
	struct shm_req *head, *tail;
};

struct shm_peer {
	bool active;
	struct shm_seg rx; /* peer -> me, created by me */
	struct shm_seg tx; /* me -> peer, created by the peer */
	int pidfd;
	pid_t pid;
	struct shm_q cts_wait;	/* recvs whose CTS did not fit in the queue yet */
	struct shm_q posted;	/* recvs announced by CTS, awaiting data */
	struct shm_req *rx_cur; /* recv being filled from the ring */
	struct shm_q sends;	/* sends without a CTS yet */
	struct shm_q cts;	/* CTS without a send yet */
	struct shm_q ready;	/* matched sends, copied into the ring in order */
	int outstanding;
	uint64_t last_progress_ns;
	uint64_t last_check_ns;
};

struct shm_priv {
	const struct transport_env *env;
	struct shm_peer *peers;
	struct shm_req *reqs;
	struct shm_req *free;
	struct shm_q done;
	uint32_t nslots;
	uint32_t slot_size;
	int fatal;
	int outstanding; /* posted and not yet completed, all peers */
	uint64_t bytes_sent, bytes_recv, cpu_ns;
};

static inline void q_push(struct shm_q *q, struct shm_req *r)
{
	r->next = NULL;
	if (q->tail)
		q->tail->next = r;
	else
		q->head = r;
	q->tail = r;
}

static inline struct shm_req *q_pop(struct shm_q *q)
{
	struct shm_req *r = q->head;

	if (r) {
		q->head = r->next;
		if (!q->head)
			q->tail = NULL;
	}
	return r;
}

/* Remove and return the first entry with tag: FIFO matching per (peer, tag). */
static inline struct shm_req *q_take(struct shm_q *q, uint64_t tag)
{
	struct shm_req *prev = NULL, *r;

	for (r = q->head; r; prev = r, r = r->next) {
		if (r->tag != tag)
			continue;
		if (prev)
			prev->next = r->next;
		else
			q->head = r->next;
		if (q->tail == r)
			q->tail = prev;
		return r;
	}
	return NULL;
}

static inline struct shm_req *req_get(struct shm_priv *s)
{
	struct shm_req *r = s->free;

	if (r)
		s->free = r->next;
	return r;
}

static inline void req_put(struct shm_priv *s, struct shm_req *r)
{
	r->next = s->free;
	s->free = r;
}

/* shm_progress.c */
void shm_req_complete(struct shm_priv *s, struct shm_req *r, int status);
/* Publish queued receives as CTS entries, as far as the peer's CTS queue has room. */
void shm_flush_cts(struct shm_peer *pe);
/* Move bytes on every ring; 0, or -errno (peer gone, protocol error) after one log line. */
int shm_progress(struct shm_priv *s);

#endif
