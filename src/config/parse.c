/*
 * Reading experiment files with inih: our own bounded line reader (line and file size caps,
 * NUL and bare-CR checks), section checks, includes of regular files with cycle detection,
 * ${ENV} expansion, duplicate keys, and one-line errors that name FILE:LINE and section.key.
 */
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <unistd.h>
#include <ini.h>

#include "config/escape.h"
#include "config/experiment.h"
#include "util/common.h"
#include "util/fsbound.h"
#include "util/strutil.h"

/* Characters in one line, without its line ending. */
#define PARSE_MAX_LINE 4000
#define PARSE_MAX_DEPTH 16
/* An experiment file is a page of text; these stop /dev/zero-like inputs early. */
#define PARSE_MAX_FILE (1u << 20)
#define PARSE_MAX_TOTAL (16u << 20) /* all files of one experiment, includes counted */

/* One file being read; files form a stack through includes. */
struct parse_file {
	const char *path;           /* as the user named it, for messages */
	char real[PATH_MAX];        /* canonical, for cycle detection */
	FILE *f;
	int line;
	size_t bytes;               /* read so far from this file */
	char buf[PARSE_MAX_LINE + 1];
	struct parse_file *parent;
};

struct parse_state {
	struct experiment *exp;
	struct parse_file *cur;
	char *err;
	size_t errlen;
	int failed;                 /* first error recorded; everything after is ignored */
	size_t total_bytes;         /* read from every file so far */
	/*
	 * Canonical names of every file read (exp->files has them as named, at the same
	 * index), owned here: a key's setter (exp->set) must stay comparable after its
	 * include has been closed (its parse_file is gone by then).
	 */
	char *files[EXP_MAX_FILES];
	int nfiles;
	int cur_file;               /* index into files[] of st->cur */
	int parent[EXP_MAX_FILES];  /* index of each file's includer, -1 for the top file */
	/* per exp->set entry, the files (by index) whose own lines set it */
	unsigned char set_in[EXP_MAX_SET][EXP_MAX_FILES / 8];
	struct cfg scratch;         /* where a value that does not win is still checked */
};

static int parse_file_run(struct parse_state *st, const char *path, struct parse_file *parent);

GS_PRINTF(3, 4)
static void parse_fail(struct parse_state *st, const char *what, const char *fmt, ...)
{
	va_list ap;
	size_t n = 0;

	if (st->failed)
		return;
	st->failed = 1;
	str_appendf(st->err, st->errlen, &n, "%s:%d: %s%s", st->cur->path, st->cur->line,
		    what ? what : "", what ? ": " : "");
	va_start(ap, fmt);
	str_vappendf(st->err, st->errlen, &n, fmt, ap);
	va_end(ap);
}

/*
 * Check a "[section]" line as the reader sees it: inih says nothing about unknown sections
 * and silently drops what follows the ']' ("[experiment] name = x" would lose the key).
 */
static void check_section_line(struct parse_state *st, const char *line)
{
	const char *p = line, *end;
	char name[128];
	const char *sug;

	while (isspace((unsigned char)*p))
		p++;
	if (*p != '[')
		return;
	end = strchr(p, ']');
	if (!end) {
		parse_fail(st, NULL, "unterminated section header (expected [section])");
		return;
	}
	if ((size_t)(end - p - 1) >= sizeof(name)) {
		parse_fail(st, NULL, "section name too long");
		return;
	}
	memcpy(name, p + 1, end - p - 1);
	name[end - p - 1] = '\0';
	for (p = end + 1; isspace((unsigned char)*p); p++)
		;
	if (*p && *p != ';' && *p != '#') {
		parse_fail(st, NULL, "text after [%s] (a section header stands alone on its line)",
			   name);
		return;
	}
	if (cfg_section_known(name) || strcmp(name, "matrix") == 0)
		return;
	sug = cfg_section_suggest(name);
	if (sug)
		parse_fail(st, NULL, "unknown section [%s] (did you mean [%s]?)", name, sug);
	else
		parse_fail(st, NULL,
			   "unknown section [%s] (expected experiment, workload, collective, transport, gpu, numa, launch, report or matrix)",
			   name);
}

/* Count one byte read against the file and experiment caps: false (and the error) past them. */
static bool parse_count_byte(struct parse_state *st, struct parse_file *pf)
{
	pf->bytes++;
	st->total_bytes++;
	if (pf->bytes > PARSE_MAX_FILE) {
		parse_fail(st, NULL, "file larger than %u KiB (an experiment file is text)",
			   PARSE_MAX_FILE >> 10);
		return false;
	}
	if (st->total_bytes > PARSE_MAX_TOTAL) {
		parse_fail(st, NULL, "the experiment and its includes exceed %u MiB",
			   PARSE_MAX_TOTAL >> 20);
		return false;
	}
	return true;
}

/*
 * fgets-like reader for inih. It reads at most PARSE_MAX_LINE characters of a line, so an
 * overlong line is refused without being read whole; it counts lines, takes LF and CRLF
 * endings, and refuses NUL bytes and a CR without LF (CR-only files would otherwise be
 * one long line whose keys inih drops).
 */
static char *parse_reader(char *str, int num, void *stream)
{
	struct parse_state *st = stream;
	struct parse_file *pf = st->cur;
	size_t n = 0, max = GS_MIN((size_t)PARSE_MAX_LINE, (size_t)num - 1);
	int c;

	if (st->failed)
		return NULL;
	c = getc(pf->f);
	if (c == EOF) {
		if (ferror(pf->f))
			parse_fail(st, NULL, "read error: %s", strerror(errno));
		return NULL;
	}
	pf->line++;
	for (; c != EOF && c != '\n'; c = getc(pf->f)) {
		if (!parse_count_byte(st, pf))
			return NULL;
		if (c == '\0') {
			parse_fail(st, NULL, "NUL byte in line (the file is not text)");
			return NULL;
		}
		if (c == '\r') {
			c = getc(pf->f);
			if (c != '\n') {
				parse_fail(st, NULL, "carriage return without a line feed (CR-only line endings? convert the file to LF or CRLF)");
				return NULL;
			}
			break;
		}
		if (n >= max) {
			parse_fail(st, NULL, "line too long (more than %zu characters)", max);
			return NULL;
		}
		pf->buf[n++] = (char)c;
	}
	if (c == '\n' && !parse_count_byte(st, pf))
		return NULL;
	if (c == EOF && ferror(pf->f)) {
		parse_fail(st, NULL, "read error: %s", strerror(errno));
		return NULL;
	}
	pf->buf[n] = '\0';
	check_section_line(st, pf->buf);
	if (st->failed)
		return NULL;
	memcpy(str, pf->buf, n + 1);
	return str;
}

/*
 * Expand ${VAR} and ${VAR:-default} into out; $$, $;, $# and $, are a literal $, ;, # and ,
 * (what experiment_write_resolved writes, so a value that holds them replays as is:
 * inih takes " ;" and " #" for a comment). keep_escapes leaves them for a [matrix] line,
 * which is split before its pieces are un-escaped (escape.h); there a ${VAR}'s text is
 * part of the list (its commas separate values), as the line had always read it.
 */
static int expand_env(struct parse_state *st, const char *what, const char *in, char *out,
		      size_t len, bool keep_escapes)
{
	size_t n = 0;

	while (*in) {
		if (in[0] == '$' && esc_char(in[1])) {
			if (keep_escapes)
				str_appendf(out, len, &n, "%c", '$');
			str_appendf(out, len, &n, "%c", in[1]);
			in += 2;
			continue;
		}
		if (in[0] == '$' && in[1] == '{') {
			const char *end = strchr(in + 2, '}');
			char var[128];
			const char *def = NULL, *val;
			char *colon;

			if (!end || (size_t)(end - in - 2) >= sizeof(var)) {
				parse_fail(st, what, "unterminated ${...} in value");
				return -EINVAL;
			}
			memcpy(var, in + 2, end - in - 2);
			var[end - in - 2] = '\0';
			if (!var[0] || var[0] == ':') {
				parse_fail(st, what, "${} names no variable (expected ${NAME} or "
					   "${NAME:-default})");
				return -EINVAL;
			}
			colon = strstr(var, ":-");
			if (colon) {
				*colon = '\0';
				def = colon + 2;
			}
			val = getenv(var);
			if (!val || (!*val && def))
				val = def;
			if (!val) {
				parse_fail(st, what, "environment variable %s is not set (write ${%s:-default} for a fallback)",
					   var, var);
				return -EINVAL;
			}
			/* a line break would end the value in the resolved experiment.ini and
			 * start another key there */
			if (strpbrk(val, "\r\n")) {
				parse_fail(st, what, "${%s} holds a line break, which a value cannot", var);
				return -EINVAL;
			}
			str_appendf(out, len, &n, "%s", val);
			in = end + 1;
			continue;
		}
		str_appendf(out, len, &n, "%c", *in);
		in++;
	}
	if (str_truncated(len, n)) {
		parse_fail(st, what, "value too long after ${ENV} expansion");
		return -EINVAL;
	}
	out[n] = '\0';
	/* blanks a ${VAR} brings to either end go, as inih drops them around literal text:
	 * the resolved experiment.ini could not keep them, and a replay must read the same */
	str_trim(out);
	return 0;
}

static int handle_include(struct parse_state *st, const char *value)
{
	char dir[PATH_MAX], path[PATH_MAX];
	size_t n = 0;

	if (value[0] == '/') {
		str_appendf(path, sizeof(path), &n, "%s", value);
	} else {
		snprintf(dir, sizeof(dir), "%s", st->cur->path);
		str_appendf(path, sizeof(path), &n, "%s/%s", dirname(dir), value);
	}
	if (str_truncated(sizeof(path), n)) {
		parse_fail(st, "include", "path longer than %d characters", PATH_MAX - 1);
		return -ENAMETOOLONG;
	}
	return parse_file_run(st, path, st->cur);
}

/* Whether file a includes file b, directly or through other includes. */
static bool includes(const struct parse_state *st, int a, int b)
{
	for (b = st->parent[b]; b >= 0; b = st->parent[b])
		if (b == a)
			return true;
	return false;
}

/*
 * Where k was set before and who wins (README, "The experiment language"): a key set
 * twice in one file is an error (-1); the includer wins over what it includes, whether
 * its line comes before the include or after (0: this value is only checked), and a
 * later include over an earlier one (1: this value is the key's). exp->set names the
 * winner's file and line.
 */
static int check_duplicate(struct parse_state *st, const struct cfg_key *k, const char *what)
{
	struct experiment *exp = st->exp;
	int f = st->cur_file;
	struct exp_set *s;
	size_t i;

	for (i = 0; i < exp->nset; i++) {
		s = &exp->set[i];
		if (s->key != k)
			continue;
		if (st->set_in[i][f / 8] & (1u << (f % 8))) {
			if (s->file == f)
				parse_fail(st, what, "duplicate key (first set at line %d)", s->line);
			else
				parse_fail(st, what, "duplicate key (set earlier in this file)");
			return -1;
		}
		st->set_in[i][f / 8] |= (unsigned char)(1u << (f % 8));
		if (includes(st, s->file, f))
			return 0; /* an include's value under an includer that set the key */
		s->file = f;
		s->line = st->cur->line;
		return 1;
	}
	/* every key of the table fits: EXP_MAX_SET is above its size (config_test.c) */
	if (exp->nset < EXP_MAX_SET) {
		st->set_in[exp->nset][f / 8] |= (unsigned char)(1u << (f % 8));
		exp->set[exp->nset++] = (struct exp_set){ k, f, st->cur->line };
	}
	return 1;
}

static int handle_matrix(struct parse_state *st, const char *name, const char *value)
{
	struct experiment *exp = st->exp;
	char what[160], e[EXP_ERR_MAX];

	snprintf(what, sizeof(what), "matrix.%s", name);
	if (strcmp(name, "baseline") == 0) {
		if (exp->has_baseline) {
			parse_fail(st, what, "duplicate key (one baseline per experiment)");
			return 0;
		}
		if (matrix_cond_parse(value, &exp->baseline, st->cur->path, st->cur->line, e,
				      sizeof(e))) {
			parse_fail(st, what, "%s", e);
			return 0;
		}
		exp->baseline.file = st->cur_file;
		exp->baseline.line = st->cur->line;
		exp->has_baseline = true;
		return 1;
	}
	if (strcmp(name, "exclude") == 0) {
		/* several rules per line, separated by a ';' that no '$' escapes (an empty
		 * rule is none); the key may repeat */
		char *copy = strdup(value), *rules[EXP_MAX_CONDS + 1];
		size_t nrules, r;

		if (!copy) {
			parse_fail(st, what, "out of memory");
			return 0;
		}
		nrules = esc_split(copy, ';', rules, ARRAY_SIZE(rules));
		for (r = 0; r < nrules; r++) {
			const char *rule = r < ARRAY_SIZE(rules) ? rules[r] : NULL;

			if (rule && !*rule)
				continue;
			if (!rule || exp->nexclude >= EXP_MAX_CONDS) {
				parse_fail(st, what, "too many exclude rules (at most %d)", EXP_MAX_CONDS);
				break;
			}
			if (matrix_cond_parse(rule, &exp->exclude[exp->nexclude], st->cur->path,
					      st->cur->line, e, sizeof(e))) {
				parse_fail(st, what, "%s", e);
				break;
			}
			exp->exclude[exp->nexclude].file = st->cur_file;
			exp->exclude[exp->nexclude].line = st->cur->line;
			exp->nexclude++;
		}
		free(copy);
		return !st->failed;
	}
	if (matrix_axis_add(exp, name, value, st->cur->path, st->cur->line, e, sizeof(e))) {
		parse_fail(st, what, "%s", e);
		return 0;
	}
	return 1;
}

static int parse_handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse_state *st = user;
	char what[160], val[PARSE_MAX_LINE + 1], e[EXP_ERR_MAX];
	const struct cfg_key *k;
	int wins;

	if (st->failed)
		return 0;
	snprintf(what, sizeof(what), "%s%s%s", section, *section ? "." : "", name);
	if (expand_env(st, what, value, val, sizeof(val),
		       !strcmp(section, "matrix") && strcmp(name, "include")))
		return 0;
	if (strcmp(name, "include") == 0)
		return handle_include(st, val) == 0;
	if (!*section) {
		parse_fail(st, what, "key outside any section (expected a [section] first)");
		return 0;
	}
	if (strcmp(section, "matrix") == 0)
		return handle_matrix(st, name, val);
	k = cfg_key_find(section, name);
	if (!k) {
		const struct cfg_key *s = cfg_key_suggest(section, name);

		if (s && strcmp(s->section, section) == 0)
			parse_fail(st, what, "unknown key (did you mean '%s'?)", s->name);
		else if (s)
			parse_fail(st, what, "unknown key (did you mean '%s' in [%s]?)", s->name,
				   s->section);
		else
			parse_fail(st, what, "unknown key (see 'gradsync keys %s')", section);
		return 0;
	}
	wins = check_duplicate(st, k, what);
	if (wins < 0)
		return 0;
	if (cfg_value_set(wins ? &st->exp->base : &st->scratch, k, val, e, sizeof(e))) {
		parse_fail(st, what, "%s", e);
		return 0;
	}
	return 1;
}

/* A file that cannot be opened: FILE:LINE: include: ... inside an include, FILE: ... at the top. */
static void parse_fail_open(struct parse_state *st, const struct parse_file *parent,
			    const char *path, const char *why)
{
	if (parent) {
		parse_fail(st, "include", "cannot read '%s': %s", path, why);
	} else {
		snprintf(st->err, st->errlen, "%s: cannot read: %s", path, why);
		st->failed = 1;
	}
}

static int parse_file_run(struct parse_state *st, const char *path, struct parse_file *parent)
{
	struct fsb_read r = { .path = path, .max = PARSE_MAX_FILE, .want_real = true };
	struct parse_file *pf, *p;
	int saved_file = st->cur_file;
	char why[PATH_MAX + 160];
	int depth = 0, ret;

	pf = calloc(1, sizeof(*pf));
	if (!pf) {
		parse_fail_open(st, parent, path, strerror(ENOMEM));
		return -ENOMEM;
	}
	pf->path = path;
	pf->parent = parent;
	/* realpath and the read within a bound: a file on a file system that stopped
	 * answering (a dead NFS or FUSE mount) fails the load naming it, as any file
	 * that cannot be read does; [report] write_timeout is not known yet: its default */
	pf->f = fsb_fopen(&r, fsb_timeout_default_ns(), why, sizeof(why));
	if (!pf->f) {
		ret = -errno;
		parse_fail_open(st, parent, path, why);
		goto out_free;
	}
	memcpy(pf->real, r.real, sizeof(pf->real));
	for (p = parent; p; p = p->parent, depth++) {
		if (strcmp(p->real, pf->real) == 0) {
			parse_fail(st, "include", "include cycle: '%s' is already being read", path);
			ret = -ELOOP;
			goto out_fclose;
		}
	}
	if (depth >= PARSE_MAX_DEPTH) {
		parse_fail(st, "include", "includes nested deeper than %d", PARSE_MAX_DEPTH);
		ret = -ELOOP;
		goto out_fclose;
	}
	if (st->nfiles >= EXP_MAX_FILES) {
		parse_fail(st, "include", "more than %d files included", EXP_MAX_FILES);
		ret = -EMFILE;
		goto out_fclose;
	}
	st->files[st->nfiles] = strdup(pf->real);
	st->exp->files[st->nfiles] = strdup(path);
	st->exp->nfiles = st->nfiles + 1;
	if (!st->files[st->nfiles] || !st->exp->files[st->nfiles]) {
		free(st->files[st->nfiles]);
		st->files[st->nfiles] = NULL;
		ret = -ENOMEM;
		parse_fail_open(st, parent, path, strerror(ENOMEM));
		goto out_fclose;
	}
	st->parent[st->nfiles] = parent ? st->cur_file : -1;
	st->cur_file = st->nfiles++;
	st->cur = pf;
	ret = ini_parse_stream(parse_reader, st, parse_handler, st);
	if (ret > 0 && !st->failed)
		parse_fail(st, NULL, "syntax error (expected 'key = value', '[section]' or a comment)");
	st->cur = parent;
	st->cur_file = saved_file;
	ret = st->failed ? -EINVAL : 0;
out_fclose:
	fclose(pf->f);
out_free:
	free(pf);
	return ret;
}

int experiment_load(const char *path, struct experiment *exp, char *err, size_t errlen)
{
	struct parse_state *st;
	int ret;

	memset(exp, 0, sizeof(*exp));
	exp->baseline_case = -1;
	snprintf(exp->path, sizeof(exp->path), "%s", path);
	ret = cfg_defaults(&exp->base, err, errlen);
	if (ret)
		return ret;
	/* inih's knobs are library-wide; these are the experiment language's rules. */
	ini_allow_multiline = false;
	ini_stop_on_first_error = true;
	ini_use_stack = false;
	/* without realloc inih's line buffer is ini_initial_alloc bytes, whatever ini_max_line says */
	ini_max_line = PARSE_MAX_LINE + 3;
	ini_initial_alloc = PARSE_MAX_LINE + 3;
	ini_allow_realloc = false;
	ini_allow_inline_comments = true;
	ini_inline_comment_prefixes = ";#";

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->exp = exp;
	st->err = err;
	st->errlen = errlen;
	ret = cfg_defaults(&st->scratch, err, errlen);
	if (!ret)
		ret = parse_file_run(st, path, NULL);
	for (int i = 0; i < st->nfiles; i++)
		free(st->files[i]);
	free(st);
	if (ret)
		return ret;
	return matrix_expand(exp, err, errlen);
}

void experiment_free(struct experiment *exp)
{
	for (int i = 0; i < exp->nfiles; i++)
		free(exp->files[i]);
	exp->nfiles = 0;
	exp->nset = 0;
	free(exp->cases);
	exp->cases = NULL;
	exp->ncases = 0;
}

int experiment_key_line(const struct experiment *exp, const struct cfg_key *k,
			const char **file, int *line)
{
	for (int i = 0; i < exp->naxes; i++) {
		if (exp->axes[i].key == k) {
			*file = exp->axes[i].file;
			*line = exp->axes[i].line;
			return 0;
		}
	}
	for (size_t i = 0; i < exp->nset; i++) {
		if (exp->set[i].key == k) {
			*file = exp->files[exp->set[i].file];
			*line = exp->set[i].line;
			return 0;
		}
	}
	return -ENOENT;
}

struct experiment *experiment_open(const char *path)
{
	struct experiment *exp = calloc(1, sizeof(*exp));
	char err[EXP_ERR_MAX];

	if (!exp) {
		fprintf(stderr, "%s: out of memory\n", path);
		return NULL;
	}
	if (experiment_load(path, exp, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		experiment_delete(exp);
		return NULL;
	}
	return exp;
}

void experiment_delete(struct experiment *exp)
{
	if (!exp)
		return;
	experiment_free(exp);
	free(exp);
}
