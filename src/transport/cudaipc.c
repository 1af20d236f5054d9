/*
 * cudaipc transport: ranks of one host move GPU buffers device to device through CUDA
 * IPC mappings of the receiver's registered allocations (protocol in cudaipc_priv.h).
 * No host staging, no thread: control goes through shm queues, progress in poll().
 * Only considered when asked for by name (transport = cudaipc): auto never picks it.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <time.h>
#include <unistd.h>

#include "gpu/gpu_range.h"
#include "transport/cudaipc_priv.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

#define CIPC_EP_MAGIC 0x6763697065700001ull

struct cipc_ep {
	uint64_t magic;
	int32_t pid;
	int32_t rank;
};

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

static bool peer_on_host(const struct transport_env *env, int peer)
{
	return peer != env->rank && peer >= 0 && peer < env->nranks &&
	       env->host_of_rank[peer] == env->host_of_rank[env->rank];
}

/* Same host, asked for by name, and a GPU here (the peer's answer covers its side). */
static bool cipc_can_connect(const struct transport_env *env, int peer)
{
	return peer_on_host(env, peer) && env->opts && env->opts->kind == TP_CUDAIPC &&
	       gpu_available();
}

static void cipc_close(struct transport *t)
{
	struct cipc_priv *s = t->priv;
	uint64_t deadline;

	if (!s)
		return;
	deadline = time_now_ns() + (uint64_t)GS_MAX(s->env->timeout_ms, 1000) * 1000000ull;
	for (int p = 0; s->peers && p < s->env->nranks; p++) {
		struct cipc_peer *pe = &s->peers[p];

		/* copies still queued write into the peer's memory: let them land first */
		for (struct cipc_req *r = pe->inflight.head; r; r = r->next)
			while (s->dev->event_query(r->ev) == -EBUSY && time_now_ns() < deadline)
				sched_yield();
		for (int i = 0; i < CIPC_MAPS; i++)
			if (pe->maps[i].used)
				s->dev->ipc_close(pe->maps[i].ptr);
		if (pe->stream)
			s->dev->stream_destroy(pe->stream);
		cipc_seg_destroy(&pe->rx);
		cipc_seg_destroy(&pe->tx);
		if (pe->pidfd >= 0)
			close(pe->pidfd);
	}
	for (int i = 0; i < CIPC_NEVENTS; i++)
		if (s->events[i])
			s->dev->event_destroy(s->events[i]);
	free(s->peers);
	free(s->reqs);
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
	s->env = env;
	s->dev = dev;
	s->peers = calloc((size_t)env->nranks, sizeof(*s->peers));
	s->reqs = calloc(CIPC_NREQS, sizeof(*s->reqs));
	if (!s->peers || !s->reqs) {
		err = -ENOMEM;
		goto out_close;
	}
	for (int i = CIPC_NREQS - 1; i >= 0; i--)
		creq_put(s, &s->reqs[i]);
	for (int i = 0; i < CIPC_NEVENTS; i++) {
		s->events[i] = dev->event_create();
		if (!s->events[i]) {
			err = -ENOMEM;
			goto out_close;
		}
	}
	s->nfree_events = CIPC_NEVENTS;
	for (int p = 0; p < env->nranks; p++)
		s->peers[p].pidfd = -1;
	for (int p = 0; p < env->nranks; p++) {
		struct cipc_peer *pe = &s->peers[p];

		if (!env->use_peer[p] || p == env->rank)
			continue;
		if (!peer_on_host(env, p)) {
			log_err(LOG_TRANSPORT, "cudaipc open peer=%d: not on this host", p);
			err = -EHOSTUNREACH;
			goto out_close;
		}
		pe->stream = dev->stream_create();
		if (!pe->stream) {
			err = -ENOMEM;
			goto out_close;
		}
		err = cipc_seg_create(&pe->rx, env->job_id, p, env->rank);
		if (err)
			goto out_close;
		pe->active = true;
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

static int cipc_endpoint(struct transport *t, void *buf, size_t *len)
{
	struct cipc_ep ep = {CIPC_EP_MAGIC, getpid(), t->env->rank};

	if (*len < sizeof(ep))
		return -ENOSPC;
	memcpy(buf, &ep, sizeof(ep));
	*len = sizeof(ep);
	return 0;
}

static int wait_attached(struct cipc_priv *s, int p, uint64_t deadline)
{
	struct timespec ms = {0, 1000000};
	struct cipc_seg_hdr *h = s->peers[p].rx.hdr;

	while (!atomic_load_explicit(&h->sender_pid, memory_order_acquire)) {
		if (s->env->abort_flag && *s->env->abort_flag)
			return -ECANCELED;
		if (time_now_ns() > deadline) {
			log_err(LOG_TRANSPORT, "cudaipc connect peer=%d: peer never attached", p);
			return -ETIMEDOUT;
		}
		nanosleep(&ms, NULL);
	}
	s->peers[p].rx.name[0] = '\0'; /* unlinked by the peer */
	return 0;
}

static int cipc_connect(struct transport *t, const void *eps)
{
	struct cipc_priv *s = t->priv;
	const struct transport_env *env = s->env;
	uint64_t deadline = time_now_ns() + (uint64_t)env->timeout_ms * 1000000ull;
	int err;

	for (int p = 0; p < env->nranks; p++) {
		struct cipc_peer *pe = &s->peers[p];
		const struct cipc_ep *ep = (const void *)((const char *)eps + p * TRANSPORT_EP_MAX);

		if (!pe->active)
			continue;
		if (ep->magic != CIPC_EP_MAGIC || ep->rank != p) {
			log_err(LOG_TRANSPORT, "cudaipc connect peer=%d: bad endpoint record", p);
			return -EPROTO;
		}
		pe->pid = ep->pid;
		err =
		    cipc_seg_attach(&pe->tx, env->job_id, env->rank, p, deadline, env->abort_flag);
		if (err)
			return err;
		if (pe->tx.hdr->receiver_pid != pe->pid) {
			log_err(LOG_TRANSPORT,
				"cudaipc connect peer=%d: pid %d is not the endpoint's %d", p,
				pe->tx.hdr->receiver_pid, pe->pid);
			return -EPROTO;
		}
		pe->pidfd = pidfd_open(pe->pid, 0);
	}
	for (int p = 0; p < env->nranks; p++) {
		if (!s->peers[p].active)
			continue;
		err = wait_attached(s, p, deadline);
		if (err)
			return err;
	}
	return 0;
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

static int post_check(struct cipc_priv *s, int peer, struct tp_mr *mr, size_t off, size_t len)
{
	if (s->fatal)
		return s->fatal;
	if (peer < 0 || peer >= s->env->nranks || !s->peers[peer].active)
		return -EINVAL;
	if (!mr || off > mr->len || len > mr->len - off)
		return -EINVAL;
	return 0;
}

static int cipc_post_recv(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
			  size_t len, uint64_t cookie)
{
	struct cipc_priv *s = t->priv;
	struct cipc_req *r;
	int err = post_check(s, peer, mr, off, len);

	if (err)
		return err;
	r = creq_get(s);
	if (!r)
		return -EAGAIN;
	*r = (struct cipc_req){
	    .kind = CIPC_RECV, .peer = peer, .tag = tag, .cookie = cookie, .len = len};
	r->cts =
	    (struct cipc_cts){.tag = tag, .len = len, .alloc_off = mr->alloc_off + off, .h = mr->h};
	s->peers[peer].outstanding++;
	s->outstanding++;
	cq_push(&s->peers[peer].cts_wait, r);
	cipc_flush_cts(s, &s->peers[peer]);
	return 0;
}

static int cipc_post_send(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
			  size_t len, uint64_t cookie)
{
	struct cipc_priv *s = t->priv;
	struct cipc_peer *pe;
	struct cipc_req *r, *c;
	int err = post_check(s, peer, mr, off, len);

	if (err)
		return err;
	r = creq_get(s);
	if (!r)
		return -EAGAIN;
	pe = &s->peers[peer];
	*r = (struct cipc_req){.kind = CIPC_SEND,
			       .peer = peer,
			       .tag = tag,
			       .cookie = cookie,
			       .len = len,
			       .src = mr->addr + off};
	pe->outstanding++;
	s->outstanding++;
	c = cq_take(&pe->cts, tag);
	if (c) {
		r->cts = c->cts;
		creq_put(s, c);
		cq_push(&pe->ready, r);
	} else {
		cq_push(&pe->sends, r);
	}
	return 0;
}

static int cipc_poll(struct transport *t, struct tp_completion *c, int max)
{
	struct cipc_priv *s = t->priv;
	struct cipc_req *r;
	uint64_t t0, before;
	int n = 0, err;

	if (s->fatal)
		return s->fatal;
	if (s->env->abort_flag && *s->env->abort_flag) {
		log_err(LOG_TRANSPORT, "cudaipc poll: job aborting");
		s->fatal = -ECANCELED;
		return s->fatal;
	}
	if (s->outstanding) {
		t0 = time_thread_cpu_ns();
		before = s->bytes_sent + s->bytes_recv;
		err = cipc_progress(s);
		if (err) {
			s->fatal = err;
			return err;
		}
		if (s->bytes_sent + s->bytes_recv != before)
			s->cpu_ns += time_thread_cpu_ns() - t0;
	}
	while (n < max && (r = cq_pop(&s->done))) {
		c[n++] = (struct tp_completion){.cookie = r->cookie,
						.status = r->status,
						.peer = r->peer,
						.len = r->len,
						.is_send = r->kind == CIPC_SEND};
		creq_put(s, r);
	}
	return n;
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

static int cipc_stats(struct transport *t, struct tp_stats *st)
{
	struct cipc_priv *s = t->priv;

	st->bytes_sent = s->bytes_sent;
	st->bytes_recv = s->bytes_recv;
	st->cpu_ns = s->cpu_ns;
	return 0;
}

const struct transport_ops cudaipc_ops = {
    .name = "cudaipc",
    .kind = TP_CUDAIPC,
    .can_connect = cipc_can_connect,
    .open = cipc_open,
    .endpoint = cipc_endpoint,
    .connect = cipc_connect,
    .mr_reg = cipc_mr_reg,
    .mr_dereg = cipc_mr_dereg,
    .post_send = cipc_post_send,
    .post_recv = cipc_post_recv,
    .poll = cipc_poll,
    .path_info = cipc_path_info,
    .stats = cipc_stats,
    .close = cipc_close,
};
