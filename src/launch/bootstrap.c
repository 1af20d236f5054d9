/*
 * Bootstrap: rank 0's listener and the other ranks' connect-with-retry, the star
 * collectives (every rank sends UP to rank 0, rank 0 answers DOWN), abort and close.
 *
 * Exchange (see bootstrap_wire.h for the frame layout):
 *   1. rank r connects to rank 0 (retrying until timeout_ms) and sends HELLO.
 *   2. rank 0 answers WELCOME, or REFUSE {why} and closes (the job goes on).
 *   3. per collective, seq n: UP {op, n, data} r -> 0, then DOWN {op, n, data} 0 -> r
 *      (allgather, barrier); gatherv is UP only, bcast DOWN only.
 *   4. ABORT {failed rank, reason} at any time; rank 0 forwards it to every rank.
 *   5. close: each side sends BYE and waits for the other's BYE or EOF.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "launch/blame_window.h"
#include "launch/bootstrap_int.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/rand.h"
#include "util/sha256.h"
#include "util/timeutil.h"

#define BS_RETRY_NS 50000000ull
/* How often a rank waiting in bootstrap_open looks at the caller's stop flag. */
#define BS_STOP_POLL_NS 100000000ull
/* After a stop signal, how long a rank's handshake in flight may still take: rank 0
 * answers in milliseconds when it is alive. */
#define BS_STOP_GRACE_NS 1000000000ull

bool bs_cond_wait_until(struct bootstrap *b, uint64_t deadline_ns)
{
	struct timespec ts = time_ns_ts(deadline_ns);

	if (time_now_ns() >= deadline_ns)
		return false;
	pthread_cond_timedwait(&b->cond, &b->lock, &ts);
	return true;
}

/* The caller's stop flag (bootstrap_opts.stop) was raised by a stop signal. */
static bool stop_asked(const struct bootstrap *b)
{
	return b->stop_flag && *b->stop_flag;
}

static bool rank_missing(int r, const void *missing)
{
	return ((const bool *)missing)[r];
}

/* "2,3,7-12" from the ranks for which missing[r] is set. */
static const char *rank_list(const bool *missing, int n, char *buf, size_t len)
{
	return str_int_set(rank_missing, missing, n, buf, len);
}

static bool addr_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24 == 127;
	return sa->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/* A non-blocking socket listening on one resolved address, or -errno. */
static int listen_one(const struct addrinfo *a)
{
	int fd, one = 1, e;

	fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, a->ai_addr, a->ai_addrlen) || listen(fd, 1024)) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/*
 * The rendezvous host's addresses, looked up within the bootstrap's deadline (a
 * temporary failure retried until then) and no longer once the caller's stop flag is
 * raised: 0 with *ai to freeaddrinfo; -EINTR, b->looking_up left set (stopped_line);
 * else one line naming the host, the bound and what to check: -ENOENT at once for a
 * name that does not exist, -ETIMEDOUT when the resolver did not answer in time, -errno.
 */
static int resolve_rdv(struct bootstrap *b, const char *host, const char *port,
		       uint64_t deadline_ns, struct addrinfo **ai)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct timespec pause = {.tv_nsec = (long)BS_RETRY_NS};
	const char *why;
	int ret;

	b->looking_up = true;
	while ((ret = bs_resolve(host, port, &hints, ai, deadline_ns, b->stop_flag, &why)) ==
		       -EAGAIN &&
	       time_now_ns() + BS_RETRY_NS < deadline_ns && !stop_asked(b))
		nanosleep(&pause, NULL);
	if (ret == -EAGAIN && stop_asked(b))
		ret = -EINTR;
	if (ret == -EINTR)
		return ret;
	b->looking_up = false;
	if (!ret)
		return ret;
	if (ret == -ETIMEDOUT || ret == -EAGAIN) {
		log_err(LOG_LAUNCH, "bootstrap: rank %d cannot resolve rendezvous host '%s' within %.3gs ([launch] timeout): %s: check DNS (/etc/resolv.conf) or /etc/hosts",
			b->rank, host, b->timeout_ms / 1e3, why);
		return -ETIMEDOUT;
	}
	log_err(LOG_LAUNCH, "bootstrap: rank %d cannot resolve rendezvous host '%s': %s: check the name, DNS or /etc/hosts",
		b->rank, host, why);
	return ret;
}

/*
 * Rank 0: listen on the address the rendezvous host resolves to, the first that binds.
 * Never the wildcard: only the interface the user named is exposed to the network.
 */
static int listen_on(struct bootstrap *b, uint64_t deadline_ns)
{
	struct addrinfo *ai, *a;
	char host[128], port[16], ip[INET6_ADDRSTRLEN + 8];
	const char *addr = b->addr;
	int fd = -EADDRNOTAVAIL, ret;

	if (bs_split_addr(addr, host, sizeof(host), port, sizeof(port))) {
		log_err(LOG_LAUNCH, "bootstrap: rendezvous \"%s\": expected HOST:PORT", addr);
		return -EINVAL;
	}
	ret = resolve_rdv(b, host, port, deadline_ns, &ai);
	if (ret)
		return ret;
	for (a = ai; a; a = a->ai_next) {
		fd = listen_one(a);
		if (fd >= 0)
			break;
	}
	if (fd == -EADDRINUSE) {
		/* the address is ours, the port is not: asking whether the host is ours misleads */
		log_err(LOG_LAUNCH, "bootstrap: bind/listen %s: %s: another process (another job, or one still ending) holds port %s; choose another rendezvous port",
			addr, strerror(-fd), port);
	} else if (fd < 0) {
		log_err(LOG_LAUNCH, "bootstrap: bind/listen %s: %s (is %s an address of this host?)",
			addr, strerror(-fd), host);
	} else if (addr_is_loopback(a->ai_addr)) {
		struct addrinfo num = {.ai_flags = AI_NUMERICHOST, .ai_socktype = SOCK_STREAM};
		struct addrinfo *lit;

		/* a host name that /etc/hosts maps to 127.0.1.1 is unreachable from elsewhere */
		if (getaddrinfo(host, port, &num, &lit) == 0)
			freeaddrinfo(lit);
		else if (strcmp(host, "localhost"))
			log_warn(LOG_LAUNCH,
				 "bootstrap: rendezvous host %s resolves to loopback %s on rank 0: "
				 "ranks on other hosts cannot reach it (name an interface address)",
				 host, bs_sockaddr_name(a->ai_addr, ip, sizeof(ip)));
	}
	freeaddrinfo(ai);
	return fd;
}

/* Rank 0: adopt the listening socket the spawner bound for us. */
static int adopt_listener(int fd)
{
	int on = 0, fl;
	socklen_t sl = sizeof(on);

	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &sl) || !on) {
		log_err(LOG_LAUNCH, "bootstrap: inherited fd %d is not a listening socket", fd);
		return -EBADF;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) || fcntl(fd, F_SETFD, FD_CLOEXEC)) {
		fl = errno;
		log_err(LOG_LAUNCH, "bootstrap: fcntl inherited fd %d: %s", fd, strerror(fl));
		return -fl;
	}
	return fd;
}

/* One attempt to reach rank 0 at its addresses: a connected non-blocking socket, or -errno. */
static int connect_once(const struct addrinfo *ai, uint64_t deadline_ns)
{
	const struct addrinfo *a;
	int ret = -EHOSTUNREACH;

	for (a = ai; a; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		int err = 0;
		socklen_t sl = sizeof(err);

		if (fd < 0) {
			ret = -errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
			ret = fd;
			break;
		}
		if (errno == EINPROGRESS) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			uint64_t now = time_now_ns();
			int ms = now < deadline_ns
				     ? (int)GS_MIN((deadline_ns - now) / 1000000 + 1, 2000)
				     : 0;

			if (poll(&p, 1, ms) == 1 &&
			    !getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) && !err) {
				ret = fd;
				break;
			}
			ret = err ? -err : -ETIMEDOUT;
		} else {
			ret = -errno;
		}
		close(fd);
	}
	return ret;
}

/*
 * Wait until rank 0's next handshake frame arrives. A stop signal meanwhile leaves rank
 * 0 BS_STOP_GRACE_NS to answer (*deadline_ns is cut): a live rank 0 then welcomes this
 * rank, which tells the job of the stop at once through bootstrap_signal_fd, as it would
 * a moment later, and rank 0 stops the job naming it instead of waiting out the timeout
 * for it; a silent one is not waited for: -EINTR. -ETIMEDOUT at the deadline.
 */
static int hs_wait(struct bootstrap *b, int fd, uint64_t *deadline_ns)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		uint64_t now = time_now_ns();
		int n;

		if (stop_asked(b))
			*deadline_ns = GS_MIN(*deadline_ns, now + BS_STOP_GRACE_NS);
		if (now >= *deadline_ns)
			return stop_asked(b) ? -EINTR : -ETIMEDOUT;
		/* a slice at a time: the signal may have interrupted another thread */
		n = poll(&p, 1, (int)(GS_MIN(*deadline_ns - now, BS_STOP_POLL_NS) / 1000000 + 1));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/*
 * One handshake frame from rank 0: `want` or REFUSE, payload into buf (cap bytes).
 * 0 = want; -ECONNREFUSED = refused (final, logged); -EAGAIN = the far side went away;
 * -EINTR = stopped (hs_wait).
 */
static int hs_read(struct bootstrap *b, int fd, uint8_t want, void *buf, size_t cap,
		   uint64_t *deadline_ns)
{
	uint8_t hdr[BS_HDR_LEN];
	char text[BS_TEXT_MAX + 1];
	const char *why = "unexpected message";
	struct bs_hdr h;
	int ret;

	ret = hs_wait(b, fd, deadline_ns);
	if (!ret)
		ret = bs_read_full(fd, hdr, sizeof(hdr), *deadline_ns);
	if (ret == -EPIPE || ret == -ECONNRESET)
		return -EAGAIN;
	if (ret)
		return ret;
	if (bs_hdr_unpack(hdr, &h, &why) || (h.type != want && h.type != BS_REFUSE) ||
	    (h.type == want && h.len != cap)) {
		log_err(LOG_LAUNCH, "bootstrap: %s answered the handshake with garbage (%s)",
			b->addr, h.type == want || h.type == BS_REFUSE ? why : "unexpected message");
		return -EPROTO;
	}
	ret = bs_read_full(fd, h.type == want ? buf : text, h.len, *deadline_ns);
	if (ret == -EPIPE || ret == -ECONNRESET)
		return -EAGAIN;
	if (ret)
		return ret;
	if (h.type == want)
		return 0;
	text[h.len] = '\0';
	for (char *c = text; *c; c++)
		if (*c < ' ' || *c > '~')
			*c = '?';
	/* rank 0 says the same to everyone: its own log names the reason */
	log_err(LOG_LAUNCH,
		"bootstrap: rank 0 at %s %s rank %d of %d (wrong token, world size or rank, or "
		"the rank already joined: rank 0's log names which)",
		b->addr, text, b->rank, b->nranks);
	return -ECONNREFUSED;
}

/*
 * The handshake on a fresh connection (bootstrap_wire.h): HELLO with our nonce,
 * CHALLENGE with rank 0's, our PROOF, then WELCOME carrying rank 0's own proof, so a
 * process squatting on the port cannot pose as rank 0. 0 when welcomed,
 * -ECONNREFUSED when refused and -EACCES when rank 0 failed its proof (final),
 * -EAGAIN when the far side went away (try again), -EPROTO on garbage, -EINTR when
 * stopped by a signal and rank 0 did not answer within the grace (hs_wait).
 */
static int hello(struct bootstrap *b, int fd, uint64_t deadline_ns)
{
	uint8_t buf[BS_HELLO_LEN], nonce_r[BS_NONCE_LEN], nonce_0[BS_NONCE_LEN];
	uint8_t mine[BS_MAC_LEN], theirs[BS_MAC_LEN];
	uint32_t rank = (uint32_t)b->rank, nranks = (uint32_t)b->nranks;
	int ret;

	ret = rand_bytes(nonce_r, sizeof(nonce_r));
	if (ret)
		return ret;
	bs_hello_pack(rank, nranks, nonce_r, buf);
	ret = bs_send_frame(fd, BS_HELLO, BS_OP_NONE, 0, buf, sizeof(buf), deadline_ns);
	if (!ret)
		ret = hs_read(b, fd, BS_CHALLENGE, nonce_0, sizeof(nonce_0), &deadline_ns);
	if (!ret) {
		bs_auth_mac(b->token, b->token_len, BS_ROLE_RANK, rank, nranks, nonce_r, nonce_0,
			    mine);
		ret = bs_send_frame(fd, BS_PROOF, BS_OP_NONE, 0, mine, sizeof(mine), deadline_ns);
	}
	if (!ret)
		ret = hs_read(b, fd, BS_WELCOME, theirs, sizeof(theirs), &deadline_ns);
	if (ret == -EPIPE || ret == -ECONNRESET)
		return -EAGAIN;
	if (ret)
		return ret;
	bs_auth_mac(b->token, b->token_len, BS_ROLE_ROOT, rank, nranks, nonce_r, nonce_0, mine);
	if (!mem_equal_ct(mine, theirs, sizeof(mine))) {
		log_err(LOG_LAUNCH,
			"bootstrap: the process at %s welcomed rank %d without proving it holds "
			"the job token: not this job's rank 0 (another job on this port?)",
			b->addr, b->rank);
		return -EACCES;
	}
	return 0;
}

/*
 * Rank r > 0: connect to rank 0, retrying while it is not up yet; -EINTR at once when a
 * stop signal comes before a connection is made (bootstrap_opts.stop), its name lookup
 * included (stopped_line says which). A name that does not resolve ends it at once.
 */
static int connect_root(struct bootstrap *b, uint64_t deadline_ns)
{
	char host[128], port[16];
	bool silent = false; /* the last try connected, and nothing answered our HELLO */
	int ret = -ETIMEDOUT;

	if (bs_split_addr(b->addr, host, sizeof(host), port, sizeof(port))) {
		log_err(LOG_LAUNCH, "bootstrap: rendezvous \"%s\": expected HOST:PORT", b->addr);
		return -EINVAL;
	}
	while (time_now_ns() < deadline_ns) {
		if (stop_asked(b))
			return -EINTR;
		struct addrinfo *ai;
		int fd = resolve_rdv(b, host, port, deadline_ns, &ai);

		if (fd) /* resolve_rdv said why, or stopped_line says the signal */
			return fd;
		fd = connect_once(ai, deadline_ns);
		freeaddrinfo(ai);
		silent = false;
		if (fd >= 0) {
			ret = hello(b, fd, deadline_ns);
			if (!ret) {
				bs_tune_socket(fd);
				return fd;
			}
			close(fd);
			if (ret != -EAGAIN && ret != -ETIMEDOUT)
				return ret;
			silent = ret == -ETIMEDOUT;
		} else {
			ret = fd;
		}
		struct timespec ts = {.tv_nsec = (long)BS_RETRY_NS};

		nanosleep(&ts, NULL);
	}
	if (silent)
		log_err(LOG_LAUNCH, "bootstrap: rank %d reached %s, but nothing answered its handshake within %.3gs: rank 0 is stopped or overloaded, or another program holds the port",
			b->rank, b->addr, b->timeout_ms / 1e3);
	else
		log_err(LOG_LAUNCH, "bootstrap: rank %d could not reach rank 0 at %s within %.3gs: %s",
			b->rank, b->addr, b->timeout_ms / 1e3,
			strerror(ret == -EAGAIN ? ECONNRESET : -ret));
	return -ETIMEDOUT;
}

static void bs_free(struct bootstrap *b)
{
	bs_reader_stop(b);
	for (int r = 0; r < b->nranks; r++) {
		struct bs_peer *p = &b->peers[r];

		if (p->fd >= 0)
			close(p->fd);
		bs_msg_free(p->rx.msg);
		for (struct fifo_link *x; (x = fifo_pop(&p->queue));)
			bs_msg_free(fifo_entry(x, struct bs_msg, link));
		pthread_mutex_destroy(&p->wlock);
	}
	if (b->listen_fd >= 0)
		close(b->listen_fd);
	pthread_cond_destroy(&b->cond);
	pthread_mutex_destroy(&b->lock);
	pthread_mutex_destroy(&b->abort_lock);
	free(b->peers);
	free(b);
}

static struct bootstrap *bs_alloc(const struct bootstrap_opts *o)
{
	struct bootstrap *b = calloc(1, sizeof(*b));
	struct blame_window bw;
	pthread_condattr_t ca;

	if (!b)
		return NULL;
	b->peers = calloc((size_t)o->nranks, sizeof(*b->peers));
	if (!b->peers) {
		free(b);
		return NULL;
	}
	b->rank = o->rank;
	b->nranks = o->nranks;
	b->token_len = o->token ? strlen(o->token) : 0;
	memcpy(b->token, o->token ? o->token : "", b->token_len);
	b->timeout_ms = o->timeout_ms;
	b->timeout_ns = (uint64_t)o->timeout_ms * 1000000ull;
	b->on_arrival = o->on_arrival;
	b->arrival_ctx = o->arrival_ctx;
	b->stop_flag = o->stop;
	b->acts = o->acts;
	b->nacts = o->acts ? o->nacts : 0;
	b->on_self_stuck = o->on_self_stuck;
	b->self_stuck_ctx = o->self_stuck_ctx;
	blame_window_plan(b->timeout_ns, &bw);
	b->self_grace_ms = bw.probe_grace_ms;
	snprintf(b->addr, sizeof(b->addr), "%s", o->addr ? o->addr : "");
	b->listen_fd = -1;
	b->wake[0] = b->wake[1] = -1;
	for (int r = 0; r < o->nranks; r++) {
		b->peers[r].fd = -1;
		pthread_mutex_init(&b->peers[r].wlock, NULL);
	}
	pthread_mutex_init(&b->lock, NULL);
	pthread_mutex_init(&b->abort_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&b->cond, &ca);
	pthread_condattr_destroy(&ca);
	return b;
}

/*
 * Rank 0: wait until every rank said HELLO; a timeout names those that did not. Stopped
 * by a signal meanwhile (-EINTR), it tells the ranks already here, which would otherwise
 * take its exit for a crash; the caller names the signal in its own line.
 */
static int wait_connected(struct bootstrap *b, uint64_t deadline_ns)
{
	bool *missing;
	char list[256], reason[BS_REASON_LEN];
	int ret = 0, shown = -1;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		bs_arrival(b, 1 + b->nconnected, &shown);
		if (b->nconnected >= b->nranks - 1 || b->abort_flag ||
		    stop_asked(b))
			break;
		/* a slice at a time: the caller's stop flag is looked at in between */
		if (!bs_cond_wait_until(b, GS_MIN(deadline_ns, time_now_ns() + BS_STOP_POLL_NS)) ||
		    time_now_ns() >= deadline_ns)
			break;
	}
	if (b->abort_flag)
		ret = -ECANCELED;
	else if (b->nconnected >= b->nranks - 1)
		ret = 0;
	else if (stop_asked(b))
		ret = -EINTR;
	else
		ret = -ETIMEDOUT;
	pthread_mutex_unlock(&b->lock);
	if (!ret && __atomic_load_n(&b->nclosed, __ATOMIC_RELAXED))
		log_info(LOG_LAUNCH,
			 "bootstrap: %d ranks joined; %d connections were closed unfinished on "
			 "the way (handshake slots full, idle or too slow; ranks retry)",
			 b->nranks - 1, __atomic_load_n(&b->nclosed, __ATOMIC_RELAXED));
	if (ret != -ETIMEDOUT && ret != -EINTR)
		return ret;
	missing = calloc((size_t)b->nranks, sizeof(*missing));
	if (!missing)
		return ret == -EINTR ? ret : -ENOMEM;
	pthread_mutex_lock(&b->lock);
	for (int r = 1; r < b->nranks; r++)
		missing[r] = b->peers[r].fd < 0;
	pthread_mutex_unlock(&b->lock);
	int nmissing = 0;

	for (int r = 1; r < b->nranks; r++)
		nmissing += missing[r];
	rank_list(missing, b->nranks, list, sizeof(list));
	free(missing);
	if (ret == -EINTR) {
		size_t off;

		bs_stop_reason(b, *b->stop_flag, reason, sizeof(reason));
		off = strlen(reason);
		str_appendf(reason, sizeof(reason), &off, " while waiting for rank%s %.150s to connect",
			    nmissing > 1 ? "s" : "", list);
		bs_tell_abort(b, reason);
		return ret;
	}
	snprintf(reason, sizeof(reason),
		 "bootstrap: timed out after %.3gs waiting for rank%s "
		 "%.150s to connect",
		 b->timeout_ms / 1e3, nmissing > 1 ? "s" : "", list);
	log_err(LOG_LAUNCH, "%s", reason);
	bs_raise_abort(b, -1, reason, -1, false);
	return -ETIMEDOUT;
}

/*
 * bootstrap_open stopped by a signal (-EINTR), in one line: which rank, the signal, and
 * what it was doing. The lookup's names the host, and that the rank had not gone further
 * (rank 0 said "waiting for the ranks", of a rank that had not listened yet).
 */
static void stopped_line(const struct bootstrap *b)
{
	const char *sig = sigabbrev_np(*b->stop_flag) ?: "?";
	char host[128], port[16];

	if (b->looking_up && !bs_split_addr(b->addr, host, sizeof(host), port, sizeof(port)))
		log_err(LOG_LAUNCH, "rank %d stopped by SIG%s (signal %d) during the lookup of rendezvous host '%s': it had not %s yet",
			b->rank, sig, (int)*b->stop_flag, host,
			b->rank == 0 ? "listened for the ranks" : "reached rank 0");
	else
		log_err(LOG_LAUNCH, "stopped by SIG%s while %s at %s", sig,
			b->rank == 0 ? "waiting for the ranks" : "connecting to rank 0", b->addr);
}

int bootstrap_open(const struct bootstrap_opts *o, struct bootstrap **out)
{
	struct bootstrap *b;
	uint64_t deadline;
	int ret, fd;

	*out = NULL;
	if (o->nranks < 1 || o->rank < 0 || o->rank >= o->nranks || o->timeout_ms <= 0 ||
	    (o->nranks > 1 && !o->addr && o->listen_fd <= 0) ||
	    (o->nranks > 1 && (!o->token || !*o->token || strlen(o->token) > BS_TOKEN_MAX)) ||
	    (o->acts && (o->nacts < 1 || o->nacts > ACT_THREADS))) {
		log_err(LOG_LAUNCH,
			"bootstrap: bad options rank=%d nranks=%d timeout=%dms addr=%s token=%s nacts=%d",
			o->rank, o->nranks, o->timeout_ms, o->addr ? o->addr : "(none)",
			!o->token || !*o->token ? "(none)"
			: strlen(o->token) > BS_TOKEN_MAX ? "(too long)" : "(set)", o->nacts);
		return -EINVAL;
	}
	b = bs_alloc(o);
	if (!b)
		return -ENOMEM;
	deadline = time_now_ns() + b->timeout_ns;
	if (o->nranks == 1) {
		if (o->listen_fd > 0)
			close(o->listen_fd);
		*out = b;
		return 0;
	}
	if (o->rank == 0) {
		fd = o->listen_fd > 0 ? adopt_listener(o->listen_fd) : listen_on(b, deadline);
		if (fd < 0) {
			ret = fd;
			goto out_free;
		}
		b->listen_fd = fd;
	} else {
		fd = connect_root(b, deadline);
		if (fd < 0) {
			ret = fd;
			goto out_free;
		}
		b->peers[0].fd = fd;
		snprintf(b->peers[0].name, sizeof(b->peers[0].name), "%s", b->addr);
	}
	ret = bs_reader_start(b);
	if (ret)
		goto out_free;
	if (o->rank == 0) {
		ret = wait_connected(b, deadline);
		if (ret)
			goto out_free;
	}
	*out = b;
	return 0;
out_free:
	if (ret == -EINTR && b->stop_flag)
		stopped_line(b);
	bs_free(b);
	return ret;
}

/*
 * Each side sends BYE and closes without waiting: the BYE precedes the FIN (or a RST
 * caused by unread data) in the stream, and queued data is read before any reset, so
 * the far reader always sees the goodbye first and takes the EOF as clean.
 */
static void say_bye(struct bootstrap *b)
{
	uint64_t deadline;

	pthread_mutex_lock(&b->abort_lock);
	pthread_mutex_lock(&b->lock);
	b->closing = true;
	pthread_mutex_unlock(&b->lock);
	deadline = time_now_ns() + GS_MIN(b->timeout_ns, BS_ABORT_SEND_NS);
	for (int r = 0; r < b->nranks; r++)
		if (r != b->rank && (b->rank == 0 || r == 0))
			bs_peer_send(b, r, BS_BYE, BS_OP_NONE, 0, NULL, 0, deadline);
	pthread_mutex_unlock(&b->abort_lock);
}

void bootstrap_close(struct bootstrap *b)
{
	if (!b)
		return;
	say_bye(b);
	bs_free(b);
}

void bootstrap_close_keep(struct bootstrap *b)
{
	if (!b)
		return;
	say_bye(b);
	/* its callbacks' context goes with the caller's frame; its sockets with the process */
	bs_reader_stop(b);
}
