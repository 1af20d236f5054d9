/*
 * Host memory on transparent huge pages for the staging experiments (staged_sweep.cu,
 * memops_bench.c), and how much of this process's memory is on them: whether the IOMMU's
 * page walks cost copies that move both directions at once.
 */
#ifndef GS_TESTS_GPU_HUGE_PAGES_H
#define GS_TESTS_GPU_HUGE_PAGES_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* bytes, 2 MiB-aligned and touched; huge: madvise(MADV_HUGEPAGE) before the first touch,
 * so the pages are born huge (THP is `madvise` on the lent machines). The caller registers
 * it with CUDA and frees it with free(). NULL when out of memory. */
static inline void *huge_alloc(size_t bytes, bool huge)
{
	void *p;

	if (posix_memalign(&p, 1 << 21, bytes))
		return NULL;
	if (huge && madvise(p, bytes, MADV_HUGEPAGE))
		perror("madvise(MADV_HUGEPAGE)");
	memset(p, 0, bytes);
	return p;
}

/* This process's AnonHugePages in KiB (/proc/self/smaps_rollup), -1 when unreadable. */
static inline long anon_huge_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

#endif
