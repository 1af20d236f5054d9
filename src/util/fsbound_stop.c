/*
 * Stop signals during a bounded file-system call (util/fsbound.h): the flag the caller's
 * wait looks at, from whoever takes the signals, and fsbound's own handler where no one
 * does. Process-wide by nature: a signal's disposition and its handler's flag are.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "util/fsbound.h"
#include "util/fsbound_int.h"
#include "util/stopsig.h"

/* The first stop signal fsbound's handler took (0: none). */
static volatile sig_atomic_t caught;
/* The one the program took itself and told of (fsb_stop_taken; 0: none). */
static volatile sig_atomic_t taken;

static struct {
	pthread_mutex_t lock;
	volatile const sig_atomic_t *watched; /* fsb_stop_watch's: the signals' owner's flag */
	int nwait;                            /* waits under way with fsbound's handler */
	sigset_t took;                        /* the signals given it (theirs was the default) */
} st = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void on_stop(int sig)
{
	if (!caught)
		caught = sig;
}

void fsb_stop_watch(volatile const sig_atomic_t *flag)
{
	pthread_mutex_lock(&st.lock);
	st.watched = flag;
	pthread_mutex_unlock(&st.lock);
}

int fsb_stop_signo(void)
{
	return caught;
}

void fsb_stop_taken(int sig)
{
	taken = sig;
}

int fsb_stop_taken_signo(void)
{
	return taken;
}

/* fsbound's handler for the stop signals whose action is the default one: the first wait
 * of several gives it, the last takes it back. Under st.lock. */
static void handler_hold(void)
{
	/* SA_RESTART: a call of another thread that the signal lands on is restarted, not
	 * failed with EINTR by a handler its code never expected */
	struct sigaction on = { .sa_handler = on_stop, .sa_flags = SA_RESTART }, old;

	if (st.nwait++)
		return;
	sigemptyset(&on.sa_mask);
	sigemptyset(&st.took);
	for (size_t i = 0; i < ARRAY_SIZE(stop_sigs); i++) {
		int sig = stop_sigs[i];

		/* SIG_IGN (nohup, a shell's background job) is no stop; a handler is its
		 * owner's, who said nothing (fsb_stop_watch): left alone */
		if (sigaction(sig, NULL, &old) || (old.sa_flags & SA_SIGINFO) ||
		    old.sa_handler != SIG_DFL)
			continue;
		sigaction(sig, &on, NULL);
		sigaddset(&st.took, sig);
	}
}

static void handler_release(void)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	if (--st.nwait)
		return;
	sigemptyset(&dfl.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(stop_sigs); i++) {
		if (sigismember(&st.took, stop_sigs[i]))
			sigaction(stop_sigs[i], &dfl, NULL);
	}
}

int fsb_stop_begin(struct fsb_stop *s, char *why, size_t whylen)
{
	sigset_t mask;
	int sig;

	*s = (struct fsb_stop){ 0 };
	sigemptyset(&s->unblocked);
	pthread_mutex_lock(&st.lock);
	if (st.watched) {
		/* raised before the call: its owner knows, and what it does now (the report of
		 * what ran) is to be done within the bound alone */
		s->flag = *st.watched ? NULL : st.watched;
		pthread_mutex_unlock(&st.lock);
		return 0;
	}
	sig = caught;
	if (sig) { /* taken in place of the default action: the verb is ending */
		pthread_mutex_unlock(&st.lock);
		snprintf(why, whylen, "not attempted: stopped by SIG%s", sigabbrev_np(sig) ?: "?");
		return -EINTR;
	}
	handler_hold();
	s->held = true;
	/* blocked on this thread: its owner takes them with sigtimedwait later (the driver of
	 * `gradsync run`, between cases); open to the handler while the call waits */
	pthread_sigmask(SIG_SETMASK, NULL, &mask);
	for (size_t i = 0; i < ARRAY_SIZE(stop_sigs); i++) {
		if (sigismember(&st.took, stop_sigs[i]) && sigismember(&mask, stop_sigs[i]))
			sigaddset(&s->unblocked, stop_sigs[i]);
	}
	pthread_mutex_unlock(&st.lock);
	pthread_sigmask(SIG_UNBLOCK, &s->unblocked, NULL);
	s->flag = &caught;
	return 0;
}

int fsb_stop_end(struct fsb_stop *s, int rc)
{
	int sig;

	if (!s->held)
		return rc == -EINTR ? *s->flag : 0;
	pthread_sigmask(SIG_BLOCK, &s->unblocked, NULL);
	pthread_mutex_lock(&st.lock);
	handler_release();
	sig = caught;
	if (sig && (rc != -EINTR || sigismember(&s->unblocked, sig)))
		caught = 0;
	pthread_mutex_unlock(&st.lock);
	if (!sig || (rc == -EINTR && !sigismember(&s->unblocked, sig)))
		return sig;
	/*
	 * Given back: pending again for the owner that had it blocked (after a call left
	 * pending too), or, after a call that returned in its grace, to its default action,
	 * which ends the process as it would have without fsbound (another wait still
	 * holding the handler takes it instead).
	 */
	raise(sig);
	return rc == -EINTR ? sig : 0;
}
