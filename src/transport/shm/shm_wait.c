/*
 * shm transport waits: a rank with nothing to do sleeps in futex_waitv on its bells
 * (shm_priv.h), one per direction of every pair, instead of spinning or napping; the
 * peer that publishes rings the bell and wakes it only when it sleeps. On a host with
 * more ranks than CPUs the executor yields through short waits (a wake-up per step costs
 * more) and asks for this sleep once a wait is long (comm_idle_action): the CPU then goes
 * to the ranks that have work, and a sleeper runs again as soon as its data is there.
 * On a host with a CPU per rank the
 * wait says -EOPNOTSUPP: there a spinning rank loses no peer its CPU, and a sleeper
 * would pay a wake-up (more than a small AllReduce takes) on every idle step; under
 * other load it loses its CPU on each sleep (2 ranks, 4 KiB: 100x slower, bench_peers).
 *
 * No lost wake-up: the waiter reads each bell's value before it last looks for news,
 * then says it sleeps and waits for the bell to differ from that value; a publisher
 * bumps the bell after publishing, then reads the sleep flag (both sequentially
 * consistent): either the waiter sees the news, or the kernel sees a bumped bell, or
 * the publisher sees the flag and wakes it.
 *
 * Who runs where: on a host with a CPU per rank the scheduler still puts two ranks on
 * one CPU at times (a third task on the other CPU: 2 ranks on the 2-core VM shared one
 * CPU for most of a run under a build on the other). A rank then spins through its slice
 * while the peer it waits for waits for that CPU: 60-110 us per 4 KiB AllReduce where
 * yielding at once takes 7-8.5 us (tests/bench/RESULTS.md, "ranks that share a CPU").
 * Each rank publishes the CPU it progresses on in its segments, and the executor
 * yields early while a peer's is its own (comm_idle).
 */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "transport/shm/shm_priv.h"
#include "util/common.h"

/* futex_waitv's limit: two bells per peer */
#define SHM_WAIT_MAX FUTEX_WAITV_MAX

void shm_bell_ring(const struct shm_pair_core *c, _Atomic uint32_t *bell, _Atomic uint32_t *sleeps)
{
	/* the locked add was 10% of the samples of 4 KiB AllReduces over shm with 2 ranks */
	if (!c->env->crowded)
		return;
	atomic_fetch_add(bell, 1);
	if (atomic_load(sleeps))
		syscall(SYS_futex, bell, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static void set_sleeps(struct shm_pair_core *c, uint32_t v)
{
	for (int p = 0; p < c->env->nranks; p++) {
		struct shm_pair_link *l = &c->links[p];

		if (!l->active)
			continue;
		atomic_store(&shm_hdr(&l->rx)->r_sleeps, v);
		atomic_store(&shm_hdr(&l->tx)->s_sleeps, v);
	}
}

int shm_wait(struct transport *t, int timeout_ms)
{
	struct shm_pair_core *c = t->priv;
	struct futex_waitv w[SHM_WAIT_MAX];
	uint64_t moved;
	struct timespec until;
	int n = 0, err;

	if (c->fatal)
		return c->fatal;
	if (!c->env->crowded)
		return -EOPNOTSUPP;
	for (int p = 0; p < c->env->nranks; p++) {
		struct shm_pair_link *l = &c->links[p];
		struct shm_seg_hdr *rx, *tx;

		if (!l->active)
			continue;
		if (n + 2 > SHM_WAIT_MAX)
			return -EOPNOTSUPP; /* more peers than one futex_waitv watches */
		rx = shm_hdr(&l->rx);
		tx = shm_hdr(&l->tx);
		w[n++] = (struct futex_waitv){.val = atomic_load(&rx->bell_r),
					      .uaddr = (uintptr_t)&rx->bell_r,
					      .flags = FUTEX_32};
		w[n++] = (struct futex_waitv){.val = atomic_load(&tx->bell_s),
					      .uaddr = (uintptr_t)&tx->bell_s,
					      .flags = FUTEX_32};
	}
	if (!n)
		return -EOPNOTSUPP;
	/* the last look for news, after reading the bells */
	moved = c->bytes_sent + c->bytes_recv;
	err = c->proto->progress(c);
	if (err) {
		c->fatal = err;
		return err;
	}
	if (pair_q_first(&c->done) || c->bytes_sent + c->bytes_recv != moved)
		return 0;
	set_sleeps(c, 1);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	/* EAGAIN (a bell moved), ETIMEDOUT and EINTR all mean: poll again */
	if (syscall(SYS_futex_waitv, w, n, 0, &until, CLOCK_MONOTONIC) < 0 && errno == ENOSYS) {
		set_sleeps(c, 0);
		return -EOPNOTSUPP;
	}
	set_sleeps(c, 0);
	return 0;
}

void shm_cpu_publish(struct shm_priv *s)
{
	struct shm_pair_core *c = &s->c;
	int cpu = sched_getcpu(); /* glibc reads it from rseq: a load */

	if (cpu == s->cpu)
		return;
	s->cpu = cpu;
	for (int p = 0; p < c->env->nranks; p++) {
		struct shm_pair_link *l = &c->links[p];

		if (!l->active)
			continue;
		atomic_store_explicit(&shm_hdr(&l->tx)->s_cpu, cpu, memory_order_relaxed);
	}
}

bool shm_peer_on_cpu(struct transport *t, int cpu)
{
	struct shm_pair_core *c = t->priv;

	if (cpu < 0)
		return false;
	for (int p = 0; p < c->env->nranks; p++) {
		struct shm_pair_link *l = &c->links[p];

		if (l->active &&
		    atomic_load_explicit(&shm_hdr(&l->rx)->s_cpu, memory_order_relaxed) == cpu)
			return true;
	}
	return false;
}
