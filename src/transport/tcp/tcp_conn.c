/*
 * tcp transport setup: pick the address, listen, and build `streams` connections per
 * peer. Wire exchange (the lower rank connects, so each pair has one owner):
 *   1. rank a < b: connect() to b's listening addr:port, once per stream s;
 *   2. a -> b: HELLO {magic, job_id, rank a, stream s, nstreams};
 *   3. b accepts, checks magic and job_id (a stranger is dropped, setup goes on),
 *      and files the socket as stream s of peer a. b reads the HELLOs of every
 *      pending connection at once, so a silent stranger delays no peer.
 * connect() completes against the listen backlog, so every rank first connects
 * up, then accepts down: no ordering deadlock. Everything is bounded by timeout_ms.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "transport/tcp/tcp_priv.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

#define TCP_EP_MAGIC	0x6773746370657031ull /* "gstcpep1" */
#define TCP_HELLO_MAGIC 0x677374637068656cull /* "gstcphel" */

struct tcp_ep {
	uint64_t magic;
	uint64_t job_id;
	int32_t rank;
	int32_t nstreams;
	uint32_t addrlen;
	uint32_t pad;
	struct sockaddr_storage addr;
};

struct tcp_hello {
	uint64_t magic;
	uint64_t job_id;
	int32_t rank;
	int32_t stream;
	int32_t nstreams;
	int32_t pad;
};

static bool all_local(const struct transport_env *env)
{
	for (int r = 0; r < env->nranks; r++)
		if (env->host_of_rank[r] != env->host_of_rank[env->rank])
			return false;
	return true;
}

/* Bridges and container links have addresses other hosts cannot reach (as NCCL skips them). */
static bool host_only_if(const char *name)
{
	static const char *const prefixes[] = {"docker", "virbr", "veth", "br-", "cni", "flannel"};

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

/* Resolve opts->tcp_interface ("eth0", "10.0.0.5", "::1" or "") into a bind address. */
static int resolve_addr(struct tcp_priv *tp)
{
	const char *want = tp->env->opts ? tp->env->opts->tcp_interface : "";
	struct sockaddr_in *v4 = (struct sockaddr_in *)&tp->addr;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&tp->addr;
	struct ifaddrs *ifa, *i;
	bool any = want[0] == '\0';
	int found = 0;

	memset(&tp->addr, 0, sizeof(tp->addr));
	if (any && all_local(tp->env)) {
		/* every rank is here: loopback is reachable by all and never leaves the host */
		v4->sin_family = AF_INET;
		v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		tp->addrlen = sizeof(*v4);
		snprintf(tp->ifname, sizeof(tp->ifname), "lo");
		return 0;
	}
	if (getifaddrs(&ifa) < 0) {
		int e = errno;

		log_err(LOG_TRANSPORT, "getifaddrs: %s", strerror(e));
		return -e;
	}
	for (int pass = 0; pass < 2 && !found; pass++) {
		for (i = ifa; i && !found; i = i->ifa_next) {
			int fam = i->ifa_addr ? i->ifa_addr->sa_family : AF_UNSPEC;
			char txt[INET6_ADDRSTRLEN] = "";
			bool match;

			/* pass 0 takes IPv4, pass 1 IPv6 */
			if (fam != (pass ? AF_INET6 : AF_INET) || !(i->ifa_flags & IFF_UP))
				continue;
			inet_ntop(fam,
				  fam == AF_INET
				      ? (void *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr
				      : (void *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
				  txt, sizeof(txt));
			if (any)
				match =
				    !(i->ifa_flags & IFF_LOOPBACK) && !host_only_if(i->ifa_name);
			else
				match = strcmp(i->ifa_name, want) == 0 || strcmp(txt, want) == 0;
			if (!match)
				continue;
			tp->addrlen = fam == AF_INET ? sizeof(*v4) : sizeof(*v6);
			memcpy(&tp->addr, i->ifa_addr, tp->addrlen);
			snprintf(tp->ifname, sizeof(tp->ifname), "%s", i->ifa_name);
			found = 1;
		}
	}
	freeifaddrs(ifa);
	if (!found) {
		log_err(LOG_TRANSPORT, "tcp interface \"%s\": no such interface or address",
			any ? "(first non-loopback)" : want);
		return -ENODEV;
	}
	if (tp->addr.ss_family == AF_INET)
		v4->sin_port = 0;
	else
		v6->sin6_port = 0;
	return 0;
}

/* Buffer sizes must be set before listen()/connect() to size the window scale. */
static int sock_tune(struct tcp_priv *tp, int fd)
{
	uint64_t sb = tp->env->opts ? tp->env->opts->sockbuf : 0;
	int one = 1;

	if (sb) {
		int v = (int)GS_MIN(sb, (uint64_t)1 << 30);

		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)) < 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) < 0) {
			int e = errno;

			log_err(LOG_TRANSPORT, "setsockopt SO_SNDBUF/SO_RCVBUF=%d: %s", v,
				strerror(e));
			return -e;
		}
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

int tcp_listen(struct tcp_priv *tp)
{
	int backlog = tp->env->nranks * tp->nstreams + 16;
	int fd, err, one = 1;

	err = resolve_addr(tp);
	if (err)
		return err;
	fd = socket(tp->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = errno;
		log_err(LOG_TRANSPORT, "socket tcp listen: %s", strerror(err));
		return -err;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	err = sock_tune(tp, fd);
	if (err)
		goto out_close;
	if (bind(fd, (struct sockaddr *)&tp->addr, tp->addrlen) < 0 || listen(fd, backlog) < 0 ||
	    getsockname(fd, (struct sockaddr *)&tp->addr, &tp->addrlen) < 0) {
		err = -errno;
		log_err(LOG_TRANSPORT, "bind/listen tcp if=%s: %s", tp->ifname, strerror(-err));
		goto out_close;
	}
	tp->listen_fd = fd;
	return 0;

out_close:
	close(fd);
	return err;
}

int tcp_endpoint_fill(struct tcp_priv *tp, void *buf, size_t *len)
{
	struct tcp_ep ep = {.magic = TCP_EP_MAGIC,
			    .job_id = tp->env->job_id,
			    .rank = tp->env->rank,
			    .nstreams = tp->nstreams,
			    .addrlen = tp->addrlen};

	if (*len < sizeof(ep))
		return -ENOSPC;
	memcpy(&ep.addr, &tp->addr, tp->addrlen);
	memcpy(buf, &ep, sizeof(ep));
	*len = sizeof(ep);
	return 0;
}

static int ms_left(uint64_t deadline)
{
	uint64_t now = time_now_ns();

	return now >= deadline ? 0 : (int)GS_MIN((deadline - now) / 1000000 + 1, 100);
}

static bool aborting(struct tcp_priv *tp)
{
	return tp_env_aborting(tp->env);
}

/* Blocking-with-deadline I/O of a small fixed record on a non-blocking socket. */
static int io_full(struct tcp_priv *tp, int fd, void *buf, size_t len, bool wr, uint64_t deadline)
{
	size_t done = 0;

	while (done < len) {
		struct pollfd pfd = {.fd = fd, .events = wr ? POLLOUT : POLLIN};
		ssize_t n;

		if (aborting(tp))
			return -ECANCELED;
		if (!ms_left(deadline))
			return -ETIMEDOUT;
		if (poll(&pfd, 1, ms_left(deadline)) <= 0)
			continue;
		n = wr ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL)
		       : recv(fd, (char *)buf + done, len - done, 0);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (n > 0)
			done += (size_t)n;
	}
	return 0;
}

static int connect_one(struct tcp_priv *tp, const struct tcp_ep *ep, int s, uint64_t deadline)
{
	struct tcp_hello h = {TCP_HELLO_MAGIC, tp->env->job_id, tp->env->rank, s, tp->nstreams, 0};
	struct timespec ms = {0, 1000000};
	int fd = -1, err;

	for (;;) {
		struct pollfd pfd;
		socklen_t sl = sizeof(err);

		fd = socket(ep->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		err = sock_tune(tp, fd);
		if (err)
			goto out_close;
		err = 0;
		if (connect(fd, (const struct sockaddr *)&ep->addr, ep->addrlen) < 0) {
			err = errno;
			if (err == EINPROGRESS) {
				pfd = (struct pollfd){.fd = fd, .events = POLLOUT};
				if (poll(&pfd, 1, ms_left(deadline)) > 0)
					getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl);
				else
					err = ETIMEDOUT;
			}
		}
		if (!err)
			break;
		close(fd);
		fd = -1;
		if (aborting(tp))
			return -ECANCELED;
		if (!ms_left(deadline) || (err != ECONNREFUSED && err != ETIMEDOUT))
			return -err;
		nanosleep(&ms, NULL);
	}
	err = io_full(tp, fd, &h, sizeof(h), true, deadline);
	if (err)
		goto out_close;
	tp->peers[ep->rank].streams[s].fd = fd;
	return 0;

out_close:
	close(fd);
	return err;
}

/*
 * A connection accepted whose HELLO has not all come. HELLOs are read as they arrive,
 * all pending connections at once: a stranger that sends part of one and waits (or
 * nothing) holds up nobody behind it.
 */
struct tcp_pending {
	int fd;
	size_t got;	/* bytes of h read */
	uint64_t since; /* accepted at, ns */
	struct tcp_hello h;
	char from[INET6_ADDRSTRLEN + 8];
};

#define TCP_PENDING_MAX 64

static void pending_drop(struct tcp_pending *pd, int *n, int i, const char *why)
{
	log_warn(LOG_TRANSPORT, "tcp accept: dropped a connection from %s that is not ours (%s)",
		 pd[i].from, why);
	close(pd[i].fd);
	pd[i] = pd[--*n];
}

static void addr_text(const struct sockaddr_storage *sa, char *out, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (sa->ss_family == AF_INET6) {
		const struct sockaddr_in6 *v6 = (const void *)sa;

		inet_ntop(AF_INET6, &v6->sin6_addr, ip, sizeof(ip));
		snprintf(out, len, "[%s]:%u", ip, ntohs(v6->sin6_port));
	} else {
		const struct sockaddr_in *v4 = (const void *)sa;

		inet_ntop(AF_INET, &v4->sin_addr, ip, sizeof(ip));
		snprintf(out, len, "%s:%u", ip, ntohs(v4->sin_port));
	}
}

/* Take a new connection; when every slot holds one, the oldest still pending goes. */
static int accept_new(struct tcp_priv *tp, struct tcp_pending *pd, int *n)
{
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	int fd;

	fd = accept4(tp->listen_fd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return errno == EAGAIN || errno == EINTR || errno == ECONNABORTED ? 0 : -errno;
	if (*n == TCP_PENDING_MAX) {
		int old = 0;

		for (int i = 1; i < *n; i++)
			old = pd[i].since < pd[old].since ? i : old;
		pending_drop(pd, n, old, "no HELLO while newer connections came");
	}
	pd[*n] = (struct tcp_pending){.fd = fd, .since = time_now_ns()};
	addr_text(&sa, pd[*n].from, sizeof(pd[*n].from));
	(*n)++;
	return 0;
}

/*
 * Read more of pending connection i's HELLO; once whole, file it as its stream of its
 * peer. 0 (dropped or still pending or filed), or -EPROTO for a peer of this job whose
 * streams do not match ours.
 */
static int pending_read(struct tcp_priv *tp, struct tcp_pending *pd, int *n, int i, int *left)
{
	struct tcp_pending *c = &pd[i];
	struct tcp_hello *h = &c->h;
	struct tcp_peer *pe;
	ssize_t r;

	r = recv(c->fd, (char *)h + c->got, sizeof(*h) - c->got, 0);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (r <= 0) {
		pending_drop(pd, n, i, r ? strerror(errno) : "closed before its HELLO");
		return 0;
	}
	c->got += (size_t)r;
	if (c->got < sizeof(*h))
		return 0;
	if (h->magic != TCP_HELLO_MAGIC || h->job_id != tp->env->job_id || h->rank < 0 ||
	    h->rank >= tp->env->rank || h->stream < 0 || h->stream >= tp->nstreams) {
		pending_drop(pd, n, i, "not a HELLO of this job");
		return 0;
	}
	pe = &tp->peers[h->rank];
	if (h->nstreams != tp->nstreams || !pe->active || pe->streams[h->stream].fd >= 0) {
		log_err(LOG_TRANSPORT, "tcp accept peer=%d: stream %d/%d unexpected (we use %d)",
			h->rank, h->stream, h->nstreams, tp->nstreams);
		return -EPROTO;
	}
	pe->streams[h->stream].fd = c->fd;
	pd[i] = pd[--*n];
	(*left)--;
	return 0;
}

/* Accept until `left` streams of lower ranks are filed, or the deadline. */
static int accept_all(struct tcp_priv *tp, int left, uint64_t deadline)
{
	struct tcp_pending pd[TCP_PENDING_MAX];
	struct pollfd pfd[TCP_PENDING_MAX + 1];
	int n = 0, err = 0, i, p;

	while (left > 0) {
		if (aborting(tp)) {
			err = -ECANCELED;
			goto out_close;
		}
		if (!ms_left(deadline)) {
			for (p = 0; p < tp->env->rank; p++)
				for (int s = 0; tp->peers[p].active && s < tp->nstreams; s++)
					if (tp->peers[p].streams[s].fd < 0)
						log_err(LOG_TRANSPORT,
							"tcp accept peer=%d stream=%d: timed out",
							p, s);
			err = -ETIMEDOUT;
			goto out_close;
		}
		pfd[0] = (struct pollfd){.fd = tp->listen_fd, .events = POLLIN};
		for (i = 0; i < n; i++)
			pfd[i + 1] = (struct pollfd){.fd = pd[i].fd, .events = POLLIN};
		if (poll(pfd, (nfds_t)n + 1, ms_left(deadline)) <= 0)
			continue;
		/* from the last: pending_read and pending_drop move the last into slot i */
		for (i = n - 1; i >= 0; i--) {
			if (!pfd[i + 1].revents)
				continue;
			err = pending_read(tp, pd, &n, i, &left);
			if (err)
				goto out_close;
		}
		if (pfd[0].revents) {
			err = accept_new(tp, pd, &n);
			if (err)
				goto out_close;
		}
	}

out_close:
	for (i = 0; i < n; i++)
		close(pd[i].fd);
	return err;
}

int tcp_connect_all(struct tcp_priv *tp, const void *eps)
{
	const struct transport_env *env = tp->env;
	uint64_t deadline = time_now_ns() + (uint64_t)env->timeout_ms * 1000000ull;
	int left = 0, err, p;

	for (p = 0; p < env->nranks; p++) {
		const struct tcp_ep *ep = (const void *)((const char *)eps + p * TRANSPORT_EP_MAX);

		if (!tp->peers[p].active)
			continue;
		if (ep->magic != TCP_EP_MAGIC || ep->job_id != env->job_id || ep->rank != p ||
		    ep->addrlen > sizeof(ep->addr) || ep->nstreams != tp->nstreams) {
			log_err(LOG_TRANSPORT, "tcp connect peer=%d: bad endpoint record", p);
			return -EPROTO;
		}
		if (p < env->rank) {
			left += tp->nstreams;
			continue;
		}
		for (int s = 0; s < tp->nstreams; s++) {
			err = connect_one(tp, ep, s, deadline);
			if (err) {
				char at[INET6_ADDRSTRLEN + 8];

				/* the address the peer offered: its tcp_interface's choice */
				addr_text(&ep->addr, at, sizeof(at));
				log_err(LOG_TRANSPORT, "tcp connect peer=%d at %s stream=%d: %s", p,
					at, s, strerror(-err));
				return err;
			}
		}
	}
	return accept_all(tp, left, deadline);
}
