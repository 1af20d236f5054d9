/*
 * Test-only harness shared by the bootstrap tests: a job of forked ranks on 127.0.0.1,
 * each rank's stderr kept in a file, children reporting through their exit status.
 */
#ifndef GS_LAUNCH_BOOTSTRAP_TEST_JOB_H
#define GS_LAUNCH_BOOTSTRAP_TEST_JOB_H

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
#include "util/common.h"
#include "util/timeutil.h"

#define MAX_RANKS 8
#define TOKEN	  "test-token-0123456789abcdef"
#define TAG	  0x1234abcd5678ef00ull

/* One job of forked ranks: what each child runs and what the parent learns. */
struct job {
	int n;
	int timeout_ms;
	bool inherit; /* rank 0 adopts a listener bound by the parent */
	int listen_fd;
	const char *host; /* rendezvous host, NULL = 127.0.0.1 */
	char addr[96];
	int ready[2]; /* children write a byte here at chosen points */
	int (*fn)(struct job *j, int rank, struct bootstrap *b);
	int (*open_fn)(struct job *j, int rank); /* replaces open + fn when set */
	pid_t pid[MAX_RANKS];
	int status[MAX_RANKS];
	char log[MAX_RANKS][64]; /* each rank's stderr, kept in a file */
	struct activity acts[ACT_THREADS]; /* in a child, its own: what its PONG reports */
	/* rank 0's bootstrap_opts.on_self_stuck (NULL: none) */
	void (*on_self_stuck)(void *ctx, const struct bootstrap_rank_state *self, const char *why);
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
	struct bootstrap_opts o = {.rank = rank,
				   .nranks = j->n,
				   .addr = j->addr,
				   .token = TOKEN,
				   .timeout_ms = j->timeout_ms,
				   .acts = j->acts,
				   .nacts = ACT_THREADS};

	if (rank == 0 && j->inherit)
		o.listen_fd = j->listen_fd;
	if (rank == 0)
		o.on_self_stuck = j->on_self_stuck;
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
	if (j->host) {
		/* Same port, another spelling of this host. */
		unsigned int port = (unsigned int)atoi(strrchr(j->addr, ':') + 1);

		snprintf(j->addr, sizeof(j->addr), strchr(j->host, ':') ? "[%s]:%u" : "%s:%u",
			 j->host, port);
	}
	for (int r = 0; r < j->n; r++) {
		snprintf(j->log[r], sizeof(j->log[r]), "/tmp/bootstrap_test.%d.%d.log",
			 (int)getpid(), r);
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
static GS_UNUSED void job_wait_ready(struct job *j, int count)
{
	for (int i = 0; i < count; i++) {
		struct pollfd p = {.fd = j->ready[0], .events = POLLIN};
		char c;

		assert_int_equal(poll(&p, 1, 10000), 1);
		assert_int_equal(read(j->ready[0], &c, 1), 1);
	}
}

/* Reap every rank (killing stragglers after 15 s); returns the elapsed seconds. */
static GS_UNUSED double job_finish(struct job *j)
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

static GS_UNUSED void signal_ready(struct job *j)
{
	child_check(write(j->ready[1], "r", 1) == 1, __LINE__, "ready pipe");
}

/* Collectives with checked results, then a clean close that must not abort anyone. */
#endif
