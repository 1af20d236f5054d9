/*
 * Benchmark (not a test) for the idle policy's constants (src/coll/comm.h): what a sleep
 * costs on this host. Two processes ping-pong one message over loopback TCP; the waiting
 * side polls the socket and, once a wait is SPIN_NS long, sleeps in epoll_wait until the
 * bytes come (SPIN_NS 0: sleeps at once; huge: never sleeps), or, given "policy", idles
 * as the executor does with a CPU per rank (comm_idle_action, timed yields that find a
 * shared CPU). The round trip's p50 against SPIN_NS is the price of a wake-up; run the
 * modes in turn, several times, to compare them under the same load.
 *   cc -O2 -Isrc -Ibuild tests/bench/tcp_wake.c build/libgradsync.a -pthread \
 *      $(sed -n 's/^libs = //p' build/config.ninja) -o tcp_wake
 *   ./tcp_wake SPIN_NS|policy [BYTES [ITERS]]   -> one line: avg, p50, p90, p99 round trip
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "coll/comm.h"

#define POLICY (-1LL) /* spin_ns: idle as comm_idle does */

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* comm_idle's glue around comm_idle_action (one transport that can sleep, host memops). */
static void idle_policy(int ep, uint32_t spins, long long idle_ns, bool *contended)
{
	struct epoll_event e;
	long long t;

	if (!comm_idle_reads_clock(*contended, spins))
		return;
	switch (comm_idle_action(false, *contended, true, spins, (uint64_t)idle_ns)) {
	case COMM_IDLE_WAIT:
		epoll_wait(ep, &e, 1, COMM_WAIT_MS);
		break;
	case COMM_IDLE_YIELD:
		t = now_ns();
		sched_yield();
		*contended = now_ns() - t > (long long)COMM_YIELD_BUSY_NS;
		break;
	default:
		break;
	}
}

/* Receive n bytes: poll, and sleep in epoll once the wait is spin_ns long. */
static int get(int fd, int ep, char *b, size_t n, long long spin_ns)
{
	static bool contended; /* kept from wait to wait, as comm_idle keeps it */
	long long t0 = 0;
	uint32_t spins = 0;
	size_t got = 0;

	while (got < n) {
		ssize_t r = recv(fd, b + got, n - got, MSG_DONTWAIT);
		struct epoll_event e;

		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r == 0 || errno != EAGAIN)
			return -1;
		if (!t0)
			t0 = now_ns();
		if (spin_ns == POLICY)
			idle_policy(ep, ++spins, now_ns() - t0, &contended);
		else if (now_ns() - t0 >= spin_ns && epoll_wait(ep, &e, 1, 1000) < 0 &&
			 errno != EINTR)
			return -1;
	}
	return 0;
}

static int put(int fd, const char *b, size_t n)
{
	for (size_t s = 0; s < n;) {
		ssize_t r = send(fd, b + s, n - s, MSG_NOSIGNAL);

		if (r < 0)
			return -1;
		s += (size_t)r;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long long spin_ns = argc < 2 ? 0 : strcmp(argv[1], "policy") ? atoll(argv[1]) : POLICY, *t;
	size_t len = argc > 2 ? (size_t)atol(argv[2]) : 4096;
	int iters = argc > 3 ? atoi(argv[3]) : 5000, warm = 100, one = 1, fd, ep, lfd;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET};
	socklen_t al = sizeof(a);
	double sum = 0;
	char *buf;
	pid_t child;

	if (argc < 2 || iters < 100 || !len) {
		fprintf(stderr, "usage: tcp_wake SPIN_NS|policy [BYTES [ITERS >= 100]]\n");
		return 2;
	}
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(lfd, (struct sockaddr *)&a, &al) || listen(lfd, 1)) {
		perror("tcp_wake: listen on loopback");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("tcp_wake: fork");
		return 1;
	}
	if (!child) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
			_exit(1);
	} else {
		fd = accept(lfd, NULL, NULL);
	}
	buf = calloc(1, len);
	t = calloc((size_t)iters, sizeof(*t));
	ep = epoll_create1(0);
	if (fd < 0 || !buf || !t || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one))) {
		perror("tcp_wake: setup");
		return 1;
	}
	for (int i = 0; i < warm + iters; i++) {
		long long t0 = now_ns();
		int err = child ? put(fd, buf, len) || get(fd, ep, buf, len, spin_ns)
				: get(fd, ep, buf, len, spin_ns) || put(fd, buf, len);

		if (err) {
			perror("tcp_wake: exchange");
			return 1;
		}
		if (i >= warm)
			t[i - warm] = now_ns() - t0;
	}
	if (!child)
		_exit(0);
	waitpid(child, NULL, 0);
	for (int i = 0; i < iters; i++)
		sum += (double)t[i];
	qsort(t, (size_t)iters, sizeof(*t), cmp_ll);
	printf("%s %lld ns, %zu B: round trip avg %.1f p50 %.1f p90 %.1f p99 %.1f us\n",
	       spin_ns == POLICY ? "policy" : "spin", spin_ns == POLICY ? 0 : spin_ns, len,
	       sum / iters / 1e3, t[iters / 2] / 1e3, t[iters * 9 / 10] / 1e3,
	       t[iters * 99 / 100] / 1e3);
	return 0;
}
