/*
 * The bootstrap across real processes on 127.0.0.1: collectives for 1, 2, 3, 5 ranks
 * with a clean close, and strangers refused while a job runs.
 */
#include <ifaddrs.h>
#include <net/if.h>

#include "launch/bootstrap_test_job.h"

static int coll_fn(struct job *j, int rank, struct bootstrap *b)
{
	struct rec {
		int rank, sq;
		uint64_t tag;
	} mine = {rank, rank * rank, TAG ^ (uint64_t)rank}, all[MAX_RANKS];
	size_t big = 256 << 10;
	uint8_t *gbuf = malloc(big), *gall = malloc(big * (size_t)j->n), bc[4096];
	void **blobs;
	size_t *lens;

	child_check(gbuf && gall, __LINE__, "malloc");
	for (int round = 0; round < 3; round++) {
		mine.sq = rank * rank + round;
		child_check(!bootstrap_allgather(b, &mine, all, sizeof(mine)), __LINE__,
			    "allgather");
		for (int r = 0; r < j->n; r++)
			child_check(all[r].rank == r && all[r].sq == r * r + round &&
					all[r].tag == (TAG ^ (uint64_t)r),
				    __LINE__, "allgather record");
	}
	/* Large records: frames arrive in many pieces. */
	memset(gbuf, rank + 1, big);
	child_check(!bootstrap_allgather(b, gbuf, gall, big), __LINE__, "big allgather");
	for (int r = 0; r < j->n; r++)
		child_check(gall[(size_t)r * big] == r + 1 &&
				gall[(size_t)r * big + big - 1] == r + 1,
			    __LINE__, "big allgather content");

	/* gatherv: rank r gives 100 * (r + 1) bytes of value r + 7; rank 0 ends with blob. */
	memset(gbuf, rank + 7, 100 * (size_t)(rank + 1));
	child_check(!bootstrap_gatherv(b, gbuf, 100 * (size_t)(rank + 1), &blobs, &lens), __LINE__,
		    "gatherv");
	if (rank == 0) {
		for (int r = 0; r < j->n; r++) {
			child_check(lens[r] == 100 * (size_t)(r + 1), __LINE__, "gatherv len");
			child_check(((uint8_t *)blobs[r])[0] == r + 7 &&
					((uint8_t *)blobs[r])[lens[r] - 1] == r + 7,
				    __LINE__, "gatherv content");
			free(blobs[r]);
		}
		free(blobs);
		free(lens);
	} else {
		child_check(!blobs && !lens, __LINE__, "gatherv outputs on rank > 0");
	}
	for (size_t i = 0; i < sizeof(bc); i++)
		bc[i] = rank == 0 ? (uint8_t)(i * 13) : 0;
	child_check(!bootstrap_bcast(b, bc, sizeof(bc)), __LINE__, "bcast");
	for (size_t i = 0; i < sizeof(bc); i++)
		child_check(bc[i] == (uint8_t)(i * 13), __LINE__, "bcast content");
	child_check(!bootstrap_barrier(b), __LINE__, "final barrier");
	if (rank == 0) {
		/* The others close and exit now: their goodbyes must not read as failures. */
		msleep(300);
		child_check(!__atomic_load_n(bootstrap_abort_flag(b), __ATOMIC_ACQUIRE), __LINE__,
			    "abort after clean close");
		child_check(!strcmp(bootstrap_abort_reason(b), ""), __LINE__, "reason is empty");
	}
	bootstrap_close(b);
	free(gbuf);
	free(gall);
	return 0;
}

static void run_collectives_at(int n, bool inherit, const char *host)
{
	struct job j = {.n = n, .timeout_ms = 5000, .inherit = inherit, .fn = coll_fn,
			.host = host};
	double s;

	job_start(&j);
	s = job_finish(&j);
	for (int r = 0; r < n; r++)
		expect_exit(&j, r, 0);
	/* Clean: no abort and no refusal was logged anywhere. */
	for (int r = 0; r < n; r++)
		assert_null(strstr(read_log(&j, r), "abort"));
	print_message("%d ranks (%s, %s): %.2fs\n", n, inherit ? "inherited listener" : "bind",
		      j.addr, s);
	job_cleanup(&j);
}

static void run_collectives(int n, bool inherit)
{
	run_collectives_at(n, inherit, NULL);
}

static void test_coll_1(void **state)
{
	(void)state;
	run_collectives(1, false);
}

static void test_coll_2(void **state)
{
	(void)state;
	run_collectives(2, false);
}

static void test_coll_3(void **state)
{
	(void)state;
	run_collectives(3, true);
}

static void test_coll_5(void **state)
{
	(void)state;
	run_collectives(5, false);
}

/*
 * Rendezvous spelt other ways: a name, IPv6 loopback, this host's own non-loopback
 * address (rank 0 then binds the wildcard). Traffic stays on this host.
 */
static void test_coll_other_addresses(void **state)
{
	struct ifaddrs *ifa, *i;
	char ip[INET6_ADDRSTRLEN] = "";

	(void)state;
	run_collectives_at(3, false, "localhost");
	if (!getifaddrs(&ifa)) {
		for (i = ifa; i && !ip[0]; i = i->ifa_next) {
			struct sockaddr_in *a = (struct sockaddr_in *)i->ifa_addr;

			if (a && a->sin_family == AF_INET && !(i->ifa_flags & IFF_LOOPBACK) &&
			    (i->ifa_flags & IFF_UP))
				inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
		}
		freeifaddrs(ifa);
	}
	if (ip[0])
		run_collectives_at(3, false, ip);
	else
		print_message("no non-loopback IPv4 address here: that case skipped\n");
	int fd6 = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};

	if (fd6 >= 0 && !bind(fd6, (struct sockaddr *)&a6, sizeof(a6))) {
		close(fd6);
		run_collectives_at(2, false, "::1");
	} else {
		print_message("no IPv6 loopback here: that case skipped\n");
		if (fd6 >= 0)
			close(fd6);
	}
}

/* ---- strangers ---- */

static int stranger_connect(const char *addr)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	uint64_t deadline = time_now_ns() + 5000000000ull;

	a.sin_port = htons((uint16_t)atoi(strchr(addr, ':') + 1));
	while (time_now_ns() < deadline) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		assert_true(fd >= 0);
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
			return fd;
		close(fd);
		msleep(10);
	}
	fail_msg("could not connect to %s", addr);
	return -1;
}

/* Read until EOF (bounded); returns the bytes received. */
static size_t drain(int fd, char *buf, size_t len)
{
	size_t got = 0;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		assert_int_equal(poll(&p, 1, 3000), 1);
		n = read(fd, buf + got, len - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	return got;
}

/* Expect the one REFUSE every failure gets (refused) in buf[0..n), then EOF. */
static void expect_refused(const char *buf, size_t n)
{
	struct bs_hdr h;
	const char *why;

	assert_true(n >= BS_HDR_LEN);
	assert_int_equal(bs_hdr_unpack((const uint8_t *)buf, &h, &why), 0);
	assert_int_equal(h.type, BS_REFUSE);
	assert_int_equal(n, BS_HDR_LEN + h.len);
	assert_int_equal(h.len, strlen(BS_REFUSED));
	assert_memory_equal(buf + BS_HDR_LEN, BS_REFUSED, h.len);
}

/*
 * Send raw bytes as a stranger; expect rank 0 to close silently (refused == false: it
 * saw EOF) or to answer with the one REFUSE.
 */
static void stranger_send(const char *addr, const void *bytes, size_t len, bool refused)
{
	char buf[512];
	int fd = stranger_connect(addr);
	size_t n;

	assert_int_equal(write(fd, bytes, len), (ssize_t)len);
	if (len < BS_HDR_LEN + BS_HELLO_LEN)
		shutdown(fd, SHUT_WR);
	n = drain(fd, buf, sizeof(buf));
	close(fd);
	if (!refused)
		assert_int_equal(n, 0);
	else
		expect_refused(buf, n);
}

static void read_exact(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		assert_int_equal(poll(&p, 1, 3000), 1);
		n = read(fd, (char *)buf + got, len - got);
		assert_true(n > 0);
		got += (size_t)n;
	}
}

/*
 * The whole handshake as a client holding `token`: HELLO, CHALLENGE, PROOF; then the
 * answer must be the one REFUSE. Rank 0 answers a HELLO with a CHALLENGE whatever it
 * says, so a stranger learns nothing before proving the token.
 */
static void stranger_hello(const char *addr, const char *token, int rank, int nranks)
{
	struct bs_hdr h = {
	    .magic = BS_MAGIC, .version = BS_VERSION, .type = BS_HELLO, .len = BS_HELLO_LEN};
	uint8_t frame[BS_HDR_LEN + BS_HELLO_LEN], nonce_r[BS_NONCE_LEN], nonce_0[BS_NONCE_LEN];
	uint8_t hdr[BS_HDR_LEN], proof[BS_HDR_LEN + BS_MAC_LEN];
	char buf[512];
	const char *why;
	int fd = stranger_connect(addr);

	memset(nonce_r, rank + 7, sizeof(nonce_r));
	bs_hdr_pack(&h, frame);
	bs_hello_pack((uint32_t)rank, (uint32_t)nranks, nonce_r, frame + BS_HDR_LEN);
	assert_int_equal(write(fd, frame, sizeof(frame)), (ssize_t)sizeof(frame));
	read_exact(fd, hdr, sizeof(hdr));
	assert_int_equal(bs_hdr_unpack(hdr, &h, &why), 0);
	assert_int_equal(h.type, BS_CHALLENGE);
	read_exact(fd, nonce_0, sizeof(nonce_0));
	h = (struct bs_hdr){.magic = BS_MAGIC, .version = BS_VERSION, .type = BS_PROOF,
			    .len = BS_MAC_LEN};
	bs_hdr_pack(&h, proof);
	bs_auth_mac(token, strlen(token), BS_ROLE_RANK, (uint32_t)rank, (uint32_t)nranks, nonce_r,
		    nonce_0, proof + BS_HDR_LEN);
	assert_int_equal(write(fd, proof, sizeof(proof)), (ssize_t)sizeof(proof));
	expect_refused(buf, drain(fd, buf, sizeof(buf)));
	close(fd);
}

static void stranger_frame(const char *addr, uint8_t type, uint32_t len, bool refused)
{
	struct bs_hdr h = {.magic = BS_MAGIC, .version = BS_VERSION, .type = type, .len = len};
	uint8_t frame[BS_HDR_LEN];

	bs_hdr_pack(&h, frame);
	stranger_send(addr, frame, sizeof(frame), refused);
}

/* Ranks > 0 come late, so the first strangers meet rank 0 alone; then a window mid-job. */
static int stranger_fn(struct job *j, int rank, struct bootstrap *b)
{
	int v = rank, all[MAX_RANKS];

	child_check(!bootstrap_barrier(b), __LINE__, "barrier");
	if (rank == 0)
		signal_ready(j);
	msleep(500);
	child_check(!bootstrap_allgather(b, &v, all, sizeof(v)), __LINE__, "allgather");
	for (int r = 0; r < j->n; r++)
		child_check(all[r] == r, __LINE__, "allgather content");
	child_check(!bootstrap_barrier(b), __LINE__, "final barrier");
	child_check(!__atomic_load_n(bootstrap_abort_flag(b), __ATOMIC_ACQUIRE), __LINE__,
		    "no abort");
	bootstrap_close(b);
	return 0;
}

static int late_open_fn(struct job *j, int rank)
{
	struct bootstrap *b;

	if (rank)
		msleep(400);
	child_check(!open_rank(j, rank, &b), __LINE__, "bootstrap_open");
	return stranger_fn(j, rank, b);
}

static void test_strangers(void **state)
{
	struct job j = {.n = 3, .timeout_ms = 5000, .open_fn = late_open_fn};
	static const char http[] = "GET / HTTP/1.0\r\n\r\n";
	char *log;

	(void)state;
	job_start(&j);
	/* Before the ranks arrive: garbage, a short read, a wrong token. */
	stranger_send(j.addr, http, sizeof(http) - 1, true);
	stranger_send(j.addr, "GSB", 3, false);
	stranger_hello(j.addr, "wrong", 1, 3);
	/* While the job runs: a duplicate rank, a wrong world size, more garbage. */
	job_wait_ready(&j, 1);
	stranger_hello(j.addr, TOKEN, 1, 3);
	stranger_hello(j.addr, TOKEN, 2, 4);
	stranger_hello(j.addr, TOKEN, 0, 3);
	stranger_frame(j.addr, BS_UP, 0xffffffffu, true);
	stranger_frame(j.addr, BS_UP, 0, true);
	stranger_hello(j.addr, TOKEN "x", 2, 3);
	job_finish(&j);
	for (int r = 0; r < j.n; r++)
		expect_exit(&j, r, 0);
	log = read_log(&j, 0);
	print_message("rank 0 log:\n%s", log);
	assert_non_null(strstr(log, "bootstrap: refused connection from 127.0.0.1:"));
	/* the log names each reason, a burst at a time; the rest are counted */
	assert_non_null(strstr(log, ": bad magic"));
	assert_null(strstr(log, "closed after 3 of 56 handshake bytes")); /* EOF: no verdict, debug */
	assert_non_null(strstr(log, ": rank 0 out of range"));
	assert_non_null(strstr(log, ": wrong token"));
	assert_non_null(strstr(log, ": rank 1 is already connected"));
	assert_non_null(strstr(log, ": world size 4, this job has 3"));
	assert_non_null(strstr(log, "(further refusals counted, not logged)"));
	assert_null(strstr(log, ": length out of bounds"));
	assert_null(strstr(log, "abort"));
	job_cleanup(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_coll_1),
		cmocka_unit_test(test_coll_2),
		cmocka_unit_test(test_coll_3),
		cmocka_unit_test(test_coll_5),
		cmocka_unit_test(test_coll_other_addresses),
		cmocka_unit_test(test_strangers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
