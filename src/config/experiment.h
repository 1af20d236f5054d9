/*
 * A loaded experiment: the base values from the INI file (and its includes), the
 * [matrix] axes, exclusions and baseline, and the expanded list of cases. Read-only
 * once experiment_load() returns.
 */
#ifndef GS_CONFIG_EXPERIMENT_H
#define GS_CONFIG_EXPERIMENT_H

#include <stdio.h>
#include <limits.h>

#include "config/keys.h"

#define EXP_MAX_AXES 16
#define EXP_MAX_VALUES 64
#define EXP_MAX_CONDS 64
#define EXP_MAX_CASES 4096
#define EXP_VALUE_MAX 128
#define EXP_ERR_MAX 1024
#define EXP_MAX_FILES 256   /* files one experiment reads, includes counted */
#define EXP_MAX_SET 1024    /* keys set outside [matrix] whose line is kept */

struct exp_axis {
	const struct cfg_key *key;
	int nvalues;
	char values[EXP_MAX_VALUES][EXP_VALUE_MAX]; /* canonical text of each value */
	char file[PATH_MAX];
	int line;
};

/* A conjunction "key=value,key=value" (baseline, one exclude rule). */
struct exp_cond {
	int file, line;       /* where it was written (index into experiment.files) */
	int matched;          /* exclude: combinations of the axes it dropped */
	int n;
	const struct cfg_key *key[EXP_MAX_AXES];
	char value[EXP_MAX_AXES][EXP_VALUE_MAX];     /* canonical text */
};

struct exp_case {
	char name[512];       /* "transport=ib,gdr_level=PIX", or "base" without a matrix */
	struct cfg cfg;
	unsigned char value[EXP_MAX_AXES]; /* its value of each axis (index into values) */
	/* The case its speed-ups are measured against (index into cases; itself when it is
	 * a baseline case), -1 = none: see matrix_case_baseline. */
	int baseline;
};

/* Where the file set a key outside [matrix]: the last setter, as the value is its. */
struct exp_set {
	const struct cfg_key *key;
	int file;             /* index into experiment.files */
	int line;
};

struct experiment {
	char path[PATH_MAX];
	struct cfg base;
	/* the files read, as the user named them (includes joined to their includer's
	 * directory), and where each key of base was set: a check that refuses a value
	 * after loading (a case's model) still names FILE:LINE and the key */
	int nfiles;
	char *files[EXP_MAX_FILES];
	size_t nset;
	struct exp_set set[EXP_MAX_SET];
	int naxes;
	struct exp_axis axes[EXP_MAX_AXES];
	int nexclude;
	struct exp_cond exclude[EXP_MAX_CONDS];
	bool has_baseline;
	struct exp_cond baseline;
	int baseline_case;    /* the first case matching the baseline, -1 = none */
	size_t ncases;
	struct exp_case *cases;
};

/*
 * Load path (following includes, expanding ${ENV}), validate every value and expand
 * the matrix. Returns 0, or -errno with one line in err:
 * "FILE:LINE: section.key: what is wrong (expected ...)".
 */
int experiment_load(const char *path, struct experiment *exp, char *err, size_t errlen);
void experiment_free(struct experiment *exp);
/*
 * What the verbs call: allocate and load path. NULL on failure, with the one-line error
 * printed to stderr (exit code 2 for the caller). experiment_delete frees it all.
 */
struct experiment *experiment_open(const char *path);
void experiment_delete(struct experiment *exp);

/* Fully resolved INI text of one case (every key, defaults included). */
void experiment_write_case_ini(FILE *out, const struct experiment *exp, const struct exp_case *c);
/* The whole experiment resolved (base values and matrix): loading it reproduces exp. */
void experiment_write_resolved(FILE *out, const struct experiment *exp);
/*
 * "key=value,key=value" of a condition (the baseline's, an exclude rule's), keys labelled
 * as in case names. The text the report shows for the baseline rule.
 */
void experiment_cond_format(const struct exp_cond *cond, char *buf, size_t len);
/*
 * A value of an axis or a rule as a [matrix] line writes it ($, for a comma inside it,
 * escape.h): case names, rules and messages show values so, and a case name pastes into
 * a baseline or exclude rule as is. Returns buf (2 * EXP_VALUE_MAX holds any value).
 */
const char *experiment_value_text(const char *v, char *buf, size_t len);
/* Name used for key k in case names and the matrix: bare when unique, else section.key. */
const char *experiment_key_label(const struct cfg_key *k, char *buf, size_t len);
/* The file a baseline / exclude rule was written in (exp->path when unknown). */
const char *experiment_cond_file(const struct experiment *exp, const struct exp_cond *c);
/*
 * The line that gave the cases their value of key k: the [matrix] axis that sweeps k,
 * else the setting in the files that holds its value (an includer's over its include's,
 * a later include's over an earlier one's). 0 with *file and *line, or -ENOENT where k
 * kept its default.
 */
int experiment_key_line(const struct experiment *exp, const struct cfg_key *k,
			const char **file, int *line);
bool experiment_key_swept(const struct experiment *exp, const struct cfg_key *k);

/* Internal to config/: matrix expansion after the files are read. */
int matrix_axis_add(struct experiment *exp, const char *name, const char *value, const char *file,
		    int line, char *err, size_t errlen);
int matrix_cond_parse(const char *text, struct exp_cond *cond, const char *file, int line,
		      char *err, size_t errlen);
int matrix_expand(struct experiment *exp, char *err, size_t errlen);
/*
 * The case whose speed-up reference case i is, among cases [0, n): the one with the
 * baseline's values on the axes the baseline names and case i's own values on every other
 * axis, so `baseline = transport=tcp` over transport x model compares each model's shm case
 * with that model's tcp case; a baseline naming every axis is one case for all. i itself
 * when case i is a baseline case; -1 without a baseline or when that case is excluded.
 * Pure (config_test.c).
 */
int matrix_case_baseline(const struct experiment *exp, size_t n, size_t i);

#endif
