/*
 * The communicator: peers' transports, registered buffers, the schedule cache and
 * the host memory operations.
 *
 * Tags (comm.h): seq, piece and step are cut to 26, 24 and 12 bits. Wrapping is safe
 * because two messages between the same pair with equal tags would need pieces 2^24
 * apart or collectives 2^26 apart in flight at once, and a rank cannot finish a piece
 * (every rank receives in it) before every rank has started it.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "coll/comm.h"
#include "coll/reduce.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

static int host_reduce(void *ctx, int chan, void *dst, const void *src, uint64_t count,
		       enum dtype dt)
{
	(void)ctx;
	(void)chan;
	reduce_sum(dst, src, count, dt);
	return 0;
}

static int host_scale(void *ctx, int chan, void *buf, uint64_t count, enum dtype dt,
		      uint32_t divisor)
{
	(void)ctx;
	(void)chan;
	reduce_div(buf, count, dt, divisor);
	return 0;
}

static int host_query(void *ctx, int chan)
{
	(void)ctx;
	(void)chan;
	return 1;
}

const struct coll_memops coll_host_memops = {
    .name = "host",
    .reduce = host_reduce,
    .scale = host_scale,
    .query = host_query,
};

struct coll_comm *coll_comm_create(const struct coll_comm_cfg *cfg)
{
	struct coll_comm *c;

	if (cfg->nranks < 1 || cfg->rank < 0 || cfg->rank >= cfg->nranks || cfg->max_channels < 1 ||
	    cfg->max_channels > COLL_MAX_CHANNELS || (!cfg->peer_tp && cfg->nranks > 1) ||
	    !cfg->timeout_ns) {
		log_err(LOG_COLL,
			"coll_comm_create rank=%d nranks=%d channels=%d timeout=%lluns: "
			"invalid",
			cfg->rank, cfg->nranks, cfg->max_channels,
			(unsigned long long)cfg->timeout_ns);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto out_nomem;
	c->peer_tp = calloc((size_t)cfg->nranks, sizeof(*c->peer_tp));
	c->peer_ti = calloc((size_t)cfg->nranks, sizeof(*c->peer_ti));
	c->slots = calloc((size_t)cfg->max_channels, sizeof(*c->slots));
	c->wait = calloc((size_t)cfg->nranks, sizeof(*c->wait));
	c->xlog.x = calloc(COLL_XFER_LOG, sizeof(*c->xlog.x));
	if (!c->peer_tp || !c->peer_ti || !c->slots || !c->wait || !c->xlog.x)
		goto out_free;
	/* touched now: a fresh page on the data path costs more than the transfer it logs */
	gs_touch_pages(c->xlog.x, COLL_XFER_LOG * sizeof(*c->xlog.x));
	c->rank = cfg->rank;
	c->nranks = cfg->nranks;
	c->abort_flag = cfg->abort_flag;
	c->act = cfg->act;
	c->timeout_ns = cfg->timeout_ns;
	c->mem = cfg->mem ? cfg->mem : &coll_host_memops;
	c->max_channels = cfg->max_channels;
	c->local_size = cfg->local_size;
	c->crowded = cfg->crowded;
	c->chunk_size = cfg->chunk_size;
	for (int p = 0; p < cfg->nranks; p++) {
		int i;

		if (p == cfg->rank)
			continue;
		if (!cfg->peer_tp[p]) {
			log_err(LOG_COLL, "coll_comm_create: no transport for peer %d", p);
			goto out_destroy;
		}
		c->peer_tp[p] = cfg->peer_tp[p];
		for (i = 0; i < c->ntp && c->tps[i] != cfg->peer_tp[p]; i++)
			;
		if (i == c->ntp) {
			if (c->ntp == COLL_MAX_TRANSPORTS) {
				log_err(LOG_COLL, "coll_comm_create: more than %d transports",
					COLL_MAX_TRANSPORTS);
				goto out_destroy;
			}
			c->tps[c->ntp++] = cfg->peer_tp[p];
		}
		c->peer_ti[p] = (uint8_t)i;
	}
	return c;

out_destroy:
	coll_comm_destroy(c);
	return NULL;
out_free:
	coll_comm_destroy(c); /* nothing cached yet: frees what the callocs got */
out_nomem:
	log_err(LOG_COLL, "coll_comm_create rank=%d: out of memory", cfg->rank);
	return NULL;
}

void coll_comm_destroy(struct coll_comm *c)
{
	if (!c)
		return;
	for (int i = 0; i < COMM_SCHED_CACHE; i++)
		if (c->cache[i].valid)
			sched_free(&c->cache[i].s);
	free(c->peer_tp);
	free(c->peer_ti);
	free(c->slots);
	free(c->wait);
	free(c->xlog.x);
	free(c);
}

uint32_t comm_wait_open(struct coll_comm *c, int peer, bool is_send, uint64_t bytes, uint64_t tag,
			uint64_t now)
{
	struct comm_peer_wait *w = &c->wait[peer];
	struct comm_xfer_log *g = &c->xlog;

	if (w->open[is_send]++ == 0)
		w->since_ns[is_send] = now;
	w->bytes[is_send] += bytes;
	if (g->n == COLL_XFER_LOG || g->lost_ns) {
		if (!g->lost_ns)
			g->lost_ns = now;
		return COMM_XLOG_NONE;
	}
	g->x[g->n] = (struct coll_xfer){ tag, now, 0, bytes, (uint32_t)peer, is_send };
	return g->n++;
}

void comm_wait_close(struct coll_comm *c, int peer, bool is_send, uint32_t xlog, uint64_t now)
{
	struct comm_peer_wait *w = &c->wait[peer];

	if (w->open[is_send] && --w->open[is_send] == 0)
		w->busy_ns[is_send] += now - w->since_ns[is_send];
	if (xlog < c->xlog.n)
		c->xlog.x[xlog].done_ns = now;
}

int coll_xfers(const struct coll_comm *c, const struct coll_xfer **x, uint64_t *lost_ns)
{
	*x = c->xlog.x;
	*lost_ns = c->xlog.lost_ns;
	return (int)c->xlog.n;
}

void coll_xfers_prepare(struct coll_comm *c)
{
	gs_touch_pages(c->xlog.x, COLL_XFER_LOG * sizeof(*c->xlog.x));
}

void coll_xfers_reset(struct coll_comm *c)
{
	c->xlog.n = 0;
	c->xlog.lost_ns = 0;
}

void coll_peer_busy(const struct coll_comm *c, struct coll_peer_busy *out)
{
	for (int p = 0; p < c->nranks; p++) {
		const struct comm_peer_wait *w = &c->wait[p];

		out[p] = (struct coll_peer_busy){ .send_ns = w->busy_ns[1], .recv_ns = w->busy_ns[0],
						  .send_bytes = w->bytes[1],
						  .recv_bytes = w->bytes[0] };
	}
}

uint64_t coll_comm_chunk(const struct coll_comm *c, uint64_t bytes)
{
	uint64_t chunk = 0;

	if (c->chunk_size)
		return c->chunk_size;
	for (int i = 0; i < c->ntp; i++) {
		uint64_t hint = c->tps[i]->ops->chunk_auto(bytes, c->nranks);

		chunk = chunk ? GS_MIN(chunk, hint) : hint;
	}
	return chunk ? chunk : TP_CHUNK_DEFAULT;
}

int coll_comm_ntransports(const struct coll_comm *c)
{
	return c->ntp;
}

struct transport *coll_comm_transport(const struct coll_comm *c, int i)
{
	return i >= 0 && i < c->ntp ? c->tps[i] : NULL;
}

int coll_buf_register(struct coll_comm *c, struct coll_buf *b, void *ptr, uint64_t bytes,
		      enum mem_kind kind)
{
	memset(b, 0, sizeof(*b));
	b->ptr = ptr;
	b->bytes = bytes;
	b->kind = kind;
	for (int i = 0; i < c->ntp; i++) {
		struct transport *t = c->tps[i];
		int ret = t->ops->mr_reg(t, ptr, bytes, kind, &b->mr[i]);

		if (ret) {
			log_err(LOG_COLL, "mr_reg %s %llu bytes: %s", t->ops->name,
				(unsigned long long)bytes, strerror(-ret));
			coll_buf_deregister(c, b);
			return ret;
		}
	}
	return 0;
}

void coll_buf_deregister(struct coll_comm *c, struct coll_buf *b)
{
	for (int i = 0; i < c->ntp; i++) {
		if (b->mr[i])
			c->tps[i]->ops->mr_dereg(c->tps[i], b->mr[i]);
		b->mr[i] = NULL;
	}
}

uint64_t coll_scratch_bytes(uint64_t chunk_bytes, int channels)
{
	/* Elements are at most 8 bytes; a chunk is at least one element. */
	uint64_t per_slot = SCHED_SCRATCH_CHUNKS * GS_ALIGN_UP(GS_MAX(chunk_bytes, 8), 64);

	return per_slot * (uint64_t)(channels > 0 ? channels : 1);
}

const struct sched *comm_sched(struct coll_comm *c, int algo, uint64_t count, int *err)
{
	struct comm_cached *victim = &c->cache[0];

	for (int i = 0; i < COMM_SCHED_CACHE; i++) {
		struct comm_cached *e = &c->cache[i];

		if (e->valid && e->algo == algo && e->count == count) {
			e->used = ++c->stamp;
			return &e->s;
		}
		if (!e->valid || (victim->valid && e->used < victim->used))
			victim = e;
	}
	if (victim->valid)
		sched_free(&victim->s);
	victim->valid = false;
	*err = sched_build_on(algo, c->rank, c->nranks, c->local_size, count, &victim->s);
	if (*err)
		return NULL;
	victim->valid = true;
	victim->algo = algo;
	victim->count = count;
	victim->used = ++c->stamp;
	return &victim->s;
}

/*
 * Spin, then yield, then nap: a wait that is short stays a spin (latency), a long one
 * (a large message on the wire, a peer descheduled on an oversubscribed host) gives
 * the CPU to the peers and progress threads that must move for it to end. With host
 * memops and one transport that can sleep until news (tcp driven inline, shm's
 * doorbells), nothing else can end the wait, so the thread sleeps in the kernel where
 * it would nap: the wake-up comes with the data, where a nap oversleeps it by the
 * timer's slack.
 * On a crowded host (more ranks than CPUs) the rank that holds our data often waits for
 * our CPU: after COMM_CROWDED_SPINS empty rounds every round yields, so the CPU goes
 * at once to a rank on it that has work, and comes back without a wake-up. A futex or
 * poll sleep costs a cross-CPU wake-up per step instead (an IPI, 5-20 us on this VM,
 * more than a 4 KiB AllReduce step): it is taken only once the wait is long
 * (COMM_CROWDED_WAIT_AFTER_NS), where burning slices in yields would slow the ranks
 * that have work. Both swept on the 2-core VM (tests/bench/RESULTS.md, "crowded idle
 * policy"). A host with a CPU per rank is treated alike while a peer last ran on our CPU
 * (transport_ops.peer_on_cpu, comm_idle): the scheduler put us together, and the peer
 * runs only once we give the CPU up. Where no transport says where the peer runs (tcp),
 * or another job shares our CPU, the yields say it: past COMM_YIELD_PROBE_NS a rank with
 * a CPU of its own yields on every round that reads the clock, and one that took long
 * (COMM_YIELD_BUSY_NS) ran someone else: the wait is contended until one comes back at
 * once, yields every round and sleeps in the transport soon (COMM_CONTENDED_WAIT_AFTER_NS).
 * spins counts the empty rounds of this wait and never resets within it.
 */
enum comm_idle_act comm_idle_action(bool crowded, bool contended, bool can_wait,
				    uint32_t spins, uint64_t idle_ns)
{
	uint64_t wait_after = contended ? COMM_CONTENDED_WAIT_AFTER_NS
			      : crowded ? COMM_CROWDED_WAIT_AFTER_NS
					: COMM_WAIT_AFTER_NS;

	if (can_wait && idle_ns > wait_after)
		return COMM_IDLE_WAIT;
	if (idle_ns > COMM_NAP_AFTER_NS)
		return COMM_IDLE_NAP;
	if (crowded || contended ? spins >= COMM_CROWDED_SPINS
		    : spins % COMM_SPINS_BEFORE_YIELD == 0 || idle_ns > COMM_YIELD_PROBE_NS)
		return COMM_IDLE_YIELD;
	return COMM_IDLE_SPIN;
}

bool comm_idle_reads_clock(bool crowded, uint32_t spins)
{
	return spins <= 1 || crowded || spins % COMM_CLOCK_EVERY == 0;
}

/* Did a peer last run on the CPU we run on? (transport_ops.peer_on_cpu) */
static bool comm_peer_here(const struct coll_comm *c)
{
	int cpu = sched_getcpu(); /* a load from glibc's rseq area */

	for (int i = 0; i < c->ntp && cpu >= 0; i++)
		if (c->tps[i]->ops->peer_on_cpu(c->tps[i], cpu))
			return true;
	return false;
}

const char *comm_pending(const struct coll_comm *c, int peer, char *buf, size_t len)
{
	struct transport *t;
	int n;

	if (peer < 0 || peer >= c->nranks || !c->peer_tp[peer] || len < 64)
		return "";
	t = c->peer_tp[peer];
	n = snprintf(buf, len, "; %s peer %d: ", t->ops->name, peer);
	if (n < 0 || (size_t)n >= len || t->ops->pending(t, peer, buf + n, len - (size_t)n))
		return "";
	return buf;
}

int comm_idle(struct coll_comm *c, uint64_t *idle_since, uint32_t *spins)
{
	bool can_wait = c->ntp == 1 && c->mem == &coll_host_memops, crowded;
	struct timespec ts = { 0, COMM_NAP_NS };
	enum comm_idle_act act;
	uint64_t now, idle;

	if (*spins < UINT32_MAX)
		++*spins;
	/* a spin without the clock (a vDSO read, ~60 ns here) notices news sooner */
	if (!comm_idle_reads_clock(c->crowded || c->peer_here || c->contended, *spins))
		return 0;
	if (c->abort_flag && __atomic_load_n(c->abort_flag, __ATOMIC_RELAXED))
		return -ECONNABORTED;
	now = time_now_ns();
	c->idle_now = now;
	if (!*idle_since)
		*idle_since = now;
	idle = now - *idle_since;
	if (idle > c->timeout_ns)
		return -ETIMEDOUT;
	/* kept for the next rounds: while it holds, every round is looked at */
	c->peer_here = !c->crowded && comm_peer_here(c);
	crowded = c->crowded || c->peer_here;
	act = comm_idle_action(crowded, c->contended, can_wait, *spins, idle);
	/* a transport that cannot sleep for us (the ops stub, tcp with its progress
	 * thread, shm on a host with a CPU per rank): as if there were none */
	if (act == COMM_IDLE_WAIT && c->tps[0]->ops->wait(c->tps[0], COMM_WAIT_MS) == -EOPNOTSUPP)
		act = comm_idle_action(crowded, c->contended, false, *spins, idle);
	if (act == COMM_IDLE_NAP)
		nanosleep(&ts, NULL);
	else if (act == COMM_IDLE_YIELD) {
		sched_yield();
		/* someone else ran on our CPU meanwhile: contended while that holds */
		c->contended = !c->crowded && time_now_ns() - now > COMM_YIELD_BUSY_NS;
	}
	return 0;
}
