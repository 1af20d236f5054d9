/*
 * The transport registry: every compiled-in transport in preference order, completed
 * with the stubs that make a partially filled ops table safe to call, and the names of
 * every transport kind (the config vocabulary reads them from here).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "transport/transport.h"
#include "transport/verbs/verbs.h"
#include "util/common.h"

extern const struct transport_ops tcp_ops, shm_ops, cudaipc_ops;

/*
 * Preference order for TP_AUTO: the first that both ends can use wins. cudaipc says
 * yes under auto only when the case's buffers are GPU memory on every rank of one host
 * (transport_env.gpu_buffers), so it never shadows shm for host buffers; shm only
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

/* One row per enum transport_kind, in the order `gradsync keys` lists them. */
static const struct transport_kind_row kinds[] = {
	{ TP_AUTO, "auto",
	  "per peer: cudaipc for GPU buffers on one host, else shm on the same host, verbs if a port is up, else tcp" },
	{ TP_TCP, "tcp", "TCP sockets, several streams per peer" },
	{ TP_SHM, "shm", "POSIX shared-memory rings between ranks of one host" },
	{ TP_IB, "ib", "RDMA verbs over InfiniBand (LID routing)" },
	{ TP_ROCE, "roce", "RDMA verbs over Ethernet (RoCEv2, GID routing)" },
	{ TP_CUDAIPC, "cudaipc",
	  "CUDA IPC between GPUs of one host, device to device (NVLink/PCIe P2P); GPU buffers "
	  "only; auto picks it when every rank's buffers are GPU memory on one host" },
	{ TP_NCCL, "nccl",
	  "reference: hand each bucket to libnccl.so.2 (loaded at run time; one GPU per rank, "
	  "NVLS off)" },
};

/* The tables handed out: transports[] completed once with the stubs below. */
static struct transport_ops registry[ARRAY_SIZE(transports)];
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;

static void registry_fill(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(transports); i++)
		transport_ops_complete(&registry[i], transports[i]);
}

const struct transport_ops *transport_at(size_t i)
{
	pthread_once(&registry_once, registry_fill);
	return i < ARRAY_SIZE(registry) ? &registry[i] : NULL;
}

const struct transport_ops *transport_find(int kind)
{
	for (size_t i = 0; i < ARRAY_SIZE(transports); i++)
		if (transport_at(i)->kind == kind)
			return transport_at(i);
	return NULL;
}

const struct transport_ops *transport_by_name(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(transports); i++)
		if (strcmp(transport_at(i)->name, name) == 0)
			return transport_at(i);
	return NULL;
}

size_t transport_count(void)
{
	return ARRAY_SIZE(transports);
}

const struct transport_kind_row *transport_kind_at(size_t i)
{
	return i < ARRAY_SIZE(kinds) ? &kinds[i] : NULL;
}

const char *transport_kind_name(int kind)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i].kind == kind)
			return kinds[i].name;
	return "unknown";
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

static uint64_t stub_chunk_auto(uint64_t bytes GS_UNUSED, int nranks GS_UNUSED)
{
	return TP_CHUNK_DEFAULT;
}

/* The optional ops say "not this transport", and the caller takes its other way. */
static int stub_post_recv_reduce(struct transport *t GS_UNUSED, int peer GS_UNUSED,
				 uint64_t tag GS_UNUSED, struct tp_mr *mr GS_UNUSED,
				 size_t off GS_UNUSED, size_t len GS_UNUSED,
				 enum dtype dt GS_UNUSED, tp_reduce_fn red GS_UNUSED,
				 uint64_t cookie GS_UNUSED)
{
	return -EOPNOTSUPP;
}

static int stub_wait(struct transport *t GS_UNUSED, int timeout_ms GS_UNUSED)
{
	return -EOPNOTSUPP;
}

static bool stub_peer_on_cpu(struct transport *t GS_UNUSED, int cpu GS_UNUSED)
{
	return false;
}

static void stub_coll_begin(struct transport *t GS_UNUSED, uint64_t bytes GS_UNUSED)
{
}

static int stub_pending(struct transport *t GS_UNUSED, int peer GS_UNUSED, char *buf GS_UNUSED,
			size_t len GS_UNUSED)
{
	return -EOPNOTSUPP;
}

void transport_ops_complete(struct transport_ops *dst, const struct transport_ops *src)
{
	*dst = *src;
	if (!dst->name)
		dst->name = "unnamed";
	if (!dst->chunk_auto)
		dst->chunk_auto = stub_chunk_auto;
	if (!dst->coll_begin)
		dst->coll_begin = stub_coll_begin;
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
	if (!dst->post_recv_reduce)
		dst->post_recv_reduce = stub_post_recv_reduce;
	if (!dst->wait)
		dst->wait = stub_wait;
	if (!dst->peer_on_cpu)
		dst->peer_on_cpu = stub_peer_on_cpu;
	if (!dst->path_info)
		dst->path_info = stub_path_info;
	if (!dst->stats)
		dst->stats = stub_stats;
	if (!dst->pending)
		dst->pending = stub_pending;
	if (!dst->close)
		dst->close = stub_close;
}
