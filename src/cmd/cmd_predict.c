/*
 * `gradsync predict`: project a measured workload to other rank counts with the
 * alpha-beta model fitted on the run's size sweep and the workload's bucket timeline.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "config/experiment.h"
#include "report/project.h"
#include "report/report.h"
#include "util/common.h"
#include "util/strutil.h"

static void predict_usage(FILE *f)
{
	fprintf(f, "usage: gradsync predict RUN_DIR|report.json|FILE.ini [--ranks 2,4,16,64] [--case NAME]\n"
		   "Fit t = alpha*steps + beta*bytes*factor on the run's size sweep (per transport and\n"
		   "algorithm) and replay each workload case's bucket timeline at other rank counts:\n"
		   "iteration time, comm-wait share and scaling efficiency; predicted vs measured where\n"
		   "the run measured that rank count. FILE.ini uses the newest run of that experiment.\n");
}

/* Newest OUTPUT_DIR/NAME-* directory holding a report.json. */
static int newest_run(const struct experiment *exp, char *out, size_t len)
{
	const char *dir = exp->base.experiment.output_dir, *name = exp->base.experiment.name;
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t nl = strlen(name);

	out[0] = '\0';
	if (!d)
		return -ENOENT;
	while ((e = readdir(d))) {
		char p[PATH_MAX];
		struct stat st;

		if (strncmp(e->d_name, name, nl) || e->d_name[nl] != '-')
			continue;
		snprintf(p, sizeof(p), "%s/%s/report.json", dir, e->d_name);
		/* names carry a sortable UTC timestamp */
		if (stat(p, &st) == 0 && strcmp(e->d_name, out + (*out ? strlen(dir) + 1 : 0)) > 0)
			snprintf(out, len, "%s/%s", dir, e->d_name);
	}
	closedir(d);
	return *out ? 0 : -ENOENT;
}

static int resolve_input(const char *in, char *path, size_t len)
{
	struct experiment *exp;
	int ret;

	if (!strstr(in, ".ini")) {
		snprintf(path, len, "%s", in);
		return 0;
	}
	exp = experiment_open(in);
	if (!exp)
		return -EINVAL;
	ret = newest_run(exp, path, len);
	if (ret)
		fprintf(stderr, "gradsync predict: no run of '%s' under %s/ (run it first: gradsync run %s)\n",
			exp->base.experiment.name, exp->base.experiment.output_dir, in);
	experiment_delete(exp);
	return ret;
}

int cmd_predict(int argc, char **argv)
{
	char ranks_text[256] = "2,4,8,16,64", path[PATH_MAX], *items[32];
	const char *in = NULL, *case_name = NULL;
	struct report_set set = { 0 };
	size_t n, i;
	int a, code = GS_EXIT_OK, printed = 0;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help")) {
			predict_usage(stdout);
			return GS_EXIT_OK;
		} else if (!strcmp(argv[a], "--ranks") && a + 1 < argc) {
			snprintf(ranks_text, sizeof(ranks_text), "%s", argv[++a]);
		} else if (!strcmp(argv[a], "--case") && a + 1 < argc) {
			case_name = argv[++a];
		} else if (argv[a][0] != '-' && !in) {
			in = argv[a];
		} else {
			fprintf(stderr, "gradsync predict: unexpected argument '%s' (see --help)\n", argv[a]);
			return GS_EXIT_USAGE;
		}
	}
	if (!in) {
		predict_usage(stderr);
		return GS_EXIT_USAGE;
	}
	if (resolve_input(in, path, sizeof(path)))
		return GS_EXIT_USAGE;
	if (report_set_add_path(&set, path) || report_set_finish(&set, NULL)) {
		report_set_free(&set);
		return GS_EXIT_USAGE;
	}
	n = str_split(ranks_text, ',', items, ARRAY_SIZE(items));
	for (i = 0; i < n && i < ARRAY_SIZE(items); i++) {
		char *end;
		long r = strtol(items[i], &end, 10);
		int ret;

		if (end == items[i] || *end || r < 1 || r > 1048576) {
			fprintf(stderr, "gradsync predict: --ranks: '%s' is not a rank count\n", items[i]);
			code = GS_EXIT_USAGE;
			break;
		}
		printf("%s%ld ranks:\n", i ? "\n" : "", r);
		ret = project_print(stdout, &set, case_name, (int)r);
		if (ret == -ENOENT) {
			fprintf(stderr, "gradsync predict: %s has no workload case with both a bucket timeline and a size sweep over its transport to fit\n",
				path);
			code = GS_EXIT_USAGE;
			break;
		}
		printed += ret > 0 ? ret : 0;
	}
	report_set_free(&set);
	return code;
}
