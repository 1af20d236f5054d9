/* Projection section: predicted iteration time, comm-wait and scaling at other rank counts. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "report/jget.h"
#include "report/predict.h"
#include "report/project.h"
#include "report/sections.h"

int project_find_model(const struct report_set *s, int i, struct ab_model *m)
{
	const char *tr = jget_str(s->cases[i].json, "path.transport");
	int pass, j;

	/* The case itself, then its own run's cases, then any run's: same transport. */
	for (pass = 0; pass < 3; pass++) {
		for (j = 0; j < s->ncases; j++) {
			const json_t *c = s->cases[j].json;

			if ((pass == 0) != (j == i))
				continue;
			if (pass == 1 && s->cases[j].run != s->cases[i].run)
				continue;
			if (strcmp(jget_str(c, "path.transport"), tr) != 0)
				continue;
			memset(m, 0, sizeof(*m));
			if (!ab_fit_case(c, (int)jget_num(s->runs[s->cases[j].run].root, "nranks"),
					 m))
				return j;
		}
	}
	return -1;
}

/* A config value as text: keys hold dots ("workload.overlap"), so no dotted path. */
static const char *cfg(const json_t *c, const char *key)
{
	json_t *v = json_object_get(json_object_get(c, "config"), key);

	return json_is_string(v) ? json_string_value(v) : "";
}

/* A measured workload at nranks over the same transport, model and overlap, or NULL. */
static const json_t *find_measured(const struct report_set *s, int i, int nranks)
{
	const json_t *ci = s->cases[i].json, *w = jget(ci, "workload");
	int j;

	for (j = 0; j < s->ncases; j++) {
		const json_t *cj = s->cases[j].json, *x = jget(cj, "workload");

		if (json_is_object(x) && jget_num(x, "ranks") == nranks &&
		    strcmp(jget_str(x, "model"), jget_str(w, "model")) == 0 &&
		    strcmp(jget_str(cj, "path.transport"), jget_str(ci, "path.transport")) == 0 &&
		    strcmp(cfg(cj, "workload.overlap"), cfg(ci, "workload.overlap")) == 0)
			return x;
	}
	return NULL;
}

static bool projectable(const struct report_set *s, int i, struct ab_model *m, int *from)
{
	const json_t *w = jget(s->cases[i].json, "workload");

	if (!json_is_object(w) || !json_array_size(jget(w, "bucket_timeline")))
		return false;
	*from = project_find_model(s, i, m);
	return *from >= 0;
}

int project_print(FILE *f, const struct report_set *s, const char *case_name, int nranks)
{
	int i, from, n = 0;

	for (i = 0; i < s->ncases; i++) {
		const json_t *w = jget(s->cases[i].json, "workload"), *mw;
		struct prediction p, meas;
		struct ab_model m;

		if (case_name && report_set_find(s, case_name) != i)
			continue;
		if (!projectable(s, i, &m, &from) || predict_workload(&m, m.algo, nranks, w, &p))
			continue;
		mw = find_measured(s, i, nranks);
		fprintf(f, "%s: ", s->cases[i].name);
		predict_print(f, &p, mw && !prediction_from_workload(mw, &meas) ? &meas : NULL);
		n++;
	}
	return n ? n : -ENOENT;
}

void section_projection(const struct report_set *s, const struct report_opts *o, struct rdoc *d)
{
	static const char *const hdr[] = { "Case", "Ranks", "Predicted iter ms", "Comm-wait",
					   "Scaling eff.", "Measured iter ms", "Error" };
	struct rtable *t;
	bool any = false;
	char a[64], b[64];
	int i, k, c;

	for (i = 0; i < s->ncases; i++) {
		struct ab_model m;
		int from;

		if (!projectable(s, i, &m, &from))
			continue;
		if (!any) {
			doc_text(d, RB_H2, "Projection");
			doc_text(d, RB_PARA, "Each workload iteration replayed at other rank "
				 "counts: buckets launched in order when ready, each AllReduce "
				 "timed by t = α·steps + β·bytes·factor; forward and backward "
				 "times held (per-rank batch fixed).");
			any = true;
		}
		doc_text(d, RB_ITEM, "%s: model from %s (%s, %d ranks): α = %s us, 1/β = %s GB/s, "
			 "fit error %.1f%%", s->cases[i].name, s->cases[from].name,
			 jget_str(json_array_get(jget(s->cases[from].json, "collective"), 0),
				  "algo"),
			 m.nranks, fmt_num(m.alpha_s * 1e6, a, sizeof(a)),
			 fmt_num(m.beta_s_per_B > 0 ? 1e-9 / m.beta_s_per_B : NAN, b, sizeof(b)),
			 100 * m.rel_rms);
	}
	if (!any)
		return;
	t = doc_table(d, 7);
	for (c = 0; c < 7; c++)
		tbl_set(d, t, 0, c, "%s", hdr[c]);
	for (i = 0; i < s->ncases; i++) {
		const json_t *w = jget(s->cases[i].json, "workload");
		struct ab_model m;
		int from;

		if (!projectable(s, i, &m, &from))
			continue;
		for (k = 0; k < o->nproject_ranks; k++) {
			const json_t *mw = find_measured(s, i, o->project_ranks[k]);
			struct prediction p, meas;
			int row;

			if (predict_workload(&m, m.algo, o->project_ranks[k], w, &p))
				continue;
			row = tbl_row(d, t);
			tbl_set(d, t, row, 0, "%s", s->cases[i].name);
			tbl_set(d, t, row, 1, "%d", p.nranks);
			tbl_set(d, t, row, 2, "%s", fmt_num(p.iter_ms, a, sizeof(a)));
			tbl_set(d, t, row, 3, "%.1f%%", 100 * p.comm_wait_share);
			tbl_set(d, t, row, 4, "%.1f%%", 100 * p.scaling_efficiency);
			if (mw && !prediction_from_workload(mw, &meas)) {
				tbl_set(d, t, row, 5, "%s", fmt_num(meas.iter_ms, a, sizeof(a)));
				tbl_set(d, t, row, 6, "%+.1f%%",
					100 * (p.iter_ms - meas.iter_ms) / meas.iter_ms);
			} else {
				tbl_set(d, t, row, 5, "-");
				tbl_set(d, t, row, 6, "-");
			}
		}
	}
}
