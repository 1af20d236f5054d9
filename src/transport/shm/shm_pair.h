/*
 * Host shared-memory pair machinery common to the shm and cudaipc transports: one POSIX
 * segment per directed pair with its clear-to-send (CTS) queue, requests and their
 * queues, posting and tag matching, polling, peer liveness. What moves the bytes stays
 * in each transport: the data-slot ring (shm_progress.c), IPC-handle copies and the FIN
 * queue (cudaipc_progress.c). Setup lives in shm_pair_setup.c, messaging in shm_pair.c.
 * Single threaded: everything runs inside post/poll.
 *
 * Setup of the pair S -> R, bounded by env->timeout_ms:
 *   1. R (open): shm_open("/gradsync-<job>-<infix><S>-<R>", O_EXCL), fallocate, map,
 *      touch every page, fill the header (common part, then the transport's), publish
 *      the magic last;
 *   2. endpoints {magic, pid, rank} are all-gathered by the engine;
 *   3. S (connect): open and map it (waits for it), check magic/job/ranks, the
 *      transport's sizes and R's pid, store its own pid, unlink the name: nothing is
 *      left in /dev/shm if anyone dies now; S watches R through a pidfd;
 *   4. R (connect): waits until S's pid appears in its segment.
 * Messaging: R appends CTS {tag, len} for each posted receive (its seq is its position
 * in the queue; a transport may add where[seq] beside it, proto.where_off); S matches
 * CTS to its sends by tag, FIFO per (peer, tag), copying both out as it consumes them.
 * Single producer / single consumer on every index, C11 acquire/release.
 */
#ifndef GS_TRANSPORT_SHM_PAIR_H
#define GS_TRANSPORT_SHM_PAIR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpu/gpu.h"
#include "transport/transport.h"
#include "util/fifo.h"

#define SHM_PAIR_CTS_CAP       1024 /* CTS entries per directed pair */
#define SHM_PAIR_NREQS	       8192
#define SHM_PAIR_DEAD_CHECK_NS (50ull * 1000 * 1000) /* idle time before asking if a peer lives */
#define SHM_PAIR_CHECK_EVERY   64 /* stalled progress passes per clock read */

/* A CTS entry; its seq is its position in the queue. 16 bytes: four per cache line. */
struct shm_pair_cts {
	uint64_t tag;
	uint64_t len;
};

/* Where a receive's bytes go, for transports that write them remotely (cudaipc): kept in
 * the transport's part of the segment, parallel to the CTS queue (proto.where_off). */
struct shm_pair_where {
	uint64_t alloc_off;	 /* destination offset from its allocation base */
	struct gpu_ipc_handle h; /* the destination allocation */
};

/* Start of every pair segment; the transport's own part follows (struct embeds it). */
struct shm_pair_hdr {
	uint64_t magic;
	uint64_t job_id;
	int32_t sender;
	int32_t receiver;
	int32_t receiver_pid;
	_Atomic int32_t sender_pid;		/* non-zero once the sender mapped the segment */
	/* Who created it, written before the segment is sized: a later job removes a name
	 * whose creator is gone (shm_pair_sweep_stale), whatever killed it mid-setup. */
	uint64_t receiver_pidns;		/* inode of the creator's pid namespace */
	uint64_t receiver_start;		/* its start time, /proc/PID/stat field 22 */
	_Alignas(64) _Atomic uint64_t cts_head; /* CTS entries published by R */
	_Alignas(64) _Atomic uint64_t cts_tail; /* CTS entries consumed by S */
	_Alignas(64) struct shm_pair_cts cts[SHM_PAIR_CTS_CAP];
};

struct shm_pair_seg {
	struct shm_pair_hdr *hdr;
	size_t size;
	char name[64]; /* non-empty while the name exists in /dev/shm */
};

enum shm_pair_req_kind { SHM_PAIR_SEND, SHM_PAIR_RECV, SHM_PAIR_CTS };

/* 80 bytes: what a transport keeps per request beyond this lives in its own arrays,
 * indexed by pair_req_index() (cudaipc: destination, event, mapping). */
struct shm_pair_req {
	struct fifo_link link; /* on one queue of its link's, on done, or on the free stack */
	enum shm_pair_req_kind kind;
	int peer;
	int status;
	uint64_t tag;
	uint64_t cookie;
	size_t len;
	char *buf;	/* send: source bytes; recv: destination (shm) */
	size_t done;	/* shm: bytes moved so far */
	uint64_t seq;	/* recv, CTS: its CTS position; send: the matched CTS's */
	size_t cts_len; /* send, CTS: the receiver's length */
	tp_reduce_fn red; /* shm recv: bytes are added into buf (post_recv_reduce) */
	enum dtype dt;
};

/* A queue of requests: util/fifo.h's list, typed. */
struct shm_pair_q {
	struct fifo q;
};

/* One peer: both directed segments and the requests queued for it. */
struct shm_pair_link {
	bool active;
	struct shm_pair_seg rx;		   /* peer -> me, created by me */
	struct shm_pair_seg tx;		   /* me -> peer, created by the peer */
	const _Atomic uint64_t *cts_floor; /* R may announce up to floor + CTS_CAP */
	int pidfd;
	pid_t pid;
	struct shm_pair_q cts_wait;  /* recvs whose CTS did not fit in the queue yet */
	struct shm_pair_q posted;    /* recvs announced by CTS, in announce order */
	struct shm_pair_q sends;     /* sends without a CTS yet */
	struct shm_pair_q cts;	     /* CTS without a send yet */
	struct shm_pair_q ready;     /* matched sends, moved in this order */
	struct shm_pair_req *rx_cur; /* shm: recv being filled from the ring */
	int outstanding;
	uint32_t stalled_polls; /* progress passes without news since the last clock read */
	uint64_t last_progress_ns;
	uint64_t last_check_ns;
};

struct shm_pair_core;

/* What a transport plugs into the common machinery; one const table per transport. */
struct shm_pair_proto {
	const char *name;      /* "shm", "cudaipc": log lines */
	const char *seg_infix; /* segment name /gradsync-<job>-<infix><S>-<R> */
	uint64_t seg_magic;
	uint64_t ep_magic;
	/* R: fill the transport's part of a fresh, zeroed segment (before the magic). */
	void (*seg_init)(struct shm_pair_core *c, struct shm_pair_hdr *h);
	/* S: are the transport's header fields consistent with a mapping of size bytes? */
	bool (*seg_valid)(const struct shm_pair_hdr *h, size_t size);
	/* Offset of struct shm_pair_where[SHM_PAIR_CTS_CAP] in the segment; 0: none. */
	size_t where_off;
	/* R: the index bounding CTS announcements in its own segment (see flush_cts). */
	const _Atomic uint64_t *(*cts_floor)(struct shm_pair_hdr *h);
	/* Move what can move on every link; 0 or -errno after one log line. */
	int (*progress)(struct shm_pair_core *c);
	uint64_t (*cpu_clock)(void); /* what poll charges as transport CPU time */
	/* progress calls shm_pair_work_begin() before it copies: poll reads the clock
	 * only for polls that move bytes, not on every idle spin of the caller */
	bool clock_at_work;
};

/* The common state; each transport's private struct embeds it as its first member. */
struct shm_pair_core {
	const struct transport_env *env;
	const struct shm_pair_proto *proto;
	struct shm_pair_link *links;  /* env->nranks entries */
	struct shm_pair_req *reqs;    /* SHM_PAIR_NREQS */
	struct shm_pair_where *where; /* one per request if proto.where_off, else NULL */
	struct shm_pair_req *free;
	struct shm_pair_q done;
	size_t seg_size; /* bytes of each rx segment */
	int fatal;
	int outstanding; /* posted and not yet completed, all peers */
	uint64_t bytes_sent, bytes_recv, cpu_ns;
	uint64_t work_t0; /* this poll's first copy began (cpu_clock), 0 = none yet */
};

/* Progress is about to copy bytes: the poll's CPU time starts here (clock_at_work). */
static inline void shm_pair_work_begin(struct shm_pair_core *c)
{
	if (!c->work_t0)
		c->work_t0 = c->proto->cpu_clock();
}

static inline struct shm_pair_req *pair_q_req(struct fifo_link *l)
{
	return l ? fifo_entry(l, struct shm_pair_req, link) : NULL;
}

static inline void pair_q_push(struct shm_pair_q *q, struct shm_pair_req *r)
{
	fifo_push(&q->q, &r->link);
}

static inline struct shm_pair_req *pair_q_pop(struct shm_pair_q *q)
{
	return pair_q_req(fifo_pop(&q->q));
}

/* The oldest request, left on q; NULL when q is empty. */
static inline struct shm_pair_req *pair_q_first(const struct shm_pair_q *q)
{
	return pair_q_req(q->q.head);
}

/* The request queued after r, NULL at the tail. */
static inline struct shm_pair_req *pair_q_next(const struct shm_pair_req *r)
{
	return pair_q_req(r->link.next);
}

/* Remove and return the first entry with tag (by_seq: with CTS seq); NULL if none. */
struct shm_pair_req *pair_q_take(struct shm_pair_q *q, uint64_t key, bool by_seq);

static inline size_t pair_req_index(const struct shm_pair_core *c, const struct shm_pair_req *r)
{
	return (size_t)(r - c->reqs);
}

static inline struct shm_pair_req *pair_req_get(struct shm_pair_core *c)
{
	struct shm_pair_req *r = c->free;

	if (r)
		c->free = pair_q_next(r);
	return r;
}

static inline void pair_req_put(struct shm_pair_core *c, struct shm_pair_req *r)
{
	r->link.next = c->free ? &c->free->link : NULL;
	c->free = r;
}

/* Same host as us (and not us): the only peers these transports reach. */
bool shm_pair_on_host(const struct transport_env *env, int peer);

/* Allocate links and requests; 0 or -ENOMEM. shm_pair_fini undoes it (also partial). */
int shm_pair_init(struct shm_pair_core *c, const struct transport_env *env,
		  const struct shm_pair_proto *proto);
/* R side of setup step 1 for every peer in env->use_peer, seg_size bytes each. */
int shm_pair_create(struct shm_pair_core *c, size_t seg_size);
/* Unmap (unlinking names still there), close pidfds, free. */
void shm_pair_fini(struct shm_pair_core *c);

/* transport_ops.endpoint / connect (setup steps 2..4), poll and stats: t->priv is a
 * transport's private struct, which starts with its struct shm_pair_core. */
int shm_pair_endpoint(struct transport *t, void *buf, size_t *len);
int shm_pair_connect(struct transport *t, const void *eps);
int shm_pair_poll(struct transport *t, struct tp_completion *comp, int max);
int shm_pair_stats(struct transport *t, struct tp_stats *st);
/* transport_ops.pending: the link's queues both ways and whether the peer's process lives */
int shm_pair_pending(struct transport *t, int peer, char *buf, size_t len);

/*
 * Posts: the caller checked the region is non-NULL; these check the rest (fatal state,
 * peer, bounds against mr_len). A receive announces `where` (NULL: none) with its CTS;
 * with red (shm) its bytes are added into the buffer as dt elements. A send's request is
 * left in *out (out may be NULL) for the transport's own per-request state.
 * 0, -EINVAL, -EAGAIN (no free request) or the fatal error.
 */
int shm_pair_post_recv(struct shm_pair_core *c, int peer, uint64_t tag, char *addr, size_t mr_len,
		       size_t off, size_t len, uint64_t cookie, const struct shm_pair_where *where,
		       tp_reduce_fn red, enum dtype dt);
int shm_pair_post_send(struct shm_pair_core *c, int peer, uint64_t tag, char *addr, size_t mr_len,
		       size_t off, size_t len, uint64_t cookie, struct shm_pair_req **out);

/* R: announce queued receives, at most CTS_CAP beyond *cts_floor; they move to posted. */
void shm_pair_flush_cts(struct shm_pair_core *c, struct shm_pair_link *l);
/* S: read the peer's new CTS entries; matched sends go to ready. True if any was read. */
bool shm_pair_take_cts(struct shm_pair_core *c, struct shm_pair_link *l, int peer);

/* Finish r (queued for poll); inline: it runs once per message on the data path. */
static inline void shm_pair_complete(struct shm_pair_core *c, struct shm_pair_req *r, int status)
{
	r->status = status;
	c->links[r->peer].outstanding--;
	c->outstanding--;
	pair_q_push(&c->done, r);
}

/*
 * After a progress pass over link l (peer p): if nothing moved while requests wait,
 * check (rate-limited) that the peer lives. *now caches the clock across links.
 * 0, or -ECONNRESET after one log line.
 */
int shm_pair_watch_stalled(struct shm_pair_core *c, struct shm_pair_link *l, int p, uint64_t *now);

static inline int shm_pair_watch(struct shm_pair_core *c, struct shm_pair_link *l, int p,
				 bool moved, uint64_t *now)
{
	if (moved || !l->outstanding) {
		l->last_progress_ns = 0;
		l->stalled_polls = 0;
		return 0;
	}
	/* the clock (a vDSO read, ~60 ns here) only every few stalled passes: a spinning
	 * caller notices news that much sooner */
	if (l->last_progress_ns && ++l->stalled_polls % SHM_PAIR_CHECK_EVERY)
		return 0;
	return shm_pair_watch_stalled(c, l, p, now);
}

#endif
