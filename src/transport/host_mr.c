/* Host-memory regions shared by tcp, shm and the loop transport (see host_mr.h). */
#include <errno.h>
#include <stdlib.h>

#include "transport/host_mr.h"

int host_mr_reg(struct transport *t, void *addr, size_t len, enum mem_kind kind,
		struct tp_mr **mr)
{
	struct tp_mr *m;

	if (kind != MEM_HOST)
		return -ENOTSUP;
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->addr = addr;
	m->len = len;
	m->shared = shmem_find(addr, len, &m->share);
	*mr = m;
	return 0;
}

void host_mr_dereg(struct transport *t, struct tp_mr *mr)
{
	free(mr);
}
