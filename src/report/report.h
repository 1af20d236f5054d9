/*
 * [report] options and the comparison report: one or more report.json documents
 * (schema "gradsync-report/1") merged into a set of cases, written as a terminal
 * table, Markdown, CSV and a self-contained HTML page.
 */
#ifndef GS_REPORT_REPORT_H
#define GS_REPORT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#define REPORT_MAX_PROJECT 16
/* report.json of the largest matrix is a few MiB; far past that it is not a report */
#define REPORT_MAX_FILE (256ull << 20)
#define REPORT_SCHEMA "gradsync-report/1"

/* [report] section, resolved by config/. */
struct report_opts {
	char formats[128];        /* list of table, json, csv, md, html */
	char min_busbw[32];       /* "20GB/s" or "80%" of the detected bound, "" = no threshold */
	int project_ranks[REPORT_MAX_PROJECT];
	int nproject_ranks;
	uint64_t write_timeout_ns; /* bound of each file written (util/fsbound.h) */
};

/* One loaded report.json. */
struct report_run {
	char name[128];           /* run directory name, or the file name without .json */
	char path[640];
	json_t *root;             /* owned reference */
};

/* One case of the comparison; json is borrowed from its run's document. */
struct report_case {
	char name[192];           /* case name, prefixed "run/" when names clash across runs */
	int run;                  /* index into report_set.runs */
	json_t *json;
	int ref;                  /* the case its speed-ups are against (itself for a
				   * baseline case), -1 = none */
};

/* Runs and their merged cases. Zero-initialise, add runs, then report_set_finish(). */
struct report_set {
	struct report_run *runs;
	int nruns;
	struct report_case *cases;
	int ncases;
	int baseline;             /* the one baseline case of every case, -1 = none or per case */
	const char *rule;         /* per case: the runs' baseline rule ("transport=tcp"), borrowed */
};

/*
 * Add PATH: a run directory holding report.json, or a report.json file; a run
 * directory without report.json is read with report_partial_run. Every stat, listing
 * and read within timeout_ns (util/fsbound.h). Returns 0, -ENOENT / -EINVAL
 * (unreadable, not JSON, wrong schema) or -ETIMEDOUT (its file system does not answer)
 * with one logged line.
 */
int report_set_add_path(struct report_set *s, const char *path, uint64_t timeout_ns);
/*
 * A report rebuilt from DIR/cases/NNNN.json and DIR/status for a run that never wrote
 * report.json (killed, or the write failed), each read within timeout_ns: status
 * "interrupted", with a warning naming the directory. 0 with *out the document,
 * -ENOENT when DIR has no cases/ (unsaid), -ETIMEDOUT (said) or -ENOMEM.
 */
int report_partial_run(const char *dir, uint64_t timeout_ns, json_t **out);
/* Add an in-memory document under run name NAME; takes a new reference to root. */
int report_set_add_json(struct report_set *s, const char *name, json_t *root);
/*
 * Name the cases (prefixing clashing names with their run) and pick each case's baseline
 * (report_case.ref): `baseline` when non-NULL/non-empty (a case name, with or without run
 * prefix) for every case; else per case what its run says: the case's own "baseline"
 * under the run's "baseline_rule" (the reference with the rule's values and the case's
 * own on the other axes), or the first run's "baseline" case for runs without a rule
 * (reports before the rule, fixtures); else none. -ENOENT when `baseline` names no case.
 */
int report_set_finish(struct report_set *s, const char *baseline);
void report_set_free(struct report_set *s);
/* The document of case i's baseline (its own for a baseline case), NULL when it has none. */
const json_t *report_case_ref(const struct report_set *s, int i);
/* What the speed-ups are measured against (the baseline case or the rule), one clause. */
void report_baseline_text(const struct report_set *s, char *buf, size_t len);
/* Case index by (display or original) name, -1 if none. */
int report_set_find(const struct report_set *s, const char *name);

/* Writers. Output is deterministic for a given set and options (golden-tested). */
int report_write_table(FILE *f, const struct report_set *s, const struct report_opts *o);
int report_write_md(FILE *f, const struct report_set *s, const struct report_opts *o);
int report_write_csv(FILE *f, const struct report_set *s, const struct report_opts *o);
int report_write_html(FILE *f, const struct report_set *s, const struct report_opts *o);

/* True when the comma/space separated list `formats` names `fmt`. */
bool report_has_format(const char *formats, const char *fmt);

/* Is fmt one that report_write_set writes (table, or a file: md, csv, html)? */
bool report_format_writable(const char *fmt);
/* The formats report_write_set writes, joined by sep: "table,md,csv,html". */
void report_format_list(char *buf, size_t len, const char *sep);
/* Does the list `formats` name a format that writes a file (md, csv, html)? */
bool report_formats_write_files(const char *formats);
/* The files the list `formats` writes, "report.md, report.html" ("" for none). */
void report_files_named(const char *formats, char *buf, size_t len);

/*
 * Write the formats of o->formats for set s into dir: md -> report.md,
 * csv -> report.csv, html -> report.html, table -> stdout (json is the run's
 * own report.json and is not rewritten here). With keep, an existing file is left
 * alone and that format fails with -EEXIST. Returns 0 or the first -errno.
 */
int report_write_set(const char *dir, const struct report_set *s, const struct report_opts *o,
		     bool keep);
/* How many of the files o->formats would write already exist in dir; their paths,
 * comma separated, into buf. Each looked for within o->write_timeout_ns: -ETIMEDOUT
 * with buf saying which call did not return. */
int report_files_existing(const char *dir, const struct report_opts *o, char *buf, size_t len);
/* The same for one in-memory run document (what `gradsync run` calls at the end). */
int report_write_all(const char *dir, json_t *report, const struct report_opts *o);

/* A case that misses the [report] min_busbw threshold. */
struct report_failure {
	int case_idx;
	double busbw_GBps;        /* the first short size's busbw, or the workload's busbw */
	double need_GBps;         /* the threshold it was held to */
	uint64_t size;            /* the first size that fell short, 0 = none / workload */
	char why[256];
};

/*
 * Hold every case to min_busbw ("20GB/s" absolute, "80%" of the case's bound, either
 * optionally "@ 64MiB.." for a size range; util/threshold.h): each collective size
 * in the range on its own, else the workload's busbw.
 * Fills *fails (malloc'd, caller frees) and returns the number of failing cases,
 * or -EINVAL for an unparsable threshold. A failed case, or one without a bound
 * under a percentage threshold, fails too.
 */
int report_check_threshold(const struct report_set *s, const char *min_busbw,
			   struct report_failure **fails);

#endif
