/*
 * Rank 0's handshakes (exchange in bootstrap.h, steps 1-4): every connection is
 * accepted at once and read concurrently with the others in the reader thread's poll,
 * each under its own deadline; a full table displaces the oldest idle connection
 * (bs_pending_victim), so idle connections cannot starve the ranks. Every refusal gets
 * the same REFUSE; the real reason goes to rank 0's log, a few lines per window.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "launch/bootstrap_int.h"
#include "util/log.h"
#include "util/rand.h"
#include "util/sha256.h"
#include "util/timeutil.h"

int bs_pending_victim(const struct bs_pending *p, int n, const char *source, uint64_t now_ns)
{
	int same = 0, idle = -1, stale = -1;
	bool own;

	for (int i = 0; i < n; i++)
		same += !strcmp(p[i].source, source);
	own = same >= BS_MAX_PER_SOURCE;
	if (!own && n < BS_MAX_PENDING)
		return -1;
	for (int i = 0; i < n; i++) {
		if (own && strcmp(p[i].source, source))
			continue;
		if (!p[i].active) {
			if (idle < 0 || p[i].accepted_ns < p[idle].accepted_ns)
				idle = i;
		} else if (p[i].stage_ns + BS_EVICT_MIN_NS <= now_ns) {
			if (stale < 0 || p[i].stage_ns < p[stale].stage_ns)
				stale = i;
		}
	}
	return idle >= 0 ? idle : stale >= 0 ? stale : -2;
}

/* One line per refusal, BS_REFUSE_LOG_BURST per window, then how many were not logged. */
static void refusal_log(struct bootstrap *b, const char *name, const char *why)
{
	struct bs_ratelimit *rl = &b->refusals;
	uint64_t now = time_now_ns();

	if (now >= rl->window_ns + BS_REFUSE_LOG_WINDOW_NS) {
		if (rl->suppressed)
			log_warn(LOG_LAUNCH, "bootstrap: %d more refused connections not logged",
				 rl->suppressed);
		rl->window_ns = now;
		rl->logged = 0;
		rl->suppressed = 0;
	}
	if (rl->logged >= BS_REFUSE_LOG_BURST) {
		rl->suppressed++;
		return;
	}
	rl->logged++;
	log_warn(LOG_LAUNCH, "bootstrap: refused connection from %s: %s%s", name, why,
		 rl->logged == BS_REFUSE_LOG_BURST ? " (further refusals counted, not logged)" : "");
}

/*
 * Refuse and close pending connection i: with the one REFUSE for a verdict (a rank
 * takes it as final), silently for want of room or time (a rank that meets EOF tries
 * again, so a displaced slow rank is not lost).
 */
static void pending_drop(struct bootstrap *b, int i, const char *why, bool reply)
{
	struct bs_pending *q = &b->pending[i];

	if (reply) {
		refusal_log(b, q->name, why);
		/* best effort: a full socket buffer is the stranger's problem */
		bs_send_frame(q->fd, BS_REFUSE, BS_OP_NONE, 0, BS_REFUSED, strlen(BS_REFUSED),
			      time_now_ns());
	} else {
		/* routine when many ranks start at once: counted, told once they all joined */
		log_dbg(LOG_LAUNCH, "bootstrap: closed connection from %s: %s", q->name, why);
		__atomic_add_fetch(&b->nclosed, 1, __ATOMIC_RELAXED);
	}
	close(q->fd);
	b->pending[i] = b->pending[--b->npending];
}

static void source_of(int fd, struct bs_pending *q)
{
	struct sockaddr_storage ss = {.ss_family = AF_UNSPEC};
	socklen_t sl = sizeof(ss);

	snprintf(q->source, sizeof(q->source), "?");
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, q->source,
				  sizeof(q->source));
		else if (ss.ss_family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, q->source,
				  sizeof(q->source));
	}
	bs_sockaddr_name((struct sockaddr *)&ss, q->name, sizeof(q->name));
}

/*
 * Take every connection waiting in the backlog: none waits behind idle ones. Each is
 * read at once (a rank's HELLO is usually there already), so a rank has progressed
 * past "idle" before a later newcomer could displace it.
 */
void bs_admit_accept(struct bootstrap *b)
{
	for (int budget = 4 * BS_MAX_PENDING; budget > 0; budget--) {
		int fd = accept4(b->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct bs_pending q = {.fd = fd};
		uint64_t now = time_now_ns();
		int victim;

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE) {
				/* make room for the next one: the oldest idle handshake goes */
				int old = -1;

				for (int i = 0; i < b->npending; i++)
					if (!b->pending[i].active &&
					    (old < 0 || b->pending[i].accepted_ns <
							    b->pending[old].accepted_ns))
						old = i;
				refusal_log(b, b->addr, "accept: out of file descriptors");
				if (old >= 0)
					pending_drop(b, old, "idle, displaced (no file descriptors)",
						     false);
				return;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				log_warn(LOG_LAUNCH, "bootstrap: accept on %s: %s", b->addr,
					 strerror(errno));
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return;
		}
		source_of(fd, &q);
		q.accepted_ns = q.stage_ns = now;
		q.deadline_ns = now + GS_MIN(BS_HELLO_TIMEOUT_NS, b->timeout_ns);
		victim = bs_pending_victim(b->pending, b->npending, q.source, now);
		if (victim >= 0 && !b->pending[victim].active) {
			/*
			 * A rank on a loaded host may send its HELLO only now (100 ranks start at
			 * once): read the idle ones before judging them idle.
			 */
			for (int i = b->npending; i-- > 0;)
				if (!b->pending[i].active)
					bs_admit_read(b, i);
			victim = bs_pending_victim(b->pending, b->npending, q.source, now);
		}
		if (victim == -2) {
			/* every slot is a handshake in progress: the newcomer retries */
			b->pending[b->npending] = q;
			b->npending++;
			pending_drop(b, b->npending - 1, "handshake slots full", false);
			continue;
		}
		if (victim >= 0)
			pending_drop(b, victim, "idle, displaced by a newer connection", false);
		b->pending[b->npending++] = q;
		bs_admit_read(b, b->npending - 1);
	}
}

/* A complete PROOF: admit the rank, or refuse it. */
static void pending_admit(struct bootstrap *b, int i)
{
	struct bs_pending *q = &b->pending[i];
	uint8_t want[BS_MAC_LEN], mac0[BS_MAC_LEN];
	uint32_t rank = q->rank;
	char why[96];
	int ret;

	bs_auth_mac(b->token, b->token_len, BS_ROLE_RANK, q->rank, q->nranks, q->nonce_r,
		    q->nonce_0, want);
	if (!mem_equal_ct(want, q->buf + BS_HDR_LEN, BS_MAC_LEN)) {
		pending_drop(b, i, "wrong token", true);
		return;
	}
	/* proven: what follows are our own ranks' mistakes, worth naming in the log */
	if (q->nranks != (uint32_t)b->nranks) {
		snprintf(why, sizeof(why), "world size %u, this job has %d", q->nranks, b->nranks);
		pending_drop(b, i, why, true);
		return;
	}
	if (rank == 0 || rank >= q->nranks) {
		snprintf(why, sizeof(why), "rank %u out of range", rank);
		pending_drop(b, i, why, true);
		return;
	}
	if (b->peers[rank].fd >= 0) {
		snprintf(why, sizeof(why), "rank %u is already connected", rank);
		pending_drop(b, i, why, true);
		return;
	}
	bs_tune_socket(q->fd);
	bs_auth_mac(b->token, b->token_len, BS_ROLE_ROOT, q->rank, q->nranks, q->nonce_r,
		    q->nonce_0, mac0);
	ret = bs_send_frame(q->fd, BS_WELCOME, BS_OP_NONE, 0, mac0, sizeof(mac0),
			    time_now_ns() + BS_ABORT_SEND_NS);
	if (ret) {
		snprintf(why, sizeof(why), "sending WELCOME to rank %u: %s", rank, strerror(-ret));
		pending_drop(b, i, why, false);
		return;
	}
	log_dbg(LOG_LAUNCH, "bootstrap: rank %u connected from %s", rank, q->name);
	pthread_mutex_lock(&b->peers[rank].wlock);
	pthread_mutex_lock(&b->lock);
	b->peers[rank].fd = q->fd;
	snprintf(b->peers[rank].name, sizeof(b->peers[rank].name), "%s", q->name);
	b->nconnected++;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
	pthread_mutex_unlock(&b->peers[rank].wlock);
	b->pending[i] = b->pending[--b->npending];
}

/* A complete HELLO: answer with our nonce (whatever the HELLO says: nothing leaks). */
static void pending_challenge(struct bootstrap *b, int i)
{
	struct bs_pending *q = &b->pending[i];
	int ret;

	bs_hello_unpack(q->buf + BS_HDR_LEN, &q->rank, &q->nranks, q->nonce_r);
	ret = rand_bytes(q->nonce_0, sizeof(q->nonce_0));
	if (!ret)
		ret = bs_send_frame(q->fd, BS_CHALLENGE, BS_OP_NONE, 0, q->nonce_0,
				    sizeof(q->nonce_0), time_now_ns() + BS_ABORT_SEND_NS / 10);
	if (ret) {
		pending_drop(b, i, "could not send the challenge", false);
		return;
	}
	q->stage = BS_PEND_PROOF;
	q->stage_ns = time_now_ns();
	q->got = 0;
}

void bs_admit_read(struct bootstrap *b, int i)
{
	struct bs_pending *q = &b->pending[i];
	uint8_t want = q->stage == BS_PEND_HELLO ? BS_HELLO : BS_PROOF;
	size_t total = BS_HDR_LEN + (q->stage == BS_PEND_HELLO ? BS_HELLO_LEN : BS_MAC_LEN);
	const char *why;
	struct bs_hdr h;
	char msg[96];
	int fd = q->fd;

	for (;;) {
		ssize_t n = recv(q->fd, q->buf + q->got, total - q->got, 0);

		if (n == 0) {
			snprintf(msg, sizeof(msg), "closed after %zu of %zu handshake bytes",
				 q->got, total);
			pending_drop(b, i, msg, false);
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				pending_drop(b, i, strerror(errno), false);
			return;
		}
		bool had_hdr = q->got >= BS_HDR_LEN;

		q->active = true;
		q->got += (size_t)n;
		if (!had_hdr && q->got >= BS_HDR_LEN) {
			if (bs_hdr_unpack(q->buf, &h, &why)) {
				pending_drop(b, i, why, true);
				return;
			}
			if (h.type != want) {
				pending_drop(b, i, want == BS_HELLO ? "first message is not HELLO"
								    : "expected PROOF",
					     true);
				return;
			}
		}
		if (q->got == total) {
			if (q->stage == BS_PEND_HELLO) {
				pending_challenge(b, i);
				/* the PROOF may follow at once: read on (slot i still ours) */
				if (i < b->npending && b->pending[i].fd == fd) {
					want = BS_PROOF;
					total = BS_HDR_LEN + BS_MAC_LEN;
					continue;
				}
			} else {
				pending_admit(b, i);
			}
			return;
		}
	}
}

uint64_t bs_admit_expire(struct bootstrap *b, uint64_t now, uint64_t next)
{
	for (int i = b->npending; i-- > 0;) {
		if (now >= b->pending[i].deadline_ns)
			pending_drop(b, i,
				     b->pending[i].stage == BS_PEND_HELLO ? "no HELLO in time"
									   : "no PROOF in time",
				     false);
	}
	for (int i = 0; i < b->npending; i++)
		next = GS_MIN(next, b->pending[i].deadline_ns);
	return next;
}

void bs_admit_close_all(struct bootstrap *b)
{
	for (int i = 0; i < b->npending; i++)
		close(b->pending[i].fd);
	b->npending = 0;
}
