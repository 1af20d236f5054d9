/*
 * Test-only: what comes 200 ms into a wait the test makes, from a thread of its own: a
 * stop signal to the waiting thread, or a flag raised, then a FIFO's reader opened (the
 * stuck open it lets return). The bounded waits' tests (fsbound, callbound) share it.
 *   struct later l = { .sig = SIGTERM }; later_start(&l); ...wait...; later_join(&l);
 * Include after cmocka.h.
 */
#ifndef GS_UTIL_TEST_LATER_H
#define GS_UTIL_TEST_LATER_H

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

struct later {
	pthread_t to;
	int sig;
	volatile sig_atomic_t *flag;    /* raised to sig instead, when set */
	const char *reader;             /* then opened for reading 50 ms on, when set */
	int fd;
	pthread_t t;
};

static void *later_main(void *p)
{
	struct later *l = p;

	usleep(200000);
	if (l->flag)
		*l->flag = l->sig;
	else
		pthread_kill(l->to, l->sig);
	if (l->reader) {
		usleep(50000);
		l->fd = open(l->reader, O_RDONLY | O_NONBLOCK);
	}
	return NULL;
}

/* On the thread that is to wait: the signal goes to it. */
static inline void later_start(struct later *l)
{
	l->to = pthread_self();
	l->fd = -1;
	assert_int_equal(pthread_create(&l->t, NULL, later_main, l), 0);
}

static inline void later_join(struct later *l)
{
	pthread_join(l->t, NULL);
	if (l->fd >= 0)
		close(l->fd);
}

#endif
