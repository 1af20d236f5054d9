/*
 * Standalone check of the verbs transport ops (ib_ops/roce_ops) between processes:
 * all-pairs messages of many sizes with byte checks, deep queues with repeated tags
 * (credits, FIFO matching), a length mismatch, and a one-way write bandwidth figure.
 * Endpoints are exchanged over a TCP socket this program opens (rank 0 listens).
 *
 *   verbs_pingpong --local 4 [opts]                      4 forked ranks on this host
 *   verbs_pingpong --rank R --world N --addr IP:PORT [opts]   one rank of N
 * opts: --kind roce|ib --device rxe0:1 --gid N --qps N --depth N --inline N --event
 *       --bw SIZE[,SIZE...] (bytes) --bw-total BYTES (per size; or --iters N) --window N
 *       --lat SIZE[,SIZE...] (half round trip) --slot BYTES (largest write) --expect-fail (open
 * must fail and say why) --die (rank 1 dies, rank 0 sees -EIO) Prints "PINGPONG OK" (rank 0) and
 * exits 0 when every check passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/verbs/verbs.h"
#include "util/log.h"
#include "util/timeutil.h"

#define TIMEOUT_NS (30ull * 1000000000ull)

struct pp {
	int rank, world;
	const struct transport_ops *ops;
	struct transport t;
	struct transport_env env;
	struct transport_opts o;
	bool use[64];
	int host[64];
	char addr[64];
	int port;
	size_t bw_sizes[8];
	int nbw;
	size_t lat_sizes[8];
	int nlat;
	uint64_t bw_total; /* bytes per bandwidth size, unless iters is given */
	int iters, window;
	bool expect_fail; /* open must fail (bad device, GID, link layer): exit 0 if it does */
	bool die;	  /* rank 1 exits after connect; rank 0 must see -EIO, not hang */
	int fails;
};

#define CHECK(pp, cond, ...)                                                                       \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %d: CHECK failed %s:%d: ", (pp)->rank, __FILE__,     \
				__LINE__);                                                         \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			(pp)->fails++;                                                             \
		}                                                                                  \
	} while (0)

static int full_io(int fd, void *buf, size_t len, bool wr)
{
	char *p = buf;

	while (len) {
		ssize_t n = wr ? write(fd, p, len) : read(fd, p, len);

		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* All-gather of TRANSPORT_EP_MAX-byte records through rank 0. */
static int exchange(struct pp *p, const void *mine, void *all)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(p->port)};
	int fds[64], lfd, fd, r, one = 1;
	uint64_t t0 = time_now_ns();

	inet_pton(AF_INET, p->addr, &sa.sin_addr);
	if (p->rank == 0) {
		memcpy(all, mine, TRANSPORT_EP_MAX);
		lfd = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(lfd, (void *)&sa, sizeof(sa)) || listen(lfd, 64))
			return -errno;
		for (r = 1; r < p->world; r++) {
			int who;

			fd = accept(lfd, NULL, NULL);
			if (fd < 0 || full_io(fd, &who, sizeof(who), false) || who <= 0 ||
			    who >= p->world)
				return -EPROTO;
			fds[who] = fd;
			if (full_io(fd, (char *)all + (size_t)who * TRANSPORT_EP_MAX,
				    TRANSPORT_EP_MAX, false))
				return -EPROTO;
		}
		for (r = 1; r < p->world; r++)
			if (full_io(fds[r], all, (size_t)p->world * TRANSPORT_EP_MAX, true))
				return -EPIPE;
		for (r = 1; r < p->world; r++)
			close(fds[r]);
		close(lfd);
		return 0;
	}
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (!connect(fd, (void *)&sa, sizeof(sa)))
			break;
		close(fd);
		if (time_now_ns() - t0 > TIMEOUT_NS)
			return -ETIMEDOUT;
		usleep(50000);
	}
	if (full_io(fd, &p->rank, sizeof(p->rank), true) ||
	    full_io(fd, (void *)mine, TRANSPORT_EP_MAX, true) ||
	    full_io(fd, all, (size_t)p->world * TRANSPORT_EP_MAX, false))
		return -EPROTO;
	close(fd);
	return 0;
}

/* Poll until n completions arrived; returns them in c (sized n). */
static int wait_n(struct pp *p, struct tp_completion *c, int n)
{
	uint64_t t0 = time_now_ns();
	int got = 0, k;

	while (got < n) {
		k = p->ops->poll(&p->t, c + got, n - got);
		if (k < 0)
			return k;
		got += k;
		if (time_now_ns() - t0 > TIMEOUT_NS) {
			fprintf(stderr, "rank %d: timeout, %d of %d completions\n", p->rank, got,
				n);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

static int post_retry(struct pp *p, bool send, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
		      size_t len, uint64_t cookie, struct tp_completion *spill, int *nspill)
{
	int ret;

	for (;;) {
		ret = send ? p->ops->post_send(&p->t, peer, tag, mr, off, len, cookie)
			   : p->ops->post_recv(&p->t, peer, tag, mr, off, len, cookie);
		if (ret != -EAGAIN)
			return ret;
		ret = p->ops->poll(&p->t, spill + *nspill, 64);
		if (ret < 0)
			return ret;
		*nspill += ret;
	}
}

static uint8_t pattern(int src, int dst, size_t i, uint64_t salt)
{
	return (uint8_t)(src * 31 + dst * 7 + i * 13 + (i >> 8) + salt * 101);
}

/* Every rank sends `len` bytes to every other rank and checks what it received. */
static int all_pairs(struct pp *p, size_t len, uint64_t salt, bool recv_first)
{
	int w = p->world, peer, k = 0, nc = 0, n = 2 * (w - 1), ret;
	size_t per = len ? len : 1, i;
	uint8_t *sbuf = malloc(per * w), *rbuf = malloc(per * w);
	struct tp_mr *smr, *rmr;
	struct tp_completion *c = calloc(4 * n + 64, sizeof(*c));

	for (peer = 0; peer < w; peer++)
		for (i = 0; i < len; i++)
			sbuf[peer * per + i] = pattern(p->rank, peer, i, salt);
	memset(rbuf, 0xee, per * w);
	ret = p->ops->mr_reg(&p->t, sbuf, per * w, MEM_HOST, &smr);
	if (!ret)
		ret = p->ops->mr_reg(&p->t, rbuf, per * w, MEM_HOST, &rmr);
	if (ret)
		return ret;
	for (k = 0; k < 2; k++) {
		for (peer = 0; peer < w; peer++) {
			if (peer == p->rank)
				continue;
			if ((k == 0) == recv_first)
				ret = post_retry(p, false, peer, salt, rmr, peer * per, len, peer,
						 c, &nc);
			else
				ret = post_retry(p, true, peer, salt, smr, peer * per, len,
						 1000 + peer, c, &nc);
			if (ret)
				return ret;
		}
	}
	ret = wait_n(p, c + nc, n - nc);
	if (ret)
		return ret;
	for (k = 0; k < n; k++) {
		CHECK(p, c[k].status == 0, "len %zu: completion status %d", len, c[k].status);
		CHECK(p, c[k].len == len, "len %zu: completion len %zu", len, c[k].len);
		CHECK(p, c[k].is_send == (c[k].cookie >= 1000), "len %zu: cookie/is_send", len);
	}
	for (peer = 0; peer < w; peer++) {
		if (peer == p->rank)
			continue;
		for (i = 0; i < len; i++) {
			if (rbuf[peer * per + i] != pattern(peer, p->rank, i, salt)) {
				CHECK(p, 0, "len %zu from %d: byte %zu is 0x%x", len, peer, i,
				      rbuf[peer * per + i]);
				break;
			}
		}
	}
	p->ops->mr_dereg(&p->t, smr);
	p->ops->mr_dereg(&p->t, rmr);
	free(sbuf);
	free(rbuf);
	free(c);
	return 0;
}

/* Deep queue to the ring neighbours: 600 messages, tags repeating, FIFO order checked. */
static int deep_queue(struct pp *p)
{
	enum { N = 600, LEN = 200 };
	int next = (p->rank + 1) % p->world, prev = (p->rank + p->world - 1) % p->world;
	uint8_t *sbuf = malloc(N * LEN), *rbuf = calloc(N, LEN);
	struct tp_completion *c = calloc(4 * N, sizeof(*c));
	struct tp_mr *smr, *rmr;
	int i, nc = 0, ret;

	for (i = 0; i < N * LEN; i++)
		sbuf[i] = (uint8_t)(i / LEN + p->rank);
	ret = p->ops->mr_reg(&p->t, sbuf, N * LEN, MEM_HOST, &smr);
	if (!ret)
		ret = p->ops->mr_reg(&p->t, rbuf, N * LEN, MEM_HOST, &rmr);
	for (i = 0; !ret && i < N; i++) {
		/* tag i % 5: five messages in flight share each tag, order must hold */
		ret = post_retry(p, true, next, i % 5, smr, (size_t)i * LEN, LEN, i, c, &nc);
		if (!ret)
			ret = post_retry(p, false, prev, i % 5, rmr, (size_t)i * LEN, LEN,
					 10000 + i, c, &nc);
	}
	if (!ret)
		ret = wait_n(p, c + nc, 2 * N - nc);
	if (ret)
		return ret;
	for (i = 0; i < 2 * N; i++)
		CHECK(p, c[i].status == 0, "deep queue status %d", c[i].status);
	for (i = 0; i < N * LEN; i++) {
		if (rbuf[i] != (uint8_t)(i / LEN + prev)) {
			CHECK(p, 0, "deep queue: message %d byte %d is 0x%x", i / LEN, i % LEN,
			      rbuf[i]);
			break;
		}
	}
	p->ops->mr_dereg(&p->t, smr);
	p->ops->mr_dereg(&p->t, rmr);
	free(sbuf);
	free(rbuf);
	free(c);
	return 0;
}

/* Rank 0 sends 100 bytes to rank 1 which expects 200: both see -EMSGSIZE. */
static int mismatch(struct pp *p)
{
	static char buf[256];
	struct tp_completion c[2];
	struct tp_mr *mr;
	int ret;

	if (p->rank > 1)
		return 0;
	ret = p->ops->mr_reg(&p->t, buf, sizeof(buf), MEM_HOST, &mr);
	if (ret)
		return ret;
	if (p->rank == 0)
		ret = p->ops->post_send(&p->t, 1, 77, mr, 0, 100, 1);
	else
		ret = p->ops->post_recv(&p->t, 0, 77, mr, 0, 200, 2);
	if (!ret)
		ret = wait_n(p, c, 1);
	if (ret)
		return ret;
	CHECK(p, c[0].status == -EMSGSIZE, "mismatch: status %d, want -EMSGSIZE", c[0].status);
	p->ops->mr_dereg(&p->t, mr);
	return 0;
}

/* One-way bandwidth rank 0 -> rank 1: `window` messages in flight, timed at the sender. */
/* Half round-trip latency rank 0 <-> rank 1, receives pre-posted (as ib_write_lat). */
static int latency(struct pp *p, size_t len)
{
	int iters = 200, warm = 20, i, got, need, ret;
	uint8_t *buf;
	struct tp_mr *mr;
	struct tp_completion c[4];
	uint64_t t0 = 0;
	int peer = 1 - p->rank;

	if (p->rank > 1)
		return 0;
	if (posix_memalign((void **)&buf, 4096, 2 * GS_MAX(len, 1)))
		return -ENOMEM;
	memset(buf, p->rank, 2 * GS_MAX(len, 1));
	ret = p->ops->mr_reg(&p->t, buf, 2 * GS_MAX(len, 1), MEM_HOST, &mr);
	if (!ret)
		ret = p->ops->post_recv(&p->t, peer, 50, mr, GS_MAX(len, 1), len, 0);
	for (i = 0; !ret && i < iters + warm; i++) {
		if (i == warm)
			t0 = time_now_ns();
		if (p->rank == 0)
			ret = p->ops->post_send(&p->t, peer, 50, mr, 0, len, 1);
		/* rank 0: its send and the echo; rank 1: the ping, then its echo send */
		for (got = 0, need = p->rank == 0 ? 2 : 1; !ret && got < need;) {
			ret = wait_n(p, c, 1);
			if (ret)
				break;
			CHECK(p, c[0].status == 0, "latency status %d", c[0].status);
			got++;
			if (!c[0].is_send && i + 1 < iters + warm)
				ret =
				    p->ops->post_recv(&p->t, peer, 50, mr, GS_MAX(len, 1), len, 0);
			if (!ret && !c[0].is_send && p->rank == 1) {
				ret = p->ops->post_send(&p->t, peer, 50, mr, 0, len, 1);
				need = 2;
			}
		}
	}
	if (!ret && p->rank == 0)
		printf("LAT size=%zu iters=%d usec=%.1f\n", len, iters,
		       (time_now_ns() - t0) / 2e3 / iters);
	p->ops->mr_dereg(&p->t, mr);
	free(buf);
	return ret;
}

static int bandwidth(struct pp *p, size_t len)
{
	int iters = p->iters ? p->iters : (int)GS_MAX(p->bw_total / len, 20);
	int w = p->window, total = iters + w, posted = 0, done = 0, k, i, ret;
	uint8_t *buf;
	struct tp_mr *mr;
	struct tp_completion c[64];
	uint64_t t0 = 0, t1;
	bool send = p->rank == 0;

	if (p->rank > 1 || !len)
		return 0;
	if (posix_memalign((void **)&buf, 4096, len * w))
		return -ENOMEM;
	memset(buf, p->rank, len * w);
	ret = p->ops->mr_reg(&p->t, buf, len * w, MEM_HOST, &mr);
	if (ret)
		return ret;
	while (done < total) {
		while (posted < total && posted - done < w) {
			i = posted % w;
			ret = send ? p->ops->post_send(&p->t, 1, 9, mr, i * len, len, posted)
				   : p->ops->post_recv(&p->t, 0, 9, mr, i * len, len, posted);
			if (ret == -EAGAIN)
				break;
			if (ret)
				return ret;
			posted++;
		}
		k = p->ops->poll(&p->t, c, 64);
		if (k < 0)
			return k;
		for (i = 0; i < k; i++)
			CHECK(p, c[i].status == 0, "bw status %d", c[i].status);
		done += k;
		/* the first window is warm-up: timing starts once it completed */
		if (!t0 && done >= w)
			t0 = time_now_ns();
	}
	t1 = time_now_ns();
	if (send)
		printf("BW size=%zu iters=%d qps=%d time_ms=%.3f gbps=%.3f\n", len, iters,
		       p->o.qps_per_peer, (t1 - t0) / 1e6,
		       (double)len * (total - w) * 8 / (double)(t1 - t0));
	p->ops->mr_dereg(&p->t, mr);
	free(buf);
	return 0;
}

/* Rank 1 vanishes after connect: rank 0's send must fail with -EIO (the abort path). */
static int peer_death(struct pp *p)
{
	static char buf[4096];
	struct tp_completion c;
	struct tp_mr *mr;
	uint64_t t0;
	int ret, k = 0;

	if (p->rank == 1) {
		usleep(200000);
		_exit(0); /* no close: the QPs die with the process */
	}
	ret = p->ops->mr_reg(&p->t, buf, sizeof(buf), MEM_HOST, &mr);
	usleep(500000);
	/* the CTS never comes, so write the receive side too: a receive's CTS is a send */
	if (!ret)
		ret = p->ops->post_recv(&p->t, 1, 5, mr, 0, sizeof(buf), 1);
	t0 = time_now_ns();
	while (!ret && k == 0 && time_now_ns() - t0 < 60ull * 1000000000ull)
		k = p->ops->poll(&p->t, &c, 1);
	printf("peer death: poll returned %d after %.1f s\n", k, (time_now_ns() - t0) / 1e9);
	CHECK(p, k == -EIO, "peer death: poll returned %d, want -EIO", k);
	p->ops->close(&p->t);
	return p->fails ? 1 : 0;
}

static const size_t sizes[] = {0,    1,	   7,	  64,	  255,	   4095,
			       4096, 4097, 65536, 100003, 1 << 20, (4 << 20) + 5};

static int run_rank(struct pp *p)
{
	char ep[TRANSPORT_EP_MAX] = {0}, *all;
	size_t eplen = sizeof(ep), i;
	struct tp_path_info pi;
	int r, ret;

	log_set_rank(p->rank);
	for (r = 0; r < p->world; r++)
		p->use[r] = r != p->rank;
	p->env = (struct transport_env){
	    .rank = p->rank,
	    .nranks = p->world,
	    .host_of_rank = p->host,
	    .use_peer = p->use,
	    .job_id = 1,
	    .timeout_ms = 30000,
	    .opts = &p->o,
	    .numa_node = -1,
	};
	p->t = (struct transport){.ops = p->ops, .env = &p->env};
	if (p->expect_fail) {
		ret = p->ops->open(&p->t, &p->env);
		p->ops->close(&p->t);
		printf("rank %d: open %s: %s (can_connect %d)\n", p->rank,
		       ret ? "failed" : "worked", strerror(-ret),
		       p->ops->can_connect(&p->env, (p->rank + 1) % p->world));
		return ret ? 0 : 1;
	}
	if (!p->ops->can_connect(&p->env, (p->rank + 1) % p->world)) {
		fprintf(stderr, "rank %d: %s can_connect says no\n", p->rank, p->ops->name);
		return 77;
	}
	ret = p->ops->open(&p->t, &p->env);
	if (!ret)
		ret = p->ops->endpoint(&p->t, ep, &eplen);
	all = calloc(p->world, TRANSPORT_EP_MAX);
	if (!ret)
		ret = exchange(p, ep, all);
	if (!ret)
		ret = p->ops->connect(&p->t, all);
	if (!ret && p->rank == 0 && !p->ops->path_info(&p->t, &pi))
		printf("PATH %s %s:%d %s rate=\"%s\" rate_bps=%llu mtu=%d gid=%d %s qps=%d fw=%s"
		       " (%s)\n",
		       pi.transport, pi.device, pi.port, pi.link_layer, pi.rate,
		       (unsigned long long)pi.rate_bps, pi.mtu, pi.gid_index, pi.gid_type, pi.qps,
		       pi.fw_ver, pi.note);
	if (!ret && p->die)
		return peer_death(p);
	for (i = 0; !ret && i < ARRAY_SIZE(sizes); i++)
		ret = all_pairs(p, sizes[i], i, i % 2);
	if (!ret)
		ret = deep_queue(p);
	if (!ret)
		ret = mismatch(p);
	for (i = 0; !ret && i < (size_t)p->nlat; i++)
		ret = latency(p, p->lat_sizes[i]);
	for (i = 0; !ret && i < (size_t)p->nbw; i++)
		ret = bandwidth(p, p->bw_sizes[i]);
	/* a last all-pairs round doubles as a barrier before teardown */
	if (!ret)
		ret = all_pairs(p, 16, 99, false);
	if (ret)
		fprintf(stderr, "rank %d: failed: %s\n", p->rank, strerror(-ret));
	p->ops->close(&p->t);
	free(all);
	if (!ret && !p->fails && p->rank == 0)
		printf("PINGPONG OK world=%d sizes=%zu\n", p->world, ARRAY_SIZE(sizes));
	return ret || p->fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"rank", 1, 0, 'r'},     {"world", 1, 0, 'w'},  {"addr", 1, 0, 'a'},
	    {"local", 1, 0, 'l'},    {"kind", 1, 0, 'k'},   {"device", 1, 0, 'd'},
	    {"gid", 1, 0, 'g'},	     {"qps", 1, 0, 'q'},    {"depth", 1, 0, 'D'},
	    {"inline", 1, 0, 'i'},   {"event", 0, 0, 'e'},  {"bw", 1, 0, 'b'},
	    {"iters", 1, 0, 'n'},    {"window", 1, 0, 'W'}, {"expect-fail", 0, 0, 'F'},
	    {"bw-total", 1, 0, 'T'}, {"slot", 1, 0, 'S'},   {"lat", 1, 0, 'L'},
	    {"die", 0, 0, 'X'},	     {0, 0, 0, 0},
	};
	struct pp p = {
	    .ops = &roce_ops,
	    .bw_total = 128 << 20,
	    .window = 16,
	    .port = 18600,
	    .o = {.device = "auto",
		  .gid_index = -1,
		  .qps_per_peer = 1,
		  .qp_depth = 64,
		  .qp_timeout = 18, /* as the bed's INI files: rxe recovers a drop after it */
		  .inline_threshold = 128,
		  .kind = TP_ROCE},
	};
	int c, local = 0, r, st, rc = 0;
	char *colon, *tok;
	pid_t pids[64];

	snprintf(p.addr, sizeof(p.addr), "127.0.0.1");
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'r':
			p.rank = atoi(optarg);
			break;
		case 'w':
			p.world = atoi(optarg);
			break;
		case 'a':
			snprintf(p.addr, sizeof(p.addr), "%s", optarg);
			colon = strchr(p.addr, ':');
			if (colon) {
				*colon = '\0';
				p.port = atoi(colon + 1);
			}
			break;
		case 'l':
			local = atoi(optarg);
			break;
		case 'k':
			p.ops = !strcmp(optarg, "ib") ? &ib_ops : &roce_ops;
			break;
		case 'd':
			snprintf(p.o.device, sizeof(p.o.device), "%s", optarg);
			break;
		case 'g':
			p.o.gid_index = atoi(optarg);
			break;
		case 'q':
			p.o.qps_per_peer = atoi(optarg);
			break;
		case 'D':
			p.o.qp_depth = atoi(optarg);
			break;
		case 'i':
			p.o.inline_threshold = strtoull(optarg, NULL, 0);
			break;
		case 'e':
			p.o.cq_mode = TP_CQ_EVENT;
			break;
		case 'b':
			for (tok = strtok(optarg, ","); tok && p.nbw < 8; tok = strtok(NULL, ","))
				p.bw_sizes[p.nbw++] = strtoull(tok, NULL, 0);
			break;
		case 'L':
			for (tok = strtok(optarg, ","); tok && p.nlat < 8; tok = strtok(NULL, ","))
				p.lat_sizes[p.nlat++] = strtoull(tok, NULL, 0);
			break;
		case 'S':
			p.o.slot_size = strtoull(optarg, NULL, 0);
			break;
		case 'T':
			p.bw_total = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			p.iters = atoi(optarg);
			break;
		case 'W':
			p.window = atoi(optarg);
			break;
		case 'F':
			p.expect_fail = true;
			break;
		case 'X':
			p.die = true;
			break;
		default:
			return 2;
		}
	}
	p.o.kind = p.ops->kind;
	if (!local)
		return p.world >= 2 && p.world <= 64 ? run_rank(&p) : 2;
	if (local < 2 || local > 64)
		return 2;
	p.world = local;
	for (r = 0; r < local; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			p.rank = r;
			exit(run_rank(&p));
		}
	}
	for (r = 0; r < local; r++) {
		if (waitpid(pids[r], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			rc = rc ? rc : (WIFEXITED(st) ? WEXITSTATUS(st) : 1);
	}
	return rc;
}
