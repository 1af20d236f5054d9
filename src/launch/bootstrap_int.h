/*
 * Bootstrap internals shared by bootstrap.c (open, collectives, close), bootstrap_io.c
 * (the reader thread, abort propagation) and bootstrap_admit.c (rank 0's handshakes).
 *
 * Threads: the caller's thread writes frames and waits on queues; one reader thread
 * per rank owns every socket read (so the watchdog and the collectives never race on
 * a socket) and hands complete frames to the caller through per-peer queues.
 * Locks: b->lock guards queues, peer state and abort state; peer->wlock serialises
 * writers of one socket (caller and reader thread, which forwards ABORTs).
 * Socket fds of peers stay open until bootstrap_close, so a writer never hits a reused fd.
 */
#ifndef GS_LAUNCH_BOOTSTRAP_INT_H
#define GS_LAUNCH_BOOTSTRAP_INT_H

#include <pthread.h>
#include <stdbool.h>

#include "launch/bootstrap.h"
#include "launch/bootstrap_wire.h"
#include "util/fifo.h"

/* Handshakes rank 0 holds at once; a newcomer beyond displaces one (bs_pending_victim). */
#define BS_MAX_PENDING 64
/* Handshakes one source address may hold: a single host cannot take every slot. */
#define BS_MAX_PER_SOURCE 16
/* How long a connection may take for the whole handshake. */
#define BS_HELLO_TIMEOUT_NS 5000000000ull
/* A handshake that has progressed is displaced only once it waited this long in a stage. */
#define BS_EVICT_MIN_NS 200000000ull
/* Refusals logged per window; the rest are counted in one line when the window ends. */
#define BS_REFUSE_LOG_BURST 5
#define BS_REFUSE_LOG_WINDOW_NS 10000000000ull
/* Bound on sending an ABORT to one peer (a stuck peer must not hold up the rest). */
#define BS_ABORT_SEND_NS 1000000000ull
#define BS_REASON_LEN	 1024
/* The reader's longest sleep in poll (it wakes at least this often). */
#define BS_TICK_NS 200000000ull
/* A later wake-up by this much (or by half the job's timeout, if less) means that this
 * process did not run: stopped (SIGSTOP, Ctrl-Z, a debugger) or its host paused. */
#define BS_FREEZE_MIN_NS 2000000000ull
#define BS_FREEZE_FLOOR_NS 500000000ull
/* Aborts raised this long after such a thaw are put down to the freeze. */
#define BS_THAW_WINDOW_NS 1000000000ull
/* The wake pipe's byte that stops the reader; any other byte is a signal number. */
#define BS_WAKE_STOP 'x'

struct bs_msg {
	struct fifo_link link; /* on its peer's queue */
	struct bs_hdr h;
	uint8_t *data; /* malloc'd, h.len bytes (NULL when empty); owner: whoever popped it */
};

/* A frame being read: header first, then payload. Reader thread only. */
struct bs_rx {
	uint8_t hdr[BS_HDR_LEN];
	size_t got;
	struct bs_msg *msg;
};

struct bs_peer {
	int fd; /* -1: not connected (yet); closed in bootstrap_close only */
	pthread_mutex_t wlock;
	struct bs_rx rx;
	struct fifo queue; /* bs_msg: complete frames not yet taken, in arrival order */
	bool bye;  /* said goodbye: its EOF is a clean close */
	bool gone; /* EOF or error seen; no more reads */
	char name[64]; /* its far address:port, for the line that says it was lost */
	/* rank 0, under b->lock: its answer to the latest PING (bootstrap_probe) */
	uint32_t pong_seq;		     /* the PING it answers, 0: none yet */
	uint32_t pong_abort_age_ms;	     /* bs_pong_unpack's */
	struct act_snap pong[ACT_THREADS];
	int npong;
};

enum bs_pending_stage {
	BS_PEND_HELLO, /* waiting for HELLO */
	BS_PEND_PROOF, /* CHALLENGE sent, waiting for PROOF */
};

/* A connection on rank 0 that has not completed the handshake. Reader thread only. */
struct bs_pending {
	int fd;
	enum bs_pending_stage stage;
	uint8_t buf[BS_HDR_LEN + BS_HELLO_LEN]; /* the current stage's frame */
	size_t got;
	bool active;	      /* has sent at least one byte */
	uint64_t accepted_ns; /* age, for eviction */
	uint64_t stage_ns;    /* when the current stage began */
	uint64_t deadline_ns;
	uint32_t rank, nranks; /* from HELLO */
	uint8_t nonce_r[BS_NONCE_LEN], nonce_0[BS_NONCE_LEN];
	char source[48]; /* far address without the port: the per-source share */
	char name[64];	 /* far address:port, for logs */
};

/* Refusal logging: a burst per window, then a count. Reader thread only. */
struct bs_ratelimit {
	uint64_t window_ns;
	int logged;
	int suppressed;
};

struct bootstrap {
	int rank;
	int nranks;
	char token[BS_TOKEN_MAX]; /* HMAC key; not NUL-terminated */
	size_t token_len;
	int timeout_ms;
	uint64_t timeout_ns;
	char addr[128];

	struct bs_peer *peers; /* nranks entries; rank 0 uses 1..n-1, others only [0] */
	int listen_fd;	       /* rank 0 only */
	int wake[2];	       /* pipe: wakes the reader thread to stop */
	pthread_t reader;
	bool reader_started;

	pthread_mutex_t lock;
	pthread_cond_t cond; /* queues, connections, byes, abort */
	int nconnected;	     /* rank 0: peers that completed the handshake */
	void (*on_arrival)(void *ctx, int arrived, int nranks); /* bootstrap_opts' */
	void *arrival_ctx;
	volatile const sig_atomic_t *stop_flag; /* bootstrap_opts' stop: ends bootstrap_open's wait */
	bool looking_up;     /* bootstrap_open: in the rendezvous host's name lookup */
	bool closing;	     /* in bootstrap_close: EOFs are expected */
	bool stop;	     /* reader thread: exit */
	/* Held while an abort is raised and forwarded: close's BYE never overtakes it. */
	pthread_mutex_t abort_lock;
	volatile int abort_flag;
	uint64_t abort_ns; /* when abort_flag was raised (under b->lock) */
	char abort_reason[BS_REASON_LEN];
	uint32_t seq; /* caller thread only */
	uint32_t probe_seq; /* rank 0: the last PING's seq (bootstrap_probe's caller only) */
	const struct activity *acts; /* bootstrap_opts': what a PONG reports */
	int nacts;
	/* bootstrap_opts': rank 0's own threads judged after the abort (bs_self_check) */
	void (*on_self_stuck)(void *ctx, const struct bootstrap_rank_state *self, const char *why);
	void *self_stuck_ctx;
	bool self_judged; /* reader thread only: the verdict on rank 0's threads is in */
	uint32_t self_grace_ms; /* its grace: the blame window's of timeout_ms */
	/*
	 * Freeze watch (bs_frozen_ns): when the reader last went to sleep in poll, when it
	 * last woke from a freeze and how long that freeze was. The reader writes, any
	 * thread reads; each is accessed atomically.
	 */
	uint64_t tick_ns, thaw_ns, frozen_ns;

	struct bs_pending pending[BS_MAX_PENDING];
	int npending;
	struct bs_ratelimit refusals;
	int nclosed; /* handshakes closed without a verdict (room, time, EOF); atomic */
};

int bs_reader_start(struct bootstrap *b);
void bs_reader_stop(struct bootstrap *b);
/*
 * Raise the abort locally (first reason wins); rank 0 forwards it to every live peer
 * except `except`, another rank sends it to rank 0 when `tell_root`. Any thread.
 */
void bs_raise_abort(struct bootstrap *b, int failed_rank, const char *reason, int except,
		    bool tell_root);
/*
 * Tell the job this rank stops (rank 0 every live peer, another rank rank 0) without
 * raising the abort here: its caller is on its way out and says why itself.
 */
void bs_tell_abort(struct bootstrap *b, const char *reason);
/* "rank 2 stopped by SIGTERM on host node3 (pid 4242)": a stop signal, as the job hears of it. */
void bs_stop_reason(const struct bootstrap *b, int signo, char *buf, size_t len);
/*
 * How long this process did not run just before now (0: it ran): the reader, which
 * wakes every BS_TICK_NS, slept far longer than it asked, either noticed on waking or
 * not yet. Rank 0 stopped for a minute under hand launch wakes to the others' aborts
 * ("waits on peer 1", from the rank that waited on a rank that had already given up):
 * with this the job is told of the freeze, not of a waiter.
 */
uint64_t bs_frozen_ns(struct bootstrap *b, uint64_t now);
/*
 * What this rank's application threads do as of now, as a PONG tells it (any thread):
 * heard = BS_HEARD_ANSWERED, how long ago the job aborted, each thread's record (an
 * idle main thread without bootstrap_opts.acts).
 */
void bs_self_state(struct bootstrap *b, uint64_t now, struct bootstrap_rank_state *st);
/* Wait on b->cond (b->lock held) until deadline_ns: false once it has passed. */
bool bs_cond_wait_until(struct bootstrap *b, uint64_t deadline_ns);
/* Send one frame to a peer under its write lock; -EPIPE when it is not connected. */
int bs_peer_send(struct bootstrap *b, int peer, uint8_t type, uint8_t op, uint32_t seq,
		 const void *data, size_t len, uint64_t deadline_ns);
void bs_msg_free(struct bs_msg *m);

/* bootstrap_admit.c, rank 0's reader thread: take new connections, read a handshake. */
void bs_admit_accept(struct bootstrap *b);
void bs_admit_read(struct bootstrap *b, int i);
/* Drop handshakes past their deadline; returns the earliest deadline left (or `next`). */
uint64_t bs_admit_expire(struct bootstrap *b, uint64_t now, uint64_t next);
/* Close every pending handshake (reader stopped). */
void bs_admit_close_all(struct bootstrap *b);
/*
 * Eviction policy: which of the n pending handshakes a newcomer from `source` displaces.
 * The pool is the newcomer's own source's entries when that source holds
 * BS_MAX_PER_SOURCE, else every entry when all BS_MAX_PENDING slots are taken, else
 * none is needed (-1). In the pool: the oldest idle entry (has sent nothing), else the
 * oldest whose stage began BS_EVICT_MIN_NS ago; -2 when none qualifies (the newcomer
 * is refused: every slot is a handshake in progress).
 */
int bs_pending_victim(const struct bs_pending *p, int n, const char *source, uint64_t now_ns);

/* Rank 0: tell the observer (bootstrap_opts.on_arrival) when arrived changed; lock held. */
static inline void bs_arrival(struct bootstrap *b, int arrived, int *last)
{
	if (b->on_arrival && arrived != *last)
		b->on_arrival(b->arrival_ctx, arrived, b->nranks);
	*last = arrived;
}

#endif
