/*
 * The [matrix] section: axes of sweepable keys, exclude rules and the baseline,
 * expanded into the cartesian product of cases with stable, readable names.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/escape.h"
#include "config/experiment.h"
#include "util/common.h"
#include "util/strutil.h"
#include "workload/model.h"

const char *experiment_key_label(const struct cfg_key *k, char *buf, size_t len)
{
	if (cfg_key_find(NULL, k->name) == k)
		snprintf(buf, len, "%s", k->name);
	else
		snprintf(buf, len, "%s.%s", k->section, k->name);
	return buf;
}

bool experiment_key_swept(const struct experiment *exp, const struct cfg_key *k)
{
	int i;

	for (i = 0; i < exp->naxes; i++)
		if (exp->axes[i].key == k)
			return true;
	return false;
}

/* Parse one value of key k and return its canonical text (so "1MiB" equals "1048576"). */
static int canonical_value(const struct cfg_key *k, const char *value, char *out, size_t len,
			   char *err, size_t errlen)
{
	struct cfg *scratch = calloc(1, sizeof(*scratch));
	int ret;

	if (!scratch)
		return -ENOMEM;
	ret = cfg_value_set(scratch, k, value, err, errlen);
	if (!ret)
		cfg_value_format(scratch, k, out, len);
	free(scratch);
	return ret;
}

const char *experiment_value_text(const char *v, char *buf, size_t len)
{
	esc_quote(v, true, buf, len);
	return buf;
}

/*
 * A bare name that several sections hold: name the sections to write it with, or, when
 * none of them may be swept, say so (the advice "write it as section.iterations" only
 * led to "may not be swept"). Returns true when name is such a key, with err set.
 */
static bool matrix_ambiguous(const char *name, char *err, size_t errlen)
{
	char can[160] = "", cannot[160] = "";
	size_t i;

	for (i = 0; i < cfg_key_count(); i++) {
		const struct cfg_key *k = cfg_key_at(i);
		char *list = k->sweepable ? can : cannot;

		if (strcmp(k->name, name) == 0)
			snprintf(list + strlen(list), sizeof(can) - strlen(list), "%s%s.%s",
				 *list ? ", " : "", k->section, k->name);
	}
	if (!*can && !*cannot)
		return false;
	if (!*can)
		snprintf(err, errlen, "'%s' may not be swept (%s: set it in its section)", name,
			 cannot);
	else
		snprintf(err, errlen, "ambiguous key '%s' (write it as %s%s%s%s)", name, can,
			 *cannot ? "; " : "", cannot, *cannot ? " may not be swept" : "");
	return true;
}

static const struct cfg_key *matrix_key(const char *name, char *err, size_t errlen)
{
	const struct cfg_key *k = cfg_key_find_dotted(name);

	if (!k) {
		const struct cfg_key *s;
		const char *dot = strchr(name, '.');

		if (!dot && !cfg_key_find(NULL, name) && matrix_ambiguous(name, err, errlen))
			return NULL;
		s = cfg_key_suggest(NULL, dot ? dot + 1 : name);
		if (s)
			snprintf(err, errlen, "unknown key '%s' (did you mean '%s.%s'?)", name,
				 s->section, s->name);
		else
			snprintf(err, errlen, "unknown key '%s' (see 'gradsync keys')", name);
		return NULL;
	}
	return k;
}

int matrix_axis_add(struct experiment *exp, const char *name, const char *value, const char *file,
		    int line, char *err, size_t errlen)
{
	const struct cfg_key *k = matrix_key(name, err, errlen);
	struct exp_axis *ax;
	char *copy, *items[EXP_MAX_VALUES + 1];
	size_t nitems, t;
	int i, ret = 0;

	if (!k)
		return -EINVAL;
	if (!k->sweepable) {
		snprintf(err, errlen, "%s.%s may not be swept (set it in [%s] instead)", k->section,
			 k->name, k->section);
		return -EINVAL;
	}
	for (i = 0; i < exp->naxes; i++)
		if (exp->axes[i].key == k) {
			snprintf(err, errlen, "duplicate key (first set at line %d)", exp->axes[i].line);
			return -EINVAL;
		}
	if (exp->naxes >= EXP_MAX_AXES) {
		snprintf(err, errlen, "too many axes (at most %d)", EXP_MAX_AXES);
		return -E2BIG;
	}
	ax = &exp->axes[exp->naxes];
	memset(ax, 0, sizeof(*ax));
	ax->key = k;
	ax->line = line;
	snprintf(ax->file, sizeof(ax->file), "%s", file);
	if (!*value) {
		snprintf(err, errlen, "empty list (expected v1, v2, ...)");
		return -EINVAL;
	}
	copy = strdup(value);
	if (!copy)
		return -ENOMEM;
	nitems = esc_split(copy, ',', items, ARRAY_SIZE(items));
	for (t = 0; t < nitems; t++) {
		/* the loop stops at EXP_MAX_VALUES, before an item past items[] */
		char e[512], *tok = items[t];

		esc_unescape(tok);
		if (!*tok) {
			snprintf(err, errlen, "empty value in list (expected v1, v2, ...)");
			ret = -EINVAL;
			break;
		}
		if (ax->nvalues >= EXP_MAX_VALUES) {
			snprintf(err, errlen, "too many values (at most %d)", EXP_MAX_VALUES);
			ret = -E2BIG;
			break;
		}
		if (canonical_value(k, tok, ax->values[ax->nvalues], EXP_VALUE_MAX, e, sizeof(e))) {
			/* "bind = cpus:0,2, cpus:1,3" reads four values: say how to write one */
			snprintf(err, errlen, "%s%s", e, nitems > 1 && k->type == CFG_STRING ?
				 " (a ',' separates values: write $, for a comma inside one)" : "");
			ret = -EINVAL;
			break;
		}
		for (i = 0; i < ax->nvalues; i++)
			if (strcmp(ax->values[i], ax->values[ax->nvalues]) == 0) {
				snprintf(err, errlen, "value '%s' listed twice", tok);
				ret = -EINVAL;
			}
		if (ret)
			break;
		ax->nvalues++;
	}
	free(copy);
	if (!ret && !ax->nvalues) {
		snprintf(err, errlen, "empty list (expected at least one value)");
		ret = -EINVAL;
	}
	if (!ret)
		exp->naxes++;
	return ret;
}

int matrix_cond_parse(const char *text, struct exp_cond *cond, const char *file, int line,
		      char *err, size_t errlen)
{
	char *copy = strdup(text), *items[EXP_MAX_AXES + 1];
	size_t nitems, t;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	memset(cond, 0, sizeof(*cond));
	nitems = esc_split(copy, ',', items, ARRAY_SIZE(items));
	for (t = 0; t < nitems; t++) {
		char *tok = items[t], *eq = strchr(tok, '='), e[512];
		const struct cfg_key *k;

		if (!eq) {
			snprintf(err, errlen, "'%s' is not key=value (expected e.g. transport=tcp%s)",
				 tok, t ? "; a ',' separates terms: write $, for a comma in a value" : "");
			ret = -EINVAL;
			break;
		}
		*eq = '\0';
		esc_unescape(str_trim(tok));
		esc_unescape(str_trim(eq + 1));
		k = matrix_key(tok, err, errlen);
		if (!k) {
			ret = -EINVAL;
			break;
		}
		if (cond->n >= EXP_MAX_AXES) {
			snprintf(err, errlen, "too many terms (at most %d)", EXP_MAX_AXES);
			ret = -E2BIG;
			break;
		}
		if (canonical_value(k, eq + 1, cond->value[cond->n], EXP_VALUE_MAX, e, sizeof(e))) {
			snprintf(err, errlen, "%s: %s", tok, e);
			ret = -EINVAL;
			break;
		}
		cond->key[cond->n++] = k;
	}
	free(copy);
	if (!ret && !cond->n) {
		snprintf(err, errlen, "empty condition (expected key=value[,key=value])");
		ret = -EINVAL;
	}
	return ret;
}

/*
 * Why no case matches the baseline: a term whose value is not on its axis (or, for a key
 * not swept, not the value every case has), else the combination is excluded.
 */
static void baseline_why(const struct experiment *exp, char *buf, size_t len)
{
	const struct exp_cond *b = &exp->baseline;
	char label[128], v[EXP_VALUE_MAX], q[2 * EXP_VALUE_MAX];

	for (int i = 0; i < b->n; i++) {
		const struct exp_axis *ax = NULL;
		size_t off = 0;
		int j;

		for (j = 0; j < exp->naxes && !ax; j++)
			if (exp->axes[j].key == b->key[i])
				ax = &exp->axes[j];
		experiment_key_label(b->key[i], label, sizeof(label));
		if (!ax) {
			cfg_value_format(&exp->base, b->key[i], v, sizeof(v));
			if (strcmp(v, b->value[i])) {
				snprintf(buf, len, "%s is not swept, and every case has %s=%s", label,
					 label, v);
				return;
			}
			continue;
		}
		for (j = 0; j < ax->nvalues && strcmp(ax->values[j], b->value[i]); j++)
			;
		if (j < ax->nvalues)
			continue;
		str_appendf(buf, len, &off, "%s=%s is not on its axis (", label,
			    experiment_value_text(b->value[i], q, sizeof(q)));
		for (j = 0; j < ax->nvalues; j++)
			str_appendf(buf, len, &off, "%s%s", j ? ", " : "",
				    experiment_value_text(ax->values[j], q, sizeof(q)));
		str_appendf(buf, len, &off, ")");
		return;
	}
	snprintf(buf, len, "the case it names is excluded");
}

static bool cond_matches(const struct exp_cond *cond, const struct cfg *c)
{
	char v[EXP_VALUE_MAX];
	int i;

	for (i = 0; i < cond->n; i++) {
		cfg_value_format(c, cond->key[i], v, sizeof(v));
		if (strcmp(v, cond->value[i]))
			return false;
	}
	return true;
}

/* Term i of a case name or a rule, "key=value" after a ',' but the first. */
static int term_append(char *buf, size_t len, size_t *n, int i, const struct cfg_key *k,
		       const char *v)
{
	char label[128], q[2 * EXP_VALUE_MAX];

	return str_appendf(buf, len, n, "%s%s=%s", i ? "," : "",
			   experiment_key_label(k, label, sizeof(label)),
			   experiment_value_text(v, q, sizeof(q)));
}

void experiment_cond_format(const struct exp_cond *cond, char *buf, size_t len)
{
	size_t n = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < cond->n; i++)
		if (term_append(buf, len, &n, i, cond->key[i], cond->value[i]))
			break;
}

int matrix_case_baseline(const struct experiment *exp, size_t n, size_t i)
{
	unsigned char want[EXP_MAX_AXES];
	size_t j;
	int a, t;

	if (!exp->has_baseline || i >= n)
		return -1;
	memcpy(want, exp->cases[i].value, sizeof(want));
	for (t = 0; t < exp->baseline.n; t++) {
		for (a = 0; a < exp->naxes; a++) {
			const struct exp_axis *ax = &exp->axes[a];
			int v;

			if (ax->key != exp->baseline.key[t])
				continue;
			for (v = 0; v < ax->nvalues && strcmp(ax->values[v], exp->baseline.value[t]); v++)
				;
			if (v == ax->nvalues)
				return -1; /* a value the axis lacks: no case has it */
			want[a] = (unsigned char)v;
		}
	}
	for (j = 0; j < n; j++)
		if (!memcmp(exp->cases[j].value, want, (size_t)exp->naxes))
			/* terms on keys that are no axis hold for every case or none (lint) */
			return cond_matches(&exp->baseline, &exp->cases[j].cfg) ? (int)j : -1;
	return -1;
}

static void case_name(const struct experiment *exp, const int *idx, char *buf, size_t len)
{
	size_t n = 0;
	int i;

	if (!exp->naxes) {
		snprintf(buf, len, "base");
		return;
	}
	buf[0] = '\0';
	for (i = 0; i < exp->naxes; i++)
		if (term_append(buf, len, &n, i, exp->axes[i].key, exp->axes[i].values[idx[i]]))
			break;
}

/*
 * What `run` would refuse when it builds the case's model (a bad custom layers string, a
 * seq_len past the model's positions, ...) is refused here, so `check` passes only what runs.
 * Consecutive cases with the same workload are checked once. The error names the line
 * that set the refused key ("FILE:LINE: workload.seq_len: ..."), else the model's line
 * (the key kept its default), and the case where the file has a matrix.
 */
static int case_check_workload(const struct experiment *exp, const struct exp_case *c,
			       const struct exp_case *prev, char *err, size_t errlen)
{
	const struct cfg_key *k = NULL;
	const char *key = NULL, *file;
	char e[512], cs[sizeof(c->name) + 16] = "";
	int ret, line;

	if (!workload_has_model(&c->cfg.workload))
		return 0;
	if (prev && !memcmp(&prev->cfg.workload, &c->cfg.workload, sizeof(c->cfg.workload)))
		return 0;
	ret = model_check(&c->cfg.workload, &key, e, sizeof(e));
	if (!ret)
		return 0;
	if (exp->naxes)
		snprintf(cs, sizeof(cs), " (case %s)", c->name);
	if (key)
		k = cfg_key_find("workload", key);
	if (!k || experiment_key_line(exp, k, &file, &line))
		k = cfg_key_find("workload", "model");
	if (k && !experiment_key_line(exp, k, &file, &line)) {
		snprintf(err, errlen, "%s:%d: %s.%s: %s%s", file, line, k->section, k->name, e,
			 cs);
		return ret;
	}
	snprintf(err, errlen, "%s: case %s: workload: %s", exp->path, c->name, e);
	return ret;
}

/*
 * [experiment] repeat = R runs the whole list R times in rounds (every case once, then
 * every case again), so a drift of the machine spreads over all cases instead of
 * favouring the ones that ran first; each repetition is a case of its own, named
 * "...,repeat=k", whose results are kept. Each case's speed-ups are against its baseline
 * in the same round (the machine of that moment); baseline_case stays the first round's.
 */
static int matrix_repeat(struct experiment *exp, char *err, size_t errlen)
{
	int reps = exp->base.experiment.repeat, line = 0;
	size_t n = exp->ncases, r, i;
	const char *file = exp->path;
	char where[PATH_MAX + 16];
	struct exp_case *all;

	if (reps <= 1)
		return 0;
	experiment_key_line(exp, cfg_key_find("experiment", "repeat"), &file, &line);
	snprintf(where, sizeof(where), line ? "%s:%d" : "%s", file, line);
	if (n * (size_t)reps > EXP_MAX_CASES) {
		snprintf(err, errlen, "%s: experiment.repeat: %zu cases x %d repetitions is more "
			 "than %d cases (reduce the axes or repeat)", where, n, reps,
			 EXP_MAX_CASES);
		return -E2BIG;
	}
	all = calloc(n * (size_t)reps, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (r = 0; r < (size_t)reps; r++) {
		for (i = 0; i < n; i++) {
			struct exp_case *c = &all[r * n + i];
			size_t len;

			*c = exp->cases[i];
			if (c->baseline >= 0)
				c->baseline += (int)(r * n);
			if (!exp->naxes)
				c->name[0] = '\0';
			len = strlen(c->name);
			if (str_appendf(c->name, sizeof(c->name), &len, "%srepeat=%zu",
					len ? "," : "", r + 1)) {
				snprintf(err, errlen, "%s: experiment.repeat: case name too long: %s",
					 where, exp->cases[i].name);
				free(all);
				return -ENAMETOOLONG;
			}
		}
	}
	free(exp->cases);
	exp->cases = all;
	exp->ncases = n * (size_t)reps;
	return 0;
}

const char *experiment_cond_file(const struct experiment *exp, const struct exp_cond *c)
{
	return c->file >= 0 && c->file < exp->nfiles ? exp->files[c->file] : exp->path;
}

int matrix_expand(struct experiment *exp, char *err, size_t errlen)
{
	int idx[EXP_MAX_AXES] = { 0 };
	size_t total = 1, n = 0, t;
	int i, ret;

	for (i = 0; i < exp->naxes; i++) {
		total *= exp->axes[i].nvalues;
		if (total > EXP_MAX_CASES) {
			snprintf(err, errlen, "%s:%d: matrix: more than %d cases (reduce the axes)",
				 exp->axes[i].file, exp->axes[i].line, EXP_MAX_CASES);
			return -E2BIG;
		}
	}
	exp->cases = calloc(total, sizeof(*exp->cases));
	if (!exp->cases)
		return -ENOMEM;
	for (t = 0; t < total; t++) {
		struct exp_case *c = &exp->cases[n];
		bool excluded = false;
		int j;

		c->cfg = exp->base;
		c->baseline = -1;
		for (i = 0; i < exp->naxes; i++) {
			char e[512];

			c->value[i] = (unsigned char)idx[i];
			/* values were checked when the axis was read */
			if (cfg_value_set(&c->cfg, exp->axes[i].key, exp->axes[i].values[idx[i]], e,
					  sizeof(e))) {
				snprintf(err, errlen, "%s:%d: matrix: %s", exp->axes[i].file,
					 exp->axes[i].line, e);
				return -EINVAL;
			}
		}
		for (j = 0; j < exp->nexclude; j++) {
			if (cond_matches(&exp->exclude[j], &c->cfg)) {
				exp->exclude[j].matched++;
				excluded = true;
			}
		}
		if (!excluded) {
			case_name(exp, idx, c->name, sizeof(c->name));
			ret = case_check_workload(exp, c, n ? &exp->cases[n - 1] : NULL, err, errlen);
			if (ret)
				return ret;
			if (exp->has_baseline && exp->baseline_case < 0 &&
			    cond_matches(&exp->baseline, &c->cfg))
				exp->baseline_case = (int)n;
			n++;
		}
		/* odometer: the last axis turns fastest */
		for (i = exp->naxes - 1; i >= 0; i--) {
			if (++idx[i] < exp->axes[i].nvalues)
				break;
			idx[i] = 0;
		}
	}
	exp->ncases = n;
	if (!n && exp->nexclude) { /* only exclude rules can leave none: named, the first
				    * that excluded any, and how many did */
		int first = -1, nrules = 0;

		for (int r = 0; r < exp->nexclude; r++)
			if (exp->exclude[r].matched && nrules++ == 0)
				first = r;
		snprintf(err, errlen, "%s:%d: matrix.exclude: every case is excluded (by this rule%s)",
			 experiment_cond_file(exp, &exp->exclude[first]), exp->exclude[first].line,
			 nrules > 1 ? " and the others that match" : "");
		return -EINVAL;
	}
	if (exp->has_baseline && exp->baseline_case < 0) {
		char why[EXP_ERR_MAX / 2];

		baseline_why(exp, why, sizeof(why));
		snprintf(err, errlen, "%s:%d: matrix.baseline: no case matches the baseline: %s",
			 experiment_cond_file(exp, &exp->baseline), exp->baseline.line, why);
		return -EINVAL;
	}
	for (t = 0; t < n; t++)
		exp->cases[t].baseline = matrix_case_baseline(exp, n, t);
	return matrix_repeat(exp, err, errlen);
}

/* v as the parser reads it back (escape.h); item: one value of a [matrix] list or rule. */
static void write_value(FILE *out, const char *v, bool item)
{
	char q[2 * 8192 + 1];

	esc_quote(v, item, q, sizeof(q));
	fputs(q, out);
}

/*
 * "key = value" of k in c as the parser reads it back; a secret, and a key whose being
 * given changes what runs (bucket_cap: DDP's first bucket; batch: a trace's own) left
 * unset, are written as comments so a replay leaves them unset too.
 */
static void write_key(FILE *out, const struct cfg *c, const struct cfg_key *k)
{
	bool unset = k->set_offset && !*(const bool *)((const char *)c + k->set_offset);
	char v[8192];

	cfg_value_format(c, k, v, sizeof(v));
	if (!*v && k->type != CFG_STRING && k->type != CFG_LIST)
		return;
	fprintf(out, "%s%s = ", cfg_value_redacted(c, k) || unset ? "; " : "", k->name);
	write_value(out, v, false);
	fprintf(out, "%s\n", unset ? "  (default, left unset)" : "");
}

void experiment_write_case_ini(FILE *out, const struct experiment *exp, const struct exp_case *c)
{
	const char *cur = "";
	size_t i;

	fprintf(out, "; case %s of %s (every key resolved)\n", c->name, exp->path);
	for (i = 0; i < cfg_key_count(); i++) {
		const struct cfg_key *k = cfg_key_at(i);

		if (strcmp(cur, k->section)) {
			cur = k->section;
			fprintf(out, "\n[%s]\n", cur);
		}
		write_key(out, &c->cfg, k);
	}
}

void experiment_write_resolved(FILE *out, const struct experiment *exp)
{
	const char *cur = "";
	size_t i;
	int a, j;

	fprintf(out, "; %s resolved: every key, then the matrix\n", exp->path);
	for (i = 0; i < cfg_key_count(); i++) {
		const struct cfg_key *k = cfg_key_at(i);

		if (strcmp(cur, k->section)) {
			cur = k->section;
			fprintf(out, "\n[%s]\n", cur);
		}
		write_key(out, &exp->base, k);
	}
	if (!exp->naxes)
		return;
	fprintf(out, "\n[matrix]\n");
	for (a = 0; a < exp->naxes; a++) {
		fprintf(out, "%s.%s = ", exp->axes[a].key->section, exp->axes[a].key->name);
		for (j = 0; j < exp->axes[a].nvalues; j++) {
			fputs(j ? ", " : "", out);
			write_value(out, exp->axes[a].values[j], true);
		}
		fprintf(out, "\n");
	}
	for (a = 0; a < exp->nexclude + (exp->has_baseline ? 1 : 0); a++) {
		const struct exp_cond *c = a < exp->nexclude ? &exp->exclude[a] : &exp->baseline;

		fprintf(out, "%s = ", a < exp->nexclude ? "exclude" : "baseline");
		for (j = 0; j < c->n; j++) {
			fprintf(out, "%s%s.%s=", j ? "," : "", c->key[j]->section, c->key[j]->name);
			write_value(out, c->value[j], true);
		}
		fprintf(out, "\n");
	}
}
