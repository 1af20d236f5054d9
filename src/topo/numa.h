/* NUMA binding of a rank's threads and host buffers ([numa] bind). */
#ifndef GS_TOPO_NUMA_H
#define GS_TOPO_NUMA_H

#include <stdbool.h>
#include <stddef.h>

struct topo;

/* [numa] section, resolved by config/; `bind` is checked by numa_bind_check(). */
struct numa_opts {
	char bind[256];  /* none | gpu | nic | remote | interleave | node:N | cpus:LIST */
};

/* The bind values in buf ("none, gpu, ..., node:N or cpus:LIST"), joined by sep, the last
 * by last: the one spelling of the vocabulary for messages and help. */
void numa_bind_list(char *buf, size_t len, const char *sep, const char *last);
/* Syntax check of a bind value (no machine state needed): 0 or -EINVAL with err filled. */
int numa_bind_check(const char *value, char *err, size_t errlen);

#define NUMA_MAX_CPUS 1024
#define NUMA_MAX_NODES 1024
#define NUMA_LONG_BITS (8 * sizeof(unsigned long))

enum numa_bind_kind {
	NUMA_BIND_NONE = 0,
	NUMA_BIND_GPU,        /* CPUs and memory of the GPU's node */
	NUMA_BIND_NIC,        /* CPUs and memory of the NIC's node */
	NUMA_BIND_REMOTE,     /* the node farthest from the GPU's (else the NIC's) node */
	NUMA_BIND_INTERLEAVE, /* memory interleaved over all nodes with memory; CPUs untouched */
	NUMA_BIND_NODE,       /* node:N */
	NUMA_BIND_CPUS,       /* cpus:LIST, memory policy untouched (first touch follows CPUs) */
};

enum numa_mem_policy { NUMA_MEM_DEFAULT = 0, NUMA_MEM_BIND, NUMA_MEM_INTERLEAVE };

/*
 * What a bind value means on this machine. A plan that is not applicable (remote on a one-node
 * machine, gpu without a GPU) says why in reason and is never silently turned into another
 * binding; numa_bind_apply() refuses it.
 */
struct numa_plan {
	enum numa_bind_kind kind;
	bool applicable;
	bool pin_cpus;               /* set the calling thread's affinity to cpumask */
	unsigned long cpumask[NUMA_MAX_CPUS / NUMA_LONG_BITS];
	enum numa_mem_policy mem;
	unsigned long nodemask[NUMA_MAX_NODES / NUMA_LONG_BITS];
	char requested[256];         /* "node 1 (remote from GPU node 0): cpus 56-111, memory bind 1" */
	char reason[256];            /* why not applicable, or a note; "" otherwise */
};

/*
 * Resolve opts->bind against the machine: gpu_numa / nic_numa are the nodes of this rank's GPU
 * and NIC (topo_gpu_numa_node(), topo_nic_numa_node(); negative when unknown or absent).
 * 0 with *out filled (check out->applicable), or -EINVAL when the value is malformed or names
 * a node/CPU that does not exist here (out->reason says which; one log line).
 */
int numa_bind_resolve(const struct numa_opts *opts, const struct topo *t, int gpu_numa,
		      int nic_numa, struct numa_plan *out);
/* How many CPUs a plan pins to (0 when it pins none). */
int numa_plan_ncpus(const struct numa_plan *plan);
/* numa_bind_resolve without its log line: what `check` asks of this node. */
int numa_bind_plan(const struct numa_opts *opts, const struct topo *t, int gpu_numa,
		   int nic_numa, struct numa_plan *out);

/*
 * Apply a plan to the CALLING THREAD: CPU affinity (sched_setaffinity) and memory policy
 * (set_mempolicy bind / interleave). Call it before creating other threads (they inherit both)
 * and before touching buffers (pages are placed at first touch). NUMA_BIND_NONE does nothing.
 * 0, -EOPNOTSUPP for a plan that is not applicable, or -errno of the failed call (logged).
 */
int numa_bind_apply(const struct numa_plan *plan);

/* Where things really are, for the report's requested-vs-actual lines. */
struct numa_actual {
	char cpus[256];      /* CPUs the thread may run on (sched_getaffinity), "0-1" */
	int cpu;             /* CPU it runs on now (sched_getcpu) */
	char policy[64];     /* memory policy of the thread: "default", "bind 0", "interleave 0-1" */
	int pages_sampled;
	int pages_absent;    /* sampled pages not yet faulted in */
	int pages_on_node[256]; /* by node id; pages on higher ids count as absent */
	char mem[256];       /* "node0 64/64" or "node0 32, node1 32 of 64 sampled pages" */
};

/*
 * Sample up to 64 pages of buf (move_pages(2) query, nodes=NULL) and read the calling thread's
 * CPU set and memory policy. buf may be NULL (CPU and policy only). 0 or -errno (logged).
 */
int numa_placement_verify(void *buf, size_t len, struct numa_actual *out);

/* One report line: "requested: ...; actual: cpus 0-1 (on 1), policy bind 0, pages ...". */
void numa_describe(const struct numa_plan *plan, const struct numa_actual *actual, char *buf,
		   size_t len);

#endif
