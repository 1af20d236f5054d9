/* NUMA binding of a rank's threads and host buffers ([numa] bind). */
#ifndef GS_TOPO_NUMA_H
#define GS_TOPO_NUMA_H

#include <stddef.h>

/* [numa] section, resolved by config/; `bind` is checked by numa_bind_check(). */
struct numa_opts {
	char bind[256];  /* none | gpu | nic | remote | interleave | node:N | cpus:LIST */
};

/* Syntax check of a bind value (no machine state needed): 0 or -EINVAL with err filled. */
int numa_bind_check(const char *value, char *err, size_t errlen);

#endif
