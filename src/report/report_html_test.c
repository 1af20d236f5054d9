/*
 * report.html is well-formed XML (XHTML with inline SVG) and self-contained: a
 * strict well-formedness check here, plus xmllint --noout when it is installed;
 * every chart has a title, axes, tick labels and a legend.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "report/fixture.h"
#include "report/report.h"
#include "report/svg.h"
#include "util/common.h"
#include "util/test_tmpdir.h"

struct xml_stats {
	int elements;
	int svgs;
	int svg_titles;   /* <title> directly inside an <svg> */
	int svg_texts;
	int svg_lines;
	const char *error; /* first well-formedness error, NULL if none */
	long error_at;
};

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && ((c >= '0' && c <= '9') || c == '-' || c == '.'));
}

/* An entity reference at s ("&amp;", "&#39;", "&#x1F;"); returns its length or 0. */
static int entity(const char *s)
{
	static const char *const named[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
	size_t i;
	int n = 2;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (strncmp(s, named[i], strlen(named[i])) == 0)
			return (int)strlen(named[i]);
	if (s[1] != '#')
		return 0;
	if (s[2] == 'x')
		n++;
	while ((s[n] >= '0' && s[n] <= '9') || (s[2] == 'x' && strchr("abcdefABCDEF", s[n]) &&
						 s[n]))
		n++;
	return s[n] == ';' && n > 2 + (s[2] == 'x') ? n + 1 : 0;
}

static int xml_err(struct xml_stats *st, const char *doc, const char *at, const char *msg)
{
	st->error = msg;
	st->error_at = (long)(at - doc);
	return -1;
}

/* Well-formedness: one root, balanced and matching tags, quoted unique attributes,
 * no raw '<' or stray '&' in text or attribute values. */
static int xml_check(const char *doc, struct xml_stats *st)
{
	char stack[64][32];
	int depth = 0, roots = 0, svg_depth = -1;
	const char *p = doc;

	memset(st, 0, sizeof(*st));
	while (*p) {
		if (*p == '&') {
			int n = entity(p);

			if (!n)
				return xml_err(st, doc, p, "bad entity reference");
			p += n;
			continue;
		}
		if (*p != '<') {
			if (!depth && !strchr(" \t\r\n", *p))
				return xml_err(st, doc, p, "text outside the root element");
			p++;
			continue;
		}
		if (strncmp(p, "<!--", 4) == 0) {
			p = strstr(p, "-->");
			if (!p)
				return xml_err(st, doc, doc, "unterminated comment");
			p += 3;
		} else if (strncmp(p, "<!DOCTYPE", 9) == 0 || strncmp(p, "<?", 2) == 0) {
			if (depth || roots)
				return xml_err(st, doc, p, "declaration inside the document");
			p = strchr(p, '>');
			if (!p)
				return xml_err(st, doc, doc, "unterminated declaration");
			p++;
		} else if (p[1] == '/') {
			size_t n = 0;

			p += 2;
			while (name_char(p[n], n == 0))
				n++;
			if (!depth || strlen(stack[depth - 1]) != n ||
			    strncmp(stack[depth - 1], p, n))
				return xml_err(st, doc, p, "mismatched end tag");
			p += n;
			while (*p == ' ')
				p++;
			if (*p != '>')
				return xml_err(st, doc, p, "junk in end tag");
			p++;
			if (--depth == svg_depth)
				svg_depth = -1;
		} else {
			char name[32], attrs[32][32];
			int nattr = 0, a;
			size_t n = 0;

			p++;
			while (name_char(p[n], n == 0) && n < sizeof(name) - 1)
				n++;
			if (!n)
				return xml_err(st, doc, p, "bad element name");
			memcpy(name, p, n);
			name[n] = '\0';
			p += n;
			if (!depth && roots++)
				return xml_err(st, doc, p, "second root element");
			st->elements++;
			if (svg_depth >= 0 && depth == svg_depth + 1 && !strcmp(name, "title"))
				st->svg_titles++;
			if (svg_depth >= 0 && !strcmp(name, "text"))
				st->svg_texts++;
			if (svg_depth >= 0 && !strcmp(name, "line"))
				st->svg_lines++;
			for (;;) {
				char q;

				while (strchr(" \t\r\n", *p) && *p)
					p++;
				if (*p == '>' || (p[0] == '/' && p[1] == '>'))
					break;
				for (n = 0; name_char(p[n], n == 0) && n < 31; n++)
					;
				if (!n)
					return xml_err(st, doc, p, "bad attribute name");
				for (a = 0; a < nattr; a++)
					if (strlen(attrs[a]) == n && !strncmp(attrs[a], p, n))
						return xml_err(st, doc, p, "duplicate attribute");
				if (nattr < 32) {
					memcpy(attrs[nattr], p, n);
					attrs[nattr++][n] = '\0';
				}
				if (!strcmp(name, "svg") && n == 5 && !strncmp(p, "xmlns", 5))
					st->svgs++;
				p += n;
				if (*p++ != '=' || (*p != '"' && *p != '\''))
					return xml_err(st, doc, p, "unquoted attribute");
				q = *p++;
				while (*p && *p != q) {
					if (*p == '<')
						return xml_err(st, doc, p, "'<' in attribute");
					if (*p == '&' && !entity(p))
						return xml_err(st, doc, p, "bad entity");
					p++;
				}
				if (!*p++)
					return xml_err(st, doc, p, "unterminated attribute value");
			}
			if (*p == '/') {
				p += 2;
				continue;
			}
			p++;
			if (depth == 64)
				return xml_err(st, doc, p, "nesting too deep");
			snprintf(stack[depth], sizeof(stack[0]), "%s", name);
			if (!strcmp(name, "svg") && svg_depth < 0)
				svg_depth = depth;
			depth++;
		}
	}
	if (depth)
		return xml_err(st, doc, p, "unclosed element at the end");
	if (!roots)
		return xml_err(st, doc, p, "no root element");
	return 0;
}

static char *html_of(const char *const *names, const struct report_opts *o)
{
	struct report_set s = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	for (; *names; names++) {
		json_t *doc = report_fixture(*names);

		assert_int_equal(report_set_add_json(&s, *names, doc), 0);
		json_decref(doc);
	}
	assert_int_equal(report_set_finish(&s, NULL), 0);
	f = open_memstream(&buf, &len);
	assert_int_equal(report_write_html(f, &s, o), 0);
	fclose(f);
	report_set_free(&s);
	return buf;
}

/* xmllint --noout on the text, when xmllint is installed (configure --install-deps). */
static void xmllint(const char *text)
{
	char path[] = "/tmp/gradsync-html-XXXXXX", cmd[128];
	int fd;

	if (access("/usr/bin/xmllint", X_OK)) {
		print_message("xmllint not installed: only the built-in check ran\n");
		return;
	}
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(cmd, sizeof(cmd), "/usr/bin/xmllint --noout %s", path);
	assert_int_equal(system(cmd), 0);
	unlink(path);
}

static void check_page(const char *html, int want_svgs)
{
	struct xml_stats st;

	xml_check(html, &st);
	if (st.error)
		fail_msg("not well-formed at byte %ld: %s: ...%.60s", st.error_at, st.error,
			 html + st.error_at);
	assert_int_equal(st.svgs, want_svgs);
	assert_int_equal(st.svg_titles, want_svgs);
	assert_true(st.svg_texts >= 8 * want_svgs);  /* title, axis labels, ticks, legend */
	assert_true(st.svg_lines >= 4 * want_svgs);  /* axes and ticks */
	/* Self-contained: nothing to fetch, nothing to run. */
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "src="));
	assert_null(strstr(html, "href="));
	assert_null(strstr(html, "@import"));
	xmllint(html);
}

static void test_transports_page(void **state)
{
	static const char *const names[] = { "tcp_shm", NULL };
	struct report_opts o = { .min_busbw = "20GB/s" };
	char *html = html_of(names, &o);

	(void)state;
	/* busbw chart and CPU-per-transport chart. */
	check_page(html, 2);
	/* Log-x tick labels from 4K to 1G. */
	assert_non_null(strstr(html, ">4K</text>"));
	assert_non_null(strstr(html, ">1M</text>"));
	assert_non_null(strstr(html, ">1G</text>"));
	assert_non_null(strstr(html, "allreduce f32: bus bandwidth vs message size"));
	assert_non_null(strstr(html, ">transport=shm</text>")); /* legend */
	/* cpu_s_per_GB's denominator is the bytes sent, as the Cases table says */
	assert_non_null(strstr(html, ">CPU seconds per GB sent</text>"));
	assert_null(strstr(html, "GB reduced"));
	assert_non_null(strstr(html, "FAIL: 3 of 3 cases"));
	free(html);
}

static void test_workload_and_merge_pages(void **state)
{
	static const char *const wl[] = { "resnet_overlap", NULL };
	static const char *const two[] = { "ib_node_a", "ib_node_b", NULL };
	struct report_opts o = { .project_ranks = { 8, 64 }, .nproject_ranks = 2 };
	char *html = html_of(wl, &o);

	(void)state;
	/* busbw, CPU, iteration breakdown, comm-wait share, a bucket timeline per case. */
	check_page(html, 6);
	assert_non_null(strstr(html, "#2 overlap=on: bucket timeline of one iteration"));
	assert_non_null(strstr(html, ">AllReduce running</text>"));
	assert_non_null(strstr(html, ">exposed communication</text>"));
	assert_non_null(strstr(html, ">comm-wait share</text>"));
	assert_non_null(strstr(html, "<h2>Projection</h2>"));
	free(html);
	html = html_of(two, &o);
	check_page(html, 2);
	assert_non_null(strstr(html, "<h2>Fairness</h2>"));
	free(html);
}

static void test_escaping(void **state)
{
	json_t *doc = report_fixture("tcp_shm");
	json_t *c = json_array_get(json_object_get(doc, "cases"), 0);
	struct report_set s = { 0 };
	struct report_opts o = { 0 };
	struct xml_stats st;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	json_object_set_new(c, "name", json_string("a<b & \"c\" 'd'"));
	assert_int_equal(report_set_add_json(&s, "x&y", doc), 0);
	assert_int_equal(report_set_finish(&s, NULL), 0);
	f = open_memstream(&buf, &len);
	assert_int_equal(report_write_html(f, &s, &o), 0);
	fclose(f);
	xml_check(buf, &st);
	assert_null(st.error);
	assert_non_null(strstr(buf, "a&lt;b &amp; &quot;c&quot; &#39;d&#39;"));
	free(buf);
	report_set_free(&s);
	json_decref(doc);
}

/* Sparse documents (a failed run, missing fields, nulls) still render in every format. */
static void test_sparse_documents(void **state)
{
	static const char *const docs[] = {
		"{\"schema\": \"gradsync-report/1\", \"cases\": []}",
		"{\"schema\": \"gradsync-report/1\", \"cases\": [{\"name\": \"x\", "
		"\"status\": \"failed\", \"error\": \"boom\", \"workload\": null}]}",
		"{\"schema\": \"gradsync-report/1\", \"nranks\": 2, \"cases\": [{\"name\": \"y\", "
		"\"collective\": [{\"op\": \"allreduce\", \"algo\": \"ring\", \"size\": 0, "
		"\"busbw_GBps\": null}, {\"size\": 4096}], \"workload\": {\"model\": \"m\", "
		"\"bucket_timeline\": [{}]}}]}",
	};
	struct report_opts o = { .min_busbw = "50%", .project_ranks = { 4 }, .nproject_ranks = 1 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		struct report_set s = { 0 };
		json_t *doc = json_loads(docs[i], 0, NULL);
		char *buf = NULL;
		size_t len = 0;
		struct xml_stats st;
		FILE *f;

		assert_non_null(doc);
		assert_int_equal(report_set_add_json(&s, "sparse", doc), 0);
		assert_int_equal(report_set_finish(&s, NULL), 0);
		f = open_memstream(&buf, &len);
		assert_int_equal(report_write_html(f, &s, &o), 0);
		assert_int_equal(report_write_md(f, &s, &o), 0);
		assert_int_equal(report_write_csv(f, &s, &o), 0);
		assert_int_equal(report_write_table(f, &s, &o), 0);
		fclose(f);
		buf[strstr(buf, "</html>\n") + 8 - buf] = '\0';
		assert_int_equal(xml_check(buf, &st), 0);
		free(buf);
		report_set_free(&s);
		json_decref(doc);
	}
}

static void test_checker_rejects(void **state)
{
	static const char *const bad[] = {
		"<a><b></a></b>", "<a x=1></a>", "<a>&nbsp;</a>", "<a></a><b></b>",
		"<a x=\"1\" x=\"2\"></a>", "<a>1 < 2</a>", "<a>",
	};
	struct xml_stats st;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		xml_check(bad[i], &st);
		assert_non_null(st.error);
	}
	xml_check("<!DOCTYPE html>\n<a x='&amp;'><b/>&#39;&#x27;</a>\n", &st);
	assert_null(st.error);
}

/* Every output of a set, into one malloc'd string per format. */
static void render_all(const struct report_set *s, const struct report_opts *o, char **html,
		       char **md, char **txt)
{
	size_t len;
	FILE *f;

	f = open_memstream(html, &len);
	assert_int_equal(report_write_html(f, s, o), 0);
	fclose(f);
	f = open_memstream(md, &len);
	assert_int_equal(report_write_md(f, s, o), 0);
	fclose(f);
	f = open_memstream(txt, &len);
	assert_int_equal(report_write_table(f, s, o), 0);
	fclose(f);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

/*
 * 10, 72 and 300 cases with 70-character names: no limit on cases, charts split so
 * no colour repeats in one, terminal lines bounded, every case named in every format.
 * GS_FIXTURE_OUT=DIR also writes the pages and documents there (tests/report/).
 */
static void test_many_cases(void **state)
{
	static const int sizes[] = { 10, 72, 300 };
	const char *out = getenv("GS_FIXTURE_OUT");
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct report_set s = { 0 };
		struct report_opts o = { .min_busbw = "80%" };
		char name[32], *html, *md, *txt, *line;
		int n = sizes[i], k, longest = 0, charts, wl = (n + 11) / 12;
		struct xml_stats st;
		json_t *doc;

		snprintf(name, sizeof(name), "sweep%d", n);
		doc = report_fixture(name);
		assert_non_null(doc);
		assert_int_equal(report_set_add_json(&s, name, doc), 0);
		assert_int_equal(report_set_finish(&s, NULL), 0);
		assert_int_equal(s.ncases, n);
		render_all(&s, &o, &html, &md, &txt);
		xml_check(html, &st);
		if (st.error)
			fail_msg("%d cases: not well-formed at %ld: %s", n, st.error_at, st.error);
		/* busbw charts of 12 series, CPU chart, iteration and comm-wait bars of 24
		 * cases, one bucket timeline per workload case. */
		charts = (n + 11) / 12 + 1 + 2 * ((wl + 23) / 24) + wl;
		assert_int_equal(st.svgs, charts);
		assert_int_equal(count(html, "<h3>#"), wl);
		for (k = 0; k < n; k++) {
			char needle[200];

			snprintf(needle, sizeof(needle), "| %d | %s |", k + 1, s.cases[k].name);
			assert_non_null(strstr(md, needle));
		}
		for (line = txt; *line;) {
			char *nl = strchr(line, '\n');
			int w = 0;

			for (char *p = line; p < (nl ? nl : line + strlen(line)); p++)
				w += ((unsigned char)*p & 0xc0) != 0x80;
			longest = w > longest ? w : longest;
			if (!nl)
				break;
			line = nl + 1;
		}
		assert_true(longest <= 162);
		if (out) {
			char path[512];

			snprintf(path, sizeof(path), "%s/%s.html", out, name);
			assert_int_equal(test_file_write(path, html), 0);
			snprintf(path, sizeof(path), "%s/%s.json", out, name);
			assert_int_equal(json_dump_file(doc, path, JSON_INDENT(1)), 0);
		}
		free(html);
		free(md);
		free(txt);
		report_set_free(&s);
		json_decref(doc);
	}
}

static void test_axis_helpers(void **state)
{
	char buf[16];

	(void)state;
	assert_string_equal(svg_size_label(4096, buf, sizeof(buf)), "4K");
	assert_string_equal(svg_size_label(1073741824.0, buf, sizeof(buf)), "1G");
	assert_string_equal(svg_size_label(512, buf, sizeof(buf)), "512");
	assert_true(svg_nice_step(47, 5) == 10);
	assert_true(svg_nice_step(0.9, 5) == 0.2);
	assert_true(svg_nice_step(100, 5) == 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_transports_page),
		cmocka_unit_test(test_workload_and_merge_pages),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_sparse_documents),
		cmocka_unit_test(test_checker_rejects),
		cmocka_unit_test(test_axis_helpers),
		cmocka_unit_test(test_many_cases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
