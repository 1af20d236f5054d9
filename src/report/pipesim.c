/* The fluid model of the executor's pipelining: pieces, steps, the gate, max-min fair ports. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "report/pipesim.h"

enum { X_WAIT = 0, X_FLOW, X_DONE };

struct psim {
	const struct psim_xfer *x;
	int nx, n, ns, np, P, inflight, cap;
	bool gate;
	int *step, *left, *entered, *incnt, *need, *next, *lo, *nslot, *state;
	bool *inside;
	double *rem, *rate, *capleft;
	int *users;
	int done;
};

static void step_finish(struct psim *s, int r, int p)
{
	int i = r * s->P + p;

	s->incnt[r * s->ns + s->step[i]]--;
	s->inside[i] = false;
	if (++s->step[i] == s->ns) {
		s->nslot[r]--;
		s->done++;
		while (s->lo[r] < s->next[r] && s->step[r * s->P + s->lo[r]] == s->ns)
			s->lo[r]++;
	}
}

/* Admit pieces into free slots and into their steps, as far as the gate allows. */
static void enter(struct psim *s, int r)
{
	bool moved = true;

	while (moved) {
		moved = false;
		while (s->nslot[r] < s->inflight && s->next[r] < s->P) {
			s->step[r * s->P + s->next[r]++] = 0;
			s->nslot[r]++;
		}
		for (int p = s->lo[r]; p < s->next[r]; p++) {
			int i = r * s->P + p, k = s->step[i];

			if (k >= s->ns || s->inside[i])
				continue;
			if (s->gate && (s->entered[r * s->ns + k] != p ||
					s->incnt[r * s->ns + k] >= s->cap))
				continue;
			s->entered[r * s->ns + k]++;
			s->incnt[r * s->ns + k]++;
			s->inside[i] = true;
			s->left[i] = s->need[r * s->ns + k];
			moved = true;
			if (!s->left[i])
				step_finish(s, r, p);
		}
	}
}

static bool in_step(const struct psim *s, int r, int p, int k)
{
	int i = r * s->P + p;

	return s->inside[i] && s->step[i] == k;
}

static void xfer_done(struct psim *s, int p, int j)
{
	const struct psim_xfer *x = &s->x[j];

	s->state[p * s->nx + j] = X_DONE;
	if (!--s->left[x->src * s->P + p])
		step_finish(s, x->src, p);
	if (!--s->left[x->dst * s->P + p])
		step_finish(s, x->dst, p);
}

/* Start what both ends are ready for; a transfer no port limits is done at once. */
static bool activate(struct psim *s)
{
	bool any = false;

	for (int p = 0; p < s->P; p++)
		for (int j = 0; j < s->nx; j++) {
			const struct psim_xfer *x = &s->x[j];
			int i = p * s->nx + j;

			if (s->state[i] != X_WAIT || !in_step(s, x->src, p, x->step) ||
			    !in_step(s, x->dst, p, x->step))
				continue;
			any = true;
			s->state[i] = X_FLOW;
			s->rem[i] = x->bytes;
			if (x->port_out < 0 && x->port_in < 0)
				xfer_done(s, p, j);
		}
	return any;
}

/* Max-min fair rates of the flowing transfers (progressive filling); false when none. */
static bool fair_rates(struct psim *s)
{
	int nflow = 0, fixed = 0;

	for (int i = 0; i < s->P * s->nx; i++) {
		s->rate[i] = s->state[i] == X_FLOW ? -1 : 0;
		nflow += s->state[i] == X_FLOW;
	}
	for (int q = 0; q < s->np; q++)
		s->capleft[q] = 1;
	while (fixed < nflow) {
		double share = INFINITY;

		for (int q = 0; q < s->np; q++)
			s->users[q] = 0;
		for (int i = 0; i < s->P * s->nx; i++) {
			const struct psim_xfer *x = &s->x[i % s->nx];

			if (s->rate[i] >= 0)
				continue;
			if (x->port_out >= 0)
				s->users[x->port_out]++;
			if (x->port_in >= 0)
				s->users[x->port_in]++;
		}
		for (int q = 0; q < s->np; q++)
			if (s->users[q])
				share = fmin(share, s->capleft[q] / s->users[q]);
		for (int i = 0; i < s->P * s->nx; i++) {
			const struct psim_xfer *x = &s->x[i % s->nx];
			bool tight = false;

			if (s->rate[i] >= 0)
				continue;
			for (int e = 0; e < 2; e++) {
				int q = e ? x->port_in : x->port_out;

				tight |= q >= 0 && s->capleft[q] / s->users[q] <= share * (1 + 1e-12);
			}
			if (!tight)
				continue;
			s->rate[i] = share;
			fixed++;
			if (x->port_out >= 0)
				s->capleft[x->port_out] -= share;
			if (x->port_in >= 0)
				s->capleft[x->port_in] -= share;
		}
		/* a port's users are all fixed once it is tight: capleft may not go below 0 */
		for (int q = 0; q < s->np; q++)
			s->capleft[q] = fmax(s->capleft[q], 0);
	}
	return nflow > 0;
}

static double simulate(struct psim *s)
{
	double t = 0;

	for (;;) {
		double dt = INFINITY;

		do {
			for (int r = 0; r < s->n; r++)
				enter(s, r);
		} while (activate(s));
		if (s->done == s->n * s->P)
			return t;
		if (!fair_rates(s))
			return -EDEADLK;
		for (int i = 0; i < s->P * s->nx; i++)
			if (s->state[i] == X_FLOW && s->rate[i] > 0)
				dt = fmin(dt, s->rem[i] / s->rate[i]);
		if (!isfinite(dt))
			return -EDEADLK;
		t += dt;
		for (int i = 0; i < s->P * s->nx; i++) {
			if (s->state[i] != X_FLOW)
				continue;
			s->rem[i] -= s->rate[i] * dt;
			if (s->rem[i] <= 1e-9 * s->x[i % s->nx].bytes)
				xfer_done(s, i / s->nx, i % s->nx);
		}
	}
}

double psim_run(const struct psim_xfer *x, int nx, int nranks, int nsteps, int nports,
		int pieces, int inflight, bool gate)
{
	struct psim s = { .x = x, .nx = nx, .n = nranks, .ns = nsteps, .np = nports,
			  .P = pieces, .inflight = inflight, .gate = gate };
	size_t rp = (size_t)nranks * (size_t)pieces, rs = (size_t)nranks * (size_t)nsteps;
	size_t px = (size_t)pieces * (size_t)nx;
	double t = -ENOMEM;

	if (nx < 0 || nranks < 1 || nsteps < 1 || nports < 1 || pieces < 1 || inflight < 1)
		return -EINVAL;
	for (int j = 0; j < nx; j++)
		if (x[j].src < 0 || x[j].src >= nranks || x[j].dst < 0 || x[j].dst >= nranks ||
		    x[j].src == x[j].dst || x[j].step < 0 || x[j].step >= nsteps ||
		    x[j].port_out >= nports || x[j].port_in >= nports || !(x[j].bytes >= 0))
			return -EINVAL;
	s.cap = (inflight < pieces ? inflight : pieces) / nsteps +
		((inflight < pieces ? inflight : pieces) % nsteps != 0);
	s.step = calloc(rp, sizeof(int));
	s.left = calloc(rp, sizeof(int));
	s.inside = calloc(rp, sizeof(bool));
	s.entered = calloc(rs, sizeof(int));
	s.incnt = calloc(rs, sizeof(int));
	s.need = calloc(rs, sizeof(int));
	s.next = calloc((size_t)nranks, sizeof(int));
	s.lo = calloc((size_t)nranks, sizeof(int));
	s.nslot = calloc((size_t)nranks, sizeof(int));
	s.state = calloc(px ? px : 1, sizeof(int));
	s.rem = calloc(px ? px : 1, sizeof(double));
	s.rate = calloc(px ? px : 1, sizeof(double));
	s.capleft = calloc((size_t)nports, sizeof(double));
	s.users = calloc((size_t)nports, sizeof(int));
	if (!s.step || !s.left || !s.inside || !s.entered || !s.incnt || !s.need || !s.next ||
	    !s.lo || !s.nslot || !s.state || !s.rem || !s.rate || !s.capleft || !s.users)
		goto out_free;
	for (int j = 0; j < nx; j++) {
		s.need[x[j].src * nsteps + x[j].step]++;
		s.need[x[j].dst * nsteps + x[j].step]++;
	}
	for (size_t i = 0; i < rp; i++)
		s.step[i] = -1;
	t = simulate(&s);
out_free:
	free(s.step);
	free(s.left);
	free(s.inside);
	free(s.entered);
	free(s.incnt);
	free(s.need);
	free(s.next);
	free(s.lo);
	free(s.nslot);
	free(s.state);
	free(s.rem);
	free(s.rate);
	free(s.capleft);
	free(s.users);
	return t;
}
