/* The signals that end a run politely (report written, status "interrupted"): one list. */
#ifndef GS_UTIL_STOPSIG_H
#define GS_UTIL_STOPSIG_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/common.h"

/*
 * Ctrl-C, kill, and the terminal going away (an ssh session that dropped: SIGHUP, whose
 * default action would leave report.json saying "running" forever). SIGHUP counts only
 * where it is not ignored: under nohup the user asked for the run to outlive the terminal,
 * and a blocked signal is queued even when ignored, so adding it to a sigtimedwait set
 * would undo nohup.
 */
static inline bool stop_sig_wanted(int sig)
{
	struct sigaction old;

	if (sig != SIGHUP)
		return true;
	return sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler != SIG_IGN;
}

static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP };

static inline bool stop_sig_is(int sig)
{
	for (size_t i = 0; i < ARRAY_SIZE(stop_sigs); i++) {
		if (sig == stop_sigs[i])
			return true;
	}
	return false;
}

/* Add (del = false) or remove the stop signals that apply here to or from *set. */
static inline void stop_sigs_set(sigset_t *set, bool del)
{
	for (size_t i = 0; i < ARRAY_SIZE(stop_sigs); i++) {
		if (!stop_sig_wanted(stop_sigs[i]))
			continue;
		if (del)
			sigdelset(set, stop_sigs[i]);
		else
			sigaddset(set, stop_sigs[i]);
	}
}

/* Install handler (SIG_DFL, or a function) for each stop signal that applies here. */
static inline void stop_sigs_handle(void (*handler)(int))
{
	struct sigaction sa = { .sa_handler = handler };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(stop_sigs); i++) {
		if (stop_sig_wanted(stop_sigs[i]))
			sigaction(stop_sigs[i], &sa, NULL);
	}
}

#endif
