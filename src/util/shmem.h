/* Host buffers that other processes of this host can map: memfd-backed allocations. */
#ifndef GS_UTIL_SHMEM_H
#define GS_UTIL_SHMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Where a byte range lies in a shareable allocation: the allocation's descriptor in this
 * process, its size, the range's offset in it, and an id unique for the process's life
 * (descriptor numbers are reused after a free, ids never).
 */
struct shmem_loc {
	int fd;
	uint64_t id;
	size_t size;
	size_t off;
};

/*
 * bytes of zeroed memory backed by a memfd, mapped shared, every page touched (a fresh
 * page's first touch costs ~15 us on small VMs: never on the data path). NULL, with one
 * debug line, when memfd or the memory is unavailable: the caller allocates privately.
 * Safe from several threads.
 */
void *shmem_alloc(size_t bytes);
/* Undo shmem_alloc (p from it, or NULL). */
void shmem_free(void *p);
/* Is [p, p + len) inside one shmem_alloc allocation? Fills *loc when it is. */
bool shmem_find(const void *p, size_t len, struct shmem_loc *loc);

#endif
