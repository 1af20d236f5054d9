/* Loading report.json documents into a comparison set, and writing every requested format. */
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/report.h"
#include "report/jget.h"
#include "util/common.h"
#include "util/fsbound.h"
#include "util/log.h"
#include "util/strutil.h"

/* Run name from a path: "results/quick-2026/report.json" -> "quick-2026", "a/x.json" -> "x". */
static void run_name_from_path(const char *path, char *name, size_t len)
{
	char tmp[512];
	char *base, *slash;
	size_t n;

	snprintf(tmp, sizeof(tmp), "%s", path);
	n = strlen(tmp);
	while (n > 1 && tmp[n - 1] == '/')
		tmp[--n] = '\0';
	slash = strrchr(tmp, '/');
	base = slash ? slash + 1 : tmp;
	if (strcmp(base, "report.json") == 0 && slash) {
		/* "DIR//report.json" (from a DIR/ argument): drop every slash before it */
		while (slash > tmp && slash[-1] == '/')
			slash--;
		*slash = '\0';
		slash = strrchr(tmp, '/');
		base = slash ? slash + 1 : tmp;
	}
	n = strlen(base);
	if (n > 5 && strcmp(base + n - 5, ".json") == 0)
		base[n - 5] = '\0';
	snprintf(name, len, "%s", base);
}

/* A number a table prints: finite (or null where absent is allowed), within [lo, hi]. */
static bool num_ok(const json_t *v, bool null_ok, double lo, double hi)
{
	double x;

	if (json_is_null(v) || !v)
		return null_ok;
	if (!json_is_number(v))
		return false;
	x = json_number_value(v);
	return isfinite(x) && x >= lo && x <= hi;
}

/*
 * The members of a result row the tables and checks print, where present, checked once
 * at load: a hand-edited size of -5 printed as 18446744073709551611B, 1e308 as 0B, a
 * busbw of "fast" as '-' (and --min-busbw compared nan), with exit 0. Errors name the
 * member ("cases[1].collective[3].size"); 0 or -EINVAL.
 */
static int rows_valid(const char *name, const json_t *root)
{
	static const char *const nums[] = { "busbw_GBps", "algbw_GBps", "time_us.avg",
					    "time_us.p50", "time_us.p99" };
	const json_t *c, *r;
	size_t i, j, k;

	json_array_foreach(json_object_get(root, "cases"), i, c) {
		if (!json_is_object(c)) {
			log_err(LOG_REPORT, "report %s: cases[%zu]: expected an object", name, i);
			return -EINVAL;
		}
		json_array_foreach(json_object_get(c, "collective"), j, r) {
			const char *bad = NULL;

			/* absent members are a sparse document's (shown '-'); present, they
			 * must be what a run writes */
			if (jget(r, "op") && !json_is_string(jget(r, "op")))
				bad = "op";
			else if (jget(r, "dtype") && !json_is_string(jget(r, "dtype")))
				bad = "dtype";
			else if (jget(r, "size") && (!json_is_integer(jget(r, "size")) ||
						    json_integer_value(jget(r, "size")) < 0))
				bad = "size";
			else if (!num_ok(jget(r, "wrong"), true, 0, 1e18))
				bad = "wrong";
			for (k = 0; !bad && k < ARRAY_SIZE(nums); k++)
				if (!num_ok(jget(r, nums[k]), true, 0, 1e15))
					bad = nums[k];
			if (bad) {
				log_err(LOG_REPORT, "report %s: cases[%zu].collective[%zu].%s: not a "
					"value a run writes (%s)", name, i, j, bad,
					!strcmp(bad, "op") || !strcmp(bad, "dtype") ? "a string"
					: !strcmp(bad, "size") ? "an integer number of bytes >= 0"
							     : "a finite number >= 0, or null");
				return -EINVAL;
			}
		}
	}
	return 0;
}

int report_set_add_json(struct report_set *s, const char *name, json_t *root)
{
	struct report_run *runs;
	const char *schema = jget_str(root, "schema");

	if (strcmp(schema, REPORT_SCHEMA) != 0) {
		log_err(LOG_REPORT, "report %s: schema \"%s\", expected \"%s\"", name, schema,
			REPORT_SCHEMA);
		return -EINVAL;
	}
	if (!json_is_array(json_object_get(root, "cases"))) {
		log_err(LOG_REPORT, "report %s: no \"cases\" array", name);
		return -EINVAL;
	}
	if (rows_valid(name, root))
		return -EINVAL;
	runs = realloc(s->runs, (size_t)(s->nruns + 1) * sizeof(*runs));
	if (!runs)
		return -ENOMEM;
	s->runs = runs;
	memset(&runs[s->nruns], 0, sizeof(runs[0]));
	snprintf(runs[s->nruns].name, sizeof(runs[0].name), "%s", name);
	runs[s->nruns].root = json_incref(root);
	s->nruns++;
	return 0;
}

int report_set_add_path(struct report_set *s, const char *path, uint64_t timeout_ns)
{
	char file[PATH_MAX + 16], name[128], why[PATH_MAX + 160];
	struct fsb_read r = { .path = file, .max = REPORT_MAX_FILE };
	json_error_t jerr;
	struct stat st;
	json_t *root;
	int ret;

	ret = fsb_stat(path, &st, timeout_ns, why, sizeof(why));
	if (ret) {
		log_err(LOG_REPORT, "stat %s: %s", path, why);
		return fsb_gave_up(ret) ? ret : -ENOENT;
	}
	snprintf(file, sizeof(file), "%s%s", path, S_ISDIR(st.st_mode) ? "/report.json" : "");
	/* a FIFO would block and /dev/zero never end: regular files of a sane size only
	 * (fsb_read), and a file system that does not answer within the bound */
	ret = fsb_read(&r, timeout_ns, why, sizeof(why));
	if (ret == -ENOENT && S_ISDIR(st.st_mode)) {
		/* killed or unwritable: what cases/ holds */
		ret = report_partial_run(path, timeout_ns, &root);
		if (ret == -ENOENT)
			log_err(LOG_REPORT, "%s: no report.json and no readable cases/", path);
		if (ret)
			return ret;
	} else if (ret) {
		log_err(LOG_REPORT, "%s: cannot read: %s", file, why);
		return ret == -ENOENT || fsb_gave_up(ret) ? ret : -EINVAL;
	} else {
		root = json_loadb(r.data, r.len, 0, &jerr);
		free(r.data);
	}
	if (!root) {
		log_err(LOG_REPORT, "json_load_file %s: line %d: %s", file, jerr.line, jerr.text);
		return -EINVAL;
	}
	run_name_from_path(file, name, sizeof(name));
	ret = report_set_add_json(s, name, root);
	json_decref(root);
	if (!ret)
		snprintf(s->runs[s->nruns - 1].path, sizeof(s->runs[0].path), "%s", file);
	return ret;
}

static const char *case_orig_name(const struct report_case *c)
{
	return jget_str(c->json, "name");
}

int report_set_find(const struct report_set *s, const char *name)
{
	int i;

	for (i = 0; i < s->ncases; i++)
		if (strcmp(s->cases[i].name, name) == 0)
			return i;
	for (i = 0; i < s->ncases; i++)
		if (strcmp(case_orig_name(&s->cases[i]), name) == 0)
			return i;
	return -1;
}

/* The case named name (its original name) in run r, -1 if none or name is "". */
static int case_in_run(const struct report_set *s, int r, const char *name)
{
	int i;

	for (i = 0; *name && i < s->ncases; i++)
		if (s->cases[i].run == r && strcmp(case_orig_name(&s->cases[i]), name) == 0)
			return i;
	return -1;
}

int report_set_finish(struct report_set *s, const char *baseline)
{
	int total = 0, r, i, j, k = 0;

	for (r = 0; r < s->nruns; r++)
		total += (int)json_array_size(json_object_get(s->runs[r].root, "cases"));
	free(s->cases);
	s->cases = calloc((size_t)(total ? total : 1), sizeof(*s->cases));
	if (!s->cases)
		return -ENOMEM;
	for (r = 0; r < s->nruns; r++) {
		json_t *cases = json_object_get(s->runs[r].root, "cases");
		size_t idx;
		json_t *c;

		json_array_foreach(cases, idx, c) {
			s->cases[k].run = r;
			s->cases[k].json = c;
			snprintf(s->cases[k].name, sizeof(s->cases[k].name), "%s",
				 jget_str(c, "name"));
			k++;
		}
	}
	s->ncases = k;
	/* Prefix names that appear in more than one run, so every case stays addressable. */
	for (i = 0; i < s->ncases; i++) {
		const char *name = case_orig_name(&s->cases[i]);
		bool clash = false;

		for (j = 0; j < s->ncases && !clash; j++)
			clash = j != i && s->cases[j].run != s->cases[i].run &&
				strcmp(case_orig_name(&s->cases[j]), name) == 0;
		if (clash)
			snprintf(s->cases[i].name, sizeof(s->cases[i].name), "%s/%s",
				 s->runs[s->cases[i].run].name, case_orig_name(&s->cases[i]));
	}
	s->baseline = -1;
	s->rule = NULL;
	if (baseline && *baseline) {
		s->baseline = report_set_find(s, baseline);
		if (s->baseline < 0) {
			log_err(LOG_REPORT, "--baseline %s: no such case", baseline);
			return -ENOENT;
		}
	} else if (s->nruns) {
		const char *b = jget_str(s->runs[0].root, "baseline");

		for (i = 0; *b && i < s->ncases && s->baseline < 0; i++)
			if (s->cases[i].run == 0 && strcmp(case_orig_name(&s->cases[i]), b) == 0)
				s->baseline = i;
	}
	for (i = 0; i < s->ncases; i++) {
		const json_t *rule = json_object_get(s->runs[s->cases[i].run].root, "baseline_rule");

		s->cases[i].ref = s->baseline;
		if (baseline && *baseline)
			continue;
		if (!json_is_string(rule))
			continue;
		s->rule = json_string_value(rule);
		s->cases[i].ref = case_in_run(s, s->cases[i].run, jget_str(s->cases[i].json, "baseline"));
	}
	if (s->rule) /* some case's baseline is its own: say the rule, not one case */
		s->baseline = -1;
	return 0;
}

const json_t *report_case_ref(const struct report_set *s, int i)
{
	int r = s->cases[i].ref;

	return r >= 0 ? s->cases[r].json : NULL;
}

void report_baseline_text(const struct report_set *s, char *buf, size_t len)
{
	if (s->rule)
		snprintf(buf, len, "each case's baseline is the case with %s and the case's own "
			 "values on the other axes", s->rule);
	else if (s->baseline >= 0)
		snprintf(buf, len, "the baseline is %s", s->cases[s->baseline].name);
	else
		snprintf(buf, len, "no baseline case");
}

void report_set_free(struct report_set *s)
{
	int r;

	for (r = 0; r < s->nruns; r++)
		json_decref(s->runs[r].root);
	free(s->runs);
	free(s->cases);
	memset(s, 0, sizeof(*s));
	s->baseline = -1;
}

bool report_has_format(const char *formats, const char *fmt)
{
	size_t n = strlen(fmt);
	const char *p = formats;

	while (p && *p) {
		size_t w;

		p += strspn(p, ", \t");
		w = strcspn(p, ", \t");
		if (w == n && strncmp(p, fmt, n) == 0)
			return true;
		p += w;
	}
	return false;
}

typedef int (*report_writer_fn)(FILE *f, const struct report_set *s, const struct report_opts *o);

static const struct {
	const char *format;
	const char *file;
	report_writer_fn write;
} report_files[] = {
	{ "md", "report.md", report_write_md },
	{ "csv", "report.csv", report_write_csv },
	{ "html", "report.html", report_write_html },
};

/*
 * The text of one format, made in memory, then written whole within [report]
 * write_timeout (util/fsbound.h: dir/file.tmp, then a rename, so a reader never sees half
 * a report); with keep, link() instead of rename() so an existing file is never
 * replaced (EEXIST).
 */
static int write_one(const char *dir, const char *file, report_writer_fn fn,
		     const struct report_set *s, const struct report_opts *o, bool keep)
{
	char path[PATH_MAX], why[PATH_MAX + 160];
	struct fsb_write w = { .path = path, .no_replace = keep };
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = open_memstream(&text, &len);
	if (!f) {
		ret = -errno;
		log_err(LOG_REPORT, "write %s: %s", path, strerror(errno));
		return ret;
	}
	ret = fn(f, s, o);
	if (fclose(f) && !ret)
		ret = -ENOMEM; /* a stream in memory fails for want of it only */
	w.data = text;
	w.len = len;
	if (ret)
		snprintf(why, sizeof(why), "%s", strerror(-ret));
	else
		ret = fsb_write(&w, o->write_timeout_ns, why, sizeof(why));
	if (ret == -EEXIST && keep)
		log_err(LOG_REPORT, "%s exists: not overwritten (choose another --out)", path);
	else if (ret)
		log_err(LOG_REPORT, "write %s: %s", path, why);
	free(text);
	return ret;
}

bool report_format_writable(const char *fmt)
{
	if (!strcmp(fmt, "table"))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(report_files); i++)
		if (!strcmp(fmt, report_files[i].format))
			return true;
	return false;
}

void report_format_list(char *buf, size_t len, const char *sep)
{
	size_t off = 0;

	str_appendf(buf, len, &off, "table");
	for (size_t i = 0; i < ARRAY_SIZE(report_files); i++)
		str_appendf(buf, len, &off, "%s%s", sep, report_files[i].format);
}

bool report_formats_write_files(const char *formats)
{
	char names[128];

	report_files_named(formats, names, sizeof(names));
	return names[0] != '\0';
}

void report_files_named(const char *formats, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(report_files); i++)
		if (report_has_format(formats, report_files[i].format))
			str_appendf(buf, len, &off, "%s%s", off ? ", " : "", report_files[i].file);
}

int report_files_existing(const char *dir, const struct report_opts *o, char *buf, size_t len)
{
	char path[PATH_MAX], why[PATH_MAX + 160];
	size_t i, off = 0;
	struct stat st;
	int n = 0, ret;

	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(report_files); i++) {
		if (!report_has_format(o->formats, report_files[i].format))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, report_files[i].file);
		ret = fsb_stat(path, &st, o->write_timeout_ns, why, sizeof(why));
		if (fsb_gave_up(ret)) {
			snprintf(buf, len, "%s", why);
			return ret;
		}
		if (ret)
			continue;
		str_appendf(buf, len, &off, "%s%s", n ? ", " : "", path);
		n++;
	}
	return n;
}

int report_write_set(const char *dir, const struct report_set *s, const struct report_opts *o,
		     bool keep)
{
	int first = 0, ret;
	size_t i;

	if (report_has_format(o->formats, "table")) {
		ret = report_write_table(stdout, s, o);
		if (ret && !first)
			first = ret;
	}
	for (i = 0; i < ARRAY_SIZE(report_files); i++) {
		if (!report_has_format(o->formats, report_files[i].format))
			continue;
		ret = write_one(dir, report_files[i].file, report_files[i].write, s, o, keep);
		if (ret && !first)
			first = ret;
	}
	return first;
}

int report_write_all(const char *dir, json_t *report, const struct report_opts *o)
{
	struct report_set s = { .baseline = -1 };
	char name[128];
	int ret;

	run_name_from_path(dir, name, sizeof(name));
	ret = report_set_add_json(&s, name, report);
	if (!ret)
		ret = report_set_finish(&s, NULL);
	if (!ret)
		ret = report_write_set(dir, &s, o, false);
	report_set_free(&s);
	return ret;
}
