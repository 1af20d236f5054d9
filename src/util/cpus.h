/* How many CPUs this process may run on, and whether a host's ranks overfill them. */
#ifndef GS_UTIL_CPUS_H
#define GS_UTIL_CPUS_H

#include <stdbool.h>
#include <stdint.h>

/* CPUs in this thread's affinity mask (the online count if the mask is unreadable). */
int cpus_usable(void);
/* host_ranks ranks with busy_threads spinning threads each want more CPUs than usable. */
bool cpus_crowded(int host_ranks, int busy_threads);
/* Busy CPU time of the whole host so far (/proc/stat: all but idle and iowait), in ns
 * at USER_HZ resolution (10 ms); 0 or -errno. */
int cpus_host_busy_ns(uint64_t *ns);
/* Ranks whose host_of_rank equals rank's (1 when host_of_rank is NULL). */
int cpus_host_ranks(const int *host_of_rank, int nranks, int rank);

#endif
