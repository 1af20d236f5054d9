/*
 * The verbs ops tables (ib_ops, roce_ops) and their entry points: memory registration,
 * posting, and poll(), which drains the CQ through the protocol in verbs_proto.c.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "gpu/gpu.h"
#include "transport/verbs/verbs.h"
#include "transport/verbs/verbs_priv.h"
#include "util/log.h"
#include "util/timeutil.h"

#define EVENT_WAIT_MS 1 /* cq_mode = event: longest sleep of one poll() call */
/* cq_mode = event: sleep on the completion channel, at most EVENT_WAIT_MS. */
static int event_wait(struct verbs_state *s)
{
	struct pollfd pfd = {.fd = s->chan->fd, .events = POLLIN};
	struct ibv_cq *cq;
	void *ctx;
	int e;

	if (!s->cq_armed) {
		e = ibv_req_notify_cq(s->cq, 0);
		if (e) {
			log_err(LOG_TRANSPORT, "ibv_req_notify_cq %s: %s", s->dev.name,
				strerror(e));
			return -e;
		}
		s->cq_armed = true;
		return 0; /* the caller drains once more: completions may predate the arm */
	}
	e = poll(&pfd, 1, EVENT_WAIT_MS);
	if (e < 0 && errno != EINTR) {
		log_err(LOG_TRANSPORT, "poll completion channel %s: %s", s->dev.name,
			strerror(errno));
		return -errno;
	}
	if (e > 0) {
		if (ibv_get_cq_event(s->chan, &cq, &ctx)) {
			log_err(LOG_TRANSPORT, "ibv_get_cq_event %s: %s", s->dev.name,
				strerror(errno));
			return -EIO;
		}
		ibv_ack_cq_events(cq, 1);
		s->cq_armed = false;
	}
	return 0;
}

/* The send queue watchdog's pace: a clock read every 64th empty poll, a look every 100 ms. */
static int watch(struct verbs_state *s)
{
	uint64_t now;

	if (++s->idle_polls % 64)
		return 0;
	now = time_now_ns();
	if (now - s->watch_ns < 100000000ull)
		return 0;
	s->watch_ns = now;
	return verbs_watch_queues(s, now);
}

static int v_poll(struct transport *t, struct tp_completion *c, int max)
{
	struct verbs_state *s = t->priv;
	int ret, got, n = 0;

	if (s->fatal)
		return s->fatal;
	if (tp_env_aborting(s->env)) {
		log_err(LOG_TRANSPORT, "%s poll: job aborting", s->kind == TP_IB ? "ib" : "roce");
		s->fatal = -ECANCELED;
		return s->fatal;
	}
	ret = got = verbs_drain(s);
	if (ret >= 0)
		ret = verbs_progress(s);
	if (ret >= 0 && s->chan && !s->done_n) {
		ret = event_wait(s);
		if (!ret)
			ret = verbs_drain(s);
		got += GS_MAX(ret, 0);
		if (ret >= 0)
			ret = verbs_progress(s);
	}
	if (ret >= 0 && !got)
		ret = watch(s);
	if (ret < 0) {
		/* completion errors and protocol faults all end the run; lost work keeps its
		 * own errno, the one a timeout has */
		s->fatal = ret == -ETIMEDOUT ? ret : -EIO;
		return s->fatal;
	}
	while (n < max && s->done_n) {
		c[n++] = s->done[s->done_head];
		s->done_head = (s->done_head + 1) % s->done_cap;
		s->done_n--;
	}
	return n;
}

/*
 * What both posts check first: the transport is healthy, the peer connected, the range
 * inside the region, room for one more completion. 0 with *sp and *ppp set, or -errno.
 */
static int post_begin(struct transport *t, int peer, struct tp_mr *mr, size_t off, size_t len,
		      struct verbs_state **sp, struct verbs_peer **ppp)
{
	struct verbs_state *s = *sp = t->priv;
	struct verbs_peer *pp = *ppp = verbs_peer_of(s, peer);

	if (s->fatal)
		return s->fatal;
	if (!pp) {
		log_err(LOG_TRANSPORT, "verbs post peer=%d: not connected", peer);
		return -EINVAL;
	}
	if (!mr || off > mr->len || len > mr->len - off) {
		log_err(LOG_TRANSPORT, "verbs post peer=%d: [%zu, +%zu) outside the region", peer,
			off, len);
		return -EINVAL;
	}
	/* completions not yet handed out are bounded; let the caller poll first */
	if (s->done_n + verbs_held_n(s) >= (uint64_t)s->done_cap - 2)
		return -EAGAIN;
	return 0;
}

/* After a post moved the protocol on: a failure there ends the transport. */
static int post_end(struct verbs_state *s, int ret)
{
	if (ret)
		s->fatal = -EIO;
	return ret;
}

static int v_post_recv(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
		       size_t len, uint64_t cookie)
{
	struct verbs_state *s;
	struct verbs_peer *pp;
	struct verbs_rreq *r;
	uint32_t i, n;
	int ret = post_begin(t, peer, mr, off, len, &s, &pp);

	if (ret)
		return ret;
	for (n = 0; n < VERBS_REQ_MAX; n++) {
		i = (pp->rreq_next + n) % VERBS_REQ_MAX;
		if (!pp->rreq[i].used)
			break;
	}
	if (n == VERBS_REQ_MAX)
		return -EAGAIN;
	pp->rreq_next = (i + 1) % VERBS_REQ_MAX;
	r = &pp->rreq[i];
	*r = (struct verbs_rreq){
	    .tag = tag,
	    .cookie = cookie,
	    .len = len,
	    .used = true,
	    .mr = mr,
	    .off = off,
	    .gen = pp->rgen++ & ((1u << (24 - VERBS_RID_IDX_BITS)) - 1),
	};
	pp->ctsq[pp->ctsq_tail++ % VERBS_REQ_MAX] = i;
	return post_end(s, verbs_flush_cts(s, peer));
}

static int v_post_send(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
		       size_t len, uint64_t cookie)
{
	struct verbs_state *s;
	struct verbs_peer *pp;
	struct verbs_sreq *r;
	int i, c, ret = post_begin(t, peer, mr, off, len, &s, &pp);

	if (ret)
		return ret;
	for (i = 0; i < VERBS_REQ_MAX && pp->sreq[i].used; i++)
		;
	if (i == VERBS_REQ_MAX)
		return -EAGAIN;
	r = &pp->sreq[i];
	*r = (struct verbs_sreq){
	    .tag = tag,
	    .cookie = cookie,
	    .peer = peer,
	    .mr = mr,
	    .off = off,
	    .len = len,
	    .used = true,
	};
	pp->sreq_seq[i] = pp->seq++;
	c = verbs_find_cts(pp, tag);
	if (c < 0)
		return 0;
	pp->cts[c].used = false;
	verbs_activate(s, r, &pp->cts[c].m);
	return post_end(s, verbs_progress_sends(s));
}

/* data MRs: Relaxed Ordering like NCCL and perftest (verbs_policy.h) */
#define VERBS_MR_ACCESS verbs_mr_access(true)

/* "; ulimit -l is 64 KiB ..." when a host registration failed under a memlock limit. */
static void memlock_hint(int e, char *buf, size_t len)
{
	struct rlimit rl;

	buf[0] = '\0';
	if ((e == ENOMEM || e == EFAULT || e == EPERM) && !getrlimit(RLIMIT_MEMLOCK, &rl) &&
	    rl.rlim_cur != RLIM_INFINITY)
		snprintf(buf, len,
			 " (ulimit -l is %llu KiB: raise it to unlimited, see gradsync doctor)",
			 (unsigned long long)rl.rlim_cur >> 10);
}

/*
 * GPU memory for GPUDirect RDMA: a dma-buf of the range when the GPU and driver export one
 * (kernel >= 5.12, no extra module), else ibv_reg_mr on the device pointer, which works when
 * nvidia-peermem is loaded. The MR's iova is the device address either way, so the data
 * path's addresses are the same as for host memory. The dma-buf fd is closed once the MR
 * holds its own reference (as NCCL does). NULL with errno set on failure.
 */
static struct ibv_mr *reg_cuda(struct verbs_state *s, void *addr, size_t len)
{
	struct gpu_dmabuf d;
	struct ibv_mr *mr;
	int e;

	if (gpu_dmabuf_export(addr, len, &d) == 0) {
		/* NCCL's form: the fd covers the page-rounded range, offset 0 into it, and the
		 * iova is the range's device address, so addr's bytes are at iova + d.offset */
		mr = ibv_reg_dmabuf_mr(s->pd, 0, d.len, (uint64_t)(uintptr_t)d.base, d.fd,
				       VERBS_MR_ACCESS);
		e = errno;
		gpu_dmabuf_close(&d);
		if (mr)
			return mr;
		log_warn(LOG_TRANSPORT, "ibv_reg_dmabuf_mr %s %p+%zu: %s: trying nvidia-peermem",
			 s->dev.name, addr, len, strerror(e));
	}
	return ibv_reg_mr(s->pd, addr, len, VERBS_MR_ACCESS);
}

static int v_mr_reg(struct transport *t, void *addr, size_t len, enum mem_kind kind,
		    struct tp_mr **out)
{
	struct verbs_state *s = t->priv;
	struct tp_mr *m;
	int e;

	for (m = s->mrs; m; m = m->next) {
		if (m->addr == addr && m->len == len) {
			m->refs++;
			*out = m;
			return 0;
		}
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	if (kind == MEM_CUDA)
		m->mr = reg_cuda(s, addr, len);
	else
		m->mr = ibv_reg_mr(s->pd, addr, len, VERBS_MR_ACCESS);
	if (!m->mr) {
		char hint[128];

		e = errno ? errno : EINVAL;
		memlock_hint(e, hint, sizeof(hint));
		log_err(LOG_TRANSPORT, "ibv_reg_mr %s %s %p+%zu: %s%s", s->dev.name,
			kind == MEM_CUDA ? "cuda" : "host", addr, len, strerror(e),
			kind == MEM_CUDA ? " (GPUDirect RDMA needs dma-buf support or nvidia-peermem)"
					 : hint);
		free(m);
		return -e;
	}
	m->addr = addr;
	m->len = len;
	m->refs = 1;
	m->flush = s->fl.force || (kind == MEM_CUDA && s->env->gdr_flush);
	if (m->flush) {
		/* gdr_flush may be set after connect (the GPU path is decided then) */
		e = -verbs_flush_setup(s);
		if (e) {
			ibv_dereg_mr(m->mr);
			free(m);
			return -e;
		}
	}
	m->next = s->mrs;
	s->mrs = m;
	*out = m;
	return 0;
}

static void v_mr_dereg(struct transport *t, struct tp_mr *mr)
{
	struct verbs_state *s = t->priv;
	struct tp_mr **pm;

	if (!mr || --mr->refs > 0)
		return;
	for (pm = &s->mrs; *pm; pm = &(*pm)->next) {
		if (*pm == mr) {
			*pm = mr->next;
			break;
		}
	}
	ibv_dereg_mr(mr->mr);
	free(mr);
}

static int v_path_info(struct transport *t, struct tp_path_info *info)
{
	return verbs_path_info(t->priv, info);
}

static int v_pending(struct transport *t, int peer, char *buf, size_t len)
{
	return verbs_pending(t->priv, peer, buf, len);
}

static int v_stats(struct transport *t, struct tp_stats *st)
{
	struct verbs_state *s = t->priv;

	*st = s->st; /* no threads of its own: cpu_ns stays 0 */
	return 0;
}

static bool ib_can_connect(const struct transport_env *env, int peer)
{
	(void)peer;
	return env->opts && verbs_dev_usable(env->opts->device, IBV_LINK_LAYER_INFINIBAND);
}

static bool roce_can_connect(const struct transport_env *env, int peer)
{
	(void)peer;
	return env->opts && verbs_dev_usable(env->opts->device, IBV_LINK_LAYER_ETHERNET);
}

static int ib_open(struct transport *t, const struct transport_env *env)
{
	t->env = env;
	return verbs_open(t, env, TP_IB);
}

static int roce_open(struct transport *t, const struct transport_env *env)
{
	t->env = env;
	return verbs_open(t, env, TP_ROCE);
}

/* ib and roce are one implementation over two link layers: past can_connect and open
 * (which pass the kind on) they share every op. */
#define VERBS_SHARED_OPS                                                                   \
	.endpoint = verbs_endpoint, .connect = verbs_connect, .mr_reg = v_mr_reg,          \
	.mr_dereg = v_mr_dereg, .post_send = v_post_send, .post_recv = v_post_recv,        \
	.poll = v_poll, .path_info = v_path_info, .stats = v_stats, .pending = v_pending,  \
	.close = verbs_close

const struct transport_ops ib_ops = {
    .name = "ib",
    .kind = TP_IB,
    .can_connect = ib_can_connect,
    .open = ib_open,
    VERBS_SHARED_OPS,
};

const struct transport_ops roce_ops = {
    .name = "roce",
    .kind = TP_ROCE,
    .can_connect = roce_can_connect,
    .open = roce_open,
    VERBS_SHARED_OPS,
};
