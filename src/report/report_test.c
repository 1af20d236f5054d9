/*
 * Report tests: the checked-in fixtures match their generator, Markdown and CSV
 * match golden files (GS_REGEN=1 rewrites both), runs merge, thresholds and
 * fairness flag what they should. Run from the repository root.
 */
#include <limits.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "report/fairness.h"
#include "report/fixture.h"
#include "report/report.h"
#include "report/rjson.h"
#include "util/common.h"
#include "util/fsbound.h"
#include "util/test_tmpdir.h"

#define FIXDIR "tests/fixtures/reports"

static bool regen(void)
{
	const char *e = getenv("GS_REGEN");

	return e && *e == '1';
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Compare text with the golden file, or rewrite it under GS_REGEN=1. */
static void golden(const char *file, const char *text)
{
	char path[256], *want;

	snprintf(path, sizeof(path), FIXDIR "/%s", file);
	if (regen()) {
		assert_int_equal(test_file_write(path, text), 0);
		return;
	}
	want = slurp(path);
	if (!want)
		fail_msg("%s missing: run with GS_REGEN=1 from the repository root", path);
	if (strcmp(want, text) != 0) {
		char got[300];

		snprintf(got, sizeof(got), "/tmp/gradsync-golden-%s", file);
		assert_int_equal(test_file_write(got, text), 0);
		fail_msg("%s differs from the output (written to %s); diff them, or GS_REGEN=1",
			 path, got);
	}
	free(want);
}

typedef int (*writer_fn)(FILE *f, const struct report_set *s, const struct report_opts *o);

static char *render(writer_fn fn, const struct report_set *s, const struct report_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(fn(f, s, o), 0);
	fclose(f);
	return buf;
}

static void load(struct report_set *s, const char *const *names, const char *baseline)
{
	char path[256];

	memset(s, 0, sizeof(*s));
	for (; *names; names++) {
		snprintf(path, sizeof(path), FIXDIR "/%s.json", *names);
		assert_int_equal(report_set_add_path(s, path, fsb_timeout_default_ns()), 0);
	}
	assert_int_equal(report_set_finish(s, baseline), 0);
}

static void test_fixtures_up_to_date(void **state)
{
	const char *const *n;

	(void)state;
	for (n = report_fixture_names; *n; n++) {
		json_t *doc = report_fixture(*n);
		char file[128], *text;

		assert_non_null(doc);
		text = rj_dumps(doc);
		assert_non_null(text);
		snprintf(file, sizeof(file), "%s.json", *n);
		golden(file, text);
		free(text);
		json_decref(doc);
	}
}

static void check_golden(const char *const *names, const char *out, const struct report_opts *o)
{
	struct report_set s;
	char file[128], *md, *csv;

	load(&s, names, NULL);
	md = render(report_write_md, &s, o);
	csv = render(report_write_csv, &s, o);
	snprintf(file, sizeof(file), "%s.md", out);
	golden(file, md);
	snprintf(file, sizeof(file), "%s.csv", out);
	golden(file, csv);
	free(md);
	free(csv);
	report_set_free(&s);
}

static void test_golden_transports(void **state)
{
	static const char *const names[] = { "tcp_shm", NULL };
	struct report_opts o = { .formats = "md,csv" };

	(void)state;
	check_golden(names, "tcp_shm", &o);
}

static void test_golden_two_nodes(void **state)
{
	static const char *const names[] = { "ib_node_a", "ib_node_b", NULL };
	struct report_opts o = { .formats = "md,csv", .min_busbw = "80%" };

	(void)state;
	check_golden(names, "ib_compare", &o);
}

static void test_golden_workload(void **state)
{
	static const char *const names[] = { "resnet_overlap", NULL };
	struct report_opts o = { .formats = "md,csv", .project_ranks = { 2, 4, 8, 16, 64 },
				 .nproject_ranks = 5 };

	(void)state;
	check_golden(names, "resnet_overlap", &o);
}

static void test_merge_prefixes_clashing_names(void **state)
{
	static const char *const names[] = { "ib_node_a", "ib_node_b", "tcp_shm", NULL };
	struct report_set s;

	(void)state;
	load(&s, names, NULL);
	assert_int_equal(s.nruns, 3);
	assert_int_equal(s.ncases, 7);
	assert_string_equal(s.cases[0].name, "ib_node_a/transport=tcp");
	assert_string_equal(s.cases[3].name, "ib_node_b/transport=ib");
	assert_string_equal(s.cases[5].name, "transport=shm"); /* only in one run */
	/* The first run's baseline names its own case. */
	assert_int_equal(s.baseline, 0);
	assert_int_equal(report_set_find(&s, "ib_node_b/transport=tcp"), 2);
	report_set_free(&s);
	memset(&s, 0, sizeof(s));
	assert_int_equal(report_set_add_path(&s, FIXDIR "/tcp_shm.json", fsb_timeout_default_ns()), 0);
	assert_int_equal(report_set_finish(&s, "transport=shm"), 0);
	assert_int_equal(s.baseline, 1);
	assert_int_equal(report_set_finish(&s, "transport=nope"), -ENOENT);
	report_set_free(&s);
}

/* A run of model x transport under baseline = transport=tcp; model c's tcp case excluded. */
static json_t *rule_doc(void)
{
	static const struct {
		const char *name, *model, *baseline;
		double iter_ms;
	} cs[] = {
		{ "model=a,transport=tcp", "a", "model=a,transport=tcp", 40 },
		{ "model=a,transport=shm", "a", "model=a,transport=tcp", 20 },
		{ "model=b,transport=tcp", "b", "model=b,transport=tcp", 90 },
		{ "model=b,transport=shm", "b", "model=b,transport=tcp", 30 },
		{ "model=c,transport=shm", "c", NULL, 25 },
	};
	static char *const argv[] = { "gradsync", "run", "x.ini" };
	json_t *doc = rj_doc_new(&(struct rj_meta){ .experiment = "x", .nranks = 2,
						    .baseline = cs[0].name,
						    .baseline_rule = "transport=tcp",
						    .argc = 3, .argv = argv });
	size_t i;

	assert_non_null(doc);
	for (i = 0; i < ARRAY_SIZE(cs); i++) {
		json_t *c = rj_case_new(cs[i].name, NULL, NULL);

		assert_int_equal(rj_case_set_baseline(c, cs[i].baseline), 0);
		assert_int_equal(rj_case_set_workload_json(c, json_pack("{s:s, s:{s:f}}", "model",
									cs[i].model, "iter_ms", "mean",
									cs[i].iter_ms)), 0);
		assert_int_equal(rj_doc_add_case(doc, c), 0);
	}
	return doc;
}

/* [matrix] baseline names some axes: each case against its own counterpart. */
static void test_baseline_per_case(void **state)
{
	struct report_opts o = { 0 };
	struct report_set s = { 0 };
	json_t *doc = rule_doc();
	char *md, *csv;

	(void)state;
	assert_int_equal(report_set_add_json(&s, "x-run", doc), 0);
	json_decref(doc);
	assert_int_equal(report_set_finish(&s, NULL), 0);
	assert_int_equal(s.cases[0].ref, 0);
	assert_int_equal(s.cases[1].ref, 0);
	assert_int_equal(s.cases[2].ref, 2);
	assert_int_equal(s.cases[3].ref, 2);
	assert_int_equal(s.cases[4].ref, -1);
	md = render(report_write_md, &s, &o);
	assert_non_null(strstr(md, "each case's baseline is the case with transport=tcp"));
	/* a: 40/20, b: 90/30 against its own tcp case (not a's: 40/30 = 1.33x) */
	assert_non_null(strstr(md, "| 2.00x |"));
	assert_non_null(strstr(md, "| 3.00x |"));
	assert_null(strstr(md, "1.33x"));
	assert_null(strstr(md, "1.60x")); /* c has no baseline: no speed-up against a's */
	csv = render(report_write_csv, &s, &o);
	assert_non_null(strstr(csv, ",3,"));
	free(md);
	free(csv);
	/* an explicit --baseline is every case's */
	assert_int_equal(report_set_finish(&s, "model=a,transport=tcp"), 0);
	assert_int_equal(s.cases[3].ref, 0);
	assert_int_equal(s.cases[4].ref, 0);
	md = render(report_write_md, &s, &o);
	assert_non_null(strstr(md, "the baseline is model=a,transport=tcp"));
	assert_non_null(strstr(md, "| 1.33x |"));
	assert_non_null(strstr(md, "| 1.60x |"));
	free(md);
	report_set_free(&s);
}

/*
 * A case that failed mid-sweep keeps the sizes it finished: its per-size rows say so,
 * so its figures are not read as a complete sweep; an ok case's are unmarked.
 */
static void test_failed_case_rows_marked(void **state)
{
	static const char *const one[] = { "tcp_shm", NULL };
	struct report_opts o = { 0 };
	struct report_set s;
	char *md, *p;

	(void)state;
	load(&s, one, NULL);
	assert_true(json_array_size(json_object_get(s.cases[0].json, "collective")) > 0);
	json_object_set_new(s.cases[0].json, "status", json_string("failed"));
	json_object_set_new(s.cases[0].json, "error", json_string("rank 1 timed out"));
	md = render(report_write_md, &s, &o);
	p = strstr(md, "| Case | Size | Count |");
	assert_non_null(p);
	assert_non_null(strstr(p, "| transport=tcp (failed: the sizes before it stopped) | 4KiB |"));
	assert_non_null(strstr(p, "| transport=shm | 4KiB |"));
	assert_null(strstr(p, "transport=shm (failed"));
	/* and the comparison tables, whose columns are cases, name it under their heading */
	assert_non_null(strstr(md, "bound in parentheses. Failed part-way: transport=tcp (its column holds the sizes measured before it stopped)."));
	p = strstr(md, "Average time in microseconds");
	assert_non_null(p);
	assert_non_null(strstr(p, ": the baseline is transport=tcp. Failed part-way: transport=tcp (its column holds"));
	free(md);
	report_set_free(&s);
}

static bool has_item(const struct fair_item *it, int n, const char *what, const char *needle)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(it[i].what, what) == 0 && strstr(it[i].detail, needle))
			return true;
	return false;
}

static void test_fairness(void **state)
{
	static const char *const two[] = { "ib_node_a", "ib_node_b", NULL };
	static const char *const one[] = { "tcp_shm", NULL };
	struct fair_item *it;
	struct report_set s;
	int n;

	(void)state;
	load(&s, two, NULL);
	n = report_fairness(&s, &it);
	assert_true(n > 0);
	assert_true(has_item(it, n, "kernel",
			     "6.1.0-28-amd64 (ib_node_a); 6.1.0-31-amd64 (ib_node_b)"));
	assert_true(has_item(it, n, "NIC firmware", "mlx5_0 28.41.1000 (ib_node_b)"));
	assert_true(has_item(it, n, "NIC MTU", "mlx5_0 2048"));
	assert_true(has_item(it, n, "transport ib: MTU", "4096 (ib_node_a/transport=ib)"));
	assert_true(has_item(it, n, "collective.iterations", "50 (ib_node_b/transport=tcp, "
							     "ib_node_b/transport=ib)"));
	assert_true(has_item(it, n, "NUMA binding not applied", "NIC NUMA node unknown"));
	assert_false(has_item(it, n, "transport.transport", "")); /* swept: not a difference */
	assert_false(has_item(it, n, "OS", ""));
	free(it);
	report_set_free(&s);
	load(&s, one, NULL);
	n = report_fairness(&s, &it);
	assert_int_equal(n, 0);
	free(it);
	report_set_free(&s);
}

static void test_threshold(void **state)
{
	static const char *const two[] = { "ib_node_a", "ib_node_b", NULL };
	static const char *const one[] = { "tcp_shm", NULL };
	struct report_failure *f;
	struct report_set s;
	int n;

	(void)state;
	load(&s, two, NULL);
	/* Every size on its own: 4 KiB is far below 80% of any bound, so all four fail
	 * and each names its first short size. */
	n = report_check_threshold(&s, "80%", &f);
	assert_int_equal(n, 4);
	for (int i = 0; i < n; i++) {
		assert_int_equal(f[i].size, 4096);
		assert_non_null(strstr(f[i].why, "first 4KiB"));
	}
	free(f);
	/* From 64 MiB: bound 50 GB/s, node a's ib near 46 passes, node b's near 38 does
	 * not; tcp at 2.6 of 12 fails on both. */
	n = report_check_threshold(&s, "80% @ 64MiB..", &f);
	assert_int_equal(n, 3);
	assert_int_equal(f[0].case_idx, 0);
	assert_int_equal(f[1].case_idx, 2);
	assert_int_equal(f[2].case_idx, 3);
	assert_true(f[2].busbw_GBps > 35 && f[2].busbw_GBps < 40);
	assert_true(f[2].need_GBps > 39.99 && f[2].need_GBps < 40.01);
	assert_int_equal(f[2].size, 64 << 20);
	assert_non_null(strstr(f[2].why, "sizes in 64MiB.. short; first 64MiB"));
	free(f);
	n = report_check_threshold(&s, "20GB/s @ 64MiB..", &f);
	assert_int_equal(n, 2);
	assert_string_equal(s.cases[f[0].case_idx].name, "ib_node_a/transport=tcp");
	free(f);
	n = report_check_threshold(&s, "1Gbps @ 1MiB..", &f);
	assert_int_equal(n, 0);
	free(f);
	/* A 1-rank case moves nothing between ranks (busbw 0 by definition): not held. */
	json_object_set_new(s.cases[0].json, "nranks", json_integer(1));
	n = report_check_threshold(&s, "80%", &f);
	assert_int_equal(n, 3);
	assert_int_not_equal(f[0].case_idx, 0);
	free(f);
	json_object_set_new(s.cases[0].json, "nranks", json_integer(2));
	/* One size, and a range no case measured. */
	n = report_check_threshold(&s, "10GB/s @ 16KiB", &f);
	assert_int_equal(n, 4);
	free(f);
	n = report_check_threshold(&s, "1Gbps @ 2GiB..", &f);
	assert_int_equal(n, 4);
	assert_non_null(strstr(f[0].why, "no measured size in 2GiB.."));
	free(f);
	assert_int_equal(report_check_threshold(&s, "fast", &f), -EINVAL);
	assert_int_equal(report_check_threshold(&s, "-5%", &f), -EINVAL);
	assert_int_equal(report_check_threshold(&s, "80% @", &f), -EINVAL);
	assert_int_equal(report_check_threshold(&s, "80% @ 1GiB..64MiB", &f), -EINVAL);
	assert_int_equal(report_check_threshold(&s, "80% @ big..", &f), -EINVAL);
	report_set_free(&s);
	/* A failed case fails any threshold; without a bound it cannot meet a percentage. */
	load(&s, one, NULL);
	n = report_check_threshold(&s, "1MB/s", &f);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].case_idx, 2);
	assert_non_null(strstr(f[0].why, "no RDMA device"));
	free(f);
	report_set_free(&s);
}

static void test_load_errors_and_dirs(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], why[256];
	struct report_set s = { 0 };
	struct report_opts o = { .formats = "md,csv,html", .write_timeout_ns = 30000000000ull };
	struct fsb_write w = { .path = path };
	json_t *doc = report_fixture("tcp_shm");
	struct stat st;

	(void)state;
	assert_int_equal(test_tmpdir_make(dir, sizeof(dir), "report"), 0);
	snprintf(path, sizeof(path), "%s/quick-20261129", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/quick-20261129/report.json", dir);
	assert_int_equal(rj_save(&w, doc, o.write_timeout_ns, why, sizeof(why)), 0);
	snprintf(path, sizeof(path), "%s/quick-20261129", dir);
	assert_int_equal(report_set_add_path(&s, path, fsb_timeout_default_ns()), 0);
	assert_string_equal(s.runs[0].name, "quick-20261129");
	/* a directory given with a trailing slash (shell completion) names the run too */
	snprintf(path, sizeof(path), "%s/quick-20261129/", dir);
	assert_int_equal(report_set_add_path(&s, path, fsb_timeout_default_ns()), 0);
	assert_string_equal(s.runs[1].name, "quick-20261129");
	assert_int_equal(report_set_add_path(&s, "/nonexistent/run", fsb_timeout_default_ns()), -ENOENT);
	snprintf(path, sizeof(path), "%s/bad.json", dir);
	assert_int_equal(test_file_write(path, "{\"schema\": \"other/2\", \"cases\": []}"), 0);
	assert_int_equal(report_set_add_path(&s, path, fsb_timeout_default_ns()), -EINVAL);
	assert_int_equal(test_file_write(path, "{not json"), 0);
	assert_int_equal(report_set_add_path(&s, path, fsb_timeout_default_ns()), -EINVAL);
	unlink(path);
	report_set_free(&s);
	/* What `gradsync run` calls at its end. */
	snprintf(path, sizeof(path), "%s/quick-20261129", dir);
	assert_int_equal(report_write_all(path, doc, &o), 0);
	snprintf(path, sizeof(path), "%s/quick-20261129/report.html", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size > 10000);
	unlink(path);
	snprintf(path, sizeof(path), "%s/quick-20261129/report.md", dir);
	assert_int_equal(stat(path, &st), 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/quick-20261129/report.csv", dir);
	assert_int_equal(stat(path, &st), 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/quick-20261129/report.json", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/quick-20261129", dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
	json_decref(doc);
}

static void test_formats_list(void **state)
{
	(void)state;
	assert_true(report_has_format("table,json,csv,md,html", "md"));
	assert_true(report_has_format("md, html", "html"));
	assert_false(report_has_format("markdown", "md"));
	assert_false(report_has_format("", "csv"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures_up_to_date),
		cmocka_unit_test(test_golden_transports),
		cmocka_unit_test(test_golden_two_nodes),
		cmocka_unit_test(test_golden_workload),
		cmocka_unit_test(test_merge_prefixes_clashing_names),
		cmocka_unit_test(test_baseline_per_case),
		cmocka_unit_test(test_failed_case_rows_marked),
		cmocka_unit_test(test_fairness),
		cmocka_unit_test(test_threshold),
		cmocka_unit_test(test_load_errors_and_dirs),
		cmocka_unit_test(test_formats_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
