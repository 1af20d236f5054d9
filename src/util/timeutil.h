/* Clocks: monotonic wall time and per-thread CPU time, in nanoseconds. */
#ifndef GS_UTIL_TIMEUTIL_H
#define GS_UTIL_TIMEUTIL_H

#include <stdint.h>
#include <time.h>

static inline uint64_t time_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The same clock at its tick's resolution (1-4 ms), a few ns a read: when bytes last
 * moved, for a diagnostic in seconds, read on the data path. Never after time_now_ns()
 * of the same moment, so now - coarse never wraps. */
static inline uint64_t time_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time consumed by the calling thread; progress threads report it as CPU s/GB. */
static inline uint64_t time_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ns as a timespec: a span (sigtimedwait), or an instant of time_now_ns's clock
 * (pthread_cond_timedwait on a condition variable set to CLOCK_MONOTONIC). */
static inline struct timespec time_ns_ts(uint64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000ull),
				  .tv_nsec = (long)(ns % 1000000000ull) };
}

/* Sleep ns nanoseconds (test hooks, pauses off the data path; never on a timed span). */
static inline void time_sleep_ns(uint64_t ns)
{
	struct timespec ts = time_ns_ts(ns);

	while (nanosleep(&ts, &ts))
		;
}

#endif
