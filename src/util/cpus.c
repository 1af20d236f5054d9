/*
 * CPU budget of a rank: whether an idle rank spins or sleeps (coll/comm.c), and the
 * host's busy time for the reports' host CPU per GB (run/bench.c).
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

bool cpus_crowded(int host_ranks, int busy_threads)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	/* a mask narrower than that is this rank's own share (numa bind = cpus:...) */
	if (cpus_usable() < busy_threads)
		return true;
	/* otherwise the host-wide view: where other ranks are bound is not known here */
	return online > 0 && (long)host_ranks * busy_threads > online;
}

int cpus_host_ranks(const int *host_of_rank, int nranks, int rank)
{
	int n = 0;

	if (!host_of_rank)
		return 1;
	for (int r = 0; r < nranks; r++)
		n += host_of_rank[r] == host_of_rank[rank];
	return n;
}

int cpus_host_busy_ns(uint64_t *ns)
{
	unsigned long long v[8] = { 0 };
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -errno;
	/* cpu user nice system idle iowait irq softirq steal (guest is inside user) */
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 4 || hz <= 0)
		return -EIO;
	*ns = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * (1000000000ull / (uint64_t)hz);
	return 0;
}
