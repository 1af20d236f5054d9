/* Projection: the tier model fitted on a set's runs, then AllReduces and workloads at other layouts. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/schedule.h"
#include "report/jget.h"
#include "report/predict.h"
#include "report/project.h"
#include "report/sections.h"
#include "util/dtype.h"
#include "util/strutil.h"

/* A config value as text: keys hold dots ("workload.overlap"), so no dotted path. */
static const char *cfg(const json_t *c, const char *key)
{
	json_t *v = json_object_get(json_object_get(c, "config"), key);

	return json_is_string(v) ? json_string_value(v) : "";
}

/* The transport a case asked for (its config), else the one its path reports. */
static const char *case_transport(const json_t *c)
{
	const char *t = cfg(c, "transport.transport");

	return *t ? t : jget_str(c, "path.transport");
}

static bool is_fit(const struct report_set *s, const bool *fit_run, int i)
{
	return !fit_run || fit_run[s->cases[i].run];
}

/*
 * Case i's own layout: a run that sweeps local_ranks holds cases of several, and the
 * run's top-level hosts are its largest case's. Reports before cases held their hosts
 * fall back to the run's.
 */
static int case_layout(const struct report_set *s, int i, struct tier_layout *lay)
{
	const json_t *c = s->cases[i].json;

	if (json_array_size(json_object_get(c, "hosts")) > 0)
		return tier_layout_of(c, lay);
	return tier_layout_of(s->runs[s->cases[i].run].root, lay);
}

static bool same_layout(struct tier_layout a, struct tier_layout b)
{
	return a.hosts == b.hosts && a.ranks_per_host == b.ranks_per_host;
}

/* How a case pipelined: collective.channels (2, the default, when unreadable) and the
 * chunk its rows record (0 when none: no cap from the pieces). */
static struct tier_pipe case_pipe(const json_t *c)
{
	int ch = atoi(cfg(c, "collective.channels"));
	double chunk = jget_num(json_array_get(jget(c, "collective"), 0), "chunk_bytes");

	return (struct tier_pipe){ ch > 0 ? ch : 2, chunk > 0 ? chunk : 0 };
}

/* Bytes of a row's element type; 4 when it names none. */
static size_t dtype_bytes(const char *dt)
{
	int t = dtype_find(dt);

	return t < 0 ? 4 : dtype_size((enum dtype)t);
}

/* A row's time in seconds: p50 (robust with few iterations), else the mean. */
static double row_time_s(const json_t *r)
{
	double t = jget_num(r, "time_us.p50");

	return (isfinite(t) ? t : jget_num(r, "time_us.avg")) * 1e-6;
}

enum { CLS_INTRA = TIER_INTRA, CLS_INTER = TIER_INTER, CLS_MIXED, CLS_COUNT };

struct samples {
	struct tier_sample *v;
	int n, cap;
	int first;      /* case the first sample came from, -1 = none */
	int ncases;
	int last_case;
};

static int samples_add(struct samples *a, const struct tier_sample *x, int case_idx)
{
	if (a->n == a->cap) {
		int cap = a->cap ? 2 * a->cap : 64;
		struct tier_sample *v = realloc(a->v, (size_t)cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = *x;
	if (a->first < 0)
		a->first = case_idx;
	if (a->last_case != case_idx)
		a->ncases++;
	a->last_case = case_idx;
	return 0;
}

/* Which transport carried a tier in case c: shm/cudaipc only inside a host. */
static const char *tier_transport(const json_t *c, int cls)
{
	const json_t *paths = jget(c, "paths"), *p;
	size_t i;

	json_array_foreach(paths, i, p) {
		const char *t = jget_str(p, "transport");
		bool local = !strcmp(t, "shm") || !strcmp(t, "cudaipc");

		if (cls == CLS_INTRA || local == (cls == CLS_INTRA))
			return t;
	}
	return jget_str(c, "path.transport");
}

static void fit_from(const struct report_set *s, const struct samples *a, struct tier_fit *f,
		     int cls)
{
	struct tier_layout lay = { 0, 0 };
	const json_t *c = s->cases[a->first].json;

	case_layout(s, a->first, &lay);
	snprintf(f->from, sizeof(f->from), "%s (%dx%d)%s", s->cases[a->first].name, lay.hosts,
		 lay.ranks_per_host, a->ncases > 1 ? " and more" : "");
	snprintf(f->transport, sizeof(f->transport), "%s", tier_transport(c, cls));
}

/* Case i's AllReduce rows as samples on its layout; its class (CLS_*) or -1 when unusable. */
static int case_samples(const struct report_set *s, int i, double min_size, struct samples *a,
			double *largest, double *smallest)
{
	const json_t *c = s->cases[i].json, *r;
	struct tier_layout lay;
	size_t j;
	int cls, ret;

	if (case_layout(s, i, &lay) || lay.hosts * lay.ranks_per_host < 2)
		return -1;
	cls = lay.hosts == 1 ? CLS_INTRA : lay.ranks_per_host == 1 ? CLS_INTER : CLS_MIXED;
	json_array_foreach(jget(c, "collective"), j, r) {
		struct tier_sample x = {
			.algo = sched_algo_by_name(jget_str(r, "algo")),
			.lay = lay,
			.bytes = jget_num(r, "size"),
			.es = dtype_bytes(jget_str(r, "dtype")),
			.pipe = case_pipe(c),
			.time_s = row_time_s(r),
		};

		if (strcmp(jget_str(r, "op"), "allreduce") || x.algo <= ALGO_AUTO ||
		    !(x.bytes > 0) || x.bytes < min_size || !(x.time_s > 0) ||
		    jget_num(r, "wrong") > 0)
			continue;
		ret = samples_add(&a[cls], &x, i);
		if (ret)
			return ret;
		*largest = fmax(*largest, x.bytes);
		*smallest = fmin(*smallest, x.bytes);
	}
	return cls;
}

int project_fit_case(const struct report_set *s, int i, struct tier_fit *f)
{
	struct samples a[CLS_COUNT];
	double big = 0, small = INFINITY;
	int k, cls, ret;

	for (k = 0; k < CLS_COUNT; k++)
		a[k] = (struct samples){ .first = -1, .last_case = -1 };
	cls = case_samples(s, i, 0, a, &big, &small);
	ret = cls < 0 ? (cls == -1 ? -ENOENT : cls) :
	      tier_fit_samples(cls == CLS_INTRA ? TIER_INTRA : TIER_INTER, a[cls].v, a[cls].n,
			       NULL, f) ? -ENOENT : 0;
	for (k = 0; k < CLS_COUNT; k++)
		free(a[k].v);
	return ret;
}

int project_fit(const struct report_set *s, const bool *fit_run, const char *transport,
		double min_size, struct tier_model *m, double *largest, double *smallest)
{
	struct samples a[CLS_COUNT];
	int i, k, ret = 0, nt = 0;

	memset(m, 0, sizeof(*m));
	*largest = 0;
	*smallest = INFINITY;
	for (k = 0; k < CLS_COUNT; k++)
		a[k] = (struct samples){ .first = -1, .last_case = -1 };
	for (i = 0; i < s->ncases && !ret; i++) {
		if (!is_fit(s, fit_run, i) || strcmp(case_transport(s->cases[i].json), transport))
			continue;
		k = case_samples(s, i, min_size, a, largest, smallest);
		ret = k < -1 ? k : 0;
	}
	if (!ret && !tier_fit_samples(TIER_INTRA, a[CLS_INTRA].v, a[CLS_INTRA].n, NULL,
				      &m->tier[TIER_INTRA]))
		fit_from(s, &a[CLS_INTRA], &m->tier[TIER_INTRA], CLS_INTRA);
	if (!ret && !tier_fit_samples(TIER_INTER, a[CLS_INTER].v, a[CLS_INTER].n, NULL,
				      &m->tier[TIER_INTER]))
		fit_from(s, &a[CLS_INTER], &m->tier[TIER_INTER], CLS_INTER);
	/* No one-rank-per-host run: hosts' links from mixed runs, assumed to limit every
	 * step they take part in; steps inside hosts only are timed by the intra fit. */
	if (!ret && !m->tier[TIER_INTER].valid &&
	    !tier_fit_samples(TIER_INTER, a[CLS_MIXED].v, a[CLS_MIXED].n,
			      m->tier[TIER_INTRA].valid ? &m->tier[TIER_INTRA] : NULL,
			      &m->tier[TIER_INTER]))
		fit_from(s, &a[CLS_MIXED], &m->tier[TIER_INTER], CLS_INTER);
	for (k = 0; k < CLS_COUNT; k++)
		free(a[k].v);
	for (k = 0; k < TIER_COUNT; k++)
		nt += m->tier[k].valid;
	return ret ? ret : nt;
}

static void lay_add(struct project_opts *o, struct tier_layout l)
{
	int i;

	for (i = 0; i < o->nlays; i++)
		if (same_layout(o->lays[i], l))
			return;
	if (o->nlays < PROJECT_MAX_LAYOUTS && l.hosts >= 1 && l.ranks_per_host >= 1)
		o->lays[o->nlays++] = l;
}

void project_default_layouts(const struct report_set *s, struct project_opts *o)
{
	static const int hosts[] = { 2, 4, 8, 16, 64 };
	struct tier_layout l;
	int i, k;

	if (!o->nlays) {
		for (i = 0; i < s->ncases; i++) {
			if (!is_fit(s, o->fit_run, i) || case_layout(s, i, &l))
				continue;
			for (k = 0; k < (int)(sizeof(hosts) / sizeof(hosts[0])); k++)
				lay_add(o, (struct tier_layout){ hosts[k], l.ranks_per_host });
		}
	}
	for (i = 0; i < s->ncases; i++)
		if (!is_fit(s, o->fit_run, i) && !case_layout(s, i, &l) &&
		    l.hosts * l.ranks_per_host > 1)
			lay_add(o, l);
}

/* A measured AllReduce row over transport at layout, algorithm and size, or NULL. */
static const json_t *measured_row(const struct report_set *s, const char *transport,
				  struct tier_layout lay, const char *algo, double size)
{
	int i;

	for (i = 0; i < s->ncases; i++) {
		const json_t *c = s->cases[i].json, *r;
		struct tier_layout l;
		size_t j;

		if (strcmp(case_transport(c), transport) || case_layout(s, i, &l) ||
		    !same_layout(l, lay))
			continue;
		json_array_foreach(jget(c, "collective"), j, r)
			if (!strcmp(jget_str(r, "op"), "allreduce") &&
			    !strcmp(jget_str(r, "algo"), algo) && jget_num(r, "size") == size)
				return r;
	}
	return NULL;
}

/* A measured workload like case i's (model, transport, overlap, algorithm) at lay, or NULL. */
static const json_t *measured_workload(const struct report_set *s, int i, struct tier_layout lay)
{
	const json_t *ci = s->cases[i].json, *w = jget(ci, "workload");
	static const char *const same[] = { "workload.overlap", "collective.algorithm",
					    "workload.compute" };
	int j;

	for (j = 0; j < s->ncases; j++) {
		const json_t *cj = s->cases[j].json, *x = jget(cj, "workload");
		struct tier_layout l;
		size_t k;

		if (!json_is_object(x) || strcmp(jget_str(x, "model"), jget_str(w, "model")) ||
		    strcmp(case_transport(cj), case_transport(ci)) || case_layout(s, j, &l) ||
		    !same_layout(l, lay))
			continue;
		for (k = 0; k < sizeof(same) / sizeof(same[0]); k++)
			if (strcmp(cfg(cj, same[k]), cfg(ci, same[k])))
				break;
		if (k == sizeof(same) / sizeof(same[0]))
			return x;
	}
	return NULL;
}

/* The algorithms a projection covers, in its tables' order (`predict --help` names them). */
static const int algos[] = { ALGO_RING, ALGO_TREE, ALGO_RHD, ALGO_HIERARCHICAL };

void project_algo_list(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < ARRAY_SIZE(algos); k++)
		str_appendf(buf, len, &off, "%s%s", k ? ", " : "", sched_algo_name(algos[k]));
}

/*
 * The most a tier weighs in the projection: over the layouts and algorithms projected,
 * at the largest and smallest sizes fitted, the share of the modelled time that goes
 * away when the tier is free. A tier's fit error moves a projection by at most about
 * share x error.
 */
static double tier_share(const struct tier_model *m, int tier, const struct project_opts *o,
			 const double *sizes, int nsizes, struct tier_pipe pipe)
{
	struct tier_model without = *m;
	double share = 0;
	int i, k, z;

	without.tier[tier].valid = false;
	for (i = 0; i < o->nlays; i++)
		for (k = 0; k < (int)ARRAY_SIZE(algos); k++)
			for (z = 0; z < nsizes; z++) {
				double t = tier_time(m, algos[k], o->lays[i], sizes[z], 4, pipe);
				double w = tier_time(&without, algos[k], o->lays[i], sizes[z], 4,
						     pipe);

				if (t > 0 && isfinite(w))
					share = fmax(share, 1 - w / t);
			}
	return share;
}

/*
 * The tiers' fits and their verdicts. An unusable fit of a tier that weighs so little
 * in every projected time that its error cannot move them by TIER_FIT_WARN is only
 * warned about: refusing would hide a good projection behind a tier it hardly uses.
 */
static void tiers_table(struct rdoc *d, const struct tier_model *m, const struct project_opts *o,
			const double *sizes, struct tier_pipe pipe, int *worst)
{
	static const char *const hdr[] = { "Tier", "Transport", "α us", "1/β GB/s", "Fit error",
					   "Points", "Sizes", "From" };
	struct rtable *t = doc_table(d, 8);
	struct tier_model filled = *m;
	char a[64], b[64], why[192];
	int k, c;

	tier_model_fill(&filled);
	for (c = 0; c < 8; c++)
		tbl_set(d, t, 0, c, "%s", hdr[c]);
	for (k = 0; k < TIER_COUNT; k++) {
		const struct tier_fit *f = &m->tier[k];
		int row;

		if (!f->valid)
			continue;
		row = tbl_row(d, t);
		tbl_set(d, t, row, 0, "%s", tier_name(k));
		tbl_set(d, t, row, 1, "%s", f->transport);
		/* alpha held at 0 by the fit is no measurement of zero latency */
		if (f->ab.alpha_s > 0)
			tbl_set(d, t, row, 2, "%s", fmt_num(f->ab.alpha_s * 1e6, a, sizeof(a)));
		else
			tbl_set(d, t, row, 2, "not resolved");
		tbl_set(d, t, row, 3, "%s", fmt_num(f->ab.beta_s_per_B > 0 ?
						   1e-9 / f->ab.beta_s_per_B : NAN, b, sizeof(b)));
		tbl_set(d, t, row, 4, "%.1f%%", 100 * f->ab.rel_rms);
		tbl_set(d, t, row, 5, "%d", f->ab.npoints);
		tbl_set(d, t, row, 6, "%d", f->nsizes);
		tbl_set(d, t, row, 7, "%s", f->from);
	}
	for (k = 0; k < TIER_COUNT; k++) {
		enum fit_verdict v;
		double share;

		if (!m->tier[k].valid)
			continue;
		v = tier_fit_verdict(&m->tier[k], why, sizeof(why));
		share = tier_share(&filled, k, o, sizes, 2, pipe);
		if (v == FIT_UNUSABLE && share * m->tier[k].ab.rel_rms < TIER_FIT_WARN) {
			doc_text(d, RB_ITEM, "WARNING: the fit %s is unusable (%s), but that tier carries at most %.1f%% of any projected time, so its error moves them by at most %.1f%%: projected",
				 tier_name(k), why, 100 * share, 100 * share * m->tier[k].ab.rel_rms);
			v = FIT_POOR;
		} else if (v == FIT_POOR) {
			doc_text(d, RB_ITEM, "WARNING: the fit %s is poor: %s; projections over it are unreliable",
				 tier_name(k), why);
		} else if (v == FIT_UNUSABLE) {
			doc_text(d, RB_ITEM, "ERROR: the fit %s is unusable: %s; %s", tier_name(k),
				 why, o->force ? "projected anyway (--force)" :
				 "nothing is projected from it (gradsync predict --force projects anyway)");
		}
		/* an unresolved alpha that the verdict's reason did not already name */
		if (!(m->tier[k].ab.alpha_s > 0) && tier_fit_reason(&m->tier[k]) != FIT_WHY_ALPHA)
			doc_text(d, RB_ITEM, "WARNING: α %s was not resolved (the fit held it at 0: the sizes show no per-step latency); its projections carry no latency term, so small sizes come out too fast",
				 tier_name(k));
		if ((int)v > *worst)
			*worst = (int)v;
	}
}

static void assumed_notes(struct rdoc *d, const struct tier_model *m, const struct project_opts *o)
{
	int k, i;

	for (k = 0; k < TIER_COUNT; k++) {
		bool used = false;

		for (i = 0; i < o->nlays; i++)
			used |= k == TIER_INTRA ? o->lays[i].ranks_per_host > 1 : o->lays[i].hosts > 1;
		if (m->tier[k].assumed && used)
			doc_text(d, RB_ITEM, "note: no run measured the tier %s: it is taken to be the tier %s (%s); measure it with a run %s",
				 tier_name(k), tier_name(!k), m->tier[!k].transport,
				 k == TIER_INTRA ? "of several ranks on one host" :
				 "of one rank on each of two hosts");
	}
}

static void collective_table(struct rdoc *d, const struct report_set *s, const char *transport,
			     const struct tier_model *m, const struct project_opts *o, double size,
			     struct tier_pipe pipe)
{
	static const char *const hdr[] = { "Layout", "Ranks", "Algorithm", "Predicted ms",
					   "Predicted busbw GB/s", "Measured p50 ms",
					   "Measured mean ms", "Measured busbw GB/s", "Error" };
	struct rtable *t;
	char a[64], b[64];
	int i, k, c;
	bool tree_shared = false; /* a tree row over tcp where hosts' links carry several flows */

	/* p50 against p50: the fit takes each size's p50, and one iteration of a few that a
	 * loaded host starved moves the mean by a share of its stall, not the median */
	doc_text(d, RB_PARA, "AllReduce of %s MiB per rank, %d pieces in flight (measured: the "
		 "p50 time of the runs at that layout, the statistic the fit takes, the mean "
		 "beside it, and the busbw of the p50; error: predicted against measured busbw).",
		 fmt_num(size / 1048576.0, a, sizeof(a)), pipe.channels);
	t = doc_table(d, 9);
	for (c = 0; c < 9; c++)
		tbl_set(d, t, 0, c, "%s", hdr[c]);
	for (i = 0; i < o->nlays; i++) {
		struct tier_layout l = o->lays[i];
		int n = l.hosts * l.ranks_per_host;

		if (n < 2)
			continue;
		for (k = 0; k < (int)ARRAY_SIZE(algos); k++) {
			double ts = tier_time(m, algos[k], l, size, 4, pipe), bf = coll_busbw_factor(COLL_OP_ALLREDUCE, n);
			const char *name = sched_algo_name(algos[k]);
			const json_t *r;
			double rt; /* measured: the p50 the fit takes */
			int row;

			/* hierarchical with one rank per host is a ring: not a row of its own */
			if ((algos[k] == ALGO_HIERARCHICAL && l.ranks_per_host == 1) || !(ts > 0))
				continue;
			tree_shared |= algos[k] == ALGO_TREE && l.hosts >= 3 && !strcmp(transport, "tcp");
			r = measured_row(s, transport, l, name, size);
			rt = r ? row_time_s(r) : 0;
			row = tbl_row(d, t);
			tbl_set(d, t, row, 0, "%dx%d", l.hosts, l.ranks_per_host);
			tbl_set(d, t, row, 1, "%d", n);
			tbl_set(d, t, row, 2, "%s", name);
			tbl_set(d, t, row, 3, "%s", fmt_num(ts * 1e3, a, sizeof(a)));
			tbl_set(d, t, row, 4, "%s", fmt_num(size * bf / ts / 1e9, b, sizeof(b)));
			if (rt > 0) {
				double mb = size * bf / rt / 1e9;

				tbl_set(d, t, row, 5, "%s", fmt_num(rt * 1e3, a, sizeof(a)));
				tbl_set(d, t, row, 6, "%s", fmt_num(jget_num(r, "time_us.avg") / 1e3, a,
								    sizeof(a)));
				tbl_set(d, t, row, 7, "%s", fmt_num(mb, b, sizeof(b)));
				tbl_set(d, t, row, 8, "%+.1f%%", 100 * (size * bf / ts / 1e9 - mb) / mb);
			} else {
				for (c = 5; c < 9; c++)
					tbl_set(d, t, row, c, "-");
			}
		}
	}
	/* measured, not modelled: the fluid model's max-min sharing is what TCP does not give
	 * flows that cross two shared links; a factor for it would be fitted to one bed */
	if (tree_shared)
		doc_text(d, RB_ITEM, "note: tree's rows at 3 or more hosts over tcp are an upper bound: its pipelining model shares each host's link max-min fairly among the transfers on it, and TCP flows that cross two shared links (a host's link out, another host's link in) get less; on the emulated cluster at 4 hosts tree ran 11-20%% below this projection with links shaped both ways, within 5%% with links shaped one way (tests/cluster/RESULTS.md)");
}

static int workload_tables(struct rdoc *d, const struct report_set *s, const char *transport,
			   const struct tier_model *m, const struct project_opts *o)
{
	static const char *const hdr[] = { "Case", "Layout", "Ranks", "Predicted iter ms",
					   "Comm-wait", "Scaling eff.", "Measured iter ms",
					   "Measured comm-wait", "Error" };
	struct rtable *t = NULL;
	char a[64];
	int i, k, c, n = 0;

	for (i = 0; i < s->ncases; i++) {
		const json_t *ci = s->cases[i].json, *w = jget(ci, "workload");
		int algo = sched_algo_by_name(cfg(ci, "collective.algorithm"));
		/* the fit run's CPUs: whether a one-host layout's ranks crowd them */
		double ncpu = jget_num(s->runs[s->cases[i].run].root, "fingerprint.cpus");
		int cpus = ncpu > 0 ? (int)ncpu : 0;

		if (!is_fit(s, o->fit_run, i) || !json_is_object(w) ||
		    !json_array_size(jget(w, "bucket_timeline")) ||
		    strcmp(case_transport(ci), transport) ||
		    (o->case_name && report_set_find(s, o->case_name) != i))
			continue;
		if (!t) {
			doc_text(d, RB_PARA, "Workload iterations replayed at each layout: buckets "
				 "launched in order when ready, each AllReduce timed by the tier "
				 "model; forward and backward held (per-rank batch fixed). Scaling "
				 "efficiency, as in the run report: samples/s per rank over one "
				 "rank's alone, whose iteration is forward + backward with nothing "
				 "to reduce (= compute / iteration).");
			t = doc_table(d, 9);
			for (c = 0; c < 9; c++)
				tbl_set(d, t, 0, c, "%s", hdr[c]);
		}
		n++;
		for (k = 0; k < o->nlays; k++) {
			const json_t *mw = measured_workload(s, i, o->lays[k]);
			struct prediction p, meas;
			int row;

			if (predict_workload(m, algo < 0 ? ALGO_AUTO : algo, o->lays[k],
					     case_pipe(ci), cpus, w, &p))
				continue;
			row = tbl_row(d, t);
			tbl_set(d, t, row, 0, "%s", s->cases[i].name);
			tbl_set(d, t, row, 1, "%dx%d", o->lays[k].hosts, o->lays[k].ranks_per_host);
			tbl_set(d, t, row, 2, "%d", p.nranks);
			tbl_set(d, t, row, 3, "%s", fmt_num(p.iter_ms, a, sizeof(a)));
			tbl_set(d, t, row, 4, "%.1f%%", 100 * p.comm_wait_share);
			tbl_set(d, t, row, 5, "%.1f%%", 100 * p.scaling_efficiency);
			if (mw && !prediction_from_workload(mw, &meas)) {
				tbl_set(d, t, row, 6, "%s", fmt_num(meas.iter_ms, a, sizeof(a)));
				tbl_set(d, t, row, 7, "%.1f%%", 100 * meas.comm_wait_share);
				tbl_set(d, t, row, 8, "%+.1f%%",
					100 * (p.iter_ms - meas.iter_ms) / meas.iter_ms);
			} else {
				for (c = 6; c < 9; c++)
					tbl_set(d, t, row, c, "-");
			}
		}
	}
	return n;
}

int project_doc(const struct report_set *s, const struct project_opts *o, struct rdoc *d)
{
	int worst = -ENOENT, i, j;

	for (i = 0; i < s->ncases; i++) {
		const char *tr = case_transport(s->cases[i].json);
		struct tier_model m;
		double largest, smallest, sizes[2];
		struct tier_pipe pipe = case_pipe(s->cases[i].json);
		char why_buf[64];
		int w = FIT_GOOD;

		/* each transport once, at its first fit case */
		for (j = 0; j < i; j++)
			if (is_fit(s, o->fit_run, j) &&
			    !strcmp(case_transport(s->cases[j].json), tr))
				break;
		if (j < i || !is_fit(s, o->fit_run, i) ||
		    project_fit(s, o->fit_run, tr, o->min_size, &m, &largest, &smallest) <= 0)
			continue;
		sizes[0] = o->size > 0 ? o->size : largest;
		sizes[1] = smallest;
		if (worst == -ENOENT)
			doc_text(d, RB_H2, "Projection");
		doc_text(d, RB_H3, "Over %s", tr);
		doc_text(d, RB_PARA, "Two tiers, each fitted on the runs' AllReduce sweeps (p50): a "
			 "step takes α + β·bytes through the busiest port of each tier it uses "
			 "(a rank inside a host, a host's link between hosts), the longer tier "
			 "counting; the steps are the algorithms' own schedules at each layout "
			 "(hosts x ranks per host).");
		/* the experiment's pipelining, as the first fit case of the transport ran it */
		if (o->min_size > 0)
			doc_text(d, RB_PARA, "Fitted on sizes of %s MiB and more (--fit-from).",
				 fmt_num(o->min_size / 1048576.0, why_buf, sizeof(why_buf)));
		tiers_table(d, &m, o, sizes, pipe, &w);
		tier_model_fill(&m);
		assumed_notes(d, &m, o);
		if (w > worst)
			worst = w;
		if (w == FIT_UNUSABLE && !o->force)
			continue;
		collective_table(d, s, tr, &m, o, sizes[0], pipe);
		workload_tables(d, s, tr, &m, o);
	}
	return worst;
}

void section_projection(const struct report_set *s, const struct report_opts *o, struct rdoc *d)
{
	struct project_opts po = { 0 };
	struct tier_layout l;
	int k;

	if (!o->nproject_ranks || !s->ncases || case_layout(s, 0, &l))
		return;
	for (k = 0; k < o->nproject_ranks; k++) {
		int n = o->project_ranks[k];

		lay_add(&po, n % l.ranks_per_host ? (struct tier_layout){ n, 1 } :
			(struct tier_layout){ n / l.ranks_per_host, l.ranks_per_host });
	}
	project_doc(s, &po, d);
}
