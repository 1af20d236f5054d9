/*
 * Collective algorithms as pure step schedules. An algorithm is a function of
 * (rank, nranks, count) that produces, for that rank, the ordered list of steps of
 * an AllReduce over `count` elements. Nothing here touches memory or a network, so
 * unit tests check schedules with a simulated executor.
 *
 * Semantics of one step (the executor's contract):
 *  - every send and receive of a step may be in flight at the same time;
 *  - a send reads buf[off, off+count) as it stands after the previous step completed;
 *  - a receive with SCHED_RECV_REDUCE lands in scratch, then buf[off..] = op(buf, scratch);
 *    with SCHED_RECV_COPY it overwrites buf[off, off+count) directly;
 *  - step k+1 starts when every transfer and reduction of step k is complete.
 * Offsets and counts are in elements. A transfer with count 0 is never emitted.
 * The executor pipelines by running the schedule over independent pieces of the
 * buffer (chunk_size decides the piece), several pieces in flight.
 */
#ifndef GS_COLL_SCHEDULE_H
#define GS_COLL_SCHEDULE_H

#include <stdint.h>
#include <stddef.h>

#define SCHED_MAX_XFER 4

enum coll_algo {
	ALGO_AUTO = 0,
	ALGO_RING,
	ALGO_TREE,         /* double binary tree */
	ALGO_RHD,          /* recursive halving-doubling, any nranks */
	ALGO_HIERARCHICAL, /* intra-node reduce-scatter, inter-node allreduce, intra-node allgather */
	ALGO_COUNT,
};

enum sched_recv_mode {
	SCHED_RECV_REDUCE = 0,
	SCHED_RECV_COPY,
};

struct sched_xfer {
	int32_t peer;
	uint8_t mode;      /* enum sched_recv_mode (receives only) */
	uint64_t off;      /* element offset in the rank's buffer */
	uint64_t count;    /* elements */
};

struct sched_step {
	uint8_t nsend;
	uint8_t nrecv;
	struct sched_xfer send[SCHED_MAX_XFER];
	struct sched_xfer recv[SCHED_MAX_XFER];
};

struct sched {
	int algo;              /* enum coll_algo actually used */
	int rank;
	int nranks;
	uint64_t count;
	uint32_t nsteps;
	uint32_t cap;
	struct sched_step *steps;
	/* Per-rank bytes on the wire factor for busbw (2(n-1)/n for allreduce). */
};

#endif
