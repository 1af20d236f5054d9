/* Finding the environment differences between runs and cases that a comparison must flag. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/fairness.h"
#include "report/jget.h"
#include "util/common.h"
#include "util/strutil.h"

#define LABEL_LEN 200
#define VALUE_LEN 640

struct fair_list {
	struct fair_item *v;
	int n, cap;
	int err;
};

static void fair_add(struct fair_list *l, const char *what, const char *detail)
{
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		struct fair_item *v = realloc(l->v, (size_t)cap * sizeof(*v));

		if (!v) {
			l->err = -ENOMEM;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	snprintf(l->v[l->n].what, sizeof(l->v[0].what), "%s", what);
	snprintf(l->v[l->n].detail, sizeof(l->v[0].detail), "%s", detail);
	l->n++;
}

/*
 * One item when the values differ: "v1 (label, label); v2 (label)", values in
 * order of first appearance. Empty values read "(none)".
 */
static void diff_values(struct fair_list *l, const char *what, char **labels, char **values,
			int n)
{
	char detail[640];
	size_t off = 0;
	int i, j, k;
	bool differ = false;

	for (i = 1; i < n; i++)
		differ |= strcmp(values[i], values[0]) != 0;
	if (!differ)
		return;
	detail[0] = '\0';
	for (i = 0; i < n; i++) {
		bool seen = false;

		for (j = 0; j < i && !seen; j++)
			seen = strcmp(values[j], values[i]) == 0;
		if (seen)
			continue;
		str_appendf(detail, sizeof(detail), &off, "%s%s (", i ? "; " : "",
			    *values[i] ? values[i] : "(none)");
		for (j = i, k = 0; j < n; j++) {
			if (strcmp(values[j], values[i]) != 0)
				continue;
			str_appendf(detail, sizeof(detail), &off, "%s%s", k++ ? ", " : "", labels[j]);
		}
		str_appendf(detail, sizeof(detail), &off, ")");
	}
	fair_add(l, what, detail);
}

/* Join field `field` of every element of array `arr` at `path`: "mlx5_0 20.1, mlx5_1 20.1". */
static void join_array(const json_t *o, const char *path, const char *label, const char *field,
		       char *buf, size_t len)
{
	json_t *arr = jget(o, path), *e;
	size_t i, off = 0;
	char v[128], l[128];

	buf[0] = '\0';
	json_array_foreach(arr, i, e) {
		jget_text(e, field, v, sizeof(v));
		if (label)
			jget_text(e, label, l, sizeof(l));
		str_appendf(buf, len, &off, "%s%s%s%s", i ? ", " : "", label ? l : "",
			    label ? " " : "", v);
	}
}

static const struct {
	const char *what;
	const char *path;
} run_fields[] = {
	{ "host", "fingerprint.hostname" },
	{ "kernel", "fingerprint.kernel" },
	{ "OS", "fingerprint.os" },
	{ "glibc", "fingerprint.glibc" },
	{ "CPU model", "fingerprint.cpu_model" },
	{ "CPUs", "fingerprint.cpus" },
	{ "NUMA nodes", "fingerprint.numa_nodes" },
	{ "memory bytes", "fingerprint.memory_bytes" },
	{ "GPU driver", "fingerprint.gpu_driver" },
	{ "gradsync version", "gradsync.version" },
	{ "gradsync commit", "gradsync.commit" },
	{ "gradsync build-id", "gradsync.build_id" },
	{ "gradsync CUDA build", "gradsync.cuda" },
	{ "ranks", "nranks" },
	{ "launcher", "launcher" },
};

static const struct {
	const char *what;
	const char *array;
	const char *label;
	const char *field;
} run_array_fields[] = {
	{ "GPUs", "fingerprint.gpus", NULL, "name" },
	{ "GPU PCIe link", "fingerprint.gpus", "bus_id", "pcie" },
	{ "NIC firmware", "fingerprint.nics", "device", "fw_ver" },
	{ "NIC link rate", "fingerprint.nics", "device", "rate" },
	{ "NIC MTU", "fingerprint.nics", "device", "mtu" },
	{ "NIC link layer", "fingerprint.nics", "device", "link_layer" },
};

/* Case path fields compared among cases of the same transport. */
static const struct {
	const char *what;
	const char *path;
} case_fields[] = {
	{ "device", "path.device" },	 { "MTU", "path.mtu" },
	{ "link rate", "path.rate" },	 { "NIC firmware", "path.fw_ver" },
	{ "GID type", "path.gid_type" }, { "reduction ISA", "reduce_isa" },
	{ "bound kind", "bound.kind" },
};

static char **strs_new(int n, size_t len)
{
	char **v = calloc((size_t)n, sizeof(*v));
	int i;

	for (i = 0; v && i < n; i++) {
		v[i] = calloc(1, len);
		if (!v[i]) {
			while (i--)
				free(v[i]);
			free(v);
			return NULL;
		}
	}
	return v;
}

static void strs_free(char **v, int n)
{
	int i;

	for (i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static json_t *run_env(const struct report_set *s, int r)
{
	return json_object_get(s->runs[r].root, "env");
}

static json_t *case_cfg(const struct report_set *s, int i)
{
	return json_object_get(s->cases[i].json, "config");
}

static void runs_diff(const struct report_set *s, struct fair_list *l, char **lab, char **val)
{
	json_t *v;
	const char *key;
	size_t f;
	int r;

	for (r = 0; r < s->nruns; r++)
		snprintf(lab[r], LABEL_LEN, "%s", s->runs[r].name);
	for (f = 0; f < sizeof(run_fields) / sizeof(run_fields[0]); f++) {
		for (r = 0; r < s->nruns; r++)
			jget_text(s->runs[r].root, run_fields[f].path, val[r], VALUE_LEN);
		diff_values(l, run_fields[f].what, lab, val, s->nruns);
	}
	for (f = 0; f < sizeof(run_array_fields) / sizeof(run_array_fields[0]); f++) {
		for (r = 0; r < s->nruns; r++)
			join_array(s->runs[r].root, run_array_fields[f].array,
				   run_array_fields[f].label, run_array_fields[f].field, val[r],
				   VALUE_LEN);
		diff_values(l, run_array_fields[f].what, lab, val, s->nruns);
	}
	/* Environment: every variable of any run, compared across all runs. */
	for (r = 0; r < s->nruns; r++) {
		json_t *env = run_env(s, r);

		json_object_foreach(env, key, v) {
			char what[96];
			int q, first = 1;

			/* Compare each key once: at the first run that has it. */
			for (q = 0; q < r && first; q++)
				first = !json_object_get(run_env(s, q), key);
			if (!first)
				continue;
			for (q = 0; q < s->nruns; q++)
				jtext(json_object_get(run_env(s, q), key), val[q], VALUE_LEN);
			snprintf(what, sizeof(what), "env %s", key);
			diff_values(l, what, lab, val, s->nruns);
		}
	}
}

static bool swept_has(const json_t *c, const char *key)
{
	return json_object_get(json_object_get(c, "swept"), key) != NULL;
}

static void cases_diff(const struct report_set *s, struct fair_list *l, char **lab, char **val)
{
	int i, j, n;
	size_t f;

	/* Path fields among the cases that use the same transport. */
	for (i = 0; i < s->ncases; i++) {
		const char *tr = jget_str(s->cases[i].json, "path.transport");
		bool first = true;

		for (j = 0; j < i && first; j++)
			first = strcmp(jget_str(s->cases[j].json, "path.transport"), tr) != 0;
		if (!first || !*tr)
			continue;
		for (f = 0; f < sizeof(case_fields) / sizeof(case_fields[0]); f++) {
			char what[96];

			for (j = i, n = 0; j < s->ncases; j++) {
				if (strcmp(jget_str(s->cases[j].json, "path.transport"), tr) != 0)
					continue;
				snprintf(lab[n], LABEL_LEN, "%s", s->cases[j].name);
				jget_text(s->cases[j].json, case_fields[f].path, val[n], VALUE_LEN);
				n++;
			}
			snprintf(what, sizeof(what), "transport %s: %s", tr, case_fields[f].what);
			diff_values(l, what, lab, val, n);
		}
	}
	/* Settings that differ between cases although no case sweeps them. */
	for (i = 0; i < s->ncases; i++) {
		json_t *cfg = case_cfg(s, i), *v;
		const char *key;

		json_object_foreach(cfg, key, v) {
			bool first = true, swept = false;

			for (j = 0; j < i && first; j++)
				first = !json_object_get(case_cfg(s, j), key);
			if (!first)
				continue;
			for (j = 0; j < s->ncases; j++) {
				swept |= swept_has(s->cases[j].json, key);
				snprintf(lab[j], LABEL_LEN, "%s", s->cases[j].name);
				jtext(json_object_get(case_cfg(s, j), key), val[j], VALUE_LEN);
			}
			if (!swept)
				diff_values(l, key, lab, val, s->ncases);
		}
	}
	for (i = 0; i < s->ncases; i++) {
		const json_t *c = s->cases[i].json;
		char detail[640];

		if (!json_is_false(jget(c, "numa.applicable")))
			continue;
		snprintf(detail, sizeof(detail), "%s: requested %s, got %s%s%s", s->cases[i].name,
			 jget_str(c, "numa.requested"), jget_str(c, "numa.actual"),
			 *jget_str(c, "numa.note") ? ": " : "", jget_str(c, "numa.note"));
		fair_add(l, "NUMA binding not applied", detail);
	}
}

int report_fairness(const struct report_set *s, struct fair_item **items)
{
	int n = GS_MAX(s->nruns, s->ncases) + 1;
	struct fair_list l = { 0 };
	char **lab = strs_new(n, LABEL_LEN), **val = strs_new(n, VALUE_LEN);

	*items = NULL;
	if (!lab || !val) {
		strs_free(lab, n);
		strs_free(val, n);
		return -ENOMEM;
	}
	if (s->nruns > 1)
		runs_diff(s, &l, lab, val);
	cases_diff(s, &l, lab, val);
	strs_free(lab, n);
	strs_free(val, n);
	if (l.err) {
		free(l.v);
		return l.err;
	}
	*items = l.v;
	return l.n;
}
