/*
 * Stand-in for the verbs transports when gradsync is built without libibverbs: ib and
 * roce stay in the registry (so INI files name them) but never connect.
 */
#include <errno.h>

#include "transport/verbs/verbs.h"
#include "transport/verbs/verbs_probe.h"
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

/* Every op is set: callers never NULL-check (transport.h); all but open say -ENOTSUP. */
static int stub_endpoint(struct transport *t, void *buf, size_t *len)
{
	return -ENOTSUP;
}

static int stub_connect(struct transport *t, const void *eps)
{
	return -ENOTSUP;
}

static int stub_mr_reg(struct transport *t, void *addr, size_t len, enum mem_kind kind,
		       struct tp_mr **mr)
{
	return -ENOTSUP;
}

static void stub_mr_dereg(struct transport *t, struct tp_mr *mr)
{
}

static int stub_post(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
		     size_t len, uint64_t cookie)
{
	return -ENOTSUP;
}

static int stub_poll(struct transport *t, struct tp_completion *c, int max)
{
	return -ENOTSUP;
}

static int stub_path_info(struct transport *t, struct tp_path_info *info)
{
	return -ENOTSUP;
}

static int stub_stats(struct transport *t, struct tp_stats *st)
{
	return -ENOTSUP;
}

static void stub_close(struct transport *t)
{
}

#define VERBS_STUB_OPS                                                                     \
	.can_connect = stub_can_connect, .open = stub_open, .endpoint = stub_endpoint,       \
	.connect = stub_connect, .mr_reg = stub_mr_reg, .mr_dereg = stub_mr_dereg,           \
	.post_send = stub_post, .post_recv = stub_post, .poll = stub_poll,                   \
	.path_info = stub_path_info, .stats = stub_stats, .close = stub_close

const struct transport_ops ib_ops = {
	.name = "ib",
	.kind = TP_IB,
	VERBS_STUB_OPS,
};

const struct transport_ops roce_ops = {
	.name = "roce",
	.kind = TP_ROCE,
	VERBS_STUB_OPS,
};

/* The doctor's port query: no libibverbs, no ports. */
int verbs_probe_ports(struct verbs_port_probe *out, int max)
{
	(void)out;
	(void)max;
	return 0;
}
