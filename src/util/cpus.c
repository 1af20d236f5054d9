/*
 * CPU budget of a rank: whether an idle rank spins or sleeps (coll/comm.c; crowded by the
 * ranks of its kernel that share its CPUs), and the kernel's busy time for the reports'
 * host CPU per GB (run/bench.c).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "util/cpus.h"

int cpus_usable(void)
{
	cpu_set_t set;
	long online;

	if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	online = sysconf(_SC_NPROCESSORS_ONLN);
	return online > 0 ? (int)online : 1;
}

bool cpus_shared_crowded(const cpu_set_t *masks, const int *kernel_of_rank, int nranks,
			 int rank, int busy_threads, int online)
{
	cpu_set_t all, mine, u, meet;
	int sharing = 0;

	CPU_ZERO(&all);
	for (int i = 0; i < online && i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	mine = CPU_COUNT(&masks[rank]) ? masks[rank] : all;
	CPU_ZERO(&u);
	for (int q = 0; q < nranks; q++) {
		const cpu_set_t *m = CPU_COUNT(&masks[q]) ? &masks[q] : &all;

		if (kernel_of_rank[q] != kernel_of_rank[rank])
			continue;
		CPU_AND(&meet, m, &mine);
		if (!CPU_COUNT(&meet))
			continue;
		sharing++;
		CPU_OR(&u, &u, m);
	}
	return (long)sharing * busy_threads > CPU_COUNT(&u);
}

bool cpus_crowded(const cpu_set_t *masks, const int *kernel_of_rank, int nranks, int rank,
		  int busy_threads)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	/* a mask narrower than that is this rank's own share (numa bind = cpus:...) */
	if (cpus_usable() < busy_threads)
		return true;
	return cpus_shared_crowded(masks, kernel_of_rank, nranks, rank, busy_threads,
				   online > 0 ? (int)online : 1);
}

int cpus_host_ranks(const int *map, int nranks, int rank)
{
	int n = 0;

	if (!map)
		return 1;
	for (int r = 0; r < nranks; r++)
		n += map[r] == map[rank];
	return n;
}

uint64_t cpus_host_tick_ns(void)
{
	long hz = sysconf(_SC_CLK_TCK);

	return hz > 0 ? 1000000000ull / (uint64_t)hz : 0;
}

int cpus_host_busy_ns(uint64_t *ns)
{
	unsigned long long v[8] = { 0 };
	uint64_t tick = cpus_host_tick_ns();
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -errno;
	/* cpu user nice system idle iowait irq softirq steal (guest is inside user) */
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 4 || !tick)
		return -EIO;
	*ns = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * tick;
	return 0;
}
