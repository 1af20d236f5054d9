/*
 * tcp transport: the ops table and the executor side (posts, poll, stats). Sockets
 * are set up in tcp_conn.c, matched in tcp_match.c and driven in tcp_progress.c (a thread,
 * or inline).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport/host_mr.h"
#include "transport/tcp/tcp_priv.h"
#include "util/common.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"

#define TCP_DEF_STREAMS 2

static bool tcp_can_connect(const struct transport_env *env, int peer)
{
	return peer >= 0 && peer < env->nranks && peer != env->rank;
}

static void tcp_close(struct transport *t)
{
	struct tcp_priv *tp = t->priv;

	if (!tp)
		return;
	tcp_progress_stop(tp);
	for (int p = 0; tp->peers && p < tp->env->nranks; p++) {
		for (int s = 0; tp->peers[p].streams && s < tp->nstreams; s++) {
			struct tcp_stream *st = &tp->peers[p].streams[s];

			if (st->fd >= 0)
				close(st->fd);
			free(st->stage);
			/* half-read eager payloads not on the unexp list (a receive took them) */
			if (st->rexp && st->rexp->req)
				free(st->rexp);
			/* REFUSE frames not written (the only frames on the heap) */
			for (struct fifo_link *l; (l = fifo_pop(&st->txq));) {
				struct tcp_frame *f = fifo_entry(l, struct tcp_frame, link);

				if (f->hdr.type == TF_REFUSE)
					free(f);
			}
		}
		for (struct fifo_link *l; (l = fifo_pop(&tp->peers[p].unexp));)
			free(fifo_entry(l, struct tcp_unexp, link));
		free(tp->peers[p].streams);
		for (struct fifo_link *l; (l = fifo_pop(&tp->peers[p].cts));) {
			struct tcp_cts *c = fifo_entry(l, struct tcp_cts, link);

			if (c < tp->cts_pool || c >= tp->cts_pool + TCP_NREQS)
				free(c); /* heap overflow records (tcp_match.c) */
		}
	}
	if (tp->listen_fd >= 0)
		close(tp->listen_fd);
	if (tp->epfd >= 0)
		close(tp->epfd);
	if (tp->evfd >= 0)
		close(tp->evfd);
	pthread_mutex_destroy(&tp->lock);
	free(tp->peers);
	free(tp->reqs);
	free(tp->cts_pool);
	free(tp);
	t->priv = NULL;
}

static int peers_alloc(struct tcp_priv *tp)
{
	const struct transport_env *env = tp->env;

	tp->peers = calloc((size_t)env->nranks, sizeof(*tp->peers));
	if (!tp->peers)
		return -ENOMEM;
	for (int p = 0; p < env->nranks; p++) {
		struct tcp_peer *pe = &tp->peers[p];

		if (!env->use_peer[p] || p == env->rank)
			continue;
		pe->active = true;
		pe->credit = pe->rx_avail = TCP_EAGER_WINDOW;
		pe->streams = calloc((size_t)tp->nstreams, sizeof(*pe->streams));
		if (!pe->streams)
			return -ENOMEM;
		for (int s = 0; s < tp->nstreams; s++) {
			pe->streams[s].fd = -1;
			pe->streams[s].peer = p;
			pe->streams[s].stage = malloc(TCP_STAGE);
			if (!pe->streams[s].stage)
				return -ENOMEM;
			memset(pe->streams[s].stage, 0,
			       TCP_STAGE); /* touch now, not on the data path */
		}
	}
	return 0;
}

/*
 * auto = inline. Measured with 2-8 ranks, 64KiB..64MiB: on a 2-core VM inline took
 * 64MiB from 1.46 to 2.87 GB/s (2 ranks); on a 32-core host, where a thread has a
 * core of its own, inline was still ahead in 10 of 12 points at 64KiB..64MiB (2 ranks
 * 64MiB: 3.27 vs 2.85 GB/s). The thread stays for hosts where that differs.
 */
static bool want_inline(const struct transport_env *env)
{
	int mode = env->opts ? env->opts->progress : TP_PROGRESS_AUTO;

	return mode != TP_PROGRESS_THREAD;
}

static int tcp_open(struct transport *t, const struct transport_env *env)
{
	const struct transport_opts *o = env->opts;
	struct tcp_priv *tp;
	int err;

	tp = calloc(1, sizeof(*tp));
	if (!tp)
		return -ENOMEM;
	t->priv = tp;
	t->env = env;
	tp->env = env;
	tp->listen_fd = tp->epfd = tp->evfd = -1;
	pthread_mutex_init(&tp->lock, NULL);
	tp->nstreams = o && o->streams ? o->streams : TCP_DEF_STREAMS;
	tp->inline_progress = want_inline(env);
	if (tp->nstreams < 1 || tp->nstreams > TCP_MAX_STREAMS) {
		log_err(LOG_TRANSPORT, "tcp open: streams=%d outside 1..%d", tp->nstreams,
			TCP_MAX_STREAMS);
		err = -EINVAL;
		goto out_close;
	}
	tp->reqs = calloc(TCP_NREQS, sizeof(*tp->reqs));
	tp->cts_pool = calloc(TCP_NREQS, sizeof(*tp->cts_pool));
	if (!tp->reqs || !tp->cts_pool) {
		err = -ENOMEM;
		goto out_close;
	}
	for (int i = TCP_NREQS - 1; i >= 0; i--) {
		fifo_push(&tp->free, &tp->reqs[i].link);
		fifo_push(&tp->cts_free, &tp->cts_pool[i].link);
	}
	err = peers_alloc(tp);
	if (err)
		goto out_close;
	err = tcp_listen(tp);
	if (err)
		goto out_close;
	return 0;

out_close:
	tcp_close(t);
	return err;
}

static int tcp_endpoint(struct transport *t, void *buf, size_t *len)
{
	return tcp_endpoint_fill(t->priv, buf, len);
}

static int tcp_connect(struct transport *t, const void *eps)
{
	struct tcp_priv *tp = t->priv;
	int err = tcp_connect_all(tp, eps);

	if (err)
		return err;
	close(tp->listen_fd); /* every stream is up; nobody else may join */
	tp->listen_fd = -1;
	return tcp_progress_start(tp);
}

static int tcp_post(struct transport *t, int kind, int peer, uint64_t tag, struct tp_mr *mr,
		    size_t off, size_t len, uint64_t cookie)
{
	struct tcp_priv *tp = t->priv;
	struct tcp_req *r;
	int fatal = atomic_load(&tp->fatal);

	if (fatal)
		return fatal;
	if (peer < 0 || peer >= tp->env->nranks || !tp->peers[peer].active || !mr ||
	    off > mr->len || len > mr->len - off)
		return -EINVAL;
	pthread_mutex_lock(&tp->lock);
	if (fifo_empty(&tp->free)) {
		pthread_mutex_unlock(&tp->lock);
		return -EAGAIN;
	}
	r = fifo_entry(fifo_pop(&tp->free), struct tcp_req, link);
	r->tag = tag;
	r->cookie = cookie;
	r->buf = mr->addr + off;
	r->len = len;
	r->done = 0;
	r->peer = peer;
	r->status = 0;
	r->kind = kind;
	r->active = false;
	atomic_fetch_add(&tp->peers[peer].outstanding, 1);
	if (tp->inline_progress) {
		pthread_mutex_unlock(&tp->lock);
		tcp_inline_post(tp, r);
		return 0;
	}
	fifo_push(&tp->ops, &r->link);
	pthread_mutex_unlock(&tp->lock);
	tcp_wake(tp);
	return 0;
}

static int tcp_post_send(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
			 size_t len, uint64_t cookie)
{
	return tcp_post(t, TR_SEND, peer, tag, mr, off, len, cookie);
}

static int tcp_post_recv(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
			 size_t len, uint64_t cookie)
{
	return tcp_post(t, TR_RECV, peer, tag, mr, off, len, cookie);
}

/* The thread notices the flag within one epoll timeout; poll() does not wait for it. */
static void set_fatal_abort(struct tcp_priv *tp)
{
	int zero = 0;

	atomic_compare_exchange_strong(&tp->fatal, &zero, -ECANCELED);
}

static int tcp_poll(struct transport *t, struct tp_completion *c, int max)
{
	struct tcp_priv *tp = t->priv;
	struct tcp_req *r;
	int n = 0, fatal;

	if (tp->inline_progress)
		tcp_inline_progress(tp, 0);
	if (atomic_load_explicit(&tp->ndone, memory_order_acquire) == 0) {
		if (tp_env_aborting(tp->env))
			set_fatal_abort(tp);
		fatal = atomic_load(&tp->fatal);
		if (fatal == -ECANCELED && !tp->fatal_reported)
			log_err(LOG_TRANSPORT, "tcp poll: job aborting");
		tp->fatal_reported = tp->fatal_reported || fatal;
		return fatal;
	}
	pthread_mutex_lock(&tp->lock);
	while (n < max && !fifo_empty(&tp->done)) {
		r = fifo_entry(fifo_pop(&tp->done), struct tcp_req, link);
		c[n++] = (struct tp_completion){.cookie = r->cookie,
						.status = r->status,
						.peer = r->peer,
						.len = r->len,
						.is_send = r->kind == TR_SEND};
		fifo_push_head(&tp->free, &r->link); /* reused next: fifo_push_head */
	}
	atomic_fetch_sub(&tp->ndone, n);
	pthread_mutex_unlock(&tp->lock);
	return n;
}

static int tcp_wait(struct transport *t, int timeout_ms)
{
	struct tcp_priv *tp = t->priv;

	if (!tp->inline_progress)
		return -EOPNOTSUPP;
	if (!atomic_load_explicit(&tp->ndone, memory_order_acquire))
		tcp_inline_progress(tp, timeout_ms);
	return 0;
}

/* Interface facts from sysfs; loopback and virtual links have no speed. Unbounded: this
 * node's live sysfs, never a path a user names or a remote file system. */
static void read_sysfs(const char *ifname, const char *what, char *buf, size_t len)
{
	char path[160];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, what);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static int tcp_path_info(struct transport *t, struct tp_path_info *info)
{
	struct tcp_priv *tp = t->priv;
	char speed[32], mtu[32];
	long mbps;

	memset(info, 0, sizeof(*info));
	snprintf(info->transport, sizeof(info->transport), "tcp");
	snprintf(info->device, sizeof(info->device), "%s", tp->ifname);
	snprintf(info->link_layer, sizeof(info->link_layer), "Ethernet");
	read_sysfs(tp->ifname, "speed", speed, sizeof(speed));
	read_sysfs(tp->ifname, "mtu", mtu, sizeof(mtu));
	mbps = atol(speed);
	if (mbps > 0) {
		info->rate_bps = (uint64_t)mbps * 1000000ull;
		snprintf(info->rate, sizeof(info->rate), "%ld Mb/s", mbps);
	}
	info->mtu = atoi(mtu);
	info->qps = tp->nstreams;
	snprintf(info->note, sizeof(info->note), "%d streams per peer, sockbuf %s, %s progress",
		 tp->nstreams, tp->env->opts && tp->env->opts->sockbuf ? "set" : "kernel default",
		 tp->inline_progress ? "inline" : "thread");
	return 0;
}

static int tcp_stats(struct transport *t, struct tp_stats *st)
{
	struct tcp_priv *tp = t->priv;

	st->bytes_sent = atomic_load(&tp->bytes_sent);
	st->bytes_recv = atomic_load(&tp->bytes_recv);
	st->cpu_ns = atomic_load(&tp->cpu_ns);
	return 0;
}

/* measured on loopback (2 and 4 ranks): 512KiB x 2 channels keeps a rank's messages in
 * flight inside its L2 between the kernel's copy and the reduce */
static uint64_t tcp_chunk_auto(uint64_t bytes GS_UNUSED, int nranks GS_UNUSED)
{
	return TP_CHUNK_CACHED;
}

/*
 * transport_ops.pending: what the executor can read without the progress side's queues
 * (theirs alone): requests posted and not completed, bytes queued to the peer and not
 * written (its socket full when they stay), and when bytes last moved each way.
 */
static int tcp_pending(struct transport *t, int peer, char *buf, size_t len)
{
	struct tcp_priv *tp = t->priv;
	struct tcp_peer *pe;
	uint64_t unsent = 0, rx = 0, tx = 0, now = time_now_ns();
	size_t n = 0;

	if (peer < 0 || peer >= tp->env->nranks || !tp->peers[peer].active)
		return -ENOENT;
	pe = &tp->peers[peer];
	for (int s = 0; s < tp->nstreams; s++) {
		struct tcp_stream *st = &pe->streams[s];

		unsent += tcp_published(&st->unsent);
		rx = GS_MAX(rx, tcp_published(&st->last_rx_ns));
		tx = GS_MAX(tx, tcp_published(&st->last_tx_ns));
	}
	buf[0] = '\0';
	str_appendf(buf, len, &n, "%d requests posted and not completed, %llu bytes queued and not written",
		    atomic_load(&pe->outstanding), (unsigned long long)unsent);
	if (rx)
		str_appendf(buf, len, &n, "; bytes last came from it %.1f s ago", (now - rx) / 1e9);
	else
		str_appendf(buf, len, &n, "; no bytes from it yet");
	if (tx)
		str_appendf(buf, len, &n, ", last went to it %.1f s ago", (now - tx) / 1e9);
	return 0;
}

const struct transport_ops tcp_ops = {
    .name = "tcp",
    .kind = TP_TCP,
    .chunk_auto = tcp_chunk_auto,
    .can_connect = tcp_can_connect,
    .open = tcp_open,
    .endpoint = tcp_endpoint,
    .connect = tcp_connect,
    .mr_reg = host_mr_reg,
    .mr_dereg = host_mr_dereg,
    .post_send = tcp_post_send,
    .post_recv = tcp_post_recv,
    .poll = tcp_poll,
    .wait = tcp_wait,
    .path_info = tcp_path_info,
    .stats = tcp_stats,
    .pending = tcp_pending,
    .close = tcp_close,
};
