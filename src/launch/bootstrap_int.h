/*
 * Bootstrap internals shared by bootstrap.c (open, collectives, close) and
 * bootstrap_io.c (the reader thread, rank 0's handshakes, abort propagation).
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

/* Handshakes rank 0 holds at once; later connections wait in the listen backlog. */
#define BS_MAX_PENDING 64
/* How long a connection may take to send its HELLO. */
#define BS_HELLO_TIMEOUT_NS 5000000000ull
/* Bound on sending an ABORT to one peer (a stuck peer must not hold up the rest). */
#define BS_ABORT_SEND_NS 1000000000ull
#define BS_REASON_LEN	 256

struct bs_msg {
	struct bs_msg *next;
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
	struct bs_msg *head, *tail;
	bool bye;  /* said goodbye: its EOF is a clean close */
	bool gone; /* EOF or error seen; no more reads */
};

/* A connection on rank 0 that has not said HELLO yet. Reader thread only. */
struct bs_pending {
	int fd;
	uint8_t buf[BS_HDR_LEN + BS_HELLO_LEN];
	size_t got;
	uint64_t deadline_ns;
	char name[64];
};

struct bootstrap {
	int rank;
	int nranks;
	uint64_t token;
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
	bool closing;	     /* in bootstrap_close: EOFs are expected */
	bool stop;	     /* reader thread: exit */
	/* Held while an abort is raised and forwarded: close's BYE never overtakes it. */
	pthread_mutex_t abort_lock;
	volatile int abort_flag;
	char abort_reason[BS_REASON_LEN];
	uint32_t seq; /* caller thread only */

	struct bs_pending pending[BS_MAX_PENDING];
	int npending;
};

int bs_reader_start(struct bootstrap *b);
void bs_reader_stop(struct bootstrap *b);
/*
 * Raise the abort locally (first reason wins); rank 0 forwards it to every live peer
 * except `except`, another rank sends it to rank 0 when `tell_root`. Any thread.
 */
void bs_raise_abort(struct bootstrap *b, int failed_rank, const char *reason, int except,
		    bool tell_root);
/* Send one frame to a peer under its write lock; -EPIPE when it is not connected. */
int bs_peer_send(struct bootstrap *b, int peer, uint8_t type, uint8_t op, uint32_t seq,
		 const void *data, size_t len, uint64_t deadline_ns);
void bs_msg_free(struct bs_msg *m);

#endif
