/*
 * The bootstrap reader thread: owns every socket read, turns frames into queued
 * messages, admits or refuses connections on rank 0, and is the watchdog that turns
 * an unexpected EOF into a job-wide ABORT naming the rank that vanished.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "launch/bootstrap_int.h"
#include "util/fsbound.h"
#include "util/stopsig.h"
#include "util/log.h"
#include "util/timeutil.h"

void bs_msg_free(struct bs_msg *m)
{
	if (m) {
		free(m->data);
		free(m);
	}
}

int bs_peer_send(struct bootstrap *b, int peer, uint8_t type, uint8_t op, uint32_t seq,
		 const void *data, size_t len, uint64_t deadline_ns)
{
	struct bs_peer *p = &b->peers[peer];
	int ret = -EPIPE;

	pthread_mutex_lock(&p->wlock);
	if (p->fd >= 0)
		ret = bs_send_frame(p->fd, type, op, seq, data, len, deadline_ns);
	pthread_mutex_unlock(&p->wlock);
	return ret;
}

/*
 * The least oversleep taken for a freeze: under the job's timeout, so that a freeze
 * long enough for the others to give up on us is seen, and far above a busy host's
 * scheduling delays (a loaded 2-core VM: tens of ms).
 */
static uint64_t freeze_min_ns(const struct bootstrap *b)
{
	return GS_MAX(GS_MIN(BS_FREEZE_MIN_NS, b->timeout_ns / 2), BS_FREEZE_FLOOR_NS);
}

uint64_t bs_frozen_ns(struct bootstrap *b, uint64_t now)
{
	uint64_t tick = __atomic_load_n(&b->tick_ns, __ATOMIC_ACQUIRE);
	uint64_t thaw = __atomic_load_n(&b->thaw_ns, __ATOMIC_ACQUIRE);
	uint64_t min = freeze_min_ns(b);

	if (tick && now > tick + BS_TICK_NS + min)
		return now - tick; /* the reader has not woken since */
	if (thaw && now < thaw + BS_THAW_WINDOW_NS)
		return __atomic_load_n(&b->frozen_ns, __ATOMIC_ACQUIRE);
	return 0;
}

/* ABORT {failed_rank, reason}: rank 0 to every live peer but `except`, another rank to
 * rank 0 when tell_root. Under b->abort_lock. */
static void abort_send(struct bootstrap *b, int failed_rank, const char *reason, int except,
		       bool tell_root)
{
	uint8_t frame[4 + BS_TEXT_MAX];
	size_t n = bs_abort_pack(failed_rank, reason, frame);
	uint64_t deadline = time_now_ns() + BS_ABORT_SEND_NS;

	if (b->rank == 0) {
		for (int r = 1; r < b->nranks; r++)
			if (r != except)
				bs_peer_send(b, r, BS_ABORT, BS_OP_NONE, 0, frame, n, deadline);
	} else if (tell_root) {
		bs_peer_send(b, 0, BS_ABORT, BS_OP_NONE, 0, frame, n, deadline);
	}
}

/*
 * Is this rank ending on a stop signal whose default action is its end, without a word?
 * One whose stop signals nobody takes for the job (no bootstrap_opts.stop: a spawned
 * rank, whose spawner forwards the signal to every rank of the job at once), with one
 * pending (every thread but one blocks them: the one that takes it may not have run
 * yet) or taken by fsbound in place of that action for a bounded call (util/fsbound.h).
 * The ranks it sees leave then were stopped by the same signal: their exits are no news,
 * and it says what it gave up itself.
 */
static bool ending_silently(const struct bootstrap *b)
{
	sigset_t pending;

	if (b->stop_flag)
		return false;
	if (fsb_stop_signo())
		return true;
	if (sigpending(&pending))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(stop_sigs); i++) {
		if (sigismember(&pending, stop_sigs[i]))
			return true;
	}
	return false;
}

void bs_raise_abort(struct bootstrap *b, int failed_rank, const char *reason, int except,
		    bool tell_root)
{
	uint64_t now = time_now_ns(), frozen = bs_frozen_ns(b, now);

	pthread_mutex_lock(&b->abort_lock);
	pthread_mutex_lock(&b->lock);
	if (b->abort_flag) {
		pthread_mutex_unlock(&b->lock);
		pthread_mutex_unlock(&b->abort_lock);
		return;
	}
	if (frozen) {
		/* the others gave up on us while we did not run: the cause is here */
		snprintf(b->abort_reason, sizeof(b->abort_reason),
			 "rank %d did not run for %.1f s (stopped: SIGSTOP, Ctrl-Z or a debugger; or its host paused) and the job timed out meanwhile; then: %s",
			 b->rank, (double)frozen / 1e9, reason);
		failed_rank = b->rank;
		reason = b->abort_reason;
	} else {
		snprintf(b->abort_reason, sizeof(b->abort_reason), "%s", reason);
	}
	b->abort_ns = now;
	__atomic_store_n(&b->abort_flag, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
	if (!ending_silently(b))
		log_err(LOG_LAUNCH, "bootstrap: aborting the job: %s", reason);
	abort_send(b, failed_rank, reason, except, tell_root);
	pthread_mutex_unlock(&b->abort_lock);
}

void bs_tell_abort(struct bootstrap *b, const char *reason)
{
	pthread_mutex_lock(&b->abort_lock);
	abort_send(b, b->rank, reason, -1, true);
	pthread_mutex_unlock(&b->abort_lock);
}

void bs_stop_reason(const struct bootstrap *b, int signo, char *buf, size_t len)
{
	char host[64] = "";

	gethostname(host, sizeof(host) - 1);
	snprintf(buf, len, "rank %d stopped by SIG%s on host %s (pid %d)", b->rank,
		 sigabbrev_np(signo) ?: "?", host, (int)getpid());
}

/*
 * Answer rank 0's PING `seq` from the reader thread, whatever the application's threads
 * do (busy, or stuck): how long ago this rank heard of the abort, and what each of
 * those threads is doing (bootstrap_opts.acts; without them, an idle main thread).
 */
void bs_self_state(struct bootstrap *b, uint64_t now, struct bootstrap_rank_state *st)
{
	*st = (struct bootstrap_rank_state){ .heard = BS_HEARD_ANSWERED,
					     .abort_age_ms = ACT_NO_ABORT,
					     .nact = GS_MAX(b->nacts, 1) };
	pthread_mutex_lock(&b->lock);
	if (b->abort_flag)
		st->abort_age_ms = (uint32_t)GS_MIN((now - GS_MIN(now, b->abort_ns)) / 1000000,
						    (uint64_t)ACT_NO_ABORT - 1);
	pthread_mutex_unlock(&b->lock);
	for (int i = 0; i < ACT_THREADS; i++)
		st->act[i] = (struct act_snap){ .thread = (uint8_t)i, .what = ACT_NONE,
						.peer = -1 };
	for (int i = 0; i < b->nacts; i++)
		act_read(&b->acts[i], (enum act_thread)i, now, &st->act[i]);
}

static void pong(struct bootstrap *b, uint32_t seq)
{
	struct bootstrap_rank_state me;
	uint8_t frame[BS_PONG_MAX];
	uint64_t now = time_now_ns();

	bs_self_state(b, now, &me);
	bs_peer_send(b, 0, BS_PONG, BS_OP_NONE, seq, frame,
		     bs_pong_pack(me.abort_age_ms, me.act, me.nact, frame),
		     now + BS_ABORT_SEND_NS / 10);
}

/*
 * Rank 0's reader answers for rank 0 (bootstrap_opts.on_self_stuck): once the job
 * aborted, and while rank 0's main thread, the one that would probe, is in the case,
 * rank 0's threads judged as the probe judges another rank's, until the verdict is in;
 * a thread that has not returned from the case is told, once. A main thread out of the
 * case probes, and its probe answers for rank 0 (bootstrap_probe). Returns when to
 * look again: next, or sooner when a thread's verdict is due first.
 */
static uint64_t self_check(struct bootstrap *b, uint64_t now, uint64_t next)
{
	struct bootstrap_rank_state me;
	const struct act_snap *a;
	enum act_verdict v;
	uint32_t wait;

	if (b->rank != 0 || !b->on_self_stuck || b->self_judged ||
	    !__atomic_load_n(&b->abort_flag, __ATOMIC_ACQUIRE))
		return next;
	bs_self_state(b, now, &me);
	a = &me.act[act_pick(me.act, me.nact, me.abort_age_ms, b->self_grace_ms)];
	v = act_judge(a, me.abort_age_ms, b->self_grace_ms, &wait);
	if (!act_in_case(me.act[ACT_THREAD_MAIN].what))
		v = ACT_FINE;
	if (v == ACT_EARLY)
		return GS_MIN(next, now + wait * 1000000ull);
	b->self_judged = true;
	/* the reason is written once, before the flag it is read after */
	if (v != ACT_FINE)
		b->on_self_stuck(b->self_stuck_ctx, &me, b->abort_reason);
	return next;
}

/* A complete frame from peer r: queue it, or act on it. -EPROTO when it is out of place. */
static int dispatch(struct bootstrap *b, int r, struct bs_msg *m, const char **why)
{
	struct bs_peer *p = &b->peers[r];
	uint8_t want = b->rank == 0 ? BS_UP : BS_DOWN;
	char text[BS_TEXT_MAX + 1];
	int32_t failed;

	if (m->h.type == want) {
		pthread_mutex_lock(&b->lock);
		fifo_push(&p->queue, &m->link);
		pthread_cond_broadcast(&b->cond);
		pthread_mutex_unlock(&b->lock);
		return 0;
	}
	if (m->h.type == BS_PING && b->rank != 0) {
		uint32_t seq = m->h.seq;

		bs_msg_free(m);
		pong(b, seq);
		return 0;
	}
	if (m->h.type == BS_PONG && b->rank == 0) {
		struct act_snap snaps[ACT_THREADS];
		uint32_t age;
		int n;

		if (bs_pong_unpack(m->data, m->h.len, &age, snaps, &n)) {
			bs_msg_free(m);
			*why = "malformed PONG";
			return -EPROTO;
		}
		pthread_mutex_lock(&b->lock);
		p->pong_seq = m->h.seq;
		p->pong_abort_age_ms = age;
		memcpy(p->pong, snaps, sizeof(snaps));
		p->npong = n;
		pthread_cond_broadcast(&b->cond);
		pthread_mutex_unlock(&b->lock);
		bs_msg_free(m);
		return 0;
	}
	if (m->h.type == BS_BYE) {
		pthread_mutex_lock(&b->lock);
		p->bye = true;
		pthread_cond_broadcast(&b->cond);
		pthread_mutex_unlock(&b->lock);
		bs_msg_free(m);
		return 0;
	}
	if (m->h.type == BS_ABORT) {
		bs_abort_unpack(m->data, m->h.len, &failed, text);
		bs_msg_free(m);
		bs_raise_abort(b, failed, text, r, false);
		return 0;
	}
	bs_msg_free(m);
	*why = "unexpected message type";
	return -EPROTO;
}

/* Drain what peer r sent: 0 while the connection lives, -EPIPE on EOF, -errno, -EPROTO. */
static int read_peer(struct bootstrap *b, int r, const char **why)
{
	struct bs_peer *p = &b->peers[r];
	struct bs_rx *rx = &p->rx;

	for (;;) {
		uint8_t *dst = rx->msg ? rx->msg->data + rx->got : rx->hdr + rx->got;
		size_t want = rx->msg ? rx->msg->h.len - rx->got : BS_HDR_LEN - rx->got;
		ssize_t n = want ? recv(p->fd, dst, want, 0) : 0;

		if (want && n == 0)
			return -EPIPE;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		rx->got += (size_t)n;
		if (!rx->msg && rx->got == BS_HDR_LEN) {
			struct bs_msg *m = calloc(1, sizeof(*m));

			if (!m)
				return -ENOMEM;
			rx->msg = m;
			rx->got = 0;
			if (bs_hdr_unpack(rx->hdr, &m->h, why))
				return -EPROTO;
			if (m->h.len && !(m->data = malloc(m->h.len)))
				return -ENOMEM;
		}
		if (rx->msg && rx->got == rx->msg->h.len) {
			struct bs_msg *m = rx->msg;
			int ret;

			rx->msg = NULL;
			rx->got = 0;
			ret = dispatch(b, r, m, why);
			if (ret)
				return ret;
		}
	}
}

/* Peer r's connection ended: a clean goodbye, or a failure every rank must hear of. */
static void peer_lost(struct bootstrap *b, int r, int err, const char *why)
{
	struct bs_peer *p = &b->peers[r];
	char reason[BS_REASON_LEN];
	bool clean;

	bs_msg_free(p->rx.msg);
	p->rx.msg = NULL;
	pthread_mutex_lock(&b->lock);
	p->gone = true;
	clean = (p->bye || b->closing) && err != -EPROTO;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
	if (clean)
		return;
	if (err == -EPROTO)
		snprintf(reason, sizeof(reason), "rank %d sent a malformed message (%s)", r, why);
	else if (err == -EPIPE || err == -ECONNRESET)
		/* A reset only means the dead rank had unread data: same story. */
		snprintf(reason, sizeof(reason), "rank %d exited unexpectedly (connection to it %s)",
			 r, err == -EPIPE ? "closed" : "reset");
	else if (err == -ETIMEDOUT || err == -EHOSTUNREACH || err == -ENETUNREACH ||
		 err == -EHOSTDOWN)
		/* keepalive or the route gave up: its host or the network went away; the
		 * rank itself may still run there */
		snprintf(reason, sizeof(reason),
			 "rank %d is unreachable (connection to it: %s; it was at %s): its host or the network between went away",
			 r, strerror(-err), p->name);
	else
		snprintf(reason, sizeof(reason),
			 "rank %d exited unexpectedly (connection to it: %s; it was at %s)", r,
			 strerror(-err), p->name);
	bs_raise_abort(b, r, reason, r, false);
}

/*
 * Bytes on the wake pipe other than the stop byte are signal numbers written by a
 * signal handler (bootstrap_signal_fd): the job stops, naming this rank and the signal.
 */
static void take_signals(struct bootstrap *b)
{
	unsigned char c[16];
	char why[BS_REASON_LEN];
	ssize_t n;

	while ((n = read(b->wake[0], c, sizeof(c))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (c[i] == BS_WAKE_STOP)
				continue;
			bs_stop_reason(b, c[i], why, sizeof(why));
			bs_raise_abort(b, b->rank, why, -1, true);
		}
	}
}

/* After poll, which was to sleep at most `asked` from `before`: did we stop running? */
static void note_freeze(struct bootstrap *b, uint64_t before, uint64_t asked)
{
	uint64_t after = time_now_ns();

	if (after <= before + asked + freeze_min_ns(b))
		return;
	__atomic_store_n(&b->frozen_ns, after - before, __ATOMIC_RELEASE);
	__atomic_store_n(&b->thaw_ns, after, __ATOMIC_RELEASE);
	log_warn(LOG_LAUNCH, "bootstrap: this rank did not run for %.1f s (stopped, or its host paused)",
		 (double)(after - before) / 1e9);
}

static void *reader_main(void *arg)
{
	struct bootstrap *b = arg;
	size_t cap = 2 + BS_MAX_PENDING + (size_t)b->nranks;
	struct pollfd *pfd = calloc(cap, sizeof(*pfd));
	int *who = calloc(cap, sizeof(*who));
	const char *why = "";

	if (!pfd || !who) {
		bs_raise_abort(b, b->rank, "bootstrap reader: out of memory", -1, true);
		goto out;
	}
	for (;;) {
		uint64_t now = time_now_ns(), next = now + BS_TICK_NS;
		nfds_t n = 0;

		pfd[n] = (struct pollfd){.fd = b->wake[0], .events = POLLIN};
		who[n++] = -1;
		if (b->listen_fd >= 0) {
			pfd[n] = (struct pollfd){.fd = b->listen_fd, .events = POLLIN};
			who[n++] = -2;
		}
		next = bs_admit_expire(b, now, next);
		next = self_check(b, now, next);
		for (int i = 0; i < b->npending; i++) {
			pfd[n] = (struct pollfd){.fd = b->pending[i].fd, .events = POLLIN};
			who[n++] = -3 - i;
		}
		for (int r = 0; r < b->nranks; r++) {
			if (r == b->rank || b->peers[r].fd < 0 || b->peers[r].gone)
				continue;
			pfd[n] = (struct pollfd){.fd = b->peers[r].fd, .events = POLLIN};
			who[n++] = r;
		}
		__atomic_store_n(&b->tick_ns, now, __ATOMIC_RELEASE);
		if (poll(pfd, n, (int)((GS_MAX(next, now) - now) / 1000000 + 1)) < 0 &&
		    errno != EINTR) {
			log_err(LOG_LAUNCH, "bootstrap: poll: %s", strerror(errno));
			break;
		}
		note_freeze(b, now, GS_MAX(next, now) - now);
		pthread_mutex_lock(&b->lock);
		bool stop = b->stop;

		pthread_mutex_unlock(&b->lock);
		if (stop)
			break;
		if (pfd[0].revents)
			take_signals(b);
		/*
		 * Pending slots move when one is dropped: walk them from the end, and take new
		 * connections last (accepting may displace any slot).
		 */
		bool accept = false;

		for (nfds_t k = n; k-- > 0;) {
			if (!pfd[k].revents)
				continue;
			if (who[k] == -2) {
				accept = true;
			} else if (who[k] <= -3) {
				bs_admit_read(b, -3 - who[k]);
			} else if (who[k] >= 0) {
				int ret = read_peer(b, who[k], &why);

				if (ret)
					peer_lost(b, who[k], ret, why);
			}
		}
		if (accept)
			bs_admit_accept(b);
	}
out:
	free(pfd);
	free(who);
	return NULL;
}

int bs_reader_start(struct bootstrap *b)
{
	sigset_t all, old;
	int ret;

	if (pipe2(b->wake, O_CLOEXEC | O_NONBLOCK)) {
		ret = errno;
		log_err(LOG_LAUNCH, "bootstrap: pipe2: %s", strerror(ret));
		return -ret;
	}
	/* Signals stay with the application's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&b->reader, NULL, reader_main, b);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		log_err(LOG_LAUNCH, "bootstrap: pthread_create reader: %s", strerror(ret));
		close(b->wake[0]);
		close(b->wake[1]);
		b->wake[0] = b->wake[1] = -1;
		return -ret;
	}
	b->reader_started = true;
	return 0;
}

void bs_reader_stop(struct bootstrap *b)
{
	if (!b->reader_started)
		return;
	pthread_mutex_lock(&b->lock);
	b->stop = true;
	pthread_mutex_unlock(&b->lock);
	if (write(b->wake[1], (char[]){BS_WAKE_STOP}, 1) < 0)
		log_dbg(LOG_LAUNCH, "bootstrap: waking the reader: %s", strerror(errno));
	/*
	 * Unbounded on purpose: the reader cannot block on a peer. Its sockets are
	 * non-blocking, its poll sleeps BS_TICK_NS at most, every frame it sends (a PONG,
	 * an ABORT, a handshake's) has a deadline, as has every send holding the peer's
	 * write lock it may wait for, on_self_stuck is bounded by its contract, and it
	 * looks at b->stop after every poll.
	 */
	pthread_join(b->reader, NULL);
	b->reader_started = false;
	close(b->wake[0]);
	close(b->wake[1]);
	b->wake[0] = b->wake[1] = -1;
	bs_admit_close_all(b);
}

int bootstrap_signal_fd(struct bootstrap *b)
{
	return b->wake[1];
}
