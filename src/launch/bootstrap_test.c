/*
 * The bootstrap across real processes on 127.0.0.1: collectives for 1, 2, 3, 5 ranks,
 * strangers refused while a job runs, a rank killed mid-run, timeouts naming the late.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "launch/bootstrap.h"
#include "launch/bootstrap_wire.h"
#include "util/timeutil.h"

#define MAX_RANKS 8
#define TOKEN 0x1234abcd5678ef00ull

/* One job of forked ranks: what each child runs and what the parent learns. */
struct job {
	int n;
	int timeout_ms;
	bool inherit;          /* rank 0 adopts a listener bound by the parent */
	int listen_fd;
	char addr[64];
	int ready[2];          /* children write a byte here at chosen points */
	int (*fn)(struct job *j, int rank, struct bootstrap *b);
	int (*open_fn)(struct job *j, int rank); /* replaces open + fn when set */
	pid_t pid[MAX_RANKS];
	int status[MAX_RANKS];
	char log[MAX_RANKS][64]; /* each rank's stderr, kept in a file */
};

/* Child-side check: report and leave with the line number as the exit status. */
static void child_check(bool ok, int line, const char *what)
{
	if (ok)
		return;
	fprintf(stderr, "child check failed at line %d: %s\n", line, what);
	_exit(100 + line % 100);
}

static void msleep(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

static int bound_listener(char *addr, size_t len)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 64), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &sl), 0);
	snprintf(addr, len, "127.0.0.1:%u", ntohs(a.sin_port));
	return fd;
}

/* A port nobody listens on right now (rank 0 binds it itself). */
static void free_addr(char *addr, size_t len)
{
	close(bound_listener(addr, len));
}

static int open_rank(struct job *j, int rank, struct bootstrap **b)
{
	struct bootstrap_opts o = {.rank = rank, .nranks = j->n, .addr = j->addr, .token = TOKEN,
				   .timeout_ms = j->timeout_ms};

	if (rank == 0 && j->inherit)
		o.listen_fd = j->listen_fd;
	return bootstrap_open(&o, b);
}

static void child_main(struct job *j, int rank)
{
	struct bootstrap *b;
	int fd = open(j->log[rank], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int ret;

	if (fd >= 0) {
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	close(j->ready[0]);
	if (j->inherit && rank != 0)
		close(j->listen_fd);
	if (j->open_fn)
		_exit(j->open_fn(j, rank));
	ret = open_rank(j, rank, &b);
	child_check(ret == 0, __LINE__, "bootstrap_open");
	ret = j->fn(j, rank, b);
	_exit(ret);
}

static void job_start(struct job *j)
{
	assert_true(j->n <= MAX_RANKS);
	assert_int_equal(pipe(j->ready), 0);
	if (j->inherit)
		j->listen_fd = bound_listener(j->addr, sizeof(j->addr));
	else
		free_addr(j->addr, sizeof(j->addr));
	for (int r = 0; r < j->n; r++) {
		snprintf(j->log[r], sizeof(j->log[r]), "/tmp/bootstrap_test.%d.%d.log", (int)getpid(),
			 r);
		j->pid[r] = fork();
		assert_true(j->pid[r] >= 0);
		if (j->pid[r] == 0)
			child_main(j, r);
	}
	close(j->ready[1]);
	if (j->inherit)
		close(j->listen_fd);
}

/* Wait for `count` ready bytes from the children (bounded). */
static void job_wait_ready(struct job *j, int count)
{
	for (int i = 0; i < count; i++) {
		struct pollfd p = {.fd = j->ready[0], .events = POLLIN};
		char c;

		assert_int_equal(poll(&p, 1, 10000), 1);
		assert_int_equal(read(j->ready[0], &c, 1), 1);
	}
}

/* Reap every rank (killing stragglers after 15 s); returns the elapsed seconds. */
static double job_finish(struct job *j)
{
	uint64_t start = time_now_ns(), deadline = start + 15000000000ull;
	int left = j->n;

	for (int r = 0; r < j->n; r++)
		j->status[r] = -1;
	while (left) {
		int st;
		pid_t pid = waitpid(-1, &st, WNOHANG);

		if (pid <= 0) {
			if (time_now_ns() > deadline)
				for (int r = 0; r < j->n; r++)
					if (j->status[r] == -1)
						kill(j->pid[r], SIGKILL);
			msleep(5);
			continue;
		}
		for (int r = 0; r < j->n; r++) {
			if (j->pid[r] == pid) {
				j->status[r] = st;
				left--;
			}
		}
	}
	close(j->ready[0]);
	return (time_now_ns() - start) / 1e9;
}

static char *read_log(struct job *j, int rank)
{
	static char buf[16384];
	FILE *f = fopen(j->log[rank], "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

static void job_cleanup(struct job *j)
{
	for (int r = 0; r < j->n; r++)
		unlink(j->log[r]);
}

static void expect_exit(struct job *j, int rank, int code)
{
	if (!WIFEXITED(j->status[rank]) || WEXITSTATUS(j->status[rank]) != code)
		fail_msg("rank %d: status 0x%x, expected exit %d; its log:\n%s", rank,
			 j->status[rank], code, read_log(j, rank));
}

static void signal_ready(struct job *j)
{
	child_check(write(j->ready[1], "r", 1) == 1, __LINE__, "ready pipe");
}

/* Collectives with checked results, then a clean close that must not abort anyone. */
static int coll_fn(struct job *j, int rank, struct bootstrap *b)
{
	struct rec {
		int rank, sq;
		uint64_t tag;
	} mine = {rank, rank * rank, TOKEN ^ (uint64_t)rank}, all[MAX_RANKS];
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
					    all[r].tag == (TOKEN ^ (uint64_t)r),
				    __LINE__, "allgather record");
	}
	/* Large records: frames arrive in many pieces. */
	memset(gbuf, rank + 1, big);
	child_check(!bootstrap_allgather(b, gbuf, gall, big), __LINE__, "big allgather");
	for (int r = 0; r < j->n; r++)
		child_check(gall[(size_t)r * big] == r + 1 && gall[(size_t)r * big + big - 1] == r + 1,
			    __LINE__, "big allgather content");

	/* gatherv: rank r gives 100 * (r + 1) bytes of value r + 7; rank 0 ends with blob. */
	memset(gbuf, rank + 7, 100 * (size_t)(rank + 1));
	child_check(!bootstrap_gatherv(b, gbuf, 100 * (size_t)(rank + 1), &blobs, &lens),
		    __LINE__, "gatherv");
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
		child_check(!*bootstrap_abort_flag(b), __LINE__, "abort after clean close");
		child_check(!strcmp(bootstrap_abort_reason(b), ""), __LINE__, "reason is empty");
	}
	bootstrap_close(b);
	free(gbuf);
	free(gall);
	return 0;
}

static void run_collectives(int n, bool inherit)
{
	struct job j = {.n = n, .timeout_ms = 5000, .inherit = inherit, .fn = coll_fn};
	double s;

	job_start(&j);
	s = job_finish(&j);
	for (int r = 0; r < n; r++)
		expect_exit(&j, r, 0);
	/* Clean: no abort and no refusal was logged anywhere. */
	for (int r = 0; r < n; r++)
		assert_null(strstr(read_log(&j, r), "abort"));
	print_message("%d ranks (%s): %.2fs\n", n, inherit ? "inherited listener" : "bind", s);
	job_cleanup(&j);
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

/*
 * Send raw bytes as a stranger; expect rank 0 to drop us silently (expect == NULL) or
 * with a REFUSE frame whose text contains expect.
 */
static void stranger_send(const char *addr, const void *bytes, size_t len, const char *expect)
{
	char buf[512];
	struct bs_hdr h;
	const char *why;
	int fd = stranger_connect(addr);
	size_t n;

	assert_int_equal(write(fd, bytes, len), (ssize_t)len);
	if (len < BS_HDR_LEN + BS_HELLO_LEN)
		shutdown(fd, SHUT_WR);
	n = drain(fd, buf, sizeof(buf));
	close(fd);
	if (!expect) {
		assert_int_equal(n, 0);
		return;
	}
	assert_true(n >= BS_HDR_LEN);
	assert_int_equal(bs_hdr_unpack((uint8_t *)buf, &h, &why), 0);
	assert_int_equal(h.type, BS_REFUSE);
	assert_int_equal(n, BS_HDR_LEN + h.len);
	if (!strstr(buf + BS_HDR_LEN, expect))
		fail_msg("refused with \"%s\", expected \"%s\"", buf + BS_HDR_LEN, expect);
}

static void stranger_hello(const char *addr, uint64_t token, int rank, int nranks,
			   const char *expect)
{
	struct bs_hdr h = {.magic = BS_MAGIC, .version = BS_VERSION, .type = BS_HELLO,
			   .len = BS_HELLO_LEN};
	uint8_t frame[BS_HDR_LEN + BS_HELLO_LEN];

	bs_hdr_pack(&h, frame);
	bs_hello_pack(token, (uint32_t)rank, (uint32_t)nranks, frame + BS_HDR_LEN);
	stranger_send(addr, frame, sizeof(frame), expect);
}

static void stranger_frame(const char *addr, uint8_t type, uint32_t len, const char *expect)
{
	struct bs_hdr h = {.magic = BS_MAGIC, .version = BS_VERSION, .type = type, .len = len};
	uint8_t frame[BS_HDR_LEN];

	bs_hdr_pack(&h, frame);
	stranger_send(addr, frame, sizeof(frame), expect);
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
	child_check(!*bootstrap_abort_flag(b), __LINE__, "no abort");
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
	stranger_send(j.addr, http, sizeof(http) - 1, NULL);
	stranger_send(j.addr, "GSB", 3, NULL);
	stranger_hello(j.addr, TOKEN + 1, 1, 3, "wrong token");
	/* While the job runs: a duplicate rank, a wrong world size, more garbage. */
	job_wait_ready(&j, 1);
	stranger_hello(j.addr, TOKEN, 1, 3, "rank 1 is already connected");
	stranger_hello(j.addr, TOKEN, 2, 4, "world size 4");
	stranger_hello(j.addr, TOKEN, 0, 3, "rank 0 out of range");
	stranger_frame(j.addr, BS_UP, 0xffffffffu, NULL);
	stranger_frame(j.addr, BS_UP, 0, "first message is not HELLO");
	stranger_hello(j.addr, ~TOKEN, 2, 3, "wrong token");
	job_finish(&j);
	for (int r = 0; r < j.n; r++)
		expect_exit(&j, r, 0);
	log = read_log(&j, 0);
	print_message("rank 0 log:\n%s", log);
	assert_non_null(strstr(log, "bootstrap: refused connection from 127.0.0.1:"));
	assert_non_null(strstr(log, ": wrong token"));
	assert_non_null(strstr(log, ": bad magic"));
	assert_non_null(strstr(log, ": closed after 3 of 32 handshake bytes"));
	assert_non_null(strstr(log, ": first message is not HELLO"));
	assert_non_null(strstr(log, ": length out of bounds"));
	assert_non_null(strstr(log, ": rank 1 is already connected"));
	assert_null(strstr(log, "abort"));
	job_cleanup(&j);
}

/* ---- failures ---- */

static int victim;

/*
 * After a barrier the victim parks; the parent SIGKILLs it. The survivors sit in a
 * barrier that can never complete: it must end in -ECANCELED naming the victim, well
 * before the 10 s collective timeout.
 */
static int kill_fn(struct job *j, int rank, struct bootstrap *b)
{
	char want[64];
	uint64_t t0;
	int ret;

	child_check(!bootstrap_barrier(b), __LINE__, "barrier");
	signal_ready(j);
	if (rank == victim) {
		pause();
		return 1;
	}
	t0 = time_now_ns();
	ret = bootstrap_barrier(b);
	child_check(ret == -ECANCELED, __LINE__, "barrier ends in -ECANCELED");
	child_check(time_now_ns() - t0 < 3000000000ull, __LINE__, "abort seen within 3 s");
	child_check(*bootstrap_abort_flag(b) != 0, __LINE__, "abort flag");
	snprintf(want, sizeof(want), "rank %d exited unexpectedly (connection to it closed)",
		 victim);
	child_check(strstr(bootstrap_abort_reason(b), want) != NULL, __LINE__, "reason");
	/* Later calls fail at once. */
	child_check(bootstrap_bcast(b, want, 1) == -ECANCELED, __LINE__, "bcast after abort");
	bootstrap_close(b);
	return 0;
}

static void run_kill(int n, int who)
{
	struct job j = {.n = n, .timeout_ms = 10000, .fn = kill_fn};

	victim = who;
	job_start(&j);
	job_wait_ready(&j, n);
	msleep(100);
	kill(j.pid[who], SIGKILL);
	job_finish(&j);
	for (int r = 0; r < n; r++) {
		if (r == who) {
			assert_true(WIFSIGNALED(j.status[r]) && WTERMSIG(j.status[r]) == SIGKILL);
			continue;
		}
		expect_exit(&j, r, 0);
	}
	job_cleanup(&j);
}

static void test_kill_rank(void **state)
{
	(void)state;
	run_kill(3, 2);
	run_kill(5, 3);
}

static void test_kill_rank0(void **state)
{
	(void)state;
	run_kill(3, 0);
}

/* Rank 1 gives up: everyone hears why. */
static int abort_fn(struct job *j, int rank, struct bootstrap *b)
{
	(void)j;
	child_check(!bootstrap_barrier(b), __LINE__, "barrier");
	if (rank == 1) {
		/* Let the others finish the first barrier: an abort cancels calls in flight. */
		msleep(200);
		bootstrap_abort(b, "GPU 1 fell off the bus");
		child_check(*bootstrap_abort_flag(b) != 0, __LINE__, "own flag");
	} else {
		child_check(bootstrap_barrier(b) == -ECANCELED, __LINE__, "barrier cancelled");
	}
	child_check(!strcmp(bootstrap_abort_reason(b), "rank 1 aborted: GPU 1 fell off the bus"),
		    __LINE__, "reason");
	bootstrap_close(b);
	return 0;
}

static void test_abort(void **state)
{
	struct job j = {.n = 4, .timeout_ms = 10000, .fn = abort_fn};
	double s;

	(void)state;
	job_start(&j);
	s = job_finish(&j);
	for (int r = 0; r < j.n; r++)
		expect_exit(&j, r, 0);
	assert_true(s < 5);
	job_cleanup(&j);
}

/* Ranks 2 and 3 never join the barrier: rank 0 names them, everyone learns it. */
static int late_fn(struct job *j, int rank, struct bootstrap *b)
{
	const char *want = "timed out after 1s waiting for ranks 2,3 (barrier)";
	uint64_t t0 = time_now_ns();
	int ret;

	(void)j;
	if (rank >= 2) {
		msleep(1800);
		child_check(*bootstrap_abort_flag(b) != 0, __LINE__, "late ranks see the abort");
	} else {
		ret = bootstrap_barrier(b);
		child_check(ret == (rank == 0 ? -ETIMEDOUT : -ECANCELED), __LINE__, "barrier ret");
		child_check(time_now_ns() - t0 < 1600000000ull, __LINE__, "bounded by the timeout");
	}
	child_check(strstr(bootstrap_abort_reason(b), want) != NULL, __LINE__, "reason");
	bootstrap_close(b);
	return 0;
}

static void test_timeout_names_ranks(void **state)
{
	struct job j = {.n = 4, .timeout_ms = 1000, .fn = late_fn};

	(void)state;
	job_start(&j);
	job_finish(&j);
	for (int r = 0; r < j.n; r++)
		expect_exit(&j, r, 0);
	assert_non_null(strstr(read_log(&j, 0),
			       "bootstrap: timed out after 1s waiting for ranks 2,3 (barrier)"));
	job_cleanup(&j);
}

/* Rank 2 never starts: rank 0's open names it, rank 1 (already in) is told. */
static int missing_open_fn(struct job *j, int rank)
{
	struct bootstrap *b;
	int ret;

	if (rank == 2)
		return 0;
	ret = open_rank(j, rank, &b);
	if (rank == 0) {
		child_check(ret == -ETIMEDOUT, __LINE__, "open times out");
		return 0;
	}
	child_check(ret == 0, __LINE__, "rank 1 opens");
	child_check(bootstrap_barrier(b) == -ECANCELED, __LINE__, "barrier cancelled");
	child_check(strstr(bootstrap_abort_reason(b), "waiting for rank 2 to connect") != NULL,
		    __LINE__, "reason names rank 2");
	bootstrap_close(b);
	return 0;
}

static void test_open_timeout(void **state)
{
	struct job j = {.n = 3, .timeout_ms = 700, .open_fn = missing_open_fn};

	(void)state;
	job_start(&j);
	job_finish(&j);
	for (int r = 0; r < j.n; r++)
		expect_exit(&j, r, 0);
	assert_non_null(strstr(read_log(&j, 0), "timed out after 0.7s waiting for rank 2 to "
						 "connect"));
	job_cleanup(&j);
}

/* Nobody listens: a rank > 0 gives up after timeout_ms, naming the address. */
static void test_connect_timeout(void **state)
{
	struct bootstrap_opts o = {.rank = 1, .nranks = 2, .token = TOKEN, .timeout_ms = 300};
	struct bootstrap *b = (struct bootstrap *)&o;
	char addr[64];
	uint64_t t0 = time_now_ns();

	(void)state;
	free_addr(addr, sizeof(addr));
	o.addr = addr;
	assert_int_equal(bootstrap_open(&o, &b), -ETIMEDOUT);
	assert_null(b);
	assert_true(time_now_ns() - t0 < 1000000000ull);
}

/* Mismatched allgather lengths are a protocol error that stops the job. */
static int mismatch_fn(struct job *j, int rank, struct bootstrap *b)
{
	uint8_t mine[16] = {0}, all[16 * MAX_RANKS];
	int ret = bootstrap_allgather(b, mine, all, rank == 1 ? 8 : 16);

	(void)j;
	child_check(ret == (rank == 0 ? -EPROTO : -ECANCELED), __LINE__, "allgather fails");
	child_check(strstr(bootstrap_abort_reason(b), "rank 1 gave 8 bytes to allgather") != NULL,
		    __LINE__, "reason");
	bootstrap_close(b);
	return 0;
}

static void test_len_mismatch(void **state)
{
	struct job j = {.n = 3, .timeout_ms = 5000, .fn = mismatch_fn};

	(void)state;
	job_start(&j);
	job_finish(&j);
	for (int r = 0; r < j.n; r++)
		expect_exit(&j, r, 0);
	job_cleanup(&j);
}

static void test_wire_header(void **state)
{
	struct bs_hdr h = {.magic = BS_MAGIC, .version = BS_VERSION, .type = BS_UP,
			   .op = BS_OP_BCAST, .seq = 77, .len = 1000}, g;
	uint8_t buf[BS_HDR_LEN];
	const char *why = NULL;
	char host[64], port[8];

	(void)state;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), 0);
	assert_int_equal(g.seq, 77);
	assert_int_equal(g.len, 1000);
	assert_int_equal(g.op, BS_OP_BCAST);
	h.len = BS_MAX_PAYLOAD + 1;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), -EPROTO);
	assert_string_equal(why, "length out of bounds");
	h.len = 3;
	h.type = BS_HELLO;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), -EPROTO);
	h.type = 99;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), -EPROTO);
	assert_string_equal(why, "unknown message type");
	h.type = BS_UP;
	h.version = 2;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), -EPROTO);
	assert_int_equal(bs_split_addr("[::1]:80", host, sizeof(host), port, sizeof(port)), 0);
	assert_string_equal(host, "::1");
	assert_string_equal(port, "80");
	assert_int_equal(bs_split_addr("10.0.0.1:29500", host, sizeof(host), port, sizeof(port)),
			 0);
	assert_string_equal(host, "10.0.0.1");
	assert_int_equal(bs_split_addr("h:x", host, sizeof(host), port, sizeof(port)), -EINVAL);
	assert_int_equal(bs_split_addr(":1", host, sizeof(host), port, sizeof(port)), -EINVAL);
	assert_int_equal(bs_split_addr("h:", host, sizeof(host), port, sizeof(port)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wire_header),
		cmocka_unit_test(test_coll_1),
		cmocka_unit_test(test_coll_2),
		cmocka_unit_test(test_coll_3),
		cmocka_unit_test(test_coll_5),
		cmocka_unit_test(test_strangers),
		cmocka_unit_test(test_kill_rank),
		cmocka_unit_test(test_kill_rank0),
		cmocka_unit_test(test_abort),
		cmocka_unit_test(test_timeout_names_ranks),
		cmocka_unit_test(test_open_timeout),
		cmocka_unit_test(test_connect_timeout),
		cmocka_unit_test(test_len_mismatch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
