/*
 * Transports of one case: choose one per peer (the configured kind, or with
 * transport = auto the first in preference order that both ends can use), open
 * them, all-gather endpoints through the bootstrap and connect.
 *
 * Every rank computes every pair's choice from the all-gathered reachability
 * matrix, so all ranks agree on which transports take part in each endpoint
 * exchange without further messages.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "coll/gpu_memops.h"
#include "topo/rail.h"
#include "transport/transport_select.h"
#include "util/common.h"
#include "util/cpus.h"
#include "util/log.h"

/* Every pair's transport from the all-gathered matrix; this rank's peers and the kinds
 * used anywhere (each takes part in one endpoint exchange). */
static int choose_peers(struct run_rank *rr, struct run_comm *rc, const uint32_t *can,
			bool *used_global)
{
	int n = rr->li.nranks, me = rr->li.rank, want = rr->ecase->cfg.transport.kind;
	int kinds[TP_KIND_COUNT], nk = transport_select_candidates(want, kinds, TP_KIND_COUNT);
	int *pair = malloc((size_t)n * n * sizeof(*pair));
	int a = -1, b = -1, p, ret;

	if (!pair)
		return -ENOMEM;
	ret = transport_select_pairs(kinds, nk, n, can, pair, &a, &b);
	if (ret) {
		log_err(LOG_TRANSPORT, "transport %s cannot connect rank %d (%s) and rank %d (%s)%s",
			transport_kind_name(want), a, rr->hosts[a].hostname, b,
			rr->hosts[b].hostname,
			want == TP_SHM ? ": shm needs both ranks on one host; use transport = tcp"
			: (want == TP_IB || want == TP_ROCE) ? ": no usable RDMA port; use transport = tcp"
							     : "");
		goto out;
	}
	for (p = 0; p < (int)((size_t)n * n); p++)
		if (pair[p] >= 0)
			used_global[pair[p]] = true;
	for (p = 0; p < n; p++)
		rc->peer_kind[p] = pair[(size_t)me * n + p];
out:
	free(pair);
	return ret;
}

static int comm_open_one(struct run_comm *rc, int k, void *ep, size_t *eplen)
{
	struct transport *t = &rc->tp[k];
	int ret;

	t->ops = transport_find(k);
	t->env = &rc->env[k];
	ret = t->ops->open(t, &rc->env[k]);
	if (ret) {
		log_err(LOG_TRANSPORT, "open transport %s: %s", t->ops->name, strerror(-ret));
		return ret;
	}
	rc->open[k] = true;
	ret = t->ops->endpoint(t, ep, eplen);
	if (ret)
		log_err(LOG_TRANSPORT, "endpoint of transport %s: %s", t->ops->name, strerror(-ret));
	return ret;
}

static int comm_coll_create(struct run_rank *rr, struct run_comm *rc)
{
	const struct cfg *c = &rr->ecase->cfg;
	struct coll_comm_cfg cc = {
		.rank = rr->li.rank,
		.nranks = rr->li.nranks,
		.abort_flag = bootstrap_abort_flag(rr->bs),
		.timeout_ns = c->launch.timeout_ns,
		.max_channels = c->collective.channels,
		/* hierarchical needs the node layout; -1 when hosts are not equal blocks */
		.local_size = sched_local_size(rr->host_of_rank, rr->li.nranks),
		.crowded = rc->crowded,
		.chunk_size = c->collective.chunk_size,
		.act = rc->act,
	};
	int p;

	rc->peer_tp = calloc(rc->nranks, sizeof(*rc->peer_tp));
	if (!rc->peer_tp)
		return -ENOMEM;
	for (p = 0; p < rc->nranks; p++)
		rc->peer_tp[p] = rc->peer_kind[p] >= 0 ? &rc->tp[rc->peer_kind[p]] : NULL;
	cc.peer_tp = rc->peer_tp;
	cc.mem = rc->gpu.mem ? gpu_memops_ops(rc->gpu.mem) : NULL;
	rc->coll = coll_comm_create(&cc);
	return rc->coll ? 0 : -EINVAL;
}

static int bs_bcast(void *ctx, void *buf, size_t len)
{
	return bootstrap_bcast(ctx, buf, len);
}

/* transport = nccl: no transports of ours; NCCL's unique id travels on the bootstrap. */
static int comm_nccl_open(struct run_rank *rr, struct run_comm *rc)
{
	int ret;

	if (!rr->gpu.ctx) {
		log_err(LOG_TRANSPORT,
			"case %s: transport = nccl needs GPU buffers: set [gpu] device = auto (no GPU on rank %d)",
			rr->ecase->name, rr->li.rank);
		/* still take part in the id broadcast so no rank waits for us */
	}
	ret = nccl_ref_open(rr->li.rank, rr->li.nranks, rr->li.local_rank, bs_bcast, rr->bs,
			    &rc->nccl);
	if (!ret && !rr->gpu.ctx)
		ret = -ENODEV;
	return ret;
}

uint64_t run_comm_chunk(const struct run_comm *rc, uint64_t bytes)
{
	return rc->coll ? coll_comm_chunk(rc->coll, bytes) : 0;
}

int run_comm_allreduce(struct run_comm *rc, const struct run_dbuf *buf, uint64_t off,
		       const struct run_dbuf *scratch, uint64_t count, enum dtype dt, enum redop op,
		       const struct coll_opts *co, struct coll_stats *cs)
{
	int ret;

	if (!rc->nccl)
		return coll_allreduce(rc->coll, &buf->cb, off, &scratch->cb, count, dt, op, co->algo,
				      run_comm_chunk(rc, count * dtype_size(dt)), co->channels, cs);
	ret = nccl_ref_allreduce(rc->nccl, (char *)buf->dev + off, count, dt, op, rc->gpu.ctx->comm);
	if (!ret)
		ret = run_gpu_sync(rc->act, rc->gpu.ctx->comm, rc->timeout_ms);
	if (cs) {
		memset(cs, 0, sizeof(*cs));
		/* NCCL's ring moves the bus factor's share of the buffer per rank */
		cs->bytes_sent = (uint64_t)(count * dtype_size(dt) *
					    coll_busbw_factor(COLL_OP_ALLREDUCE, rc->nranks));
	}
	return ret;
}

const char *run_comm_algo_name(const struct run_comm *rc, int algo)
{
	return rc->nccl ? "nccl" : sched_algo_name(algo);
}

/* The NIC this rank leaves through for device = auto: its GPU's closest, as NCCL. */
static void comm_rail(const struct run_rank *rr, char *buf, size_t len)
{
	bool gpu = rr->gpu.ctx && gpu_opts_wanted(&rr->ecase->cfg.gpu);
	int n = rr->node.topo ? topo_rail_nic(rr->node.topo, gpu ? rr->gpu.index : -1, -1, rr->li.local_rank)
			 : -ENOENT;

	buf[0] = '\0';
	if (n >= 0)
		snprintf(buf, len, "%s", rr->node.topo->nics[n].name);
}

/* Each transport kind's env for this case (its peers' use flags still all false). */
static int comm_envs_init(struct run_rank *rr, struct run_comm *rc, bool gpu_buffers)
{
	for (int k = 0; k < TP_KIND_COUNT; k++) {
		struct transport_env *env = &rc->env[k];

		rc->use_peer[k] = calloc(rc->nranks, sizeof(bool));
		if (!rc->use_peer[k])
			return -ENOMEM;
		env->rank = rr->li.rank;
		env->nranks = rc->nranks;
		env->local_rank = rr->li.local_rank;
		env->host_of_rank = rr->host_of_rank;
		env->use_peer = rc->use_peer[k];
		env->job_id = rr->job_nonce ^ ((uint64_t)rr->case_index << 48);
		env->timeout_ms = rc->timeout_ms;
		env->opts = &rr->ecase->cfg.transport;
		env->numa_node = -1;
		env->abort_flag = bootstrap_abort_flag(rr->bs);
		env->gpu_buffers = gpu_buffers;
		env->crowded = rc->crowded;
		comm_rail(rr, env->rail, sizeof(env->rail));
	}
	return 0;
}

/* Who this rank can reach, by each transport's own predicate: mine[p] bit kind. */
static void comm_reach(const struct run_rank *rr, const struct run_comm *rc, uint32_t *mine)
{
	for (int p = 0; p < rc->nranks; p++) {
		if (p == rr->li.rank)
			continue;
		for (size_t i = 0; i < transport_count(); i++) {
			const struct transport_ops *ops = transport_at(i);

			if (ops->can_connect(&rc->env[ops->kind], p))
				mine[p] |= 1u << ops->kind;
		}
	}
}

/*
 * One endpoint exchange per transport in use anywhere, in kind order on every rank:
 * open and connect those this rank uses. eps holds nranks endpoints.
 */
static int comm_exchange(struct run_rank *rr, struct run_comm *rc, const bool *used_global,
			 char *eps)
{
	int ret = 0;

	for (int k = 0; k < TP_KIND_COUNT; k++) {
		bool local = false;
		int r2;
		char ep[TRANSPORT_EP_MAX] = { 0 };
		size_t eplen = sizeof(ep);

		if (!used_global[k])
			continue;
		for (int p = 0; p < rc->nranks; p++)
			local |= rc->use_peer[k][p];
		if (local)
			ret = comm_open_one(rc, k, ep, &eplen);
		/* take part in the exchange even after a local failure, then stop together */
		r2 = bootstrap_allgather(rr->bs, ep, eps, TRANSPORT_EP_MAX);
		if (!ret)
			ret = r2;
		if (ret)
			return ret;
		if (local) {
			ret = rc->tp[k].ops->connect(&rc->tp[k], eps);
			if (ret) {
				log_err(LOG_TRANSPORT, "connect transport %s: %s", rc->tp[k].ops->name,
					strerror(-ret));
				return ret;
			}
		}
	}
	return 0;
}

int run_comm_open(struct run_rank *rr, struct run_comm *rc)
{
	int n = rr->li.nranks, me = rr->li.rank, want = rr->ecase->cfg.transport.kind;
	bool used_global[TP_KIND_COUNT] = { false }, gpu_buffers;
	uint32_t *mine = NULL, *can = NULL;
	char *eps = NULL;
	int ret = 0, p;

	memset(rc, 0, sizeof(*rc));
	rc->nranks = n;
	/* the thread that will run the collectives: a workload's are on its comm thread */
	rc->act = &rr->act[workload_has_model(&rr->ecase->cfg.workload) ? ACT_THREAD_COMM
									 : ACT_THREAD_MAIN];
	/*
	 * GPU buffers on one host: cudaipc may serve every pair. Across hosts the network path
	 * may stage, and one buffer cannot be device memory for cudaipc and a host mirror for
	 * tcp at once, so auto then keeps to shm/verbs/tcp.
	 */
	gpu_buffers = rr->gpu.ctx && gpu_opts_wanted(&rr->ecase->cfg.gpu);
	for (p = 0; p < n; p++)
		gpu_buffers &= rr->host_of_rank[p] == rr->host_of_rank[0];
	rc->peer_kind = calloc(n, sizeof(*rc->peer_kind));
	mine = calloc(n, sizeof(*mine));
	can = calloc((size_t)n * n, sizeof(*can));
	eps = calloc(n, TRANSPORT_EP_MAX);
	if (!rc->peer_kind || !mine || !can || !eps) {
		ret = -ENOMEM;
		goto out;
	}
	rc->timeout_ms = (int)(rr->ecase->cfg.launch.timeout_ns / 1000000);
	rc->crowded = cpus_crowded(rr->cpus_of_rank, rr->kernel_of_rank, n, me, 1);
	if (want == TP_NCCL) {
		ret = comm_nccl_open(rr, rc);
		if (!ret)
			ret = run_gpu_path_setup(rr, rc);
		if (!ret)
			ret = run_gpu_comm_setup(rr, rc);
		goto out;
	}
	if (want != TP_AUTO && !transport_find(want)) {
		log_err(LOG_TRANSPORT, "transport %s is not compiled into this binary (see gradsync --version)",
			transport_kind_name(want));
		ret = -ENOTSUP;
		goto out;
	}
	ret = comm_envs_init(rr, rc, gpu_buffers);
	if (ret)
		goto out;
	comm_reach(rr, rc, mine);
	ret = bootstrap_allgather(rr->bs, mine, can, n * sizeof(*mine));
	if (ret)
		goto out;
	ret = choose_peers(rr, rc, can, used_global);
	if (ret)
		goto out;
	for (p = 0; p < n; p++)
		if (rc->peer_kind[p] >= 0)
			rc->use_peer[rc->peer_kind[p]][p] = true;
	/* the GPU path is fixed before any transport opens: the env they get is final */
	ret = run_gpu_path_setup(rr, rc);
	if (ret)
		goto out;
	if (rc->gpu.path.flush) {
		/* read by the verbs transports when GPU buffers are registered */
		rc->env[TP_IB].gdr_flush = true;
		rc->env[TP_ROCE].gdr_flush = true;
	}
	ret = comm_exchange(rr, rc, used_global, eps);
	if (!ret)
		ret = run_gpu_comm_setup(rr, rc);
	if (!ret)
		ret = comm_coll_create(rr, rc);
out:
	free(mine);
	free(can);
	free(eps);
	if (ret)
		run_comm_close(rc);
	return ret;
}

void run_comm_close(struct run_comm *rc)
{
	int k;

	if (rc->coll)
		coll_comm_destroy(rc->coll);
	rc->coll = NULL;
	if (rc->nccl)
		nccl_ref_close(rc->nccl);
	rc->nccl = NULL;
	run_gpu_comm_close(rc);
	free(rc->peer_tp);
	rc->peer_tp = NULL;
	for (k = 0; k < TP_KIND_COUNT; k++) {
		if (rc->open[k])
			rc->tp[k].ops->close(&rc->tp[k]);
		rc->open[k] = false;
		free(rc->use_peer[k]);
		rc->use_peer[k] = NULL;
	}
	free(rc->peer_kind);
	rc->peer_kind = NULL;
}

void run_comm_stats(struct run_comm *rc, struct tp_stats *st)
{
	int k;

	memset(st, 0, sizeof(*st));
	for (k = 0; k < TP_KIND_COUNT; k++) {
		struct tp_stats s = { 0 };

		if (!rc->open[k] || rc->tp[k].ops->stats(&rc->tp[k], &s))
			continue;
		st->bytes_sent += s.bytes_sent;
		st->bytes_recv += s.bytes_recv;
		st->cpu_ns += s.cpu_ns;
	}
}

static void path_info(struct run_comm *rc, int k, struct tp_path_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	snprintf(pi->transport, sizeof(pi->transport), "%s", rc->tp[k].ops->name);
	pi->gid_index = -1;
	rc->tp[k].ops->path_info(&rc->tp[k], pi);
}

int run_comm_paths(struct run_comm *rc, struct tp_path_info *all, int *nall)
{
	int k, p, best = -1, best_peers = 0;

	*nall = 0;
	if (rc->nccl) {
		memset(all, 0, sizeof(*all));
		snprintf(all->transport, sizeof(all->transport), "nccl");
		snprintf(all->device, sizeof(all->device), "libnccl.so.2");
		snprintf(all->note, sizeof(all->note), "%s", nccl_ref_version(rc->nccl));
		all->gid_index = -1;
		return 0; /* the reference: no transport of ours is open */
	}
	for (k = 0; k < TP_KIND_COUNT; k++) {
		int peers = 0;

		if (!rc->open[k])
			continue;
		path_info(rc, k, &all[*nall]);
		for (p = 0; p < rc->nranks; p++)
			peers += rc->peer_kind[p] == k;
		/* the case's path: the transport most peers use; across hosts on ties */
		if (peers > best_peers || (peers == best_peers && k != TP_SHM)) {
			best = *nall;
			best_peers = peers;
		}
		++*nall;
	}
	return best;
}
