/*
 * The collective executor: runs any schedule (schedule.h) over any transport
 * (transport.h), peers possibly on different transports, and the point-to-point
 * write_bw / write_lat loops over the same interface.
 *
 * Threading and blocking: every call below runs on the calling thread, which is the
 * progress thread of this communicator: it posts, polls every transport the comm uses,
 * and reduces. Nothing sleeps or waits on a condition: the loop spins on poll (calling
 * sched_yield after a long run of empty polls, so oversubscribed hosts keep moving).
 * Every call gives up with -ETIMEDOUT (one log line naming the peer, piece and step it
 * waited on) when no transfer completed for cfg.timeout_ns, and with -ECONNABORTED as
 * soon as *cfg.abort_flag is non-zero. After any error the comm's transfers may still be
 * in flight: close the transports and destroy the comm, do not call it again.
 *
 * Memory: the comm and its schedule cache are allocated at coll_comm_create and on the
 * first use of each distinct piece length; the data path allocates nothing. Buffers
 * belong to the caller, registered once with coll_buf_register and alive until
 * coll_buf_deregister. Scratch (coll_scratch_bytes) is allocated and touched by the
 * caller at setup.
 */
#ifndef GS_COLL_EXEC_H
#define GS_COLL_EXEC_H

#include <stdint.h>
#include "coll/schedule.h"
#include "transport/transport.h"
#include "util/activity.h"
#include "util/dtype.h"

#define COLL_MAX_TRANSPORTS 4  /* distinct transports in one comm */
#define COLL_MAX_CHANNELS   64 /* pieces in flight */

/*
 * How the executor touches element memory. The host default reduces with reduce.c;
 * a GPU implementation queues kernels on per-channel streams and reports completion
 * through query. chan is the pipeline slot (0 .. channels-1) the work belongs to.
 * A staging implementation (device data, host bounce buffer registered as `buf`) uses
 * the optional piece hooks: piece_start copies the piece in before its first step,
 * piece_done copies the result out after its last; the executor waits for query() == 1
 * after each hook, after a step's scale, and before the next step of a piece.
 */
struct coll_memops {
	const char *name;
	void *ctx;
	/* dst[i] = dst[i] + src[i], i < count. May only queue the work. Returns 0 or -errno. */
	int (*reduce)(void *ctx, int chan, void *dst, const void *src, uint64_t count,
		      enum dtype dt);
	/* buf[i] = buf[i] / divisor (reduce.h's avg rule). May only queue the work. */
	int (*scale)(void *ctx, int chan, void *buf, uint64_t count, enum dtype dt,
		     uint32_t divisor);
	/* 1 when all work queued on chan is done and visible to the transports, 0 while
	 * pending, -errno on failure. Must not block. */
	int (*query)(void *ctx, int chan);
	/* Optional (NULL = nothing to do). off/bytes: the piece's byte range in buf.
	 * Pieces start in order; piece_done may defer its work to coll_end. */
	int (*piece_start)(void *ctx, int chan, uint64_t off, uint64_t bytes);
	int (*piece_done)(void *ctx, int chan, uint64_t off, uint64_t bytes);
	/* Optional: a collective over [off, off + bytes) of buf begins, before its first
	 * piece_start (a memops may then work on several pieces at once, never outside). */
	int (*coll_begin)(void *ctx, uint64_t off, uint64_t bytes);
	/* Optional: after the last piece is done, called until it returns 1: queues what
	 * piece_done deferred, then 1 once all of the collective's work is done and
	 * visible, 0 while pending, -errno on failure. Must not block. */
	int (*coll_end)(void *ctx);
};

extern const struct coll_memops coll_host_memops;

struct coll_comm_cfg {
	int rank;
	int nranks;
	struct transport *const *peer_tp; /* nranks entries, the transport to reach each peer;
					     [rank] is ignored; at most COLL_MAX_TRANSPORTS
					     distinct */
	volatile const int *abort_flag;	  /* NULL = never aborted */
	uint64_t timeout_ns;		  /* no-progress bound of one call, > 0 */
	const struct coll_memops *mem;	  /* NULL = coll_host_memops */
	int max_channels;		  /* 1 .. COLL_MAX_CHANNELS */
	bool crowded;			  /* this host's ranks outnumber its CPUs: an
					     idle rank sleeps at once (comm_idle) */
	int local_size;			  /* ranks per host in equal consecutive blocks
					     (sched_local_size), -1 = not blocks, 0 = unknown:
					     hierarchical needs it (schedule.h) */
	uint64_t chunk_size;		  /* [collective] chunk_size; 0 = auto (coll_comm_chunk) */
	struct activity *act;		  /* NULL = none: the record of the thread that makes
					     the calls (util/activity.h), where each call and
					     each wait that lasts says what it waits on */
};

struct coll_comm;

/* NULL on a bad configuration or out of memory (one log line says which). */
struct coll_comm *coll_comm_create(const struct coll_comm_cfg *cfg);
void coll_comm_destroy(struct coll_comm *c);
/*
 * The chunk of an AllReduce of bytes on this comm, the one place [collective] chunk_size
 * is resolved: the configured size, or with auto the smallest that the comm's transports
 * choose for bytes (transport_ops.chunk_auto; never smaller for more bytes, so scratch
 * sized with a case's largest bytes fits every call of the case).
 */
uint64_t coll_comm_chunk(const struct coll_comm *c, uint64_t bytes);
/* The distinct transports of the comm, indexed as coll_buf.mr is. */
int coll_comm_ntransports(const struct coll_comm *c);
struct transport *coll_comm_transport(const struct coll_comm *c, int i);

/*
 * Per peer, cumulative over every AllReduce of the comm: how long this rank had at
 * least one send to it (receive from it) outstanding, and the bytes. A link r -> p that
 * limits a collective keeps both ends waiting on it (r's sends trickle out while p's
 * receives are long posted); a fast one next to it keeps only one end waiting (its
 * sender for a clear-to-send, or its receiver for data the sender does not have yet).
 * So min(send_ns at r for p, recv_ns at p for r) is the time the link itself took, and
 * bytes over it its rate (report/links.h). out: nranks entries. Never blocks.
 */
struct coll_peer_busy {
	uint64_t send_ns, recv_ns;
	uint64_t send_bytes, recv_bytes;
};
void coll_peer_busy(const struct coll_comm *c, struct coll_peer_busy *out);

/*
 * Every transfer since coll_xfers_reset (or the comm's making), in the order posted:
 * its transport tag (the same at both ends: a send to p and p's receive from this rank
 * with one tag are one message), when it was posted and completed on this host's
 * CLOCK_MONOTONIC (done_ns 0: not completed), its bytes. From the two ends' entries of
 * one message, on one clock, report/links.h takes the time its data was in flight
 * (from when both ends had posted until the receiver had it): the per-peer sums of
 * coll_peer_busy count a sender held back by a full receiver, and a receiver starved
 * by its sender's own upstream, at different times as if the link took both.
 * The log holds COLL_XFER_LOG; *lost_ns gets the post time of the first transfer that
 * did not fit (0: none lost): every transfer posted before it is in the log. Returns
 * the count; never blocks.
 */
#define COLL_XFER_LOG 65536
struct coll_xfer {
	uint64_t tag;
	uint64_t post_ns, done_ns;
	uint64_t bytes;
	uint32_t peer;
	uint32_t is_send;
};
int coll_xfers(const struct coll_comm *c, const struct coll_xfer **x, uint64_t *lost_ns);
/* Empty the log; call between AllReduces (no transfer outstanding). */
void coll_xfers_reset(struct coll_comm *c);
/*
 * Write into each page of the log (2.6 MB) now, so that the AllReduces that follow log
 * without a page's first-write cost: on the 2-core VM a page not written lately cost
 * 10-20 us at its next write, though touched at create (one AllReduce in 51 of 2 ranks,
 * 80 log bytes each: p99 of 4 KiB over shm 16-22 us, 2.6 us once touched just before).
 * That makes this call take up to ~11 ms (tens of us when warm): make it before a
 * barrier that precedes timed AllReduces, never between them.
 */
void coll_xfers_prepare(struct coll_comm *c);

/* A caller-owned buffer registered with every transport of a comm. */
struct coll_buf {
	void *ptr;
	uint64_t bytes;
	enum mem_kind kind;
	struct tp_mr *mr[COLL_MAX_TRANSPORTS];
};

int coll_buf_register(struct coll_comm *c, struct coll_buf *b, void *ptr, uint64_t bytes,
		      enum mem_kind kind);
void coll_buf_deregister(struct coll_comm *c, struct coll_buf *b);

/* Scratch an AllReduce needs for this chunk size and channel count, any algorithm. */
uint64_t coll_scratch_bytes(uint64_t chunk_bytes, int channels);

/* What one call did; overwritten by each call. */
struct coll_stats {
	int algo;	     /* the algorithm run (ALGO_AUTO resolved) */
	uint64_t ns;	     /* wall time of the call */
	uint64_t mem_ns;     /* inside memops reduce/scale/query */
	uint64_t bytes_sent; /* payload posted by this rank */
	uint64_t bytes_recv;
	uint64_t pieces;
	uint64_t posts;
	uint64_t eagain; /* posts refused with -EAGAIN and retried */
};

/*
 * In-place AllReduce of count elements at byte offset off of buf. The buffer is cut
 * into pieces of sched_piece_count(algo, nranks, chunk_bytes / dtype size) elements; up
 * to `channels` pieces are in flight. scratch must hold coll_scratch_bytes(chunk_bytes,
 * channels). Every rank must make the same sequence of calls with the same arguments
 * (except buffers). Returns 0, -EINVAL, -ENOSPC (scratch too small), -ENOTSUP
 * (algorithm), -ETIMEDOUT, -ECONNABORTED, or a transport / memops error.
 */
int coll_allreduce(struct coll_comm *c, const struct coll_buf *buf, uint64_t off,
		   const struct coll_buf *scratch, uint64_t count, enum dtype dt, enum redop op,
		   int algo, uint64_t chunk_bytes, int channels, struct coll_stats *st);

/*
 * Point-to-point between ranks 0 and 1 (other ranks return 0 at once, *ns = 0).
 * buf must hold bytes + 1: the last byte carries the ready/ack handshake.
 * write_bw: after a ready handshake, rank 0 streams `iterations` messages of `bytes`
 * from buf (offset 0; the handshakes use buf's last byte) with up to `window` sends outstanding,
 * rank 1 keeps `window` receives posted; rank 1 acknowledges the last one. *ns: rank 0, first post
 * to the acknowledgement; rank 1, first post to the last receive. write_lat: ping-pong of `bytes`;
 * *ns is the whole loop on rank 0 (half round trip = ns / (2 * iterations)), rank 1 the same span
 * seen from its side.
 */
int coll_write_bw(struct coll_comm *c, const struct coll_buf *buf, uint64_t bytes, int iterations,
		  int window, uint64_t *ns);
int coll_write_lat(struct coll_comm *c, const struct coll_buf *buf, uint64_t bytes, int iterations,
		   uint64_t *ns);
/* The same between ranks src (the sender, "rank 0" above) and dst; every rank of the
 * comm calls it for every pair (the others return 0 at once, *ns = 0). */
int coll_write_bw_pair(struct coll_comm *c, const struct coll_buf *buf, uint64_t bytes,
		       int iterations, int window, int src, int dst, uint64_t *ns);
int coll_write_lat_pair(struct coll_comm *c, const struct coll_buf *buf, uint64_t bytes,
			int iterations, int src, int dst, uint64_t *ns);

#endif
