/* Cross-key checks of an experiment at check / run time (contract in lint.h). */
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config/lint.h"
#include "gpu/gpu.h"
#include "topo/numa.h"
#include "transport/transport.h"
#include "util/common.h"
#include "util/dtype.h"
#include "util/strutil.h"
#include "util/threshold.h"
#include "workload/model.h"
#include "workload/workload.h"

static void add(struct lint_result *r, bool error, const char *loc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* One message about what loc ("FILE:LINE: section.key") names; a repeat is dropped. */
static void add(struct lint_result *r, bool error, const char *loc, const char *fmt, ...)
{
	char text[sizeof(r->msg[0].text)];
	size_t off = 0;
	va_list ap;
	int i;

	str_appendf(text, sizeof(text), &off, "%s: ", loc);
	va_start(ap, fmt);
	str_vappendf(text, sizeof(text), &off, fmt, ap);
	va_end(ap);
	for (i = 0; i < r->n; i++)
		if (!strcmp(r->msg[i].text, text))
			return;
	if (r->n == LINT_MAX_MSGS)
		return;
	r->msg[r->n].error = error;
	r->msg[r->n].where_len = strlen(loc);
	snprintf(r->msg[r->n].text, sizeof(r->msg[0].text), "%s", text);
	r->n++;
	r->nerrors += error;
}

static const struct exp_axis *axis_of(const struct experiment *exp, const struct cfg_key *k)
{
	int i;

	for (i = 0; i < exp->naxes; i++)
		if (exp->axes[i].key == k)
			return &exp->axes[i];
	return NULL;
}

/* "FILE:LINE: section.key" of where k got its value (an axis: matrix.key). */
static void where(const struct experiment *exp, const char *section, const char *name,
		  char *buf, size_t len)
{
	const struct cfg_key *k = cfg_key_find(section, name);
	const char *file;
	int line;

	if (!k || experiment_key_line(exp, k, &file, &line))
		snprintf(buf, len, "%s: %s.%s", exp->path, section, name);
	else
		snprintf(buf, len, "%s:%d: %s.%s", file, line, axis_of(exp, k) ? "matrix" : section,
			 name);
}

static void lint_sizes(const struct experiment *exp, struct lint_result *r)
{
	char loc[PATH_MAX + 64];
	size_t c;
	int i;

	for (c = 0; c < exp->ncases; c++) {
		const struct cfg *cfg = &exp->cases[c].cfg;
		const struct coll_opts *co = &cfg->collective;
		size_t es = dtype_size(co->dtype);

		if (workload_has_model(&cfg->workload) || co->op != COLL_OP_ALLREDUCE)
			continue;
		for (i = 0; i < co->nsizes; i++) {
			if (co->sizes[i] % es == 0)
				continue;
			where(exp, "collective", "sizes", loc, sizeof(loc));
			add(r, true, loc, "%llu bytes is not a whole number of %s elements (%zu bytes "
			    "each)%s; use a multiple of %zu", (unsigned long long)co->sizes[i],
			    dtype_name(co->dtype), es, co->sizes[i] < es ? ", not even one" : "",
			    es);
		}
	}
}

/* Does the experiment leave k at its default (def: the defaults; NULL counts as yes)? */
static bool key_is_default(const struct experiment *exp, const struct cfg *def,
			   const struct cfg_key *k)
{
	char a[512], b[512];

	if (!def)
		return true;
	cfg_value_format(&exp->base, k, a, sizeof(a));
	cfg_value_format(def, k, b, sizeof(b));
	return !strcmp(a, b);
}

static bool gpu_buffers(const struct cfg *c)
{
	return gpu_opts_wanted(&c->gpu);
}

/* Keys set or swept that no case's transport reads (the key table's read_by). */
static void lint_scoped(const struct experiment *exp, const struct cfg *def,
			struct lint_result *r)
{
	char loc[PATH_MAX + 64];
	size_t i, c;

	for (i = 0; i < cfg_key_count(); i++) {
		const struct cfg_key *k = cfg_key_at(i);
		const struct exp_axis *ax;
		bool used = false, gdr = !strcmp(k->section, "gpu");
		int tp = -1;

		if (!k->read_by)
			continue;
		ax = axis_of(exp, k);
		if (!ax && key_is_default(exp, def, k))
			continue;
		for (c = 0; c < exp->ncases && !used; c++) {
			const struct cfg *cfg = &exp->cases[c].cfg;

			tp = cfg->transport.kind;
			used = tp == TP_AUTO || ((1u << tp) & k->read_by);
			if (gdr && !gpu_buffers(cfg))
				used = false;
		}
		if (used || tp < 0 || tp >= TP_KIND_COUNT)
			continue;
		where(exp, k->section, k->name, loc, sizeof(loc));
		if (ax)
			add(r, false, loc, "swept over %d values, but only %s reads it (transport = "
			    "%s%s): the cases differ in name only", ax->nvalues, k->read_by_who,
			    transport_kind_name(tp), gdr && !gpu_buffers(&exp->cases[0].cfg) ?
			    ", host buffers" : "");
		else
			add(r, false, loc, "set, but only %s reads it (transport = %s%s)",
			    k->read_by_who, transport_kind_name(tp), gdr && !gpu_buffers(&exp->base) ?
			    ", host buffers" : "");
	}
}

/* Whether case cfg reads [collective] key k (its row's ddp_reads and read_by_ops). */
static bool case_reads_coll(const struct cfg *cfg, const struct cfg_key *k)
{
	if (workload_has_model(&cfg->workload))
		return k->ddp_reads;
	return !k->read_by_ops || (k->read_by_ops & (1u << cfg->collective.op));
}

/* "a", "a and b", "a, b and c": the [collective] keys a DDP workload takes. */
static void ddp_coll_keys(char *buf, size_t len)
{
	const struct cfg_key *k, *last = NULL;
	size_t off = 0, i;

	buf[0] = '\0';
	for (i = 0; i < cfg_key_count(); i++) {
		k = cfg_key_at(i);
		if (strcmp(k->section, "collective") || !k->ddp_reads)
			continue;
		if (last)
			str_appendf(buf, len, &off, "%s%s", off ? ", " : "", last->name);
		last = k;
	}
	if (last)
		str_appendf(buf, len, &off, "%s%s", off ? " and " : "", last->name);
}

/* "only allreduce does", "write_bw and pairwise do": the ops of mask that read a key. */
static void ops_reading(unsigned int mask, char *buf, size_t len)
{
	int n = 0, seen = 0, op;
	size_t off = 0;

	for (op = 0; op < COLL_OP_COUNT; op++)
		n += !!(mask & (1u << op));
	buf[0] = '\0';
	for (op = 0; op < COLL_OP_COUNT; op++) {
		if (!(mask & (1u << op)))
			continue;
		seen++;
		str_appendf(buf, len, &off, "%s%s", seen == 1 ? (n == 1 ? "only " : "")
			    : seen == n ? " and " : ", ", coll_op_name(op));
	}
	str_appendf(buf, len, &off, n == 1 ? " does" : " do");
}

/* Why the last case looked at (cfg) does not read section.key, for the warning. */
static void unread_why(const struct cfg *cfg, const struct cfg_key *k, char *why, size_t len)
{
	const char *model = cfg->workload.model;
	char fam[96], keys[128];

	if (!strcmp(k->section, "workload") && !workload_has_model(&cfg->workload)) {
		snprintf(why, len, "model = none (the [collective] benchmark) reads no [workload] key");
	} else if (!strcmp(k->section, "workload")) {
		model_key_families(k->name, fam, sizeof(fam));
		snprintf(why, len, "model %s does not read it (families that do: %s)", model, fam);
	} else if (workload_has_model(&cfg->workload)) {
		ddp_coll_keys(keys, sizeof(keys));
		snprintf(why, len, "model %s runs a DDP workload, which takes only %s from "
			 "[collective]", model, keys);
	} else {
		ops_reading(k->read_by_ops, keys, sizeof(keys));
		snprintf(why, len, "op = %s does not read it (%s)",
			 coll_op_name(cfg->collective.op), keys);
	}
}

/*
 * [workload] and [collective] keys set or swept that no case reads: a [workload] key
 * its model's family does not build from (model_reads_key), a [collective] key a DDP
 * workload or the case's op leaves alone (case_reads_coll).
 */
static void lint_unread_keys(const struct experiment *exp, const struct cfg *def,
			     struct lint_result *r)
{
	char loc[PATH_MAX + 64], why[192];
	size_t i, c;

	for (i = 0; i < cfg_key_count(); i++) {
		const struct cfg_key *k = cfg_key_at(i);
		const struct exp_axis *ax = axis_of(exp, k);
		bool wl = !strcmp(k->section, "workload"), used = false;
		const struct cfg *cfg = &exp->base;

		if ((!wl && strcmp(k->section, "collective")) || !strcmp(k->name, "model") ||
		    (!ax && key_is_default(exp, def, k)))
			continue;
		for (c = 0; c < exp->ncases && !used; c++) {
			cfg = &exp->cases[c].cfg;
			used = wl ? model_reads_key(cfg->workload.model, k->name)
				  : case_reads_coll(cfg, k);
		}
		if (used)
			continue;
		where(exp, k->section, k->name, loc, sizeof(loc));
		unread_why(cfg, k, why, sizeof(why));
		if (ax)
			add(r, false, loc, "swept over %d values, but %s: the cases differ in name only",
			    ax->nvalues, why);
		else
			add(r, false, loc, "set, but %s", why);
	}
}

static void lint_gpu_needs(const struct experiment *exp, struct lint_result *r)
{
	char loc[PATH_MAX + 64];
	size_t c;

	for (c = 0; c < exp->ncases; c++) {
		const struct cfg *cfg = &exp->cases[c].cfg;
		int tp = cfg->transport.kind;

		/* NCCL reduces GPU memory only: stop here, not after ncclCommInitRank */
		if (tp == TP_NCCL && !gpu_buffers(cfg)) {
			where(exp, "transport", "transport", loc, sizeof(loc));
			add(r, true, loc, "nccl needs GPU buffers, but [gpu] device = none in case "
			    "%s (set device = auto)", exp->cases[c].name);
		}
		/* gemm and spin play the ops on the GPU: without one the case fails at its start */
		if ((cfg->workload.compute == COMPUTE_GEMM || cfg->workload.compute == COMPUTE_SPIN) &&
		    workload_has_model(&cfg->workload) && !gpu_buffers(cfg)) {
			where(exp, "workload", "compute", loc, sizeof(loc));
			add(r, true, loc, "%s plays the model's ops on the GPU, but [gpu] device = "
			    "none in case %s (set device = auto, or compute = sleep)",
			    compute_mode_name(cfg->workload.compute), exp->cases[c].name);
		}
		if (cfg->gpu.gdr != GPU_ON)
			continue;
		where(exp, "gpu", "gdr", loc, sizeof(loc));
		if (!gpu_buffers(cfg))
			add(r, true, loc, "on needs GPU buffers, but [gpu] device = none (set device = "
			    "auto, or gdr = auto)");
		else if (tp != TP_AUTO && tp != TP_IB && tp != TP_ROCE)
			add(r, true, loc, "on needs transport ib or roce (GPUDirect RDMA), case %s "
			    "uses %s", exp->cases[c].name, transport_kind_name(tp));
	}
}

/*
 * bind = node:N and cpus:LIST against this node, as the ranks will resolve them: a node or
 * CPU it lacks is an error; fewer CPUs than local ranks a warning (they take turns).
 */
static void lint_numa(const struct experiment *exp, const struct lint_node *node,
		      struct lint_result *r)
{
	char loc[PATH_MAX + 64], val[512];
	struct numa_plan plan;
	size_t c;

	for (c = 0; c < exp->ncases && node->topo; c++) {
		const struct cfg *cfg = &exp->cases[c].cfg;
		const char *b = cfg->numa.bind;
		int n;

		if (strncmp(b, "cpus:", 5) && strncmp(b, "node:", 5))
			continue;
		where(exp, "numa", "bind", loc, sizeof(loc));
		if (numa_bind_plan(&cfg->numa, node->topo, -1, -1, &plan)) {
			add(r, true, loc, "%s", plan.reason);
			continue;
		}
		n = numa_plan_ncpus(&plan);
		/* as the line loc names writes it: escaped in a [matrix] list, plain elsewhere */
		if (axis_of(exp, cfg_key_find("numa", "bind")))
			b = experiment_value_text(b, val, sizeof(val));
		if (n && n < cfg->launch.local_ranks)
			add(r, false, loc, "%s pins all %d local ranks to %d CPU%s: they take turns "
			    "on %s", b, cfg->launch.local_ranks, n, n == 1 ? "" : "s",
			    n == 1 ? "it" : "them");
	}
}

/*
 * write_bw, write_lat and pairwise need two ranks: with local_ranks = 1 and no launcher
 * the case can only fail (an error when this run has none, a warning for check).
 */
static void lint_p2p_ranks(const struct experiment *exp, const struct lint_node *node,
			   struct lint_result *r)
{
	char loc[PATH_MAX + 64];
	size_t c;

	for (c = 0; c < exp->ncases; c++) {
		const struct cfg *cfg = &exp->cases[c].cfg;

		if (workload_has_model(&cfg->workload) || cfg->collective.op == COLL_OP_ALLREDUCE ||
		    cfg->launch.local_ranks > 1)
			continue;
		where(exp, "launch", "local_ranks", loc, sizeof(loc));
		add(r, node->local, loc, "op = %s needs 2 ranks, and local_ranks = 1 starts one%s",
		    coll_op_name(cfg->collective.op),
		    node->local ? "" : " when no launcher starts more");
		return;
	}
}

/* An exclude rule that dropped nothing: a value not on its axis, a typo, a rule that
 * contradicts itself (transport=tcp,transport=shm). */
static void lint_unmatched(const struct experiment *exp, struct lint_result *r)
{
	char loc[PATH_MAX + 64], txt[512];
	int i;

	for (i = 0; i < exp->nexclude; i++) {
		const struct exp_cond *c = &exp->exclude[i];

		if (c->matched || !c->n)
			continue;
		experiment_cond_format(c, txt, sizeof(txt));
		snprintf(loc, sizeof(loc), "%s:%d: matrix.exclude", experiment_cond_file(exp, c),
			 c->line);
		add(r, false, loc, "'%s' matches no combination of the axes, so it excludes nothing",
		    txt);
	}
}

/* A min_busbw range (@ A..B) that holds none of a benchmark case's sizes: the case can
 * only fail the threshold, after running. */
static void lint_threshold(const struct experiment *exp, struct lint_result *r)
{
	char loc[PATH_MAX + 64], range[64];
	struct threshold t;
	size_t c;
	int i;

	for (c = 0; c < exp->ncases; c++) {
		const struct cfg *cfg = &exp->cases[c].cfg;
		bool held = false;

		if (!cfg->report.min_busbw[0] || workload_has_model(&cfg->workload) ||
		    threshold_parse(cfg->report.min_busbw, &t, NULL, 0))
			continue;
		for (i = 0; i < cfg->collective.nsizes && !held; i++)
			held = threshold_covers(&t, cfg->collective.sizes[i]);
		if (held)
			continue;
		where(exp, "report", "min_busbw", loc, sizeof(loc));
		threshold_range_text(&t, range, sizeof(range));
		add(r, true, loc, "the range %s holds none of the sizes of case %s, which could "
		    "only fail it", range, exp->cases[c].name);
	}
}

/* baseline / exclude terms must name axes: on other keys they match all or nothing. */
static void lint_conds(const struct experiment *exp, struct lint_result *r)
{
	char loc[PATH_MAX + 64], label[128];
	int i, j;

	for (i = -1; i < exp->nexclude; i++) {
		const struct exp_cond *cond = i < 0 ? &exp->baseline : &exp->exclude[i];

		if (i < 0 && !exp->has_baseline)
			continue;
		for (j = 0; j < cond->n; j++) {
			if (axis_of(exp, cond->key[j]))
				continue;
			snprintf(loc, sizeof(loc), "%s:%d: matrix.%s",
				 experiment_cond_file(exp, cond), cond->line,
				 i < 0 ? "baseline" : "exclude");
			add(r, true, loc, "%s is not a [matrix] axis, so it matches every case or "
			    "none (%s)", experiment_key_label(cond->key[j], label,
								    sizeof(label)),
			    exp->naxes ? "name a swept key" : "the matrix sweeps nothing");
		}
	}
}

void experiment_lint(const struct experiment *exp, const struct lint_node *node,
		     struct lint_result *out)
{
	struct cfg def;
	char e[256];
	/* what "left at its default" is measured against; unreadable: every key counts as
	 * default, and the set-but-unread warnings stay silent */
	bool have_def = !cfg_defaults(&def, e, sizeof(e));

	memset(out, 0, sizeof(*out));
	lint_conds(exp, out);
	lint_unmatched(exp, out);
	lint_threshold(exp, out);
	lint_sizes(exp, out);
	lint_gpu_needs(exp, out);
	lint_numa(exp, node, out);
	lint_p2p_ranks(exp, node, out);
	lint_scoped(exp, have_def ? &def : NULL, out);
	lint_unread_keys(exp, have_def ? &def : NULL, out);
}

int lint_print(FILE *f, const struct lint_result *r)
{
	int i;

	for (i = 0; i < r->n; i++) {
		const struct lint_msg *m = &r->msg[i];
		size_t n = strlen(m->text), w = m->where_len < n ? m->where_len : n;

		/* "FILE:LINE: key: error: what" */
		fprintf(f, "%.*s: %s: %s\n", (int)w, m->text, m->error ? "error" : "warning",
			w + 2 <= n ? m->text + w + 2 : "");
	}
	return r->nerrors;
}
