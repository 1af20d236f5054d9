/* [collective] options and the AllReduce entry points of the coll/ layer. */
#ifndef GS_COLL_COLL_H
#define GS_COLL_COLL_H

#include <stdint.h>
#include "util/dtype.h"
#include "coll/schedule.h"
#include "coll/exec.h"

#define COLL_MAX_SIZES 64

enum coll_op {
	COLL_OP_ALLREDUCE = 0,
	COLL_OP_WRITE_BW,   /* unidirectional point-to-point bandwidth, rank 0 -> rank 1 */
	COLL_OP_WRITE_LAT,  /* ping-pong half round trip, rank 0 <-> rank 1 */
	COLL_OP_PAIRWISE,   /* write_bw and write_lat of every rank pair, one pair at a time */
	COLL_OP_COUNT,
};

enum coll_verify {
	VERIFY_FIRST = 0, /* check the result of the first iteration of each size */
	VERIFY_ALL,
	VERIFY_OFF,
};

/* [collective] section, resolved by config/. */
struct coll_opts {
	int op;                        /* enum coll_op */
	int algo;                      /* enum coll_algo */
	int dtype;                     /* enum dtype */
	int redop;                     /* enum redop */
	uint64_t sizes[COLL_MAX_SIZES];/* bytes per rank buffer */
	int nsizes;
	int iterations;
	int warmup;
	uint64_t chunk_size;           /* bytes per message; the executor's pipelining unit */
	int channels;                  /* pieces in flight at once */
	int window;                    /* write_bw: sends outstanding at once */
	int verify;                    /* enum coll_verify */
};

/* The op vocabulary, as the experiment file spells it ("allreduce", "write_bw", ...). */
const char *coll_op_name(int op);
/* What op measures, for `gradsync keys` ("" when unknown). */
const char *coll_op_help(int op);
int coll_op_by_name(const char *name); /* -EINVAL when unknown */

/*
 * Bus bandwidth = algorithm bandwidth (bytes / time) * factor, as nccl-tests defines it
 * so figures compare across rank counts and algorithms: AllReduce 2(n-1)/n (what a ring
 * moves per rank), point-to-point 1. nranks 1: 0 (nothing crosses a link).
 */
double coll_busbw_factor(int op, int nranks);

#endif
