/* The collective op table: names and the bus-bandwidth factor reports apply. */
#include <errno.h>
#include <strings.h>

#include "coll/coll.h"
#include "util/common.h"

static const char *const op_names[] = {
    [COLL_OP_ALLREDUCE] = "allreduce",
    [COLL_OP_WRITE_BW] = "write_bw",
    [COLL_OP_WRITE_LAT] = "write_lat",
    [COLL_OP_PAIRWISE] = "pairwise",
};

const char *coll_op_name(int op)
{
	if (op < 0 || op >= (int)ARRAY_SIZE(op_names))
		return "?";
	return op_names[op];
}

int coll_op_by_name(const char *name)
{
	for (int i = 0; i < (int)ARRAY_SIZE(op_names); i++)
		if (!strcasecmp(name, op_names[i]))
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
