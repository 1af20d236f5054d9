/*
 * Unit tests of the '$' escapes: splitting a [matrix] line before un-escaping its pieces,
 * writing values back escaped, and an experiment whose axis values, exclude rules and
 * baseline hold ',' and ';' loaded, written as experiment.ini and loaded again.
 */
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#include "config/escape.h"
#include "config/experiment.h"
#include "util/common.h"
#include "util/test_tmpdir.h"

static char tmpdir[PATH_MAX]; /* test_tmpdir_make, in main */

/* esc_split: items as they come out (trimmed, escapes kept), '|' between them. */
static const struct {
	const char *in;
	char sep;
	const char *items;
} split_cases[] = {
	{ "tcp, shm", ',', "tcp|shm" },
	{ "cpus:0$,2, cpus:1$,3", ',', "cpus:0$,2|cpus:1$,3" },
	{ "a$$, b", ',', "a$$|b" },             /* $$ is a '$': the comma after it separates */
	{ "a$$$,b", ',', "a$$$,b" },            /* $$ then $, */
	{ "a$", ',', "a$" },                    /* a lone '$' at the end is itself */
	{ "a$b,c", ',', "a$b|c" },
	{ "x=1$;2; y=3", ';', "x=1$;2|y=3" },
	{ "x=1;;", ';', "x=1||" },              /* empty items kept, for the caller to judge */
	{ "", ',', "" },
};

static void test_split(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(split_cases); i++) {
		char *s = strdup(split_cases[i].in), *items[8], got[128] = "";
		size_t n = esc_split(s, split_cases[i].sep, items, ARRAY_SIZE(items));

		for (size_t j = 0; j < n; j++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", j ? "|" : "",
				 items[j]);
		if (strcmp(got, split_cases[i].items))
			fail_msg("split '%s': '%s', expected '%s'", split_cases[i].in, got,
				 split_cases[i].items);
		free(s);
	}
	/* more items than room: max + 1, as str_split */
	{
		char s[] = "a,b,c", *items[2];

		assert_int_equal(esc_split(s, ',', items, 2), 3);
	}
}

static void test_unescape(void **state)
{
	static const char *const cases[][2] = {
		{ "cpus:0$,2", "cpus:0,2" }, { "$$$;$#$,", "$;#," }, { "$x$", "$x$" },
		{ "$${A}", "${A}" }, { "plain", "plain" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char s[64];

		snprintf(s, sizeof(s), "%s", cases[i][0]);
		esc_unescape(s);
		assert_string_equal(s, cases[i][1]);
	}
}

/* Values that take every rule of esc_quote: separators, comments, '$' before each. */
static const char *const nasty[] = {
	"cpus:0,2", "cpus:0-3,8-11", "a;b", "a ;b", "a #b", ";lead", "#lead", "cost $5",
	"$$", "$;", "$,", "${HOME}", "end$", "x=y,z=w", "plain",
};

static void test_quote(void **state)
{
	char q[256], line[2048] = "", *items[32];
	size_t i, n;

	/* one value of a list: every ',' and ';' escaped, a final '$' doubled */
	assert_int_equal(esc_quote("cpus:0,2;x", true, q, sizeof(q)), 0);
	assert_string_equal(q, "cpus:0$,2$;x");
	assert_int_equal(esc_quote("end$", true, q, sizeof(q)), 0);
	assert_string_equal(q, "end$$");
	/* a plain key's value: commas stay (formats = table,json), comments escaped */
	assert_int_equal(esc_quote("table,json a;b c ;d #e ${X} $5", false, q, sizeof(q)), 0);
	assert_string_equal(q, "table,json a;b c $;d $#e $${X} $5");
	assert_int_equal(esc_quote("cpus:0,2,3", true, q, 8), -ENOSPC);

	/* round trip: the values quoted as items, joined as a [matrix] line writes them,
	 * split and un-escaped give each value back */
	for (i = 0; i < ARRAY_SIZE(nasty); i++) {
		assert_int_equal(esc_quote(nasty[i], true, q, sizeof(q)), 0);
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s", i ? ", " : "", q);
	}
	n = esc_split(line, ',', items, ARRAY_SIZE(items));
	assert_int_equal(n, ARRAY_SIZE(nasty));
	for (i = 0; i < n; i++) {
		esc_unescape(items[i]);
		assert_string_equal(items[i], nasty[i]);
	}
}

static int load(const char *name, const char *text, struct experiment *exp, char *err,
		size_t errlen)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	assert_int_equal(test_file_write(path, text), 0);
	return experiment_load(path, exp, err, errlen);
}

/*
 * An axis over CPU lists, rules naming them, and a string axis holding every character
 * the line could take for a separator or a comment: the cases and their names, then the
 * same after experiment.ini (experiment_write_resolved) is loaded again, as --replay does.
 */
static void test_matrix_round_trip(void **state)
{
	static const char text[] =
		"[launch]\nlocal_ranks = 2\n[matrix]\n"
		"bind = cpus:0$,1, cpus:1$,0, none\n"
		"transport = tcp, shm\n"
		"op_trace = a$,b.json, c$; d $#e $$f.json\n"
		"exclude = bind=cpus:1$,0,transport=shm; bind=none,transport=shm\n"
		"exclude = op_trace=c$; d $#e $$f.json,bind=none\n"
		"baseline = bind=cpus:0$,1,transport=tcp\n";
	struct experiment *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	char err[EXP_ERR_MAX], rule[256], path[512], *resolved = NULL;
	size_t len = 0, i;
	FILE *f;

	assert_non_null(a);
	assert_non_null(b);
	if (load("rt.ini", text, a, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(a->axes[0].nvalues, 3);
	assert_string_equal(a->axes[0].values[0], "cpus:0,1");
	assert_string_equal(a->axes[2].values[1], "c; d #e $f.json");
	/* 3 x 2 x 2 = 12, less 2 x 2 (shm with cpus:1,0 or none) and 1 (none, c; d ...) */
	assert_int_equal(a->ncases, 7);
	assert_string_equal(a->cases[0].name, "bind=cpus:0$,1,transport=tcp,op_trace=a$,b.json");
	assert_string_equal(a->cases[1].name,
			    "bind=cpus:0$,1,transport=tcp,op_trace=c$; d $#e $f.json");
	assert_string_equal(a->cases[6].name, "bind=none,transport=tcp,op_trace=a$,b.json");
	assert_string_equal(a->cases[0].cfg.numa.bind, "cpus:0,1");
	assert_string_equal(a->cases[1].cfg.workload.op_trace, "c; d #e $f.json");
	assert_int_equal(a->baseline_case, 0);
	experiment_cond_format(&a->baseline, rule, sizeof(rule));
	assert_string_equal(rule, "bind=cpus:0$,1,transport=tcp");
	/* a case name is a rule: it reads back as the case's own values */
	for (i = 0; i < a->ncases; i++) {
		struct exp_cond c;

		assert_int_equal(matrix_cond_parse(a->cases[i].name, &c, "x", 1, err, sizeof(err)),
				 0);
		assert_int_equal(c.n, 3);
		assert_string_equal(c.value[0], a->cases[i].cfg.numa.bind);
		assert_string_equal(c.value[2], a->cases[i].cfg.workload.op_trace);
	}

	f = open_memstream(&resolved, &len);
	assert_non_null(f);
	experiment_write_resolved(f, a);
	fclose(f);
	assert_non_null(strstr(resolved, "\nnuma.bind = cpus:0$,1, cpus:1$,0, none\n"));
	assert_non_null(strstr(resolved,
			       "\nexclude = workload.op_trace=c$; d $#e $f.json,numa.bind=none\n"));
	if (load("rt_resolved.ini", resolved, b, err, sizeof(err)))
		fail_msg("%s\n%s", err, resolved);
	assert_int_equal(b->ncases, a->ncases);
	for (i = 0; i < a->ncases; i++) {
		assert_string_equal(b->cases[i].name, a->cases[i].name);
		assert_string_equal(b->cases[i].cfg.numa.bind, a->cases[i].cfg.numa.bind);
		assert_string_equal(b->cases[i].cfg.workload.op_trace,
				    a->cases[i].cfg.workload.op_trace);
		assert_int_equal(b->cases[i].baseline, a->cases[i].baseline);
	}
	free(resolved);
	experiment_free(a);
	experiment_free(b);
	free(a);
	free(b);
	snprintf(path, sizeof(path), "%s/rt.ini", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/rt_resolved.ini", tmpdir);
	unlink(path);
}

/* Mistakes in such lines: one line naming file, line and key, and how to write a comma. */
static const struct {
	const char *matrix;
	const char *err;
} bad_cases[] = {
	{ "bind = cpus:0,1, none\n",
	  "e.ini:2: matrix.bind: unknown binding '1' (expected none, gpu, nic, remote, interleave, node:N or cpus:LIST) (a ',' separates values: write $, for a comma inside one)" },
	{ "bind = cpus:0$,1, none\nexclude = bind=cpus:0,1\n",
	  "e.ini:3: matrix.exclude: '1' is not key=value (expected e.g. transport=tcp; a ',' separates terms: write $, for a comma in a value)" },
	{ "bind = cpus:0$,1, none\nbaseline = bind=cpus:0$,2\n",
	  "e.ini:3: matrix.baseline: no case matches the baseline: bind=cpus:0$,2 is not on its axis (cpus:0$,1, none)" },
	{ "bind = cpus:0$,1, none\nexclude = bind=${GS_ESC_TEST\n",
	  "e.ini:3: matrix.exclude: unterminated ${...} in value" },
	{ "bind = cpus:0$,1$\n",
	  "e.ini:2: matrix.bind: 'cpus:0,1$': bad CPU list: '1$'" },
	{ "bind = cpus:0$,1, cpus:0$,1\n", "e.ini:2: matrix.bind: value 'cpus:0,1' listed twice" },
};

static void test_errors(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		struct experiment *exp = calloc(1, sizeof(*exp));
		char text[512], err[EXP_ERR_MAX];

		assert_non_null(exp);
		snprintf(text, sizeof(text), "[matrix]\n%s", bad_cases[i].matrix);
		assert_int_equal(load("e.ini", text, exp, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad_cases[i].err) || strchr(err, '\n'))
			fail_msg("%s: error '%s', expected '%s'", bad_cases[i].matrix, err,
				 bad_cases[i].err);
		experiment_free(exp);
		free(exp);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_unescape),
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_matrix_round_trip),
		cmocka_unit_test(test_errors),
	};
	int ret;

	assert_int_equal(test_tmpdir_make(tmpdir, sizeof(tmpdir), "escape"), 0);
	ret = cmocka_run_group_tests_name("escape", tests, NULL, NULL);
	test_tmpdir_remove(tmpdir);
	return ret;
}
