/* How many CPUs this process may run on, and whether a host's ranks overfill them. */
#ifndef GS_UTIL_CPUS_H
#define GS_UTIL_CPUS_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

/* CPUs in this thread's affinity mask (the online count if the mask is unreadable). */
int cpus_usable(void);
/*
 * Do the ranks that share this rank's CPUs want more of them than there are? CPUs belong
 * to a kernel, not to a host name: ranks of one kernel (kernel_of_rank equal: processes,
 * network namespaces, containers of one machine) compete for its CPUs wherever their
 * affinity masks meet. Counted: the ranks whose mask meets rank's, busy_threads each,
 * against the CPUs of the union of their masks. masks[q] is rank q's affinity; an empty
 * one (unreadable) stands for CPUs 0 .. online-1. Pure (cpus_test.c).
 */
bool cpus_shared_crowded(const cpu_set_t *masks, const int *kernel_of_rank, int nranks,
			 int rank, int busy_threads, int online);
/* cpus_shared_crowded with this host's online CPUs, or this rank's own mask (as it is
 * now, after any binding) narrower than busy_threads. */
bool cpus_crowded(const cpu_set_t *masks, const int *kernel_of_rank, int nranks, int rank,
		  int busy_threads);
/* Busy CPU time of the whole host so far (/proc/stat: all but idle and iowait), in ns
 * at USER_HZ resolution (10 ms); 0 or -errno. */
int cpus_host_busy_ns(uint64_t *ns);
/* The resolution of cpus_host_busy_ns in ns (USER_HZ's tick: 10 ms), 0 if unknown. */
/* Host CPU figures from this many ticks on: whole ticks are charged, n of them are off by
 * about 1/sqrt(n) (20% at 25); fewer are rounding more than measurement. */
#define CPUS_HOST_MIN_TICKS 25
uint64_t cpus_host_tick_ns(void);
/* Ranks whose map entry equals rank's (1 when map is NULL): host_of_rank, kernel_of_rank. */
int cpus_host_ranks(const int *map, int nranks, int rank);

#endif
