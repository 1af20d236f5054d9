/*
 * tcp transport progress: drives every stream with edge-triggered epoll, either on a
 * progress thread that takes posts from the executor and hands completions back, or
 * inline on the executor's own thread (tcp_inline_*). What the frames mean, and the wire
 * protocol, is tcp_match.c's.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "transport/tcp/tcp_priv.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

#define TCP_IOV 64

/* Does the stream still owe its peer part of a message (not just credit or a REFUSE)? */
static bool txq_owes(const struct tcp_stream *st)
{
	for (const struct fifo_link *l = st->txq.head; l; l = l->next)
		if (fifo_entry(l, struct tcp_frame, link)->req)
			return true;
	return false;
}

static void peer_lost(struct tcp_priv *tp, struct tcp_stream *st, const char *call, int err)
{
	struct tcp_peer *pe = &tp->peers[st->peer];
	bool owes = st->in_payload || txq_owes(st);

	if (st->dead)
		return;
	st->dead = true;
	epoll_ctl(tp->epfd, EPOLL_CTL_DEL, st->fd, NULL);
	/* An orderly EOF comes after everything the peer wrote on this stream; its other
	 * streams may still carry the rest of a striped message, so the peer is gone only
	 * once every stream is. */
	if (!err && !owes) {
		for (int s = 0; s < tp->nstreams; s++)
			if (!pe->streams[s].dead)
				return;
	}
	if (!atomic_load(&pe->outstanding) && !owes) {
		/* closed (or reset over our unread CTS) while idle: the peer finished first;
		 * an error only if we use it again (tcp_handle_op) */
		pe->closed = true;
		return;
	}
	if (!atomic_load(&tp->fatal))
		log_err(LOG_TRANSPORT, "tcp %s peer=%d: %s", call, st->peer,
			err && err != ECONNRESET ? strerror(err) : "connection reset");
	tcp_set_fatal(tp, -ECONNRESET);
}

/* Write as many queued frames as the socket takes; complete sends whose last chunk went. */
static void stream_write(struct tcp_priv *tp, struct tcp_stream *st)
{
	struct tcp_peer *pe = &tp->peers[st->peer];

	while (!fifo_empty(&st->txq) && st->writable && !st->dead) {
		struct iovec iov[TCP_IOV];
		struct msghdr mh = {.msg_iov = iov};
		struct fifo_link *l;
		struct tcp_frame *f;
		size_t hl = sizeof(struct tcp_frame_hdr);
		ssize_t n;
		int k = 0;

		for (l = st->txq.head; l && k < TCP_IOV - 1; l = l->next) {
			f = fifo_entry(l, struct tcp_frame, link);
			if (!f->sent)
				tcp_frame_credit(pe, f);
			if (f->sent < hl)
				iov[k++] = (struct iovec){(char *)&f->hdr + f->sent, hl - f->sent};
			if (f->plen) {
				size_t po = f->sent > hl ? f->sent - hl : 0;

				iov[k++] = (struct iovec){(char *)f->payload + po, f->plen - po};
			}
		}
		mh.msg_iovlen = (size_t)k;
		n = sendmsg(st->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				st->writable = false;
			else if (errno != EINTR)
				peer_lost(tp, st, "send", errno);
			return;
		}
		tcp_publish(&st->unsent, tcp_published(&st->unsent) - (uint64_t)n);
		tcp_publish(&st->last_tx_ns, time_coarse_ns());
		while (n > 0 && !fifo_empty(&st->txq)) {
			size_t left, take;

			f = fifo_entry(st->txq.head, struct tcp_frame, link);
			left = hl + f->plen - f->sent;
			take = GS_MIN((size_t)n, left);

			f->sent += take;
			n -= (ssize_t)take;
			if (f->sent < hl + f->plen)
				break;
			fifo_pop(&st->txq);
			tcp_frame_out(tp, pe, f);
		}
	}
}

/*
 * Read what the socket holds: headers and small payloads through the stage, large
 * payloads straight into their buffer with the stage behind them in the same read (the
 * next headers come along). A read that returns less than it asked for left the socket
 * empty, and edge-triggered epoll reports the next bytes that arrive, so no read is
 * spent on EAGAIN: a 4 KiB eager message behind its peer's CTS is one recvmsg.
 * Except once the peer hung up (hup: the event said EPOLLRDHUP, EPOLLHUP or EPOLLERR):
 * its FIN or reset came with the bytes already reported, so no later event will come,
 * and only reading on until recv says 0 or an error sees it.
 */
static void stream_read(struct tcp_priv *tp, struct tcp_stream *st, bool hup)
{
	bool drained = false;

	while (!st->dead && !atomic_load_explicit(&tp->fatal, memory_order_relaxed)) {
		size_t staged = st->st_tail - st->st_head, direct = 0, want;
		struct iovec iov[2];
		struct msghdr mh = {.msg_iov = iov};
		ssize_t n;

		if (st->in_payload && staged) {
			size_t k = GS_MIN(staged, st->rleft);

			memcpy(st->rdst, st->stage + st->st_head, k);
			st->st_head += k;
			tcp_rx_advance(tp, st, k);
			continue;
		}
		if (!st->in_payload && staged >= sizeof(struct tcp_frame_hdr)) {
			if (!tcp_rx_header(tp, st))
				return;
			continue;
		}
		if (drained)
			return;
		if (st->st_head) {
			memmove(st->stage, st->stage + st->st_head, staged);
			st->st_head = 0;
			st->st_tail = staged;
		}
		if (st->in_payload && st->rleft >= TCP_STAGE_READ) {
			direct = st->rleft;
			iov[mh.msg_iovlen++] = (struct iovec){st->rdst, direct};
		}
		/* bounded: a large payload behind the next header then goes straight to its
		 * buffer instead of through the stage */
		iov[mh.msg_iovlen++] = (struct iovec){
		    st->stage + st->st_tail, GS_MIN(TCP_STAGE - st->st_tail, (size_t)TCP_STAGE_READ)};
		want = direct + iov[mh.msg_iovlen - 1].iov_len;
		n = recvmsg(st->fd, &mh, MSG_DONTWAIT);
		if (n > 0) {
			size_t d = GS_MIN((size_t)n, direct);

			tcp_publish(&st->last_rx_ns, time_coarse_ns());
			st->st_tail += (size_t)n - d;
			if (d)
				tcp_rx_advance(tp, st, d);
			drained = !hup && (size_t)n < want;
			continue;
		}
		if (n == 0)
			peer_lost(tp, st, "recv", 0);
		else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			peer_lost(tp, st, "recv", errno);
		if (n == 0 || errno != EINTR)
			return;
	}
}

static void drain_ops(struct tcp_priv *tp)
{
	struct fifo_link *l;
	struct fifo ops;

	if (!atomic_load(&tp->ops_pending))
		return;
	pthread_mutex_lock(&tp->lock);
	ops = tp->ops;
	tp->ops = (struct fifo){ 0 };
	atomic_store(&tp->ops_pending, 0);
	pthread_mutex_unlock(&tp->lock);
	while ((l = fifo_pop(&ops)))
		tcp_handle_op(tp, fifo_entry(l, struct tcp_req, link));
}

static void write_all(struct tcp_priv *tp)
{
	for (int p = 0; p < tp->env->nranks; p++)
		for (int s = 0; tp->peers[p].active && s < tp->nstreams; s++)
			if (!fifo_empty(&tp->peers[p].streams[s].txq))
				stream_write(tp, &tp->peers[p].streams[s]);
}

static void handle_events(struct tcp_priv *tp, const struct epoll_event *ev, int n)
{
	for (int i = 0; i < n; i++) {
		struct tcp_stream *st = ev[i].data.ptr;
		uint64_t junk;

		if (!st) {
			/* the wake-up itself carries nothing; EAGAIN just means drained */
			while (read(tp->evfd, &junk, sizeof(junk)) > 0)
				;
			continue;
		}
		if (ev[i].events & EPOLLOUT)
			st->writable = true;
		if (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP))
			stream_read(tp, st, ev[i].events & (EPOLLERR | EPOLLHUP | EPOLLRDHUP));
	}
}

static bool aborting(struct tcp_priv *tp)
{
	if (tp_env_aborting(tp->env)) {
		tcp_set_fatal(tp, -ECANCELED);
		return true;
	}
	return false;
}

static void *progress_main(void *arg)
{
	struct tcp_priv *tp = arg;
	struct epoll_event ev[64];
	uint64_t cpu0 = time_thread_cpu_ns();

	while (!atomic_load(&tp->stop) && !atomic_load(&tp->fatal)) {
		/* a job aborting: one more round without sleeping, so bytes that came before
		 * the abort still complete their receives, then stop */
		bool last = tp_env_aborting(tp->env);
		int n, timeout = 100;

		drain_ops(tp);
		tcp_rts_due(tp);
		write_all(tp);
		atomic_store(&tp->cpu_ns, time_thread_cpu_ns() - cpu0);
		/* Dekker with tcp_wake(): announce sleep, then re-check the op queue */
		atomic_store(&tp->sleeping, 1);
		if (atomic_load(&tp->ops_pending) || last)
			timeout = 0;
		else if (tp->waiting_cts)
			timeout = TCP_RTS_AFTER_NS / 1000000;
		n = epoll_wait(tp->epfd, ev, ARRAY_SIZE(ev), timeout);
		atomic_store(&tp->sleeping, 0);
		handle_events(tp, ev, n);
		if (last && aborting(tp))
			break;
	}
	atomic_store(&tp->cpu_ns, time_thread_cpu_ns() - cpu0);
	return NULL;
}

/*
 * Inline progress: the executor's own thread does the socket work when it posts and
 * polls, so a message costs no thread hand-off (two per message with the thread).
 * The thread is the better choice only when a spare core can run it beside the
 * executor; without one the hand-offs are context switches on the data path.
 */
/* Only queued: the caller polls next, and one write then carries every frame its
 * posts of a step queued for a peer (eager messages, a CTS, the credit owed to it). */
void tcp_inline_post(struct tcp_priv *tp, struct tcp_req *r)
{
	tcp_handle_op(tp, r);
}

void tcp_inline_progress(struct tcp_priv *tp, int timeout_ms)
{
	struct epoll_event ev[64];
	int n;

	if (atomic_load(&tp->fatal))
		return;
	/* a job aborting: one look without sleeping, so bytes that came before the abort
	 * still complete their receives (a peer that sent its last part, then died);
	 * tcp_poll reports the abort when nothing completed */
	if (tp_env_aborting(tp->env))
		timeout_ms = 0;
	tcp_rts_due(tp);
	write_all(tp); /* what the posts queued goes out before we look or sleep */
	n = epoll_wait(tp->epfd, ev, ARRAY_SIZE(ev), timeout_ms);
	handle_events(tp, ev, n);
	write_all(tp);
}

void tcp_wake(struct tcp_priv *tp)
{
	uint64_t one = 1;

	atomic_store(&tp->ops_pending, 1);
	if (atomic_load(&tp->sleeping) && write(tp->evfd, &one, sizeof(one)) < 0)
		log_dbg(LOG_TRANSPORT, "tcp wake: eventfd write failed");
}

int tcp_progress_start(struct tcp_priv *tp)
{
	struct epoll_event ev = {.events = EPOLLIN};
	unsigned int utmo = (unsigned int)GS_MAX(tp->env->timeout_ms, 1000);
	int err, one = 1;

	tp->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	tp->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (tp->evfd < 0 || tp->epfd < 0 || epoll_ctl(tp->epfd, EPOLL_CTL_ADD, tp->evfd, &ev)) {
		err = errno;
		log_err(LOG_TRANSPORT, "tcp epoll/eventfd setup: %s", strerror(err));
		return -err;
	}
	for (int p = 0; p < tp->env->nranks; p++) {
		for (int s = 0; tp->peers[p].active && s < tp->nstreams; s++) {
			struct tcp_stream *st = &tp->peers[p].streams[s];

			setsockopt(st->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			/* a host that vanished without FIN/RST: unacked data fails the stream */
			setsockopt(st->fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &utmo, sizeof(utmo));
			st->writable = true;
			ev = (struct epoll_event){
			    .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = st};
			if (epoll_ctl(tp->epfd, EPOLL_CTL_ADD, st->fd, &ev) < 0) {
				err = errno;
				log_err(LOG_TRANSPORT, "epoll_ctl peer=%d stream=%d: %s", p, s,
					strerror(err));
				return -err;
			}
		}
	}
	if (tp->inline_progress)
		return 0;
	err = pthread_create(&tp->thread, NULL, progress_main, tp);
	if (err) {
		log_err(LOG_TRANSPORT, "pthread_create tcp progress: %s", strerror(err));
		return -err;
	}
	tp->thread_started = true;
	return 0;
}

void tcp_progress_stop(struct tcp_priv *tp)
{
	uint64_t one = 1;

	if (!tp->thread_started)
		return;
	atomic_store(&tp->stop, 1);
	if (write(tp->evfd, &one, sizeof(one)) < 0)
		log_dbg(LOG_TRANSPORT, "tcp stop: eventfd write failed");
	/*
	 * Unbounded on purpose: progress_main cannot block on a peer. Its sockets are read
	 * and written with MSG_DONTWAIT, its epoll_wait sleeps 100 ms at most, and the lock
	 * it takes guards only a queue swap; it looks at tp->stop every round, so it
	 * returns within one.
	 */
	pthread_join(tp->thread, NULL);
	tp->thread_started = false;
}
