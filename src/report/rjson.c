/* Building report.json documents from C structs, in schema order. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/links.h"
#include "report/report.h"
#include "report/rjson.h"
#include "util/fsbound.h"
#include "util/jtext.h"

#define RJ_FLAGS (JSON_INDENT(1) | JSON_REAL_PRECISION(10))

/* Any text: a stray byte of a Latin-1 description or path is kept as \xNN (util/jtext.h). */
static json_t *jstr(const char *s)
{
	return json_text(s);
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static int set(json_t *o, const char *key, json_t *v)
{
	if (!v)
		return -ENOMEM;
	return json_object_set_new(o, key, v) ? -ENOMEM : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int rj_stats_from_samples(const double *x, int n, struct rj_stats *out)
{
	double *v, sum = 0;
	int i;

	if (n <= 0)
		return -EINVAL;
	v = malloc((size_t)n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, x, (size_t)n * sizeof(*v));
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	for (i = 0; i < n; i++)
		sum += v[i];
	out->avg = sum / n;
	/* Nearest rank: the smallest sample with at least p% of samples at or below it. */
	out->p50 = v[(int)ceil(0.50 * n) - 1];
	out->p99 = v[(int)ceil(0.99 * n) - 1];
	out->min = v[0];
	out->max = v[n - 1];
	free(v);
	return 0;
}

void rj_stats_scale(struct rj_stats *s, double scale)
{
	s->avg *= scale;
	s->p50 *= scale;
	s->p99 *= scale;
	s->min *= scale;
	s->max *= scale;
}

json_t *rj_stats_json(const struct rj_stats *s, bool mean_key)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (set(o, mean_key ? "mean" : "avg", jnum(s->avg)) || set(o, "p50", jnum(s->p50)) ||
	    set(o, "p99", jnum(s->p99)) || set(o, "min", jnum(s->min)) ||
	    set(o, "max", jnum(s->max))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

char *rj_iso8601(long long unix_s, char *buf, size_t len)
{
	time_t t = (time_t)unix_s;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

json_t *rj_doc_new(const struct rj_meta *m)
{
	json_t *doc = json_object(), *gs = json_object(), *argv = json_array(),
	       *exp = json_object();
	int i, err = 0;

	if (!doc || !gs || !argv || !exp)
		goto out_free;
	err |= set(gs, "version", jstr(m->version));
	err |= set(gs, "commit", jstr(m->commit));
	err |= set(gs, "build_date", jstr(m->build_date));
	err |= set(gs, "build_id", jstr(m->build_id));
	err |= set(gs, "compiler", jstr(m->compiler));
	err |= set(gs, "cuda", jstr(m->cuda));
	err |= set(gs, "verbs_providers", jstr(m->verbs_providers));
	for (i = 0; i < m->argc; i++)
		err |= json_array_append_new(argv, jstr(m->argv[i]));
	err |= set(exp, "name", jstr(m->experiment));
	err |= set(exp, "file", jstr(m->experiment_file));
	err |= set(exp, "hash", jstr(m->experiment_hash));
	err |= set(exp, "resolved", jstr(m->resolved));
	err |= set(exp, "description", jstr(m->description));
	err |= set(exp, "only_case", m->only_case > 0 ? json_integer(m->only_case) : json_null());
	err |= set(doc, "schema", json_string(REPORT_SCHEMA));
	err |= set(doc, "gradsync", json_incref(gs));
	err |= set(doc, "argv", json_incref(argv));
	err |= set(doc, "experiment", json_incref(exp));
	err |= set(doc, "started", jstr(m->started));
	err |= set(doc, "finished", jstr(m->finished));
	err |= set(doc, "launcher", jstr(m->launcher));
	err |= set(doc, "nranks", json_integer(m->nranks));
	err |= set(doc, "hosts", json_array());
	err |= set(doc, "fingerprint", json_object());
	err |= set(doc, "env", json_object());
	err |= set(doc, "baseline", m->baseline ? json_string(m->baseline) : json_null());
	err |= set(doc, "baseline_rule", m->baseline_rule ? json_string(m->baseline_rule) : json_null());
	err |= set(doc, "cases", json_array());
	if (err)
		goto out_free;
	json_decref(gs);
	json_decref(argv);
	json_decref(exp);
	return doc;
out_free:
	json_decref(exp);
	json_decref(argv);
	json_decref(gs);
	json_decref(doc);
	return NULL;
}

int rj_doc_set(json_t *doc, const char *key, json_t *value)
{
	return set(doc, key, value);
}

int rj_doc_set_status(json_t *doc, const char *status, const char *detail)
{
	int err = set(doc, "status", jstr(status));

	if (err || !detail)
		return err;
	return set(doc, strcmp(status, "interrupted") ? "error" : "interrupted", jstr(detail));
}

int rj_doc_add_case(json_t *doc, json_t *c)
{
	json_t *cases = json_object_get(doc, "cases");

	if (!c || !json_is_array(cases)) {
		json_decref(c);
		return -EINVAL;
	}
	return json_array_append_new(cases, c) ? -ENOMEM : 0;
}

json_t *rj_hosts_json(const struct rj_host *h, int n)
{
	json_t *arr = json_array();
	int i, err = 0;

	if (!arr)
		return NULL;
	for (i = 0; i < n; i++) {
		json_t *o = json_object();

		if (!o) {
			err = -ENOMEM;
			break;
		}
		err |= set(o, "rank", json_integer(h[i].rank));
		err |= set(o, "hostname", jstr(h[i].hostname));
		err |= set(o, "host_index", json_integer(h[i].host_index));
		err |= set(o, "pid", json_integer(h[i].pid));
		err |= json_array_append_new(arr, o);
	}
	if (err) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

json_t *rj_fingerprint_json(const struct rj_fingerprint *f)
{
	json_t *j = json_object(), *gpus = json_array(), *nics = json_array();
	int i, err = 0;

	if (!j || !gpus || !nics)
		goto out_err;
	for (i = 0; i < f->ngpus; i++) {
		const struct rj_gpu_dev *g = &f->gpus[i];
		json_t *o = json_object();
		char pcie[32];

		if (!o)
			goto out_err;
		err |= set(o, "bus_id", jstr(g->bus_id));
		err |= set(o, "name", jstr(g->name));
		err |= set(o, "driver", jstr(f->gpu_driver));
		err |= set(o, "numa", json_integer(g->numa));
		err |= set(o, "pcie_gen", json_integer(g->pcie_gen));
		err |= set(o, "pcie_width", json_integer(g->pcie_width));
		snprintf(pcie, sizeof(pcie), "Gen%d x%d", g->pcie_gen, g->pcie_width);
		err |= set(o, "pcie", json_string(pcie)); /* one field for the fairness check */
		err |= json_array_append_new(gpus, o);
	}
	for (i = 0; i < f->nnics; i++) {
		const struct rj_nic_port *n = &f->nics[i];
		json_t *o = json_object();

		if (!o)
			goto out_err;
		err |= set(o, "device", jstr(n->device));
		err |= set(o, "port", json_integer(n->port));
		err |= set(o, "fw_ver", jstr(n->fw_ver));
		err |= set(o, "rate", jstr(n->rate));
		err |= set(o, "link_layer", jstr(n->link_layer));
		err |= set(o, "state", jstr(n->state));
		err |= set(o, "numa", json_integer(n->numa));
		if (n->mtu > 0)
			err |= set(o, "mtu", json_integer(n->mtu));
		err |= json_array_append_new(nics, o);
	}
	err |= set(j, "hostname", jstr(f->hostname));
	err |= set(j, "kernel", jstr(f->kernel));
	err |= set(j, "os", jstr(f->os));
	err |= set(j, "cpu_model", jstr(f->cpu_model));
	err |= set(j, "cpus", json_integer(f->cpus));
	err |= set(j, "numa_nodes", json_integer(f->numa_nodes));
	err |= set(j, "memory_bytes", json_integer(f->memory_bytes));
	err |= set(j, "glibc", jstr(f->glibc));
	err |= set(j, "gpus", gpus);
	err |= set(j, "gpu_driver", jstr(f->gpu_driver));
	err |= set(j, "nics", nics);
	if (err) {
		json_decref(j);
		return NULL;
	}
	return j;
out_err:
	json_decref(nics);
	json_decref(gpus);
	json_decref(j);
	return NULL;
}

/* Same configuration except the rank count? */
static bool same_but_ranks(json_t *a, json_t *b)
{
	json_t *ca = json_object_get(a, "config"), *cb = json_object_get(b, "config"), *v;
	const char *k;

	if (!ca || !cb || json_object_size(ca) != json_object_size(cb))
		return false;
	json_object_foreach(ca, k, v) {
		if (!strcmp(k, "launch.local_ranks"))
			continue;
		if (!json_equal(v, json_object_get(cb, k)))
			return false;
	}
	return true;
}

void rj_cases_fill_scaling(json_t *cases)
{
	json_t *c, *one;
	size_t i, j;

	json_array_foreach(cases, i, c) {
		json_t *w = json_object_get(c, "workload");

		if (!json_is_object(w))
			continue;
		json_array_foreach(cases, j, one) {
			json_t *w1 = json_object_get(one, "workload");
			double base;

			if (j == i || !json_is_object(w1) ||
			    json_integer_value(json_object_get(one, "nranks")) != 1 ||
			    !same_but_ranks(c, one))
				continue;
			base = json_number_value(json_object_get(w1, "samples_per_s"));
			if (base > 0)
				json_object_set_new(w, "scaling_efficiency",
						    json_real(json_number_value(json_object_get(
								      w, "samples_per_s_rank")) / base));
			break;
		}
	}
}

json_t *rj_case_new(const char *name, json_t *swept, json_t *config)
{
	json_t *c = json_object();
	int err = 0;

	if (!c) {
		json_decref(swept);
		json_decref(config);
		return NULL;
	}
	err |= set(c, "name", jstr(name));
	/* Placeholders keep the schema's member order; the setters replace them in place. */
	err |= set(c, "index", json_integer(0));
	err |= set(c, "nranks", json_integer(0));
	err |= set(c, "launcher", json_string(""));
	err |= set(c, "hosts", json_array());
	err |= set(c, "swept", swept ? swept : json_object());
	err |= set(c, "baseline", json_null());
	err |= set(c, "config", config ? config : json_object());
	err |= set(c, "status", json_string("ok"));
	err |= set(c, "path", json_object());
	err |= set(c, "paths", json_array());
	err |= set(c, "numa", json_object());
	err |= set(c, "bound", json_object());
	err |= set(c, "gpu", json_null());
	err |= set(c, "gpu_path", json_null());
	err |= set(c, "reduce_isa", json_string(""));
	err |= set(c, "collective", json_array());
	err |= set(c, "workload", json_null());
	if (err) {
		json_decref(c);
		return NULL;
	}
	return c;
}

int rj_case_set_ranks(json_t *c, int index, int nranks, const char *launcher, json_t *hosts)
{
	int err = set(c, "index", json_integer(index));

	err |= set(c, "nranks", json_integer(nranks));
	err |= set(c, "launcher", jstr(launcher));
	err |= set(c, "hosts", hosts ? hosts : json_array());
	return err ? -ENOMEM : 0;
}

static json_t *path_json(const struct rj_path *p)
{
	json_t *o = json_object();
	int err = 0;

	if (!o)
		return NULL;
	err |= set(o, "transport", jstr(p->transport));
	err |= set(o, "device", jstr(p->device));
	err |= set(o, "port", json_integer(p->port));
	err |= set(o, "link_layer", jstr(p->link_layer));
	err |= set(o, "rate", jstr(p->rate));
	err |= set(o, "rate_bps", json_integer((json_int_t)p->rate_bps));
	err |= set(o, "mtu", json_integer(p->mtu));
	err |= set(o, "gid_index", json_integer(p->gid_index));
	err |= set(o, "gid_type", jstr(p->gid_type));
	err |= set(o, "qps", json_integer(p->qps));
	err |= set(o, "fw_ver", jstr(p->fw_ver));
	err |= set(o, "note", jstr(p->note));
	err |= set(o, "gpu_path", jstr(p->gpu_path));
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int rj_case_set_path(json_t *c, const struct rj_path *p)
{
	return set(c, "path", path_json(p));
}

int rj_case_add_path(json_t *c, const struct rj_path *p)
{
	json_t *arr = json_object_get(c, "paths"), *o = path_json(p);

	if (!o || !json_is_array(arr)) {
		json_decref(o);
		return -EINVAL;
	}
	return json_array_append_new(arr, o) ? -ENOMEM : 0;
}

int rj_case_set_gpu(json_t *c, const struct rj_gpu *g)
{
	json_t *o;
	int err = 0;

	if (!g)
		return set(c, "gpu", json_null());
	o = json_object();
	if (!o)
		return -ENOMEM;
	err |= set(o, "device", json_integer(g->device));
	err |= set(o, "name", jstr(g->name));
	err |= set(o, "bus_id", jstr(g->bus_id));
	err |= set(o, "driver", jstr(g->driver));
	err |= set(o, "cc", jstr(g->cc));
	err |= set(o, "sm_count", json_integer(g->sm_count));
	err |= set(o, "mem_bytes", json_integer((json_int_t)g->mem_bytes));
	err |= set(o, "dmabuf", json_boolean(g->dmabuf));
	err |= set(o, "gdr", json_boolean(g->gdr));
	err |= set(o, "topo_index", json_integer(g->topo_index));
	if (err) {
		json_decref(o);
		return -ENOMEM;
	}
	return set(c, "gpu", o);
}

int rj_case_set_gpu_path(json_t *c, const struct rj_gpu_path *p)
{
	json_t *o = json_object();
	int err = 0;

	if (!o)
		return -ENOMEM;
	err |= set(o, "mode", jstr(p->mode));
	err |= set(o, "mechanism", jstr(p->mechanism));
	err |= set(o, "gpu_nic_path", jstr(p->gpu_nic_path));
	err |= set(o, "gdr_level", jstr(p->gdr_level));
	err |= set(o, "flush", json_boolean(p->flush));
	err |= set(o, "reason", jstr(p->reason));
	if (err) {
		json_decref(o);
		return -ENOMEM;
	}
	return set(c, "gpu_path", o);
}

int rj_case_set_numa(json_t *c, const struct rj_numa *n)
{
	json_t *o = json_object();
	int err = 0;

	if (!o)
		return -ENOMEM;
	err |= set(o, "requested", jstr(n->requested));
	err |= set(o, "plan", jstr(n->plan));
	err |= set(o, "actual", jstr(n->actual));
	err |= set(o, "applicable", json_boolean(n->applicable));
	err |= set(o, "note", jstr(n->note));
	if (err) {
		json_decref(o);
		return -ENOMEM;
	}
	return set(c, "numa", o);
}

int rj_case_set_bound(json_t *c, const struct rj_bound *b)
{
	json_t *o = json_object();
	int err = 0;

	if (!o)
		return -ENOMEM;
	err |= set(o, "kind", jstr(b->kind));
	err |= set(o, "Bps", jnum(b->Bps));
	err |= set(o, "desc", jstr(b->desc));
	if (err) {
		json_decref(o);
		return -ENOMEM;
	}
	return set(c, "bound", o);
}

int rj_case_set_baseline(json_t *c, const char *name)
{
	return set(c, "baseline", name ? json_string(name) : json_null());
}

int rj_case_set_reduce_isa(json_t *c, const char *isa)
{
	return set(c, "reduce_isa", jstr(isa));
}

static json_t *straggler_json(const struct rj_straggler *st)
{
	if (st->rank < 0)
		return json_null();
	return json_pack("{s:i, s:s, s:f, s:f}", "rank", st->rank, "host", st->host ? st->host : "",
			 "share", st->share, "wait_share", st->wait_share);
}

static json_t *rank_stats_json(const struct rj_rank_stats *rs)
{
	json_t *o = json_object(), *means = json_array(), *iters = NULL;
	int err = 0, r, i;

	if (rs->iter_us)
		iters = json_array();
	for (r = 0; r < rs->nranks; r++) {
		err |= json_array_append_new(means, jnum(rs->mean_us[r]));
		if (iters) {
			json_t *a = json_array();

			for (i = 0; i < rs->iterations; i++)
				err |= json_array_append_new(
					a, jnum(rs->iter_us[(size_t)r * rs->iterations + i]));
			err |= json_array_append_new(iters, a);
		}
	}
	err |= set(o, "slowest", json_integer(rs->slowest));
	err |= set(o, "slowest_share", jnum(rs->slowest_share));
	err |= set(o, "spread", jnum(rs->spread));
	err |= set(o, "wait_share", jnum(rs->wait_share));
	err |= set(o, "mean_us", means);
	err |= set(o, "iter_us", iters ? iters : json_null());
	err |= set(o, "straggler", straggler_json(&rs->straggler));
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *pair_json(const struct rj_pair *p)
{
	return json_pack("{s:i, s:i, s:s, s:s, s:o, s:o, s:b}", "a", p->a, "b", p->b, "host_a",
			 p->host_a ? p->host_a : "", "host_b", p->host_b ? p->host_b : "",
			 "bw_GBps", jnum(p->bw_GBps), "lat_us", jnum(p->lat_us), "slow", p->slow);
}

/* "pairs": every pair; "slow_pairs": the slow ones again, so a reader need not filter. */
static int pairs_set(json_t *o, const struct rj_pair *p, int n)
{
	json_t *all = json_array(), *slow = json_array();
	int err = 0, k;

	for (k = 0; k < n; k++) {
		err |= json_array_append_new(all, pair_json(&p[k]));
		if (p[k].slow)
			err |= json_array_append_new(slow, pair_json(&p[k]));
	}
	err |= set(o, "pairs", all);
	err |= set(o, "slow_pairs", slow);
	return err;
}

json_t *rj_coll_row_json(const struct rj_coll_row *r)
{
	json_t *o = json_object();
	int err = 0;

	if (!o)
		return NULL;
	err |= set(o, "op", jstr(r->op));
	err |= set(o, "algo", jstr(r->algo));
	err |= set(o, "dtype", jstr(r->dtype));
	err |= set(o, "redop", jstr(r->redop));
	err |= set(o, "size", json_integer((json_int_t)r->size));
	err |= set(o, "count", json_integer((json_int_t)r->count));
	err |= set(o, "iterations", json_integer(r->iterations));
	if (r->samples)
		err |= set(o, "samples", json_integer(r->samples));
	err |= set(o, "time_us", rj_stats_json(&r->time_us, false));
	err |= set(o, "algbw_GBps", jnum(r->algbw_GBps));
	err |= set(o, "busbw_GBps", jnum(r->busbw_GBps));
	err |= set(o, "wrong", r->unchecked ? json_null() : json_integer((json_int_t)r->wrong));
	err |= set(o, "first_wrong", r->unchecked ? json_null()
						  : json_integer((json_int_t)r->first_wrong));
	if (r->ranks)
		err |= set(o, "ranks", rank_stats_json(r->ranks));
	if (r->pairs)
		err |= pairs_set(o, r->pairs, r->npairs);
	err |= set(o, "cpu_s_per_GB", jnum(r->cpu_s_per_GB));
	err |= set(o, "host_cpu_s_per_GB", jnum(r->host_cpu_s_per_GB));
	if (r->chunk_bytes)
		err |= set(o, "chunk_bytes", json_integer((json_int_t)r->chunk_bytes));
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int rj_row_set_links(json_t *row, const struct link_obs *l, int n)
{
	json_t *a = json_array();
	int i, err = 0;

	for (i = 0; i < n && a; i++) {
		json_t *o;

		if (!(l[i].bytes > 0))
			continue;
		o = json_pack("{s:i, s:i, s:o, s:o, s:o, s:o}", "from", l[i].from, "to", l[i].to,
			      "bytes", jnum(l[i].bytes), "send_wait_ms", jnum(l[i].send_s * 1e3),
			      "recv_wait_ms", jnum(l[i].recv_s * 1e3), "rate_GBps",
			      jnum(link_rate(&l[i]) / 1e9));
		if (o && l[i].flight_bytes > 0) {
			err |= set(o, "flight_ms", jnum(l[i].flight_s * 1e3));
			err |= set(o, "flight_bytes", jnum(l[i].flight_bytes));
			err |= set(o, "flight_err_ms", jnum(l[i].flight_err_s * 1e3));
		}
		err |= o ? json_array_append_new(a, o) : -1;
	}
	return err ? (json_decref(a), -ENOMEM) : set(row, "links", a);
}

int rj_case_add_coll(json_t *c, const struct rj_coll_row *r)
{
	json_t *arr = json_object_get(c, "collective"), *o = rj_coll_row_json(r);

	if (!o || !json_is_array(arr)) {
		json_decref(o);
		return -EINVAL;
	}
	return json_array_append_new(arr, o) ? -ENOMEM : 0;
}

int rj_case_set_collective(json_t *c, json_t *rows)
{
	return set(c, "collective", rows ? rows : json_array());
}

static json_t *bucket_json(const struct rj_bucket *b)
{
	json_t *o = json_object();
	int err = 0;

	if (!o)
		return NULL;
	err |= set(o, "index", json_integer(b->index));
	err |= set(o, "bytes", json_integer((json_int_t)b->bytes));
	err |= set(o, "tensors", json_integer(b->tensors));
	err |= set(o, "ready_ms", jnum(b->ready_ms));
	err |= set(o, "start_ms", jnum(b->start_ms));
	err |= set(o, "end_ms", jnum(b->end_ms));
	err |= set(o, "busbw_GBps", jnum(b->busbw_GBps));
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *rj_workload_json(const struct rj_workload *w)
{
	json_t *o = json_object(), *tl = json_array();
	int i, err = 0;

	if (!o || !tl) {
		json_decref(o);
		json_decref(tl);
		return NULL;
	}
	err |= set(o, "model", jstr(w->model));
	err |= set(o, "params", json_integer((json_int_t)w->params));
	err |= set(o, "tensors", json_integer(w->tensors));
	err |= set(o, "buckets", json_integer(w->buckets));
	err |= set(o, "batch", json_integer(w->batch));
	err |= set(o, "iterations", json_integer(w->iterations));
	err |= set(o, "compute", jstr(w->compute));
	err |= set(o, "ranks", json_integer(w->ranks));
	err |= set(o, "overlap", json_boolean(w->overlap));
	err |= set(o, "grad_bytes", json_integer((json_int_t)w->grad_bytes));
	err |= set(o, "iter_ms", rj_stats_json(&w->iter_ms, true));
	err |= set(o, "fwd_ms", rj_stats_json(&w->fwd_ms, true));
	err |= set(o, "bwd_ms", rj_stats_json(&w->bwd_ms, true));
	err |= set(o, "exposed_comm_ms", rj_stats_json(&w->exposed_comm_ms, true));
	err |= set(o, "comm_wait_share", jnum(w->comm_wait_share));
	err |= set(o, "overlap_efficiency", jnum(w->overlap_efficiency));
	err |= set(o, "critical_rank", json_pack("{s:i, s:o}", "rank", w->critical_rank, "share",
						 jnum(w->critical_share)));
	err |= set(o, "samples_per_s", jnum(w->samples_per_s));
	err |= set(o, "samples_per_s_rank", jnum(w->samples_per_s_rank));
	err |= set(o, "allreduce_ms", rj_stats_json(&w->allreduce_ms, true));
	err |= set(o, "busbw_GBps", jnum(w->busbw_GBps));
	err |= set(o, "scaling_efficiency", jnum(w->scaling_efficiency));
	err |= set(o, "wrong", w->unchecked ? json_null() : json_integer((json_int_t)w->wrong));
	err |= set(o, "first_wrong", w->unchecked ? json_null()
						  : json_integer((json_int_t)w->first_wrong));
	for (i = 0; i < w->ntimeline; i++)
		err |= json_array_append_new(tl, bucket_json(&w->timeline[i]));
	err |= set(o, "bucket_timeline", tl);
	err |= set(o, "ddp_logging",
		   json_pack("{s:o, s:o, s:o, s:o}", "avg_forward_compute_time",
			     jnum(w->avg_forward_compute_time), "avg_backward_compute_time",
			     jnum(w->avg_backward_compute_time), "avg_backward_comm_time",
			     jnum(w->avg_backward_comm_time), "avg_backward_compute_comm_overlap_time",
			     jnum(w->avg_backward_compute_comm_overlap_time)));
	err |= set(o, "precision", jstr(w->precision));
	err |= set(o, "grad_dtype", jstr(w->grad_dtype));
	err |= set(o, "gpu_profile", jstr(w->gpu_profile));
	err |= set(o, "gpu_tflops_calibrated", jnum(w->gpu_tflops_calibrated));
	err |= set(o, "gpu_tflops_used", jnum(w->gpu_tflops_used));
	err |= set(o, "gpu_kernels", json_integer((json_int_t)w->gpu_kernels));
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int rj_case_set_workload_json(json_t *c, json_t *w)
{
	return set(c, "workload", w ? w : json_null());
}

int rj_case_set_workload(json_t *c, const struct rj_workload *w)
{
	json_t *o = rj_workload_json(w);

	return o ? set(c, "workload", o) : -ENOMEM;
}

int rj_case_set_status(json_t *c, const char *status, const char *error)
{
	int err = set(c, "status", jstr(status));

	return err || !error ? err : set(c, "error", jstr(error));
}

int rj_case_fail(json_t *c, const char *error)
{
	return rj_case_set_status(c, "failed", error ? error : "");
}

char *rj_dumps(const json_t *doc)
{
	return json_dumps(doc, RJ_FLAGS);
}

int rj_save(struct fsb_write *w, const json_t *doc, uint64_t timeout_ns, char *why,
	    size_t whylen)
{
	char *text = rj_dumps(doc);
	int ret;

	if (!text) {
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	w->data = text;
	w->len = strlen(text);
	ret = fsb_write(w, timeout_ns, why, whylen);
	free(text);
	return ret;
}
