/*
 * Live progress of a run on rank 0 (fio / nccl-tests style), on stderr so that the
 * report table on stdout stays clean: a line per case, a live line (case k/N, size,
 * iteration, elapsed, ETA) redrawn in place on a terminal and printed as plain lines
 * otherwise, and permanent rows (each size as soon as it is measured). A ticker thread
 * redraws the live line from the last state progress_tick() stored, so a line comes at
 * least every PROGRESS_PLAIN_NS even while one iteration runs for longer. Disabled,
 * every call is a no-op and no thread exists: ranks other than 0 and -q pass
 * enabled = false. Calls are thread-safe (one mutex around state and output).
 */
#ifndef GS_UTIL_PROGRESS_H
#define GS_UTIL_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PROGRESS_TTY_NS 200000000ull    /* a terminal's live line is redrawn 5x a second */
#define PROGRESS_PLAIN_NS 1000000000ull /* otherwise a plain line every second */

struct progress {
	FILE *f;
	bool enabled;
	bool tty;
	bool live_shown;        /* a live line is on screen (terminal only) */
	bool have_state;        /* a tick came since the case began */
	bool ticker;            /* the ticker thread runs */
	bool stop;
	pthread_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t case_t0_ns;    /* when the current case began */
	uint64_t last_ns;       /* last live line */
	int case_k, ncases;     /* 1-based case number, number of cases */
	char what[48];          /* last tick: what runs, iteration i of n, share done */
	int i, n;
	double done;
	bool waiting;           /* progress_wait: i of n ranks are there, no ETA */
};

/* f NULL = stderr; tty is probed with isatty(); starts the ticker when enabled. */
void progress_init(struct progress *p, FILE *f, bool enabled);
/* Stops the ticker and clears a live line. */
void progress_fini(struct progress *p);
/* "case k/N: name (n ranks)" and the start of the case's clock. */
void progress_case(struct progress *p, int k, int ncases, const char *name, int nranks);
/*
 * What is running now ("64MiB", "iteration"), its iteration i of n and the share of
 * the case done (0..1, for the ETA); prints only when the interval has passed.
 */
void progress_tick(struct progress *p, const char *what, int i, int n, double done);
/*
 * Rank 0 waits on the other ranks ("connecting", before a case's first tick; "waiting
 * for ranks" before the first case): the live line says how many of n ranks are there
 * and how long it has waited, redrawn by the ticker. progress_arrived() updates the
 * count and does nothing unless a wait is on (a barrier between iterations keeps the
 * iteration's line); a tick, progress_idle() or the next case ends the wait.
 */
void progress_wait(struct progress *p, const char *what, int arrived, int n);
void progress_arrived(struct progress *p, int arrived, int n);
/* The case is between ticks' subjects (measured, gathering): the ticker stays quiet. */
void progress_idle(struct progress *p);
/* A permanent line (a measured size's row, a header); clears the live line first. */
void progress_row(struct progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The live line text into buf: pure, for tests. */
void progress_format(char *buf, size_t len, int k, int ncases, const char *what, int i, int n,
		     double elapsed_s, double done);
/* A wait's live line: "case 3/10: connecting, 2/4 ranks, 1.0s" (k 0: before any case,
 * "waiting for ranks: 2/4 ranks, 1.0s"). Pure, for tests. */
void progress_format_wait(char *buf, size_t len, int k, int ncases, const char *what,
			  int arrived, int n, double elapsed_s);

#endif
