/*
 * cudaipc transport: ranks of one host move GPU buffers device to device through CUDA
 * IPC mappings of the receiver's registered allocations (protocol in cudaipc_priv.h).
 * No host staging, no thread: control goes through shm queues, progress in poll().
 * Only considered when asked for by name (transport = cudaipc): auto never picks it.
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "transport/cudaipc/cudaipc_priv.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

#define CIPC_EP_MAGIC 0x6763697065700002ull

static struct gpu_stream *gpu_stream_hi(void)
{
	return gpu_stream_create(true);
}

static int gpu_copy_d2d(void *dst, const void *src, size_t bytes, struct gpu_stream *s)
{
	return gpu_memcpy_async(dst, src, bytes, GPU_COPY_D2D, s);
}

static struct gpu_event *gpu_event_plain(void)
{
	return gpu_event_create(false);
}

const struct cipc_dev cipc_gpu_dev = {
    .available = gpu_available,
    .mem_range = gpu_mem_range,
    .ipc_export = gpu_ipc_export,
    .ipc_open = gpu_ipc_open,
    .ipc_close = gpu_ipc_close,
    .stream_create = gpu_stream_hi,
    .stream_destroy = gpu_stream_destroy,
    .copy = gpu_copy_d2d,
    .event_create = gpu_event_plain,
    .event_destroy = gpu_event_destroy,
    .event_record = gpu_event_record,
    .event_query = gpu_event_query,
};

/*
 * Same host, a GPU here (the peer's answer covers its side), and asked for by name, or
 * under auto when the runner says every buffer of the case is GPU memory on one host.
 */
static bool cipc_can_connect(const struct transport_env *env, int peer)
{
	bool wanted = env->opts && (env->opts->kind == TP_CUDAIPC ||
				    (env->opts->kind == TP_AUTO && env->gpu_buffers));

	return shm_pair_on_host(env, peer) && wanted && gpu_available();
}

static bool cipc_seg_valid(const struct shm_pair_hdr *h GS_UNUSED, size_t size)
{
	return size == GS_ALIGN_UP(sizeof(struct cipc_seg_hdr), 4096);
}

/* At most CIPC_CAP receives announced and not finished: FIN can never overflow. */
static const _Atomic uint64_t *cipc_cts_floor(struct shm_pair_hdr *h)
{
	return &((struct cipc_seg_hdr *)h)->fin_tail;
}

static const struct shm_pair_proto cipc_proto = {
    .name = "cudaipc",
    .seg_infix = "cipc-",
    .seg_magic = CIPC_SEG_MAGIC,
    .ep_magic = CIPC_EP_MAGIC,
    .where_off = offsetof(struct cipc_seg_hdr, where),
    .seg_valid = cipc_seg_valid,
    .cts_floor = cipc_cts_floor,
    .progress = cipc_progress,
    .cpu_clock = time_thread_cpu_ns,
};

static void cipc_close(struct transport *t)
{
	struct cipc_priv *s = t->priv;
	uint64_t deadline;

	if (!s)
		return;
	deadline = time_now_ns() + (uint64_t)GS_MAX(s->c.env->timeout_ms, 1000) * 1000000ull;
	for (int p = 0; s->peers && p < s->c.env->nranks; p++) {
		struct cipc_peer *pe = &s->peers[p];

		/* copies still queued write into the peer's memory: let them land first */
		for (struct shm_pair_req *r = pair_q_first(&pe->inflight); r; r = pair_q_next(r))
			while (s->dev->event_query(s->copy[pair_req_index(&s->c, r)].ev) ==
				   -EBUSY &&
			       time_now_ns() < deadline)
				sched_yield();
		for (int i = 0; i < CIPC_MAPS; i++)
			if (pe->maps[i].used)
				s->dev->ipc_close(pe->maps[i].ptr);
		if (pe->stream)
			s->dev->stream_destroy(pe->stream);
	}
	for (int i = 0; i < CIPC_NEVENTS; i++)
		if (s->events[i])
			s->dev->event_destroy(s->events[i]);
	shm_pair_fini(&s->c);
	free(s->peers);
	free(s->copy);
	free(s);
	t->priv = NULL;
}

int cudaipc_open_with(struct transport *t, const struct transport_env *env,
		      const struct cipc_dev *dev)
{
	struct cipc_priv *s;
	int err;

	if (!dev->available()) {
		log_err(LOG_TRANSPORT, "cudaipc open: no usable GPU in this process");
		return -ENODEV;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	t->priv = s;
	t->env = env;
	s->dev = dev;
	s->c.env = env;
	s->peers = calloc((size_t)env->nranks, sizeof(*s->peers));
	s->copy = calloc(SHM_PAIR_NREQS, sizeof(*s->copy));
	err = s->peers && s->copy ? shm_pair_init(&s->c, env, &cipc_proto) : -ENOMEM;
	if (err)
		goto out_close;
	for (int i = 0; i < CIPC_NEVENTS; i++) {
		s->events[i] = dev->event_create();
		if (!s->events[i]) {
			err = -ENOMEM;
			goto out_close;
		}
	}
	s->nfree_events = CIPC_NEVENTS;
	err = shm_pair_create(&s->c, GS_ALIGN_UP(sizeof(struct cipc_seg_hdr), 4096));
	if (err)
		goto out_close;
	for (int p = 0; p < env->nranks; p++) {
		if (!s->c.links[p].active)
			continue;
		s->peers[p].stream = dev->stream_create();
		if (!s->peers[p].stream) {
			err = -ENOMEM;
			goto out_close;
		}
	}
	return 0;

out_close:
	cipc_close(t);
	return err;
}

static int cipc_open(struct transport *t, const struct transport_env *env)
{
	return cudaipc_open_with(t, env, &cipc_gpu_dev);
}

static int cipc_mr_reg(struct transport *t, void *addr, size_t len, enum mem_kind kind,
		       struct tp_mr **mr)
{
	struct cipc_priv *s = t->priv;
	struct tp_mr *m;
	size_t bytes;
	void *base;
	int err;

	if (kind != MEM_CUDA) {
		log_err(LOG_TRANSPORT,
			"cudaipc mr_reg %p len=%zu: host memory cannot travel by CUDA IPC "
			"(GPU buffers only; use transport = shm for host buffers)",
			addr, len);
		return -ENOTSUP;
	}
	err = s->dev->mem_range(addr, &base, &bytes);
	if (err)
		return err;
	if ((char *)addr < (char *)base || len > bytes - (size_t)((char *)addr - (char *)base)) {
		log_err(LOG_TRANSPORT, "cudaipc mr_reg %p len=%zu: beyond its allocation", addr,
			len);
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	/* one handle per registered buffer: every CTS for it carries the same bytes */
	err = s->dev->ipc_export(base, &m->h);
	if (err) {
		free(m);
		return err;
	}
	m->addr = addr;
	m->len = len;
	m->alloc_off = (uint64_t)((char *)addr - (char *)base);
	*mr = m;
	return 0;
}

static void cipc_mr_dereg(struct transport *t GS_UNUSED, struct tp_mr *mr)
{
	free(mr);
}

static int cipc_post_recv(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
			  size_t len, uint64_t cookie)
{
	struct shm_pair_where where;

	if (!mr)
		return -EINVAL;
	where = (struct shm_pair_where){.alloc_off = mr->alloc_off + off, .h = mr->h};
	return shm_pair_post_recv(t->priv, peer, tag, mr->addr, mr->len, off, len, cookie, &where, NULL,
				  DT_F32);
}

static int cipc_post_send(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
			  size_t len, uint64_t cookie)
{
	if (!mr)
		return -EINVAL;
	return shm_pair_post_send(t->priv, peer, tag, mr->addr, mr->len, off, len, cookie, NULL);
}

static int cipc_path_info(struct transport *t, struct tp_path_info *info)
{
	struct cipc_priv *s = t->priv;

	memset(info, 0, sizeof(*info));
	snprintf(info->transport, sizeof(info->transport), "cudaipc");
	snprintf(info->device, sizeof(info->device), "cuda");
	snprintf(info->note, sizeof(info->note),
		 "device-to-device cudaMemcpyAsync into IPC mappings; %llu copies so far",
		 (unsigned long long)s->copies);
	return 0;
}

/*
 * chunk_size = auto: half of each rank's share of the buffer, 4..64MiB. Measured on
 * H200s over NV18 (tests/multigpu/RESULTS_X4.md): 4 ranks were best with 8MiB chunks at
 * 64MiB, 32MiB at 256MiB, 64MiB at 1GiB; 2 ranks with 16MiB at 64MiB, 64MiB at 1GiB.
 */
static uint64_t cudaipc_chunk_auto(uint64_t bytes, int nranks)
{
	uint64_t c = bytes / (2 * (uint64_t)(nranks > 0 ? nranks : 1));

	c = GS_ALIGN_UP(GS_MAX(c, 4ull << 20), 1ull << 20);
	return GS_MIN(c, 64ull << 20);
}

const struct transport_ops cudaipc_ops = {
    .name = "cudaipc",
    .kind = TP_CUDAIPC,
    .chunk_auto = cudaipc_chunk_auto,
    .can_connect = cipc_can_connect,
    .open = cipc_open,
    .endpoint = shm_pair_endpoint,
    .connect = shm_pair_connect,
    .mr_reg = cipc_mr_reg,
    .mr_dereg = cipc_mr_dereg,
    .post_send = cipc_post_send,
    .post_recv = cipc_post_recv,
    .poll = shm_pair_poll,
    .path_info = cipc_path_info,
    .stats = shm_pair_stats,
    .pending = shm_pair_pending,
    .close = cipc_close,
};
