/*
 * Bootstrap: the out-of-band TCP channel between ranks (rank 0 listens, every
 * rank connects). Used for setup (endpoint all-gather, barriers), for gathering
 * results to rank 0, and for failure detection: a watchdog notices a rank that
 * vanished and raises the abort flag on every surviving rank, naming it.
 *
 * Wire protocol (versioned, length-prefixed; every length and rank checked):
 *   1. rank r -> 0: HELLO {rank, nranks, nonce_r}
 *   2. 0 -> r:      CHALLENGE {nonce_0}
 *   3. r -> 0:      PROOF {HMAC(token, "rank", nonces, rank, nranks)}
 *   4. 0 -> r:      WELCOME {HMAC(token, "root", ...)}: rank 0 proves itself too; or
 *                   REFUSE "refused", the same for every verdict (wrong token, version,
 *                   world size or rank, garbage): a stranger learns nothing, is dropped,
 *                   and the job goes on. A connection closed without a verdict (slots
 *                   full, too slow) is retried by the rank. The token never crosses the
 *                   wire.
 *   5. collective messages: {magic, type, seq, len} + payload, in program order.
 *   6. ABORT {rank that failed, reason} may arrive at any time.
 * Rank 0 reads every pending handshake at once (poll), each with its own deadline; when
 * its slots run out a newcomer displaces the oldest idle connection (one that has sent
 * nothing), first among those of its own source address, which may hold only a share of
 * the slots: idle connections, however many, cannot keep ranks out.
 * Every call is collective (all ranks, same order), made from one thread per rank,
 * and bounded by timeout_ms; a timeout names the ranks that never arrived.
 * Any failed call (timeout, a rank that left, mismatched lengths) aborts the job, so
 * afterwards only bootstrap_abort_flag/reason and bootstrap_close are meaningful;
 * calls on an aborted bootstrap return -ECANCELED at once.
 *
 * Addresses: rank 0 binds the address HOST resolves to (never the wildcard: only the
 * interface the user named is exposed); IPv6 is written [addr]:port. Connections carry TCP keepalive, so a
 * vanished host (no FIN/RST) is noticed within ~15 s even between collectives.
 */
#ifndef GS_LAUNCH_BOOTSTRAP_H
#define GS_LAUNCH_BOOTSTRAP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "util/activity.h"

struct bootstrap_rank_state;

struct bootstrap_opts {
	int rank;
	int nranks;
	const char *addr;   /* HOST:PORT rank 0 listens on and others connect to */
	const char *token;  /* the job's shared secret (HMAC key), 1..BS_TOKEN_MAX bytes */
	int timeout_ms;
	int listen_fd;      /* rank 0: > 0 = listening socket already bound (launch_info.listen_fd),
			     * adopted and closed by bootstrap; 0 = bind addr */
	/* Optional, rank 0: told how many ranks (itself included) are there whenever the
	 * count changes while it waits, in bootstrap_open for HELLOs and in every
	 * collective for the others' contributions; called on the caller's thread with the
	 * bootstrap's lock held, so it must not call back into the bootstrap. */
	void (*on_arrival)(void *ctx, int arrived, int nranks);
	void *arrival_ctx;
	/* Optional, any rank: set non-zero (a stop signal's number, by the caller's
	 * handler) while bootstrap_open waits, it ends the wait with -EINTR: a lookup of
	 * the rendezvous host's name within 0.05 s, rank 0's for the ranks within 0.1 s
	 * (the ranks already there are told "rank 0 stopped by SIGINT ..."), another rank's
	 * connecting to rank 0 at once, or, with a handshake under way, once rank 0
	 * welcomed it (then 0: the caller tells the job through bootstrap_signal_fd) or
	 * after 1 s of its silence. Afterwards bootstrap_signal_fd is the way. */
	volatile const sig_atomic_t *stop;
	/* Optional, any rank: its application threads' activity records (util/activity.h),
	 * acts[i] thread i's, nacts <= ACT_THREADS, alive until bootstrap_close; the reader
	 * thread reads them to answer rank 0's probe (bootstrap_probe). NULL: it answers
	 * that its main thread is idle. */
	const struct activity *acts;
	int nacts;
	/*
	 * Optional, rank 0: rank 0's main thread runs the probe that names the others, so
	 * while it is in the case nothing else can name rank 0. Once the job aborted, and
	 * while that thread (acts[ACT_THREAD_MAIN]) is in the case, the reader thread judges
	 * rank 0's own threads as the probe judges another rank's, with the grace of the
	 * blame window of timeout_ms (launch/blame_window.h),
	 * and when one has not returned from the case (ACT_STUCK or ACT_GPU_WAIT) calls this
	 * once, with what a probe would have heard of rank 0 and the job's reason. Called on
	 * the reader thread, which answers nothing meanwhile: it must not call into the
	 * bootstrap, and must be bounded (a file written within a timeout).
	 */
	void (*on_self_stuck)(void *ctx, const struct bootstrap_rank_state *self, const char *why);
	void *self_stuck_ctx;
};

struct bootstrap;

/*
 * Rank 0 returns once every rank has said HELLO (strangers refused meanwhile), the
 * others once rank 0 welcomed them, retrying the connection until timeout_ms. The
 * rendezvous host's name is looked up within timeout_ms too; one that does not exist
 * fails at once. 0, or -errno with *out NULL (a timeout on rank 0 names the ranks that
 * never came; -EINTR when o->stop was raised meanwhile, said in one line naming the
 * signal and what the rank was doing: "rank 0 stopped by SIGINT (signal 2) during the
 * lookup of rendezvous host 'node17': it had not listened for the ranks yet", "stopped
 * by SIGTERM while connecting to rank 0 at HOST:PORT", "... while waiting for the ranks
 * at HOST:PORT").
 */
int bootstrap_open(const struct bootstrap_opts *o, struct bootstrap **out);
/* all: nranks * len bytes, rank r's record at r * len. */
int bootstrap_allgather(struct bootstrap *b, const void *mine, void *all, size_t len);
int bootstrap_barrier(struct bootstrap *b);
/* Rank 0 receives every rank's blob (malloc'd, caller frees each and the arrays). */
int bootstrap_gatherv(struct bootstrap *b, const void *mine, size_t len, void ***all,
		      size_t **lens);
int bootstrap_bcast(struct bootstrap *b, void *buf, size_t len);
/* Tell every rank to stop ("rank R aborted: why"); any rank, any thread, any time. */
void bootstrap_abort(struct bootstrap *b, const char *why);
/* Non-zero once the job is aborting; the data path polls it. */
volatile const int *bootstrap_abort_flag(struct bootstrap *b);
/* Why the job aborts, naming the rank ("rank 2 exited unexpectedly ..."); "" before. */
const char *bootstrap_abort_reason(struct bootstrap *b);
/* What rank 0's probe learned of one rank. */
enum bootstrap_heard {
	BS_HEARD_NONE,	   /* rank 0 itself, or a rank that left (closed its connection) */
	BS_HEARD_SILENT,   /* did not answer: its process is stopped or its host froze */
	BS_HEARD_ANSWERED, /* its reader thread answered for its application's threads */
};

struct bootstrap_rank_state {
	enum bootstrap_heard heard;
	uint32_t abort_age_ms;		  /* answered: how long it has known the job aborted,
					   * ACT_NO_ABORT: it has not */
	struct act_snap act[ACT_THREADS]; /* answered: each thread's state (nact of them) */
	int nact;
};

/*
 * Rank 0, typically once the job aborted on a timeout: which ranks cause it? A rank
 * that waited on a hung one timed out naming only the peer it waited on, and so did the
 * ranks that waited on it. Each connected rank gets a PING, which its reader thread
 * answers whatever its other threads do, with what those threads do (opts.acts). A rank
 * that neither answers within wait_ms nor closes its connection is stopped (SIGSTOP,
 * Ctrl-Z, a debugger) or its host froze: BS_HEARD_SILENT. One whose answer leaves a
 * thread's verdict early (act_judge with grace_ms: it may yet return from the case) is
 * asked again once it can be known, so that a thread is either stuck or fine when this
 * returns; it returns within 2 * wait_ms + grace_ms. Rank 0 answers for itself, last
 * (st[0]: its other threads, a DDP comm thread that never returned). Fills
 * st[0..nranks): 0, -EINVAL on another rank, -ENOMEM.
 */
int bootstrap_probe(struct bootstrap *b, int wait_ms, int grace_ms,
		    struct bootstrap_rank_state *st);
/* `gradsync run`'s rank 0 probes after a failed case (run/blame.c) with the wait and the
 * grace of the job's blame window (launch/blame_window.h). */
/*
 * For a stop signal's handler: write(fd, &(char){signo}, 1) (async-signal-safe) and
 * the reader thread aborts the job "rank R stopped by SIGINT", as bootstrap_abort would.
 * Valid from bootstrap_open to bootstrap_close; -1 for a job of one rank.
 */
int bootstrap_signal_fd(struct bootstrap *b);
/*
 * Say goodbye and free: after a final barrier no rank takes the others' goodbyes for
 * failures. Does not wait for the other ranks.
 */
void bootstrap_close(struct bootstrap *b);
/*
 * bootstrap_close for a rank one of whose threads never returned from its case and may
 * still read bootstrap_abort_flag: the goodbye said and the reader thread stopped (no
 * callback runs after), but b stays allocated, on purpose, until the process exits.
 */
void bootstrap_close_keep(struct bootstrap *b);

#endif
