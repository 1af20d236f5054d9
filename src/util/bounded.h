/*
 * A call that may block without bound (getaddrinfo on a silent resolver, I/O on a
 * hard-mounted NFS directory whose server is gone) run on a detached thread of its own,
 * its caller waiting no later than a deadline. Such a thread cannot be cancelled: a call
 * in uninterruptible sleep ends only when the kernel lets it, so the thread is left to end
 * on its own and to free what it holds; the process's exit itself may wait in the kernel
 * until that call returns (NFS's waits are killable: exit ends them).
 */
#ifndef GS_UTIL_BOUNDED_H
#define GS_UTIL_BOUNDED_H

#include <signal.h>
#include <stdint.h>

struct bounded_ops {
	/* The call, on the thread: its results go into arg. */
	void (*call)(void *arg);
	/* Optional, on the caller, at its deadline, the call still under way: what arg says
	 * of where it is may be read now (never after bounded_run has returned). */
	void (*abandon)(void *arg);
	/* On the thread, after a call whose caller gave up: frees arg and its results. */
	void (*drop)(void *arg);
	/* How long a call may still take once the stop flag is raised: one about to return
	 * (an fsync on a busy disk) is let finish, and hands its results back, rather than
	 * be given up on and counted as stuck. 0: given up on at once. */
	uint64_t stop_grace_ns;
};

/* How often a wait given a stop flag looks at it. */
#define BOUNDED_STOP_POLL_NS 50000000ull

/*
 * ops->call(arg) on a thread of its own, every signal blocked there (a process-wide one
 * goes to a thread that can take it). Returns 0 once the call has returned: arg is the
 * caller's again, results and all. -ETIMEDOUT at deadline_ns (time_now_ns's clock), or
 * -EINTR when the call is still under way ops->stop_grace_ns after *stop turned non-zero
 * (stop: optional, a flag a stop signal's handler raises; a handler cannot wake a
 * condition variable, so the caller looks at it every BOUNDED_STOP_POLL_NS): arg now
 * belongs to the call, whose thread runs ops->drop(arg) when it returns; the caller must
 * not touch arg again. When no thread can be made (EAGAIN), the call runs on the
 * caller's, unbounded, as it would without this helper, and 0 is returned.
 */
int bounded_run(const struct bounded_ops *ops, void *arg, uint64_t deadline_ns,
		volatile const sig_atomic_t *stop);

/*
 * bounded_run in two steps, for a caller that runs several calls at once and waits for
 * them against one deadline. bounded_start starts the call: the job to wait for, or NULL
 * when the call ran on the caller's thread already (no memory or no thread to spare:
 * unbounded, as without this helper) and returned. bounded_wait waits for it as
 * bounded_run does, with the same outcomes (NULL: 0 at once); each job started is waited
 * for exactly once, which frees it or hands it to its thread. With a deadline already
 * past it only takes a job that has returned (-EINTR rather than -ETIMEDOUT when *stop
 * is raised).
 */
struct bounded_job;
struct bounded_job *bounded_start(const struct bounded_ops *ops, void *arg);
int bounded_wait(struct bounded_job *j, uint64_t deadline_ns, volatile const sig_atomic_t *stop);

/*
 * How many calls given up on have not returned yet, process-wide. Each may hold its
 * library's locks (a wedged driver's cuInit holds the CUDA runtime's): the exit handlers
 * and destructors of that library could wait on them for ever, so main skips them while
 * one is under way (its own output flushed first).
 */
int bounded_pending(void);

#endif
