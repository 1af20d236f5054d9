/*
 * The transport registry: every compiled-in transport in preference order, and the
 * stubs that make a partially filled ops table safe to call.
 */
#include <errno.h>
#include <string.h>

#include "transport/transport.h"
#include "transport/verbs/verbs.h"
#include "util/common.h"

extern const struct transport_ops tcp_ops, shm_ops, cudaipc_ops;

/*
 * Preference order for TP_AUTO: the first that both ends can use wins. cudaipc only
 * says yes when asked for by name (GPU buffers), so it never shadows shm; shm only
 * connects ranks of one host, so inside a host it wins over verbs loopback; across
 * hosts verbs wins over tcp.
 */
static const struct transport_ops *const transports[] = {
	&cudaipc_ops,
	&shm_ops,
	&ib_ops,
	&roce_ops,
	&tcp_ops,
};

static const char *const kind_names[TP_KIND_COUNT] = {
    [TP_AUTO] = "auto", [TP_TCP] = "tcp",	  [TP_SHM] = "shm",   [TP_IB] = "ib",
    [TP_ROCE] = "roce", [TP_CUDAIPC] = "cudaipc", [TP_NCCL] = "nccl",
};

const struct transport_ops *transport_find(int kind)
{
	for (size_t i = 0; i < ARRAY_SIZE(transports); i++)
		if (transports[i]->kind == kind)
			return transports[i];
	return NULL;
}

const struct transport_ops *transport_by_name(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(transports); i++)
		if (strcmp(transports[i]->name, name) == 0)
			return transports[i];
	return NULL;
}

size_t transport_count(void)
{
	return ARRAY_SIZE(transports);
}

const struct transport_ops *transport_at(size_t i)
{
	return i < ARRAY_SIZE(transports) ? transports[i] : NULL;
}

const char *transport_kind_name(int kind)
{
	if (kind < 0 || kind >= TP_KIND_COUNT || !kind_names[kind])
		return "unknown";
	return kind_names[kind];
}

/* Stubs: every one fails cleanly, so a missing op is a reported error, never a crash. */
static bool stub_can_connect(const struct transport_env *env GS_UNUSED, int peer GS_UNUSED)
{
	return false;
}

static int stub_open(struct transport *t GS_UNUSED, const struct transport_env *env GS_UNUSED)
{
	return -ENOTSUP;
}

static int stub_endpoint(struct transport *t GS_UNUSED, void *buf GS_UNUSED, size_t *len GS_UNUSED)
{
	return -ENOTSUP;
}

static int stub_connect(struct transport *t GS_UNUSED, const void *eps GS_UNUSED)
{
	return -ENOTSUP;
}

static int stub_mr_reg(struct transport *t GS_UNUSED, void *addr GS_UNUSED, size_t len GS_UNUSED,
		       enum mem_kind kind GS_UNUSED, struct tp_mr **mr GS_UNUSED)
{
	return -ENOTSUP;
}

static void stub_mr_dereg(struct transport *t GS_UNUSED, struct tp_mr *mr GS_UNUSED)
{
}

static int stub_post(struct transport *t GS_UNUSED, int peer GS_UNUSED, uint64_t tag GS_UNUSED,
		     struct tp_mr *mr GS_UNUSED, size_t off GS_UNUSED, size_t len GS_UNUSED,
		     uint64_t cookie GS_UNUSED)
{
	return -ENOTSUP;
}

static int stub_poll(struct transport *t GS_UNUSED, struct tp_completion *c GS_UNUSED,
		     int max GS_UNUSED)
{
	return -ENOTSUP;
}

static int stub_path_info(struct transport *t GS_UNUSED, struct tp_path_info *info GS_UNUSED)
{
	return -ENOTSUP;
}

static int stub_stats(struct transport *t GS_UNUSED, struct tp_stats *st GS_UNUSED)
{
	return -ENOTSUP;
}

static void stub_close(struct transport *t GS_UNUSED)
{
}

void transport_ops_complete(struct transport_ops *dst, const struct transport_ops *src)
{
	*dst = *src;
	if (!dst->name)
		dst->name = "unnamed";
	if (!dst->can_connect)
		dst->can_connect = stub_can_connect;
	if (!dst->open)
		dst->open = stub_open;
	if (!dst->endpoint)
		dst->endpoint = stub_endpoint;
	if (!dst->connect)
		dst->connect = stub_connect;
	if (!dst->mr_reg)
		dst->mr_reg = stub_mr_reg;
	if (!dst->mr_dereg)
		dst->mr_dereg = stub_mr_dereg;
	if (!dst->post_send)
		dst->post_send = stub_post;
	if (!dst->post_recv)
		dst->post_recv = stub_post;
	if (!dst->poll)
		dst->poll = stub_poll;
	if (!dst->path_info)
		dst->path_info = stub_path_info;
	if (!dst->stats)
		dst->stats = stub_stats;
	if (!dst->close)
		dst->close = stub_close;
}
