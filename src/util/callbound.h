/*
 * Library calls that may block without bound in the kernel (a wedged GPU driver in cuInit, a
 * dead HCA in ibv_open_device or ibv_query_port), a group of them run on a thread of its own
 * (util/bounded.h) within a timeout, each noted before it is made (callbound_note), so that a
 * caller that gave up names the call and what it was on: "cuInit did not return within 30s",
 * on "CUDA driver". Such a call cannot be cancelled: it is left to return, if ever, and its
 * group's drop frees what it holds then. It holds the library too (its locks, a once-only
 * initialisation): a caller that gave up makes no further call into that library.
 *
 * A stop signal (util/stopsig.h) that comes while the caller waits ends the wait as it ends
 * fsbound's (util/fsbound.h, FSB_STOP_GRACE_NS): -EINTR, and where the signal's action was
 * the default one, fsb_stop_signo() tells main to end with 128 + the signal.
 *
 * The test hook GRADSYNC_TEST_HANG=CALL[,CALL...] (README): a note of one of those calls
 * ("cuInit", "ibv_get_device_list") blocks there, in place of the call, until the process
 * ends, so that tests make a wedged driver on a node that has none. Only on a bounded
 * group's thread: the hook never hangs anything without a bound.
 */
#ifndef GS_UTIL_CALLBOUND_H
#define GS_UTIL_CALLBOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a group given up on was. */
struct callbound_at {
	const char *op;   /* the call that did not return ("cuInit"); "start" before the first */
	char obj[64];     /* what it was on ("CUDA driver", "mlx5_0 port 1") */
};

/*
 * fn(arg) on a thread of its own within timeout_ns, noting each call that may block with
 * callbound_note before it. 0 once fn has returned: arg is the caller's again, fn's outcome
 * in it. Else -ETIMEDOUT (the bound) or -EINTR (a stop signal, or one taken before: nothing
 * attempted), or -ENOMEM; at filled (obj what when no note was made) and why saying it
 * ("cuInit did not return within 30s", "stopped by SIGTERM while cuInit was pending"); arg
 * is the group's: drop(arg) runs once fn returns (at once when fn never ran), and the
 * caller must not touch arg again. On a group's own thread fn(arg) is called right there.
 * callbound_run_group of a group without a hint.
 */
int callbound_run(void (*fn)(void *arg), void *arg, void (*drop)(void *arg), const char *what,
		  uint64_t timeout_ns, struct callbound_at *at, char *why, size_t whylen);

/* One group of callbound_run_all: what it runs, and what became of it. */
struct callbound_group {
	void (*fn)(void *arg);
	void *arg;              /* NULL: its allocation failed: not run, ret -ENOMEM */
	void (*drop)(void *arg);
	const char *what;       /* what fn works on, named before its first note ("CUDA driver") */
	const char *hint;       /* a timeout's why ends with it, in parentheses ("driver
				 * wedged?"); NULL none */
	/* out: as callbound_run's return, at and why */
	int ret;
	struct callbound_at at;
	char why[160];
};

/*
 * The groups g[0..n) started at once, each on a thread of its own, and waited for against
 * one deadline, timeout_ns from now: however many do not return, the caller waits one
 * bound (a stop signal: its grace), and each one given up on is named in its own
 * g[i]. Each g[i] ends as callbound_run would have ended it alone (ret, at, why; arg the
 * caller's again only when ret is 0, else the group's). Returns -EINTR when a stop signal
 * ended the wait (or had been taken: nothing attempted), else 0, whatever the groups' ret.
 */
int callbound_run_all(struct callbound_group *g, size_t n, uint64_t timeout_ns);
/* One group, alone: as callbound_run (its return, at and why), with g's hint. */
int callbound_run_group(struct callbound_group *g, uint64_t timeout_ns, struct callbound_at *at,
			char *why, size_t whylen);
/* On a group's thread: the call about to be made (a literal) and its object (copied; NULL:
 * the last note's, for a step deep in code that does not know it); on any other thread
 * nothing, so that code shared with callers outside groups may note. */
void callbound_note(const char *op, const char *obj);
/* Does the test hook GRADSYNC_TEST_HANG name call op? (A caller that asks a library only
 * when the node shows the hardware asks anyway then: the hook stands in for both.) */
bool callbound_test_hang(const char *op);

#endif
