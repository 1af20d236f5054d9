/* The two-tier link model: per-step tier loads read from the schedules, fit and verdict. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/schedule.h"
#include "report/jget.h"
#include "report/pipesim.h"
#include "report/tier.h"

/* Pieces the pipelining model runs (pipesim.h): enough for the steady state of 8 in
 * flight over a tree's steps, few enough for a projection's many calls. */
#define TIER_SIM_PIECES 32

/*
 * A staggered schedule's (tree's) bytes through the busiest port of tier t, as the
 * executor pipelines it: the fluid model of pipesim.h with the other tier's ports left
 * unlimited. x: one piece's transfers with ports for both tiers, bytes of the whole
 * buffer; returns the model's time in bytes at one byte per unit, or < 0.
 */
static double tier_sim_bytes(const struct psim_xfer *x, int nx, int tier, int hosts, int n,
			     int nsteps, double npieces, double inflight)
{
	struct psim_xfer *y = calloc(nx > 0 ? (size_t)nx : 1, sizeof(*y));
	int pieces = (int)fmin(npieces, TIER_SIM_PIECES);
	double t;

	if (!y)
		return -ENOMEM;
	for (int j = 0; j < nx; j++) {
		bool inter = x[j].port_out < 2 * hosts;

		y[j] = x[j];
		y[j].bytes = x[j].bytes / pieces;
		if (inter != (tier == TIER_INTER))
			y[j].port_out = y[j].port_in = -1;
	}
	t = psim_run(y, nx, n, nsteps, 2 * hosts + 2 * n, pieces,
		     (int)fmin(inflight, pieces), true);
	free(y);
	return t;
}

const char *tier_name(int tier)
{
	return tier == TIER_INTRA ? "inside a host" : "between hosts";
}

void tier_load_free(struct tier_load *l)
{
	free(l->step);
	l->step = NULL;
}

/* Ports of a layout, per step: hosts' links up and down (inter), then ranks' bytes out
 * and in to peers of their own host (intra). */
static int port_tier(size_t j, int hosts)
{
	return j < 2 * (size_t)hosts ? TIER_INTER : TIER_INTRA;
}

int tier_load(int algo, struct tier_layout lay, double bytes, size_t es, struct tier_pipe pipe,
	      struct tier_load *l)
{
	int h = lay.hosts, lr = lay.ranks_per_host, n, r, t, ret = 0;
	size_t width, k, j, nsteps = 0;
	double *port = NULL, *total = NULL, sum[TIER_COUNT] = { 0 }, inflight, npieces = 1e9;
	uint64_t count, piece;
	struct psim_xfer *xf = NULL;
	int nxf = 0, capxf = 0;
	bool staggered = false;

	memset(l, 0, sizeof(*l));
	if (h < 1 || lr < 1 || es == 0 || !(bytes >= 0) || pipe.channels < 1 || algo <= ALGO_AUTO ||
	    algo >= ALGO_COUNT)
		return -EINVAL;
	if ((long)h * lr > TIER_MAX_RANKS)
		return -E2BIG;
	n = h * lr;
	count = (uint64_t)(bytes / (double)es);
	if (n == 1 || count == 0)
		return 0;
	/* the executor cannot have more pieces in flight than the buffer has */
	inflight = pipe.channels;
	piece = pipe.chunk_bytes >= (double)es ?
		sched_piece_count_on(algo, n, lr, (uint64_t)(pipe.chunk_bytes / (double)es)) : 0;
	if (piece) {
		npieces = ceil((double)count / (double)piece);
		inflight = fmin(inflight, npieces);
	}
	width = 2 * (size_t)h + 2 * (size_t)n;
	for (r = 0; r < n; r++) {
		struct sched s;
		uint32_t i;

		ret = sched_build_on(algo, r, n, lr, count, &s);
		if (ret)
			goto out_free;
		if (!port) {
			nsteps = s.nsteps;
			port = calloc(nsteps ? nsteps * width : 1, sizeof(*port));
		}
		if (!port || s.nsteps != nsteps) {
			ret = port ? -EPROTO : -ENOMEM;
			sched_free(&s);
			goto out_free;
		}
		staggered = s.staggered;
		for (i = 0; i < s.nsteps; i++) {
			double *up = port + i * width, *down = up + h, *tx = down + h, *rx = tx + n;
			const struct sched_step *st = &s.steps[i];

			for (int x = 0; x < st->nsend; x++) {
				int p = st->send[x].peer;
				double b = (double)st->send[x].count * (double)es;
				bool intra = p / lr == r / lr;

				if (intra) {
					tx[r] += b;
					rx[p] += b;
				} else {
					up[r / lr] += b;
					down[p / lr] += b;
				}
				if (!staggered)
					continue;
				if (nxf == capxf) {
					void *g = realloc(xf, (size_t)(capxf = capxf ? 2 * capxf : 64) * sizeof(*xf));

					if (!g) {
						ret = -ENOMEM;
						sched_free(&s);
						goto out_free;
					}
					xf = g;
				}
				/* ports as above: up[h], down[h], then tx[r], rx[r] */
				xf[nxf++] = (struct psim_xfer){ r, p, (int)i,
					intra ? 2 * h + r : r / lr, intra ? 2 * h + n + p : h + p / lr, b };
			}
		}
		sched_free(&s);
	}
	l->step = calloc(nsteps ? nsteps : 1, sizeof(*l->step));
	total = calloc(width, sizeof(*total));
	if (!l->step || !total) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (k = 0; k < nsteps; k++) {
		const double *p = port + k * width;

		for (j = 0; j < width; j++) {
			t = port_tier(j, h);
			l->step[k][t] = fmax(l->step[k][t], p[j]);
			total[j] += p[j];
		}
		for (t = 0; t < TIER_COUNT; t++) {
			l->steps[t] += l->step[k][t] > 0;
			sum[t] += l->step[k][t];
		}
	}
	for (j = 0; j < width; j++)
		l->bytes[port_tier(j, h)] = fmax(l->bytes[port_tier(j, h)], total[j]);
	for (t = 0; t < TIER_COUNT; t++) {
		double simb;

		if (!(l->steps[t] > 0))
			continue;
		/* a staggered schedule's levels load different ports in turn: how well the
		 * pieces in flight fill them is what the executor's pipelining gives, not
		 * the even spread the formula below assumes */
		simb = staggered ? tier_sim_bytes(xf, nxf, t, h, n, (int)nsteps, npieces, inflight)
				 : -1;
		if (simb > 0)
			l->bytes[t] = fmax(l->bytes[t], simb);
		else
			l->bytes[t] = fmax(l->bytes[t], sum[t] / fmin(inflight, l->steps[t]));
	}
	l->nsteps = (int)nsteps;
out_free:
	free(xf);
	if (ret)
		tier_load_free(l);
	free(total);
	free(port);
	return ret;
}

static double tier_alpha(const struct tier_fit *f, double load)
{
	return load > 0 && f->valid ? f->ab.alpha_s : 0;
}

double tier_time(const struct tier_model *m, int algo, struct tier_layout lay, double bytes,
		 size_t es, struct tier_pipe pipe)
{
	const struct tier_fit *fi = &m->tier[TIER_INTRA], *fe = &m->tier[TIER_INTER];
	struct tier_load l;
	double t = 0;
	int k;

	if (tier_load(algo, lay, bytes, es, pipe, &l))
		return NAN;
	for (k = 0; k < l.nsteps; k++)
		t += fmax(tier_alpha(fi, l.step[k][TIER_INTRA]), tier_alpha(fe, l.step[k][TIER_INTER]));
	t += fmax(fi->valid ? fi->ab.beta_s_per_B * l.bytes[TIER_INTRA] : 0,
		  fe->valid ? fe->ab.beta_s_per_B * l.bytes[TIER_INTER] : 0);
	tier_load_free(&l);
	return t;
}

int tier_model_fill(struct tier_model *m)
{
	int t;

	for (t = 0; t < TIER_COUNT; t++) {
		if (m->tier[t].valid)
			continue;
		if (!m->tier[!t].valid)
			return -ENOENT;
		m->tier[t] = m->tier[!t];
		m->tier[t].assumed = true;
	}
	return 0;
}

int tier_fit_samples(int tier, const struct tier_sample *s, int n, const struct tier_fit *other,
		     struct tier_fit *f)
{
	struct ab_point *pts = calloc(n > 0 ? (size_t)n : 1, sizeof(*pts));
	int np = 0, i, j, ret;

	if (!pts)
		return -ENOMEM;
	f->valid = false;
	f->nsizes = 0;
	for (i = 0; i < n; i++) {
		struct tier_load l;
		double rest = s[i].time_s;
		int k;

		if (tier_load(s[i].algo, s[i].lay, s[i].bytes, s[i].es, s[i].pipe, &l))
			continue;
		for (k = 0; k < l.nsteps && other; k++)
			if (!(l.step[k][tier] > 0))
				rest -= tier_alpha(other, l.step[k][!tier]);
		if (l.steps[tier] > 0 && rest > 0) {
			pts[np].steps = l.steps[tier];
			pts[np].bytes = l.bytes[tier];
			pts[np].factor = 1;
			pts[np].time_s = rest;
			np++;
			for (j = 0; j < i && s[j].bytes != s[i].bytes; j++)
				;
			f->nsizes += j == i;
		}
		tier_load_free(&l);
	}
	ret = np >= 2 ? ab_fit(pts, np, &f->ab) : -EINVAL;
	free(pts);
	if (ret)
		return ret;
	f->valid = true;
	return 0;
}

enum fit_reason tier_fit_reason(const struct tier_fit *f)
{
	if (!f->valid)
		return FIT_WHY_NO_FIT;
	if (f->ab.rel_rms > TIER_FIT_REFUSE)
		return FIT_WHY_ERROR_REFUSED;
	if (f->ab.rel_rms > TIER_FIT_WARN)
		return FIT_WHY_ERROR;
	if (!(f->ab.alpha_s > 0))
		return FIT_WHY_ALPHA;
	if (!(f->ab.beta_s_per_B > 0))
		return FIT_WHY_BETA;
	if (f->nsizes < 3)
		return FIT_WHY_SIZES;
	return FIT_WHY_NONE;
}

enum fit_verdict tier_fit_verdict(const struct tier_fit *f, char *why, size_t len)
{
	switch (tier_fit_reason(f)) {
	case FIT_WHY_NO_FIT:
		snprintf(why, len, "no fit");
		return FIT_UNUSABLE;
	case FIT_WHY_ERROR_REFUSED:
		snprintf(why, len, "fit error %.0f%% is above %.0f%%: the model does not describe these measurements",
			 100 * f->ab.rel_rms, 100 * TIER_FIT_REFUSE);
		return FIT_UNUSABLE;
	case FIT_WHY_ERROR:
		snprintf(why, len, "fit error %.0f%% is above %.0f%%", 100 * f->ab.rel_rms,
			 100 * TIER_FIT_WARN);
		return FIT_POOR;
	case FIT_WHY_ALPHA:
		snprintf(why, len, "alpha held at 0, not resolved: the small sizes show no per-step latency (sweep smaller sizes)");
		return FIT_POOR;
	case FIT_WHY_BETA:
		snprintf(why, len, "beta held at 0: the large sizes show no bandwidth limit (sweep larger sizes)");
		return FIT_POOR;
	case FIT_WHY_SIZES:
		snprintf(why, len, "%d sizes: at least 3 are needed to test a two-parameter fit",
			 f->nsizes);
		return FIT_POOR;
	case FIT_WHY_NONE:
		break;
	}
	why[0] = '\0';
	return FIT_GOOD;
}

int tier_layout_of(const json_t *root, struct tier_layout *lay)
{
	const json_t *hosts = jget(root, "hosts"), *h;
	int n = (int)json_array_size(hosts), *host_of = NULL, l, ret = 0;
	size_t i, j;

	if (n < 1)
		return -EINVAL;
	host_of = calloc((size_t)n, sizeof(*host_of));
	if (!host_of)
		return -ENOMEM;
	json_array_foreach(hosts, i, h) {
		double r = jget_num(h, "rank"), hi = jget_num(h, "host_index");

		if (!(r >= 0 && r < n)) {
			ret = -EINVAL;
			goto out_free;
		}
		/* host_index when recorded, else the first rank with the same hostname */
		if (!(hi >= 0)) {
			for (j = 0; j < i; j++)
				if (!strcmp(jget_str(json_array_get(hosts, j), "hostname"),
					    jget_str(h, "hostname")))
					break;
			hi = (double)j;
		}
		host_of[(int)r] = (int)hi;
	}
	l = sched_local_size(host_of, n);
	if (l < 1) {
		ret = -EINVAL;
		goto out_free;
	}
	lay->hosts = n / l;
	lay->ranks_per_host = l;
out_free:
	free(host_of);
	return ret;
}
