/*
 * What a rank's application threads are doing, for rank 0's probe after a failed case
 * (launch/bootstrap.h, bootstrap_probe): each thread owns one record and writes it at
 * the edges of the work that must end when the job aborts (a case's setup, a
 * collective, a wait on a peer that lasted, a GPU sync); the bootstrap's reader thread
 * reads it when rank 0 asks. A thread that has been inside such work for longer than a
 * grace after its rank heard of the abort has not reacted to it: it is stuck (a
 * deadlock, a spin, a driver call that never returns), and the ranks that timed out
 * waiting on it only named the peer they waited on.
 *
 * Cost: a write is four relaxed stores (a sequence count around the fields, no lock, no
 * syscall, no allocation), made once per collective and once per wait that lasted; the
 * caller supplies the clock it already read. Any thread may read; a record being
 * written is read again (bounded).
 */
#ifndef GS_UTIL_ACTIVITY_H
#define GS_UTIL_ACTIVITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The vocabulary (one table in activity.c: its text, whether it is work of a case). */
enum act_what {
	ACT_NONE = 0,	/* not started, or parked between works (the DDP comm thread) */
	ACT_SETUP,	/* setting up a case: agreement, buffers, GPU, transports */
	ACT_CASE,	/* running a case, outside any collective */
	ACT_ALLREDUCE,	/* inside an AllReduce (seq), moving */
	ACT_P2P,	/* inside a point-to-point measurement with peer */
	ACT_RECV,	/* an AllReduce (seq) waits on a receive from peer */
	ACT_SEND,	/* an AllReduce (seq) waits on a send to peer */
	ACT_MEMOPS,	/* an AllReduce (seq) waits on its memops (GPU work when staged) */
	ACT_GPU_SYNC,	/* waits for a GPU stream to drain */
	ACT_TEST_DELAY, /* in the test hook GRADSYNC_TEST_DELAY's sleep */
	ACT_CLOSING,	/* returned from the case: closing its transports, its results */
	ACT_COUNT,
};

/* The application threads a rank reports on (the index is on the wire). */
enum act_thread {
	ACT_THREAD_MAIN = 0,
	ACT_THREAD_COMM, /* the DDP workload's comm thread, which runs its AllReduces */
	ACT_THREADS,
};

/* One thread's record; zeroed = ACT_NONE since 0. Written by its thread only. */
struct activity {
	uint32_t gen;	   /* odd while the owner writes; atomic */
	uint32_t what;	   /* enum act_what; atomic */
	int32_t peer;	   /* -1: none; atomic */
	uint32_t seq;	   /* the collective's sequence number; atomic */
	uint64_t since_ns; /* time_now_ns() when `what` began; atomic */
};

/* A state to return to (act_enter / act_leave). */
struct act_mark {
	uint32_t what;
	int32_t peer;
	uint32_t seq;
};

/* A consistent copy of a record, with its age: what a rank tells rank 0. */
struct act_snap {
	uint8_t thread;	 /* enum act_thread */
	uint8_t what;	 /* enum act_what */
	int32_t peer;	 /* -1: none */
	uint32_t seq;
	uint32_t age_ms; /* how long the thread has been in `what` (capped) */
};

/* Owner only; a NULL record (nobody listens) costs a test. */
static inline void act_set(struct activity *a, enum act_what w, int peer, uint32_t seq,
			   uint64_t now_ns)
{
	uint32_t g;

	if (!a)
		return;
	g = __atomic_load_n(&a->gen, __ATOMIC_RELAXED);
	__atomic_store_n(&a->gen, g + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&a->what, (uint32_t)w, __ATOMIC_RELAXED);
	__atomic_store_n(&a->peer, (int32_t)peer, __ATOMIC_RELAXED);
	__atomic_store_n(&a->seq, seq, __ATOMIC_RELAXED);
	__atomic_store_n(&a->since_ns, now_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&a->gen, g + 2, __ATOMIC_RELEASE);
}

/* Owner only: enter w, keeping in *m the state to come back to with act_leave. */
static inline void act_enter(struct activity *a, enum act_what w, int peer, uint32_t seq,
			     uint64_t now_ns, struct act_mark *m)
{
	*m = (struct act_mark){ .what = ACT_NONE, .peer = -1 };
	if (!a)
		return;
	*m = (struct act_mark){ .what = __atomic_load_n(&a->what, __ATOMIC_RELAXED),
				.peer = __atomic_load_n(&a->peer, __ATOMIC_RELAXED),
				.seq = __atomic_load_n(&a->seq, __ATOMIC_RELAXED) };
	act_set(a, w, peer, seq, now_ns);
}

static inline void act_leave(struct activity *a, const struct act_mark *m, uint64_t now_ns)
{
	if (a)
		act_set(a, (enum act_what)m->what, m->peer, m->seq, now_ns);
}

/* Any thread: a consistent copy of a's state as of now_ns; false when the owner kept
 * writing through every try (then *s says ACT_NONE). */
bool act_read(const struct activity *a, enum act_thread thread, uint64_t now_ns,
	      struct act_snap *s);

/* The table's text, "" past its end. */
const char *act_name(enum act_what w);
const char *act_thread_name(enum act_thread t);
/* Must the thread leave `w` once the job aborts? (Work of a case; not ACT_NONE,
 * ACT_CLOSING.) */
bool act_in_case(enum act_what w);
/* Is `w` a wait for the GPU that only the GPU's work ends (ACT_GPU_SYNC)? */
bool act_gpu_wait(enum act_what w);

/*
 * The policy that tells a stuck thread from a slow one. abort_age_ms: how long its rank
 * has known the job aborted (ACT_NO_ABORT: it has not heard). A thread in work of a case
 * (act_in_case) for at least grace_ms, grace_ms or more after the abort, has not reacted:
 * ACT_STUCK; or ACT_GPU_WAIT when that work is a wait for the GPU (act_gpu_wait), which
 * may not end before the GPU's work does, abort or not (that work uses the case's
 * buffers), so that a long kernel is not told as a hung rank. One that may still react:
 * ACT_EARLY, *wait_ms until the verdict can be known. Any other: ACT_FINE (it returned,
 * or its rank never heard of the abort). Ordered: a later verdict says more.
 */
#define ACT_NO_ABORT UINT32_MAX
enum act_verdict {
	ACT_FINE,
	ACT_EARLY,
	ACT_GPU_WAIT,
	ACT_STUCK,
};
enum act_verdict act_judge(const struct act_snap *s, uint32_t abort_age_ms, uint32_t grace_ms,
			   uint32_t *wait_ms);

/*
 * Which of a rank's n thread states to report: the one with the latest verdict (stuck,
 * then in a GPU wait, then still early), else the first (the main thread); among
 * several, the one that entered its state last (the innermost: a collective inside the
 * case).
 */
int act_pick(const struct act_snap *s, int n, uint32_t abort_age_ms, uint32_t grace_ms);

/* "waiting on recv from peer 1 in allreduce seq 12" (the state, without its age) into
 * buf; returns buf. */
const char *act_describe(const struct act_snap *s, char *buf, size_t len);

#endif
