/*
 * cudaipc transport internals shared by cudaipc.c (ops, setup, posts), cudaipc_seg.c
 * (control segments) and cudaipc_progress.c (matching, copies, completions).
 *
 * Protocol of one directed pair S -> R, control through the segment R created (no
 * payload ever goes through it: the bytes move GPU to GPU):
 *   1. R registers its buffer once (mr_reg): cudaIpcGetMemHandle of the allocation.
 *   2. R posts a receive: it appends CTS {seq, tag, len, handle, offset in allocation}
 *      to the segment's CTS queue (seq = its position in that queue).
 *   3. S pops CTS entries and matches them to its posted sends by tag (FIFO per tag).
 *   4. S opens the handle (once per peer allocation, cached), queues cudaMemcpyAsync
 *      device to device into the mapping on its stream for R, records an event.
 *   5. When the event has completed, S appends FIN {seq, status} to the FIN queue and
 *      completes the send; R pops FIN and completes the receive of that seq.
 *      A length mismatch skips 4: FIN carries -EMSGSIZE and both sides complete so.
 * R keeps at most CIPC_CAP receives announced and not finished, so neither queue can
 * overflow. Single producer / single consumer on every index, C11 acquire/release.
 */
#ifndef GS_TRANSPORT_CUDAIPC_PRIV_H
#define GS_TRANSPORT_CUDAIPC_PRIV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpu/gpu.h"
#include "transport/transport.h"

#define CIPC_SEG_MAGIC	   0x6763697063736731ull /* "gcipcsg1" */
#define CIPC_CAP	   1024			 /* CTS / FIN entries per directed pair */
#define CIPC_NREQS	   8192
#define CIPC_NEVENTS	   256 /* copies in flight, all peers */
#define CIPC_MAPS	   64  /* opened peer allocations cached per peer */
#define CIPC_DEAD_CHECK_NS (50ull * 1000 * 1000)

/*
 * The device operations the transport needs: the GPU layer's in a real run, a host
 * emulation in the unit test (so the protocol is tested where there is no GPU).
 */
struct cipc_dev {
	bool (*available)(void);
	/* Allocation holding p: its base and size. */
	int (*mem_range)(const void *p, void **base, size_t *bytes);
	int (*ipc_export)(void *base, struct gpu_ipc_handle *h);
	int (*ipc_open)(const struct gpu_ipc_handle *h, void **ptr);
	int (*ipc_close)(void *ptr);
	struct gpu_stream *(*stream_create)(void);
	void (*stream_destroy)(struct gpu_stream *s);
	int (*copy)(void *dst, const void *src, size_t bytes, struct gpu_stream *s);
	struct gpu_event *(*event_create)(void);
	void (*event_destroy)(struct gpu_event *e);
	int (*event_record)(struct gpu_event *e, struct gpu_stream *s);
	int (*event_query)(struct gpu_event *e); /* 0 done, -EBUSY pending, else -errno */
};

extern const struct cipc_dev cipc_gpu_dev;

struct cipc_cts {
	uint64_t seq;
	uint64_t tag;
	uint64_t len;
	uint64_t alloc_off; /* byte offset of the destination from the allocation base */
	struct gpu_ipc_handle h;
};

struct cipc_fin {
	uint64_t seq;
	int64_t status; /* 0 or -EMSGSIZE */
};

struct cipc_seg_hdr {
	uint64_t magic;
	uint64_t job_id;
	int32_t sender;
	int32_t receiver;
	int32_t receiver_pid;
	_Atomic int32_t sender_pid;		/* non-zero once the sender mapped the segment */
	_Alignas(64) _Atomic uint64_t cts_head; /* written by R */
	_Alignas(64) _Atomic uint64_t cts_tail; /* written by S */
	_Alignas(64) _Atomic uint64_t fin_head; /* written by S */
	_Alignas(64) _Atomic uint64_t fin_tail; /* written by R */
	_Alignas(64) struct cipc_cts cts[CIPC_CAP];
	struct cipc_fin fin[CIPC_CAP];
};

struct cipc_seg {
	struct cipc_seg_hdr *hdr;
	char name[64]; /* non-empty while the name exists in /dev/shm */
};

/* cudaipc_seg.c: R creates (and touches), S attaches (waits, bounded) and unlinks. */
int cipc_seg_create(struct cipc_seg *s, uint64_t job_id, int sender, int receiver);
int cipc_seg_attach(struct cipc_seg *s, uint64_t job_id, int sender, int receiver,
		    uint64_t deadline_ns, volatile const int *abort_flag);
void cipc_seg_destroy(struct cipc_seg *s);

struct tp_mr {
	char *addr;
	size_t len;
	uint64_t alloc_off; /* addr - allocation base */
	struct gpu_ipc_handle h;
};

enum cipc_req_kind { CIPC_SEND, CIPC_RECV, CIPC_CTS };

struct cipc_req {
	struct cipc_req *next;
	enum cipc_req_kind kind;
	int peer;
	int status;
	uint64_t tag;
	uint64_t cookie;
	size_t len;
	const char *src;      /* send: source bytes */
	struct cipc_cts cts;  /* send: the matched CTS; CTS: as received */
	struct gpu_event *ev; /* send: its copy's completion */
	struct cipc_map *map; /* send: the mapping it copies into */
};

struct cipc_q {
	struct cipc_req *head, *tail;
};

struct cipc_map {
	bool used;
	int busy; /* copies in flight into it */
	uint64_t stamp;
	struct gpu_ipc_handle h;
	char *ptr;
};

struct cipc_peer {
	bool active;
	struct cipc_seg rx; /* peer -> me, created by me */
	struct cipc_seg tx; /* me -> peer, created by the peer */
	int pidfd;
	pid_t pid;
	struct gpu_stream *stream;	   /* my copies into this peer's memory */
	struct cipc_q cts_wait;		   /* recvs not yet announced */
	struct cipc_req *posted[CIPC_CAP]; /* announced recvs by seq % CIPC_CAP */
	struct cipc_q sends;		   /* sends without a CTS yet */
	struct cipc_q cts;		   /* CTS without a send yet */
	struct cipc_q ready;		   /* matched, copy not issued yet */
	struct cipc_q inflight;		   /* copies issued, in stream order */
	struct cipc_map maps[CIPC_MAPS];
	int outstanding;
	uint64_t last_progress_ns;
	uint64_t last_check_ns;
};

struct cipc_priv {
	const struct transport_env *env;
	const struct cipc_dev *dev;
	struct cipc_peer *peers;
	struct cipc_req *reqs;
	struct cipc_req *free;
	struct gpu_event *events[CIPC_NEVENTS];
	int nfree_events;
	struct cipc_q done;
	int fatal;
	int outstanding;
	uint64_t stamp;
	uint64_t bytes_sent, bytes_recv, cpu_ns, copies;
};

static inline void cq_push(struct cipc_q *q, struct cipc_req *r)
{
	r->next = NULL;
	if (q->tail)
		q->tail->next = r;
	else
		q->head = r;
	q->tail = r;
}

static inline struct cipc_req *cq_pop(struct cipc_q *q)
{
	struct cipc_req *r = q->head;

	if (r) {
		q->head = r->next;
		if (!q->head)
			q->tail = NULL;
	}
	return r;
}

/* Remove and return the first entry with tag: FIFO matching per (peer, tag). */
static inline struct cipc_req *cq_take(struct cipc_q *q, uint64_t tag)
{
	struct cipc_req *prev = NULL, *r;

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

static inline struct cipc_req *creq_get(struct cipc_priv *s)
{
	struct cipc_req *r = s->free;

	if (r)
		s->free = r->next;
	return r;
}

static inline void creq_put(struct cipc_priv *s, struct cipc_req *r)
{
	r->next = s->free;
	s->free = r;
}

/*
 * Open with explicit device operations (the unit test's emulation); cudaipc_ops' open
 * is this with cipc_gpu_dev.
 */
int cudaipc_open_with(struct transport *t, const struct transport_env *env,
		      const struct cipc_dev *dev);

/* cudaipc_progress.c */
void cipc_flush_cts(struct cipc_priv *s, struct cipc_peer *pe);
/* Move everything that can move; 0, or -errno (peer gone, device error) after one log line. */
int cipc_progress(struct cipc_priv *s);
void cipc_complete(struct cipc_priv *s, struct cipc_req *r, int status);

#endif
