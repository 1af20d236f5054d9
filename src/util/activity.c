/*
 * Application threads' activity records (activity.h): the vocabulary's table, the
 * reader's consistent copy, and the pure policy that tells a stuck thread from a slow one.
 */
#include <stdio.h>

#include "util/activity.h"
#include "util/common.h"

/* How often a reader tries for a copy no write overlapped (a write is four stores). */
#define ACT_READ_TRIES 64

/*
 * One row per state: its text, completed by the peer ("... peer 1") and the collective's
 * seq where it has them (act_describe), whether the thread must leave it once the job
 * aborts, and whether it is a wait only the GPU's work ends (a stream sync: it cannot
 * look at the abort, and must not return while kernels still use the case's buffers;
 * the executor's memops waits poll and look at the abort like any other).
 */
/* clang-format off */
static const struct {
	const char *text;
	bool peer, seq;
	bool in_case;
	bool gpu_wait;
} act_table[ACT_COUNT] = {
	[ACT_NONE]	 = { "idle", false, false, false, false },
	[ACT_SETUP]	 = { "setting up the case", false, false, true, false },
	[ACT_CASE]	 = { "running the case, outside any collective", false, false, true, false },
	[ACT_ALLREDUCE]	 = { "in allreduce seq", false, true, true, false },
	[ACT_P2P]	 = { "in a point-to-point test with peer", true, false, true, false },
	[ACT_RECV]	 = { "waiting on recv from peer", true, true, true, false },
	[ACT_SEND]	 = { "waiting on send to peer", true, true, true, false },
	[ACT_MEMOPS]	 = { "waiting on its memops (GPU work when staged) in allreduce seq", false, true, true, false },
	[ACT_GPU_SYNC]	 = { "waiting for a GPU stream to drain", false, false, true, true },
	[ACT_TEST_DELAY] = { "in the test hook GRADSYNC_TEST_DELAY", false, false, true, false },
	[ACT_CLOSING]	 = { "ending the case (closing its transports, writing its results)", false, false, false, false },
};
/* clang-format on */

static const char *const act_threads[ACT_THREADS] = {
	[ACT_THREAD_MAIN] = "main thread",
	[ACT_THREAD_COMM] = "comm thread",
};

const char *act_name(enum act_what w)
{
	return (unsigned)w < ACT_COUNT ? act_table[w].text : "";
}

const char *act_thread_name(enum act_thread t)
{
	return (unsigned)t < ACT_THREADS ? act_threads[t] : "";
}

bool act_in_case(enum act_what w)
{
	return (unsigned)w < ACT_COUNT && act_table[w].in_case;
}

bool act_gpu_wait(enum act_what w)
{
	return (unsigned)w < ACT_COUNT && act_table[w].gpu_wait;
}

bool act_read(const struct activity *a, enum act_thread thread, uint64_t now_ns,
	      struct act_snap *s)
{
	for (int i = 0; i < ACT_READ_TRIES; i++) {
		uint32_t g = __atomic_load_n(&a->gen, __ATOMIC_ACQUIRE);
		uint32_t what = __atomic_load_n(&a->what, __ATOMIC_RELAXED);
		int32_t peer = __atomic_load_n(&a->peer, __ATOMIC_RELAXED);
		uint32_t seq = __atomic_load_n(&a->seq, __ATOMIC_RELAXED);
		uint64_t since = __atomic_load_n(&a->since_ns, __ATOMIC_RELAXED);
		uint64_t age;

		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if ((g & 1) || __atomic_load_n(&a->gen, __ATOMIC_RELAXED) != g)
			continue;
		age = now_ns > since ? (now_ns - since) / 1000000 : 0;
		*s = (struct act_snap){ .thread = (uint8_t)thread,
					.what = what < ACT_COUNT ? (uint8_t)what : ACT_NONE,
					.peer = peer,
					.seq = seq,
					.age_ms = (uint32_t)GS_MIN(age, (uint64_t)UINT32_MAX) };
		return true;
	}
	*s = (struct act_snap){ .thread = (uint8_t)thread, .what = ACT_NONE, .peer = -1 };
	return false;
}

enum act_verdict act_judge(const struct act_snap *s, uint32_t abort_age_ms, uint32_t grace_ms,
			   uint32_t *wait_ms)
{
	uint32_t known;

	*wait_ms = 0;
	if (!act_in_case(s->what) || abort_age_ms == ACT_NO_ABORT)
		return ACT_FINE;
	/* in this state since the abort, or since before it: it has been there so long */
	known = GS_MIN(s->age_ms, abort_age_ms);
	if (known >= grace_ms)
		return act_gpu_wait(s->what) ? ACT_GPU_WAIT : ACT_STUCK;
	*wait_ms = grace_ms - known;
	return ACT_EARLY;
}

int act_pick(const struct act_snap *s, int n, uint32_t abort_age_ms, uint32_t grace_ms)
{
	int best = 0;
	enum act_verdict bv = ACT_FINE;

	for (int i = 0; i < n; i++) {
		uint32_t w;
		enum act_verdict v = act_judge(&s[i], abort_age_ms, grace_ms, &w);

		/* stuck over a GPU wait over early over fine; then the state entered last
		 * (on a tie in ms, the later thread: the comm thread runs inside the main
		 * thread's case) */
		if (v > bv || (v == bv && v != ACT_FINE && s[i].age_ms <= s[best].age_ms)) {
			best = i;
			bv = v;
		}
	}
	return best;
}

const char *act_describe(const struct act_snap *s, char *buf, size_t len)
{
	unsigned w = s->what < ACT_COUNT ? s->what : ACT_NONE;

	if (act_table[w].peer && act_table[w].seq)
		snprintf(buf, len, "%s %d in allreduce seq %u", act_table[w].text, (int)s->peer,
			 (unsigned)s->seq);
	else if (act_table[w].peer)
		snprintf(buf, len, "%s %d", act_table[w].text, (int)s->peer);
	else if (act_table[w].seq)
		snprintf(buf, len, "%s %u", act_table[w].text, (unsigned)s->seq);
	else
		snprintf(buf, len, "%s", act_table[w].text);
	return buf;
}
