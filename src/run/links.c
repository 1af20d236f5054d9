/*
 * Per-link waits of one AllReduce size: every rank's per-peer waits and transfer log
 * gathered, put on rank 0's clock, written into its row.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/flight.h"
#include "report/links.h"
#include "run/run.h"
#include "util/log.h"
#include "util/timeutil.h"

/* Rounds of rank 0 -> every rank -> rank 0 that bound each clock's offset; the tightest
 * bound is one bootstrap round trip (tens of us between hosts), so a few rounds do. */
#define LINK_CLOCK_ROUNDS 8

void run_links_snap(const struct run_comm *rc, struct coll_peer_busy *snap)
{
	if (!rc->coll)
		return;
	coll_peer_busy(rc->coll, snap);
	coll_xfers_reset(rc->coll); /* between AllReduces: nothing outstanding */
}

void run_links_prepare(const struct run_comm *rc)
{
	if (rc->coll)
		coll_xfers_prepare(rc->coll);
}

/* What each rank sends rank 0 after its per-peer waits: then n coll_xfer entries. */
struct xfer_hdr {
	uint64_t lost_ns;
	uint32_t n;
	uint32_t pad;
};

/* A rank's clock offset from rank 0's, bounded (flight_clock_bounds). */
struct clock_off {
	int64_t lo, hi;
};

/*
 * Every rank's clock offset, at rank 0 (off: nranks entries there, NULL elsewhere).
 * Ranks of rank 0's kernel (one boot_id: network namespaces, containers) read its very
 * clock; others are bounded by LINK_CLOCK_ROUNDS bcast-then-gather rounds. Collective.
 */
static int clock_offsets(struct run_rank *rr, struct clock_off *off)
{
	int n = rr->li.nranks, k, r, ret = 0;
	int64_t t0[LINK_CLOCK_ROUNDS], t1[LINK_CLOCK_ROUNDS], *tr = NULL;

	if (rr->li.rank == 0) {
		tr = calloc((size_t)n * LINK_CLOCK_ROUNDS, sizeof(*tr));
		if (!tr)
			ret = -ENOMEM;
	}
	/* every rank runs every round, or the bootstrap's sequence would part */
	for (k = 0; k < LINK_CLOCK_ROUNDS; k++) {
		int64_t mine, go = ret;
		void **all = NULL;
		size_t *lens = NULL;
		int st;

		t0[k] = (int64_t)time_now_ns();
		st = bootstrap_bcast(rr->bs, &go, sizeof(go));
		mine = (int64_t)time_now_ns();
		if (!st)
			st = bootstrap_gatherv(rr->bs, &mine, sizeof(mine), &all, &lens);
		t1[k] = (int64_t)time_now_ns();
		if (st)
			return st;
		for (r = 0; all && r < n; r++) {
			if (tr && lens[r] == sizeof(mine))
				memcpy(&tr[(size_t)r * LINK_CLOCK_ROUNDS + k], all[r], sizeof(mine));
			free(all[r]);
		}
		free(all);
		free(lens);
	}
	for (r = 0; tr && r < n; r++) {
		if (!strcmp(rr->hosts[r].boot_id, rr->hosts[0].boot_id) && rr->hosts[0].boot_id[0])
			off[r] = (struct clock_off){ 0, 0 };
		else
			flight_clock_bounds(t0, &tr[(size_t)r * LINK_CLOCK_ROUNDS], t1,
					    LINK_CLOCK_ROUNDS, &off[r].lo, &off[r].hi);
	}
	free(tr);
	return ret;
}

/* One rank's gathered blob: its header and log, NULL when malformed. */
static const struct coll_xfer *blob_xfers(const void *blob, size_t len, struct xfer_hdr *h)
{
	if (len < sizeof(*h))
		return NULL;
	memcpy(h, blob, sizeof(*h));
	if (len != sizeof(*h) + (size_t)h->n * sizeof(struct coll_xfer))
		return NULL;
	return (const struct coll_xfer *)((const char *)blob + sizeof(*h));
}

/* The completed entries with peer in one direction posted before end (on rank 0's clock:
 * the entry's less off), in seconds from base. Returns how many (out has room for all). */
static int pick(const struct coll_xfer *x, int n, int peer, bool is_send, int64_t off,
		int64_t end, uint64_t base, struct flight_xfer *out)
{
	int m = 0;

	for (int i = 0; i < n; i++) {
		int64_t post = (int64_t)x[i].post_ns - off;

		if ((int)x[i].peer != peer || !x[i].is_send != !is_send || post >= end ||
		    !x[i].done_ns)
			continue;
		out[m++] = (struct flight_xfer){
			x[i].tag, (double)(post - (int64_t)base) * 1e-9,
			(double)((int64_t)x[i].done_ns - off - (int64_t)base) * 1e-9, (double)x[i].bytes
		};
	}
	return m;
}

/* GRADSYNC_LOG=debug,coll: each message of a link, both ends on rank 0's clock (s and v
 * sorted by tag, as flight_busy leaves them), to look into a link's time step by step. */
static void log_messages(const struct link_obs *o, const struct flight_xfer *s, int ns,
			 const struct flight_xfer *v, int nv)
{
	for (int i = 0, j = 0; i < ns && j < nv;) {
		if (s[i].tag != v[j].tag) {
			s[i].tag < v[j].tag ? i++ : j++;
			continue;
		}
		log_dbg(LOG_COLL, "link %d->%d message tag=%#llx bytes=%.0f: send posted %.3f ms, receive posted %.3f ms, received %.3f ms",
			o->from, o->to, (unsigned long long)s[i].tag, v[j].bytes, s[i].post_s * 1e3,
			v[j].post_s * 1e3, v[j].done_s * 1e3);
		i++;
		j++;
	}
}

/*
 * Link r -> p's in-flight time into o, from r's sends and p's receives: at the offsets'
 * midpoints, and its spread over the ends of their bounds (flight_err_s). The logs are
 * complete up to the earlier of the two ends' lost_ns: later messages are left out.
 */
static int link_flight(struct link_obs *o, const struct coll_xfer *xr, const struct xfer_hdr *hr,
		       const struct coll_xfer *xp, const struct xfer_hdr *hp, const struct clock_off *or,
		       const struct clock_off *op, uint64_t base)
{
	int64_t mr = or->lo + (or->hi - or->lo) / 2, mp = op->lo + (op->hi - op->lo) / 2, end = INT64_MAX;
	/* r's clock against p's, at the ends of what the bounds allow */
	int64_t shift[3] = { 0, (or->lo - op->hi) - (mr - mp), (or->hi - op->lo) - (mr - mp) };
	struct flight_xfer *s = calloc((size_t)hr->n + 1, sizeof(*s));
	struct flight_xfer *v = calloc((size_t)hp->n + 1, sizeof(*v));
	double at[3] = { 0 }, bytes = 0;

	if (!s || !v) {
		free(s);
		free(v);
		return -ENOMEM;
	}
	if (hr->lost_ns)
		end = (int64_t)hr->lost_ns - mr;
	if (hp->lost_ns && (int64_t)hp->lost_ns - mp < end)
		end = (int64_t)hp->lost_ns - mp;
	for (int k = 0; k < 3; k++) {
		int ns = pick(xr, (int)hr->n, o->to, true, mr + shift[k], end, base, s);
		int nv = pick(xp, (int)hp->n, o->from, false, mp, end, base, v);

		at[k] = flight_busy(s, ns, v, nv, k ? &(double){ 0 } : &bytes);
		if (!k && log_enabled(LOG_DEBUG, LOG_COLL))
			log_messages(o, s, ns, v, nv);
	}
	o->flight_s = at[0];
	o->flight_bytes = bytes;
	o->flight_err_s = fmax(fabs(at[1] - at[0]), fabs(at[2] - at[0]));
	free(s);
	free(v);
	return 0;
}

/*
 * Every rank's transfer log since run_links_snap to rank 0 (*xall, *xlens there: one
 * blob per rank, struct xfer_hdr then its entries), with the clock offsets (*off, rank 0
 * only; the caller frees all three). Collective.
 */
static int links_gather_xfers(struct run_rank *rr, const struct run_comm *rc, void ***xall,
			      size_t **xlens, struct clock_off **off)
{
	const struct coll_xfer *x;
	struct xfer_hdr h = { 0 };
	size_t len;
	char *blob;
	int ret;

	h.n = (uint32_t)coll_xfers(rc->coll, &x, &h.lost_ns);
	len = sizeof(h) + (size_t)h.n * sizeof(*x);
	blob = malloc(len);
	if (rr->li.rank == 0)
		*off = calloc((size_t)rr->li.nranks, sizeof(**off));
	/* a rank short of memory still sends (a bare header): the gather stays in step */
	if (!blob) {
		h.n = 0;
		len = sizeof(h);
		blob = (char *)&h;
	} else {
		memcpy(blob, &h, sizeof(h));
		memcpy(blob + sizeof(h), x, (size_t)h.n * sizeof(*x));
	}
	ret = bootstrap_gatherv(rr->bs, blob, len, xall, xlens);
	if (blob != (char *)&h)
		free(blob);
	if (!ret)
		ret = clock_offsets(rr, rr->li.rank == 0 ? *off : NULL);
	if (!ret && rr->li.rank == 0 && !*off)
		ret = -ENOMEM;
	return ret;
}

/*
 * Every rank sends its waits since snap, and its transfer log; rank 0 pairs r's sends to
 * p with p's receives from r into the row's "links" (report/links.h), with their time in
 * flight (report/flight.h). Collective: every rank calls it.
 */
int run_links_collect(struct run_rank *rr, const struct run_comm *rc,
		      const struct coll_peer_busy *snap, json_t *row)
{
	int n = rr->li.nranks, r, p, k = 0, ret;
	size_t len = (size_t)n * sizeof(struct coll_peer_busy), *lens = NULL, *xlens = NULL;
	struct coll_peer_busy *mine, **all = NULL;
	struct clock_off *off = NULL;
	struct link_obs *obs = NULL;
	void **xall = NULL;
	uint64_t base = time_now_ns();

	if (!rc->coll || n < 2)
		return 0;
	mine = calloc((size_t)n, sizeof(*mine));
	if (!mine)
		return -ENOMEM;
	coll_peer_busy(rc->coll, mine);
	for (p = 0; p < n; p++) {
		mine[p].send_ns -= snap[p].send_ns;
		mine[p].recv_ns -= snap[p].recv_ns;
		mine[p].send_bytes -= snap[p].send_bytes;
		mine[p].recv_bytes -= snap[p].recv_bytes;
	}
	ret = bootstrap_gatherv(rr->bs, mine, len, (void ***)&all, &lens);
	free(mine);
	if (!ret)
		ret = links_gather_xfers(rr, rc, &xall, &xlens, &off);
	if (ret || rr->li.rank != 0)
		goto out_free;
	/* the messages' times below are from this instant: with it, samples taken on the
	 * same kernel's CLOCK_MONOTONIC (tests/cluster/bed.sh --sample) line up with them */
	log_dbg(LOG_COLL, "link messages: times in ms from CLOCK_MONOTONIC %.6f s", (double)base * 1e-9);
	for (r = 0; r < n && !ret; r++)
		if (lens[r] != len) {
			log_err(LOG_COLL, "link waits of rank %d: %zu bytes, expected %zu", r, lens[r], len);
			ret = -EPROTO;
		}
	obs = ret ? NULL : calloc((size_t)n * (size_t)n, sizeof(*obs));
	if (!ret && !obs)
		ret = -ENOMEM;
	for (r = 0; r < n && obs && !ret; r++)
		for (p = 0; p < n && !ret; p++) {
			struct xfer_hdr hr, hp;
			const struct coll_xfer *xr, *xp;

			if (p == r || !all[r][p].send_bytes)
				continue;
			obs[k] = (struct link_obs){ .from = r, .to = p,
						    .bytes = (double)all[r][p].send_bytes,
						    .send_s = all[r][p].send_ns * 1e-9,
						    .recv_s = all[p][r].recv_ns * 1e-9 };
			xr = blob_xfers(xall[r], xlens[r], &hr);
			xp = blob_xfers(xall[p], xlens[p], &hp);
			/* without both logs the link keeps the waits' rule (flight_bytes 0) */
			if (xr && xp)
				ret = link_flight(&obs[k], xr, &hr, xp, &hp, &off[r], &off[p], base);
			k++;
		}
	if (obs && row && !ret)
		rj_row_set_links(row, obs, k);
	free(obs);
out_free:
	for (r = 0; all && r < n; r++)
		free(all[r]);
	for (r = 0; xall && r < n; r++)
		free(xall[r]);
	free(all);
	free(lens);
	free(xall);
	free(xlens);
	free(off);
	return ret;
}
