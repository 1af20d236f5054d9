/*
 * A run directory without report.json (the run was killed, or could not write it):
 * rebuild the report from what the run wrote as it went, cases/NNNN.json (one per
 * finished case) and the status file, so `gradsync report DIR` still shows every
 * figure and says the run is incomplete.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "util/jtext.h"
#include "util/log.h"

#define STATUS_MAX 512

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* First line of DIR/status, or "unknown" (no file: a run from before status files). */
static void read_status(const char *dir, char *out, size_t len)
{
	char path[600];
	FILE *f;

	snprintf(out, len, "unknown (no status file)");
	snprintf(path, sizeof(path), "%s/status", dir);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

/* cases/NNNN.json, sorted: the names the run writes (no strays, no temp files). */
static bool is_case_file(const char *n)
{
	return strlen(n) == 9 && strspn(n, "0123456789") == 4 && !strcmp(n + 4, ".json");
}

json_t *report_partial_run(const char *dir)
{
	char path[700], status[STATUS_MAX], why[STATUS_MAX + 64];
	char **names = NULL;
	size_t n = 0, cap = 0;
	json_t *root, *cases;
	struct dirent *e;
	json_int_t nranks = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/cases", dir);
	d = opendir(path);
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (!is_case_file(e->d_name))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof(*names));

			if (!nn)
				break;
			names = nn;
		}
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), name_cmp);
	read_status(dir, status, sizeof(status));
	root = json_object();
	cases = json_array();
	for (size_t i = 0; i < n; i++) {
		json_error_t jerr;
		json_t *c;

		snprintf(path, sizeof(path), "%s/cases/%s", dir, names[i]);
		c = json_load_file(path, 0, &jerr);
		if (!c)
			log_warn(LOG_REPORT, "%s: line %d: %s (skipped)", path, jerr.line, jerr.text);
		else if (!json_is_object(c))
			json_decref(c);
		else {
			json_int_t r = json_integer_value(json_object_get(c, "nranks"));

			nranks = r > nranks ? r : nranks;
			if (!json_object_get(root, "hosts") && json_object_get(c, "hosts"))
				json_object_set(root, "hosts", json_object_get(c, "hosts"));
			json_array_append_new(cases, c);
		}
		free(names[i]);
	}
	free(names);
	snprintf(why, sizeof(why), "no report.json; status: %s", status);
	json_object_set_new(root, "schema", json_string(REPORT_SCHEMA));
	json_object_set_new(root, "status", json_string("interrupted"));
	json_object_set_new(root, "interrupted", json_text(why));
	json_object_set_new(root, "nranks", json_integer(nranks));
	if (json_array_size(cases)) /* the name the Runs table shows, from the first case */
		json_object_set_new(root, "experiment",
				    json_pack("{s:O?}", "name",
					      json_object_get(json_object_get(json_array_get(cases, 0),
									      "config"),
							      "experiment.name")));
	json_object_set_new(root, "cases", cases);
	log_warn(LOG_REPORT,
		 "%s: no report.json: the run did not finish (status: %s); showing the %zu "
		 "cases it completed, from %s/cases/",
		 dir, status, json_array_size(cases), dir);
	return root;
}
