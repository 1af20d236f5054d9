/* The collective op table: names and the bus-bandwidth factor reports apply. */
#include <errno.h>
#include <strings.h>

#include "coll/coll.h"
#include "util/common.h"

/* The op vocabulary, [collective] op's one list: name and what the op measures. */
static const struct {
	const char *name;
	const char *help;
} ops[COLL_OP_COUNT] = {
	[COLL_OP_ALLREDUCE] = { "allreduce", "AllReduce over every rank, sweeping sizes" },
	[COLL_OP_WRITE_BW] = { "write_bw", "unidirectional bandwidth rank 0 -> rank 1 (like ib_write_bw)" },
	[COLL_OP_WRITE_LAT] = { "write_lat", "half round-trip latency rank 0 <-> rank 1 (like ib_write_lat)" },
	[COLL_OP_PAIRWISE] = { "pairwise", "write_bw and write_lat of every rank pair in turn; names the slow pairs" },
};

const char *coll_op_name(int op)
{
	if (op < 0 || op >= (int)ARRAY_SIZE(ops))
		return "?";
	return ops[op].name;
}

const char *coll_op_help(int op)
{
	if (op < 0 || op >= (int)ARRAY_SIZE(ops))
		return "";
	return ops[op].help;
}

int coll_op_by_name(const char *name)
{
	for (int i = 0; i < (int)ARRAY_SIZE(ops); i++)
		if (!strcasecmp(name, ops[i].name))
			return i;
	return -EINVAL;
}

double coll_busbw_factor(int op, int nranks)
{
	if (nranks < 2)
		return 0.0;
	if (op == COLL_OP_ALLREDUCE)
		return 2.0 * (nranks - 1) / nranks;
	return 1.0;
}
