/*
 * Bootstrap framing and socket helpers: header encode/decode with every field checked,
 * and name lookups and reads/writes on non-blocking sockets that never wait past a
 * deadline.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "launch/bootstrap_wire.h"
#include "util/bounded.h"
#include "util/common.h"
#include "util/sha256.h"
#include "util/timeutil.h"

/*
 * One lookup, run by a thread of its own (util/bounded.h; getaddrinfo_a's pool does not
 * survive a fork, and its own cancel cannot stop a lookup under way).
 */
struct bs_lookup {
	int rc, err;
	struct addrinfo hints, *res;
	char host[256], port[16];
};

static void lookup_call(void *arg)
{
	struct bs_lookup *l = arg;

	l->rc = getaddrinfo(l->host, l->port, &l->hints, &l->res);
	l->err = errno;
}

/* a lookup whose caller gave up: what it found goes with it */
static void lookup_drop(void *arg)
{
	struct bs_lookup *l = arg;

	if (!l->rc)
		freeaddrinfo(l->res);
	free(l);
}

static const struct bounded_ops lookup_ops = { .call = lookup_call, .drop = lookup_drop };

/* getaddrinfo's code as -errno, and its words (static text). */
static int lookup_err(int rc, int err, const char **why)
{
	*why = rc == EAI_SYSTEM ? strerror(err) : gai_strerror(rc);
	switch (rc) {
	case EAI_NONAME:
	case EAI_NODATA:
	case EAI_ADDRFAMILY:
		return -ENOENT;
	case EAI_AGAIN:
		return -EAGAIN;
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_SYSTEM:
		return err ? -err : -EIO;
	case EAI_FAIL:
		return -EIO;
	default: /* EAI_SERVICE, EAI_FAMILY, EAI_SOCKTYPE, EAI_BADFLAGS: the request */
		return -EINVAL;
	}
}

int bs_resolve(const char *host, const char *port, const struct addrinfo *hints,
	       struct addrinfo **res, uint64_t deadline_ns, volatile const sig_atomic_t *stop,
	       const char **why)
{
	struct bs_lookup *l = calloc(1, sizeof(*l));
	int ret;

	*why = "";
	if (!l)
		return lookup_err(EAI_MEMORY, 0, why);
	snprintf(l->host, sizeof(l->host), "%s", host);
	snprintf(l->port, sizeof(l->port), "%s", port);
	l->hints = *hints;
	ret = bounded_run(&lookup_ops, l, deadline_ns, stop);
	if (ret) {
		/* the thread frees l when its lookup returns */
		*why = ret == -EINTR ? "stopped" : "no answer from the resolver";
		return ret;
	}
	ret = l->rc ? lookup_err(l->rc, l->err, why) : 0;
	if (!ret)
		*res = l->res;
	free(l);
	return ret;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void bs_hdr_pack(const struct bs_hdr *h, uint8_t out[BS_HDR_LEN])
{
	put32(out, h->magic);
	out[4] = (uint8_t)(h->version >> 8);
	out[5] = (uint8_t)h->version;
	out[6] = h->type;
	out[7] = h->op;
	put32(out + 8, h->seq);
	put32(out + 12, h->len);
}

/* Per type: the smallest and the largest payload accepted. */
/* clang-format off */
static const struct {
	uint32_t min, max;
} bs_type_len[] = {
	[BS_HELLO]   = {BS_HELLO_LEN, BS_HELLO_LEN},
	[BS_WELCOME] = {BS_MAC_LEN, BS_MAC_LEN},
	[BS_REFUSE]  = {0, BS_TEXT_MAX},
	[BS_UP]      = {0, BS_MAX_PAYLOAD},
	[BS_DOWN]    = {0, BS_MAX_PAYLOAD},
	[BS_ABORT]   = {4, 4 + BS_TEXT_MAX},
	[BS_BYE]     = {0, 0},
	[BS_CHALLENGE] = {BS_NONCE_LEN, BS_NONCE_LEN},
	[BS_PROOF]   = {BS_MAC_LEN, BS_MAC_LEN},
	[BS_PING]    = {0, 0},
	[BS_PONG]    = {BS_PONG_MIN, BS_PONG_MAX},
};
/* clang-format on */

int bs_hdr_unpack(const uint8_t in[BS_HDR_LEN], struct bs_hdr *h, const char **why)
{
	h->magic = get32(in);
	h->version = (uint16_t)(in[4] << 8 | in[5]);
	h->type = in[6];
	h->op = in[7];
	h->seq = get32(in + 8);
	h->len = get32(in + 12);
	if (h->magic != BS_MAGIC) {
		*why = "bad magic";
		return -EPROTO;
	}
	if (h->version != BS_VERSION) {
		*why = "unsupported protocol version";
		return -EPROTO;
	}
	if (h->type < BS_HELLO || h->type > BS_TYPE_LAST) {
		*why = "unknown message type";
		return -EPROTO;
	}
	if (h->op > BS_OP_BCAST) {
		*why = "unknown collective";
		return -EPROTO;
	}
	if (h->len < bs_type_len[h->type].min || h->len > bs_type_len[h->type].max) {
		*why = "length out of bounds";
		return -EPROTO;
	}
	return 0;
}

const char *bs_op_name(uint8_t op)
{
	static const char *const names[] = {
	    [BS_OP_NONE] = "none",	 [BS_OP_ALLGATHER] = "allgather",
	    [BS_OP_BARRIER] = "barrier", [BS_OP_GATHERV] = "gatherv",
	    [BS_OP_BCAST] = "bcast",
	};

	return op < ARRAY_SIZE(names) ? names[op] : "?";
}

void bs_hello_pack(uint32_t rank, uint32_t nranks, const uint8_t nonce[BS_NONCE_LEN],
		   uint8_t out[BS_HELLO_LEN])
{
	put32(out, rank);
	put32(out + 4, nranks);
	memcpy(out + 8, nonce, BS_NONCE_LEN);
}

void bs_hello_unpack(const uint8_t in[BS_HELLO_LEN], uint32_t *rank, uint32_t *nranks,
		     uint8_t nonce[BS_NONCE_LEN])
{
	*rank = get32(in);
	*nranks = get32(in + 4);
	memcpy(nonce, in + 8, BS_NONCE_LEN);
}

size_t bs_abort_pack(int32_t failed_rank, const char *reason, uint8_t *out)
{
	size_t n = strnlen(reason, BS_TEXT_MAX);

	put32(out, (uint32_t)failed_rank);
	memcpy(out + 4, reason, n);
	return 4 + n;
}

void bs_abort_unpack(const uint8_t *in, size_t len, int32_t *failed_rank, char *text)
{
	size_t n = len - 4;

	*failed_rank = (int32_t)get32(in);
	memcpy(text, in + 4, n);
	text[n] = '\0';
	for (char *c = text; *c; c++)
		if (*c < ' ' || *c > '~')
			*c = '?';
}

size_t bs_pong_pack(uint32_t abort_age_ms, const struct act_snap *s, int n, uint8_t *out)
{
	uint8_t *p = out + 4;

	put32(out, abort_age_ms);
	for (int i = 0; i < n && i < ACT_THREADS; i++, p += BS_PONG_REC) {
		put32(p, s[i].age_ms);
		put32(p + 4, (uint32_t)s[i].peer);
		put32(p + 8, s[i].seq);
		memset(p + 12, 0, 4);
		p[12] = s[i].what;
	}
	return (size_t)(p - out);
}

int bs_pong_unpack(const uint8_t *in, size_t len, uint32_t *abort_age_ms, struct act_snap *s,
		   int *n)
{
	const uint8_t *p = in + 4;

	*n = 0;
	if (len < BS_PONG_MIN || len > BS_PONG_MAX || (len - 4) % BS_PONG_REC)
		return -EPROTO;
	*abort_age_ms = get32(in);
	for (int i = 0; i < (int)((len - 4) / BS_PONG_REC); i++, p += BS_PONG_REC) {
		s[i] = (struct act_snap){ .thread = (uint8_t)i, .age_ms = get32(p),
					  .peer = (int32_t)get32(p + 4), .seq = get32(p + 8),
					  .what = p[12] };
		if (s[i].what >= ACT_COUNT || s[i].peer < -1 || p[13] || p[14] || p[15])
			return -EPROTO;
	}
	*n = (int)((len - 4) / BS_PONG_REC);
	return 0;
}

void bs_auth_mac(const char *token, size_t token_len, enum bs_role role, uint32_t rank,
		 uint32_t nranks, const uint8_t nonce_r[BS_NONCE_LEN],
		 const uint8_t nonce_0[BS_NONCE_LEN], uint8_t out[BS_MAC_LEN])
{
	static const char proto[] = "gradsync-bootstrap-2";
	uint8_t ids[8];
	const void *parts[] = {role == BS_ROLE_ROOT ? "root" : "rank", proto, ids, nonce_r,
			       nonce_0};
	const size_t lens[] = {4, sizeof(proto) - 1, sizeof(ids), BS_NONCE_LEN, BS_NONCE_LEN};

	put32(ids, rank);
	put32(ids + 4, nranks);
	hmac_sha256(token, token_len, parts, lens, ARRAY_SIZE(parts), out);
}

static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
	for (;;) {
		uint64_t now = time_now_ns();
		struct pollfd p = {.fd = fd, .events = events};
		int n;

		if (now >= deadline_ns)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)GS_MIN((deadline_ns - now) / 1000000 + 1, 1000));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

int bs_write_full(int fd, const void *buf, size_t len, uint64_t deadline_ns)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		int ret = wait_fd(fd, POLLOUT, deadline_ns);

		if (ret)
			return ret;
	}
	return 0;
}

int bs_read_full(int fd, void *buf, size_t len, uint64_t deadline_ns)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -EPIPE;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		int ret = wait_fd(fd, POLLIN, deadline_ns);

		if (ret)
			return ret;
	}
	return 0;
}

int bs_send_frame(int fd, uint8_t type, uint8_t op, uint32_t seq, const void *data, size_t len,
		  uint64_t deadline_ns)
{
	struct bs_hdr h = {.magic = BS_MAGIC,
			   .version = BS_VERSION,
			   .type = type,
			   .op = op,
			   .seq = seq,
			   .len = (uint32_t)len};
	uint8_t hdr[BS_HDR_LEN];
	int ret;

	if (len > BS_MAX_PAYLOAD)
		return -EMSGSIZE;
	bs_hdr_pack(&h, hdr);
	ret = bs_write_full(fd, hdr, sizeof(hdr), deadline_ns);
	if (!ret && len)
		ret = bs_write_full(fd, data, len, deadline_ns);
	return ret;
}

int bs_split_addr(const char *addr, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon, *h = addr;
	size_t n;

	if (!addr)
		return -EINVAL;
	if (*addr == '[') {
		const char *close = strchr(addr, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		h = addr + 1;
		n = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(addr, ':');
		if (!colon)
			return -EINVAL;
		n = (size_t)(colon - addr);
	}
	if (!n || n >= hlen || !colon[1] || strlen(colon + 1) >= plen)
		return -EINVAL;
	for (const char *c = colon + 1; *c; c++)
		if (*c < '0' || *c > '9')
			return -EINVAL;
	memcpy(host, h, n);
	host[n] = '\0';
	strcpy(port, colon + 1);
	return 0;
}

const char *bs_sockaddr_name(const struct sockaddr *sa, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
		port = ntohs(a->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
		port = ntohs(a->sin6_port);
	}
	snprintf(buf, len, sa->sa_family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port);
	return buf;
}

const char *bs_peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss = {.ss_family = AF_UNSPEC};
	socklen_t sl = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &sl))
		ss.ss_family = AF_UNSPEC;
	return bs_sockaddr_name((struct sockaddr *)&ss, buf, len);
}

void bs_tune_socket(int fd)
{
	int one = 1, idle = 5, intvl = 2, cnt = 4;
	unsigned int user_timeout_ms = 15000;

	/* Best effort: a socket without these still works, it only notices a dead host later. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof(user_timeout_ms));
}
