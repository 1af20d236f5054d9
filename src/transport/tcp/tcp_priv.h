/*
 * tcp transport internals shared by tcp.c (ops, executor side), tcp_conn.c (setup),
 * tcp_match.c (what each frame means) and tcp_progress.c (the sockets: a progress thread,
 * or inline). The wire protocol of the data path opens tcp_match.c.
 */
#ifndef GS_TRANSPORT_TCP_PRIV_H
#define GS_TRANSPORT_TCP_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "transport/transport.h"
#include "util/fifo.h"

#define TCP_MAX_STREAMS 64
#define TCP_MAX_CHUNKS	8	     /* a message is striped over at most this many streams */
#define TCP_NREQS	4096	     /* posts in flight per transport; more -> -EAGAIN */
#define TCP_STAGE	(64u << 10) /* per-stream receive staging for headers and small payloads */
/* most bytes one read puts into the stage: a 4 KiB eager message, its header and a CTS
 * before it come in one read; a large payload's first 8 KiB are copied through it */
#define TCP_STAGE_READ	(8u << 10)
/*
 * Messages at least this big are striped over the streams. Smaller ones go whole, on
 * the streams in turn, so the channels' messages still spread over them: up to the auto
 * chunk (512 KiB) a stripe only adds a header, a write and reads per stream. 4 ranks on
 * 2 CPUs, 1 MiB AllReduce (256 KiB messages): 104 syscalls per op striped, 67 whole
 * (strace -c); 16 MiB: 507 and 417.
 */
#define TCP_STRIPE_MIN	(1u << 20)
#define TCP_EAGER_MAX	(64u << 10) /* messages up to this size go without a CTS */
/*
 * Bytes of eager messages (payload + header) a rank may have sent to one peer that the
 * peer has not consumed yet: what bounds the heap that holds a peer's unexpected eager
 * messages. 32 messages of the largest eager size, 400 of 4 KiB; the executor's pieces
 * in flight to one peer stay far below it, so in a collective an eager send waits for
 * credit only when its receiver is that far behind.
 */
#define TCP_EAGER_WINDOW (2u << 20)
/* the receiver returns consumed credit on whatever frame it writes to that peer next,
 * and in a frame of its own once this much waits (a flow with nothing coming back) */
#define TCP_CREDIT_RETURN (TCP_EAGER_WINDOW / 2)
#define TCP_NO_RID	  UINT32_MAX
/* a large send whose CTS has not come by then writes an RTS (tcp_match.c tcp_rts_due) */
#define TCP_RTS_AFTER_NS (20ull * 1000000)

enum tcp_frame_type {
	TF_CTS = 1,
	TF_DATA = 2,
	TF_MISMATCH = 3,
	TF_EAGER = 4,  /* payload sent without a CTS; matched by tag, FIFO per peer */
	TF_RTS = 5,    /* a send above the eager limit posted before its CTS came */
	TF_REFUSE = 6, /* receiver -> sender: a length mismatch (off says what met it) */
	TF_CREDIT = 7, /* nothing but the credit field */
};

/* TF_REFUSE's off: which frame of the sender met a receive of another length */
enum tcp_refused {
	TCP_REFUSED_EAGER = 0,
	TCP_REFUSED_RTS = 1,
};

struct tcp_frame_hdr {
	uint32_t type;
	uint32_t rid; /* receiver's request index, echoed by the sender */
	uint64_t tag;
	uint64_t off;
	uint64_t len;
	uint64_t credit; /* eager window bytes the writer consumed since it last said so */
};

struct tcp_req;

/* One outgoing frame queued on a stream: header, then payload from the user buffer. */
struct tcp_frame {
	struct fifo_link link;       /* on its stream's txq */
	struct tcp_frame_hdr hdr;
	const char *payload;
	size_t plen;
	size_t sent;	     /* bytes of header + payload already written */
	struct tcp_req *req; /* the send whose chunk, or the receive whose CTS, this is */
};

enum tcp_req_kind {
	TR_SEND = 1,
	TR_RECV,
};

struct tcp_req {
	struct fifo_link link;  /* on tp's free, ops or done, or its peer's sends */
	uint64_t tag;
	uint64_t cookie;
	char *buf;
	size_t len;
	size_t done;
	int peer;
	int status;
	int kind;
	int chunks_left;    /* frames not yet fully written (recv: its CTS, if any) */
	int rts_stream;	    /* send: the stream its RTS and first chunk take; -1 none */
	uint64_t posted_ns; /* large send waiting for its CTS: when posted (rts_due) */
	bool active;	    /* recv: posted, data may arrive */
	bool eager;	    /* recv: may still take a TF_EAGER or TF_RTS frame (on erecvs) */
	bool cts;	    /* recv: sent a CTS (above the eager limit) */
	bool wait_cts;	    /* send above the eager limit: its CTS has not come */
	bool data_in;	 /* recv: bytes in (or failed); completes once its CTS is written */
	struct fifo_link elink; /* on its peer's erecvs */
	struct tcp_frame frames[TCP_MAX_CHUNKS];
	struct tcp_frame xframe; /* send: its RTS */
};

/* A TF_EAGER message that arrived before its receive was posted: held in a heap buffer
 * (only messages up to TCP_EAGER_MAX, only while they wait). */
struct tcp_unexp {
	struct fifo_link link;  /* on its peer's unexp */
	uint64_t tag;
	size_t len;
	bool filled;	     /* every payload byte is in buf */
	bool rts;	     /* no payload: a TF_RTS whose receive is not posted yet */
	struct tcp_req *req; /* the receive that took it while it was still arriving */
	char buf[];
};

/* A CTS the sender got before the matching send was posted (progress thread only). */
struct tcp_cts {
	struct fifo_link link;  /* on its peer's cts, or tp's cts_free */
	uint64_t tag;
	uint64_t len;
	uint32_t rid;
};

struct tcp_stream {
	int fd;
	int peer;
	bool writable;
	bool dead;
	struct fifo txq;        /* struct tcp_frame: queued, oldest first */
	char *stage;
	size_t st_head, st_tail;
	bool in_payload;
	struct tcp_req *rreq;
	struct tcp_unexp *rexp; /* payload being read into an unexpected eager buffer */
	char *rdst;
	size_t rleft;
	uint64_t rcost; /* eager payload read straight into its receive: its window bytes */
	/* for transport_ops.pending, written by the progress side alone (tcp_publish), read
	 * by anyone */
	_Atomic uint64_t unsent;     /* bytes of queued frames not yet written */
	_Atomic uint64_t last_rx_ns; /* when bytes last came in (time_coarse_ns); 0: never */
	_Atomic uint64_t last_tx_ns; /* when bytes last went out; 0: never */
};

/* A value the progress side alone writes: a relaxed store, no locked read-modify-write on
 * the data path (the readers want a recent value, not an ordered one). */
static inline void tcp_publish(_Atomic uint64_t *v, uint64_t x)
{
	atomic_store_explicit(v, x, memory_order_relaxed);
}

static inline uint64_t tcp_published(_Atomic uint64_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

struct tcp_peer {
	bool active;
	struct tcp_stream *streams;	    /* nstreams */
	unsigned int rr;		    /* next stream for a single-chunk frame */
	struct fifo sends;		    /* tcp_req: posted sends without CTS */
	struct fifo cts;		    /* tcp_cts: CTS without a send */
	struct fifo eblocked;		    /* tcp_req: eager sends waiting for credit, in order */
	struct fifo erecvs;		    /* tcp_req (elink): receives that may take an eager frame */
	struct fifo unexp;		    /* tcp_unexp: eager frames and RTS not yet taken */
	uint64_t credit;		    /* eager bytes we may still send it */
	uint64_t rx_avail;		    /* eager bytes it may still send us (credit it holds) */
	uint64_t owed;			    /* eager bytes of its we consumed, not yet returned */
	bool credit_queued;		    /* credit_frame is on stream 0's txq */
	struct tcp_frame credit_frame;
	_Atomic int outstanding;	    /* posted, not completed */
	bool closed;			    /* orderly EOF while idle */
};

struct tcp_priv {
	const struct transport_env *env;
	int nstreams;
	int listen_fd;
	struct sockaddr_storage addr; /* listening address, port included */
	socklen_t addrlen;
	char ifname[64];
	struct tcp_peer *peers;

	/* executor <-> progress thread: guarded by lock */
	pthread_mutex_t lock;
	struct tcp_req *reqs; /* TCP_NREQS, index = rid */
	struct fifo free;   /* tcp_req */
	struct fifo ops;    /* tcp_req: posted, not yet seen by the thread */
	struct fifo done;   /* tcp_req: completed, not yet returned by poll */
	_Atomic int ndone;
	_Atomic int ops_pending;
	_Atomic int sleeping;

	bool inline_progress; /* no thread: post and poll drive the sockets */
	int waiting_cts;      /* large sends waiting for their CTS (progress side) */

	/* progress thread */
	pthread_t thread;
	bool thread_started;
	_Atomic int stop;
	_Atomic int fatal;
	bool fatal_reported;
	int epfd;
	int evfd;
	struct tcp_cts *cts_pool; /* TCP_NREQS records */
	struct fifo cts_free;     /* tcp_cts */
	_Atomic uint64_t bytes_sent, bytes_recv, cpu_ns;
};

/* tcp_conn.c */
int tcp_listen(struct tcp_priv *tp);
int tcp_connect_all(struct tcp_priv *tp, const void *eps);
int tcp_endpoint_fill(struct tcp_priv *tp, void *buf, size_t *len);

/* tcp_match.c: what the frames mean */
void tcp_set_fatal(struct tcp_priv *tp, int err);
void tcp_handle_op(struct tcp_priv *tp, struct tcp_req *r);
void tcp_rts_due(struct tcp_priv *tp);
bool tcp_rx_header(struct tcp_priv *tp, struct tcp_stream *st);
void tcp_rx_advance(struct tcp_priv *tp, struct tcp_stream *st, size_t n);
void tcp_frame_out(struct tcp_priv *tp, struct tcp_peer *pe, struct tcp_frame *f);
void tcp_frame_credit(struct tcp_peer *pe, struct tcp_frame *f);

/* tcp_progress.c: moving the bytes */
int tcp_progress_start(struct tcp_priv *tp);
void tcp_progress_stop(struct tcp_priv *tp);
void tcp_wake(struct tcp_priv *tp);
void tcp_inline_post(struct tcp_priv *tp, struct tcp_req *r);
void tcp_inline_progress(struct tcp_priv *tp, int timeout_ms);

#endif
