/*
 * A run directory without report.json (the run was killed, or could not write it):
 * rebuild the report from what the run wrote as it went, cases/NNNN.json (one per
 * finished case) and the status file, so `gradsync report DIR` still shows every
 * figure and says the run is incomplete.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "util/fsbound.h"
#include "util/jtext.h"
#include "util/log.h"

#define STATUS_MAX 512

/* First line of DIR/status, or "unknown" (no file: a run from before status files);
 * -ETIMEDOUT said when the directory does not answer. */
static int read_status(const char *dir, uint64_t timeout_ns, char *out, size_t len)
{
	char path[PATH_MAX + 8], why[PATH_MAX + 160];
	struct fsb_read r = { .path = path, .max = REPORT_MAX_FILE };
	int ret;

	snprintf(out, len, "unknown (no status file)");
	snprintf(path, sizeof(path), "%s/status", dir);
	ret = fsb_read(&r, timeout_ns, why, sizeof(why));
	if (fsb_gave_up(ret))
		log_err(LOG_REPORT, "read %s: %s", path, why);
	if (ret)
		return fsb_gave_up(ret) ? ret : 0;
	snprintf(out, len, "%.*s", (int)strcspn(r.data, "\n"), r.data);
	free(r.data);
	return 0;
}

/* cases/NNNN.json, sorted: the names the run writes (no strays, no temp files). */
static bool is_case_file(const char *n)
{
	return strlen(n) == 9 && strspn(n, "0123456789") == 4 && !strcmp(n + 4, ".json");
}

/* DIR/cases/NAME appended to cases when it is a whole case document (a warning says
 * why not, and it is skipped); -ETIMEDOUT said when the directory does not answer. */
static int add_case(const char *dir, const char *name, uint64_t timeout_ns, json_t *root,
		    json_t *cases, json_int_t *nranks)
{
	char path[PATH_MAX + 16], why[PATH_MAX + 160];
	struct fsb_read r = { .path = path, .max = REPORT_MAX_FILE };
	json_error_t jerr;
	json_int_t n;
	json_t *c;
	int ret;

	snprintf(path, sizeof(path), "%s/cases/%s", dir, name);
	ret = fsb_read(&r, timeout_ns, why, sizeof(why));
	if (fsb_gave_up(ret)) {
		log_err(LOG_REPORT, "read %s: %s", path, why);
		return ret;
	}
	if (ret) {
		log_warn(LOG_REPORT, "%s: %s (skipped)", path, why);
		return 0;
	}
	c = json_loadb(r.data, r.len, 0, &jerr);
	free(r.data);
	if (!c) {
		log_warn(LOG_REPORT, "%s: line %d: %s (skipped)", path, jerr.line, jerr.text);
		return 0;
	}
	if (!json_is_object(c)) {
		json_decref(c);
		return 0;
	}
	n = json_integer_value(json_object_get(c, "nranks"));
	*nranks = n > *nranks ? n : *nranks;
	if (!json_object_get(root, "hosts") && json_object_get(c, "hosts"))
		json_object_set(root, "hosts", json_object_get(c, "hosts"));
	json_array_append_new(cases, c);
	return 0;
}

int report_partial_run(const char *dir, uint64_t timeout_ns, json_t **out)
{
	char path[PATH_MAX + 8], status[STATUS_MAX], why[PATH_MAX + 160];
	json_t *root = json_object(), *cases = json_array();
	json_int_t nranks = 0;
	char **names;
	size_t n;
	int ret;

	*out = NULL;
	snprintf(path, sizeof(path), "%s/cases", dir);
	ret = fsb_list(path, &names, &n, timeout_ns, why, sizeof(why));
	if (fsb_gave_up(ret))
		log_err(LOG_REPORT, "list %s: %s", path, why);
	else if (ret)
		ret = -ENOENT;
	if (!ret)
		ret = read_status(dir, timeout_ns, status, sizeof(status));
	for (size_t i = 0; !ret && i < n; i++)
		if (is_case_file(names[i]))
			ret = add_case(dir, names[i], timeout_ns, root, cases, &nranks);
	free(names);
	if (!ret && (!root || !cases))
		ret = -ENOMEM;
	if (ret) {
		json_decref(root);
		json_decref(cases);
		return ret;
	}
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
	*out = root;
	return 0;
}
