/*
 * Stand-in for the verbs transports when gradsync is built without libibverbs: ib and
 * roce stay in the registry (so INI files name them) but never connect.
 */
#include <errno.h>

#include "transport/verbs.h"
#include "util/log.h"

static bool stub_can_connect(const struct transport_env *env, int peer)
{
	(void)env;
	(void)peer;
	return false;
}

static int stub_open(struct transport *t, const struct transport_env *env)
{
	(void)t;
	(void)env;
	log_err(LOG_TRANSPORT, "verbs: this gradsync was built without libibverbs (configure "
			       "found no rdma-core); use transport = tcp");
	return -ENOTSUP;
}

const struct transport_ops ib_ops = {
    .name = "ib",
    .kind = TP_IB,
    .can_connect = stub_can_connect,
    .open = stub_open,
};

const struct transport_ops roce_ops = {
    .name = "roce",
    .kind = TP_ROCE,
    .can_connect = stub_can_connect,
    .open = stub_open,
};
