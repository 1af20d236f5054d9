/*
 * Registered regions of the transports that address host memory themselves (tcp,
 * shm, the in-process loop): nothing is pinned or handed to a device, the region
 * only records the bounds that posts are checked against.
 */
#ifndef GS_TRANSPORT_HOST_MR_H
#define GS_TRANSPORT_HOST_MR_H

#include <stddef.h>

#include "transport/transport.h"
#include "util/shmem.h"

struct tp_mr {
	char *addr;
	size_t len;
	bool shared;		/* the region lies in a shmem_alloc allocation (shm maps it) */
	struct shmem_loc share; /* where, when shared */
};

/* transport_ops.mr_reg / mr_dereg for host memory; MEM_CUDA is -ENOTSUP. */
int host_mr_reg(struct transport *t, void *addr, size_t len, enum mem_kind kind,
		struct tp_mr **mr);
void host_mr_dereg(struct transport *t, struct tp_mr *mr);

#endif
