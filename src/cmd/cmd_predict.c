/*
 * `gradsync predict`: argv only; the two-tier model and the projection document are
 * report/tier.c and report/project.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "config/escape.h"
#include "config/experiment.h"
#include "report/doc.h"
#include "report/project.h"
#include "report/report.h"
#include "util/common.h"
#include "util/fsbound.h"
#include "util/strutil.h"
#include "util/units.h"

static void predict_usage(FILE *f)
{
	char algos[128];

	project_algo_list(algos, sizeof(algos));
	fprintf(f, "usage: gradsync predict RUN|report.json|FILE.ini... [--compare RUN]... [--hosts 2,4,8]\n"
		   "                        [--ranks-per-host 1,2] [--ranks 16,64] [--size 64MiB] [--fit-from 1MiB]\n"
		   "                        [--case NAME] [--force] [--timeout 30s]\n"
		   "Fit a two-tier alpha-beta model (inside a host, between hosts) on the runs' AllReduce\n"
		   "sweeps and project to other layouts (hosts x ranks per host): AllReduce time and busbw\n"
		   "per algorithm (%s), and each workload case's iteration,\n"
		   "comm-wait share and scaling efficiency. Runs given with --compare are not fitted on:\n"
		   "their measurements are shown beside the projection, with the error. Prints each\n"
		   "tier's alpha, beta and fit error; warns when a fit is poor and refuses to project\n"
		   "from one whose error is above 35%% (exit 1) unless --force. --ranks N projects N\n"
		   "ranks at each --ranks-per-host count. --fit-from leaves smaller sizes out of the fit (a\n"
		   "link whose shaper lets a burst through, sizes bound by something else than the link).\n"
		   "FILE.ini uses the newest run of that experiment. --timeout bounds each read of an\n"
		   "input (default %s): a file system that does not answer fails it (exit 2).\n",
		   algos, FSB_TIMEOUT_DEFAULT);
}

/* Newest OUTPUT_DIR/NAME-* directory holding a report.json, each look within timeout_ns:
 * -ETIMEDOUT said. */
static int newest_run(const struct experiment *exp, uint64_t timeout_ns, char *out, size_t len)
{
	const char *dir = exp->base.experiment.output_dir, *name = exp->base.experiment.name;
	char **names, why[PATH_MAX + 160];
	size_t nl = strlen(name), n;
	int ret;

	out[0] = '\0';
	ret = fsb_list(dir, &names, &n, timeout_ns, why, sizeof(why));
	for (size_t i = 0; !ret && i < n; i++) {
		char p[PATH_MAX];
		struct stat st;

		if (strncmp(names[i], name, nl) || names[i][nl] != '-')
			continue;
		snprintf(p, sizeof(p), "%s/%s/report.json", dir, names[i]);
		/* names carry a sortable UTC timestamp, and come sorted: the last is newest */
		ret = fsb_stat(p, &st, timeout_ns, why, sizeof(why));
		if (!ret)
			snprintf(out, len, "%s/%s", dir, names[i]);
		if (!fsb_gave_up(ret))
			ret = 0;
	}
	free(names);
	if (fsb_gave_up(ret))
		fprintf(stderr, "gradsync predict: looking for the newest run under %s: %s\n", dir,
			why);
	return ret ? ret : *out ? 0 : -ENOENT;
}

static int resolve_input(const char *in, uint64_t timeout_ns, char *path, size_t len)
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
	ret = newest_run(exp, timeout_ns, path, len);
	if (ret == -ENOENT)
		fprintf(stderr, "gradsync predict: no run of '%s' under %s/ (run it first: gradsync run %s)\n",
			exp->base.experiment.name, exp->base.experiment.output_dir, in);
	experiment_delete(exp);
	return ret;
}

/* Parse a comma list of positive integers into v (at most max). -EINVAL names the item,
 * or says the list is longer than max: dropping the rest unsaid projected 64 of 88. */
static int int_list(const char *flag, const char *text, int *v, int max)
{
	char buf[256], *items[PROJECT_MAX_LAYOUTS];
	size_t n, i;

	if (strlen(text) >= sizeof(buf)) {
		fprintf(stderr, "gradsync predict: %s: list too long (at most %zu characters)\n",
			flag, sizeof(buf) - 1);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", text);
	n = str_split(buf, ',', items, ARRAY_SIZE(items));
	if (n > (size_t)max || n > ARRAY_SIZE(items)) {
		fprintf(stderr, "gradsync predict: %s: more than %d counts\n", flag, max);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		char *end;
		long r = strtol(items[i], &end, 10);

		if (end == items[i] || *end || r < 1 || r > TIER_MAX_RANKS) {
			fprintf(stderr, "gradsync predict: %s: '%s' is not a count in 1..%d\n", flag,
				items[i], TIER_MAX_RANKS);
			return -EINVAL;
		}
		v[i] = (int)r;
	}
	return (int)n;
}

struct predict_args {
	const char *in[16], *cmp[16];   /* 32 runs at most: fit_run below */
	int nin, ncmp;
	int hosts[PROJECT_MAX_LAYOUTS], nhosts;
	int rph[PROJECT_MAX_LAYOUTS], nrph;
	int ranks[PROJECT_MAX_LAYOUTS], nranks;
	uint64_t timeout_ns;            /* --timeout: each read of an input */
	struct project_opts po;
};

static int predict_parse(int argc, char **argv, struct predict_args *a)
{
	struct cmd_once once = { .n = 0 };
	int i;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			predict_usage(stdout);
			return 1;
		} else if (val && !strncmp(arg, "--", 2) && strcmp(arg, "--compare") &&
			   strcmp(arg, "--force") && cmd_once("predict", &once, arg + 2)) {
			return -EINVAL;
		} else if (!strcmp(arg, "--force")) {
			a->po.force = true;
		} else if (val && !strcmp(arg, "--compare") && a->ncmp < 16) {
			a->cmp[a->ncmp++] = argv[++i];
		} else if (val && !strcmp(arg, "--case")) {
			a->po.case_name = argv[++i];
		} else if (val && !strcmp(arg, "--timeout")) {
			/* the bound of gradsync report's reads, and so of a run's */
			if (cmd_timeout_arg("predict", argv[++i], &a->timeout_ns))
				return -EINVAL;
		} else if (val && (!strcmp(arg, "--size") || !strcmp(arg, "--fit-from"))) {
			uint64_t b;

			if (units_parse_size(argv[++i], &b) || !b) {
				fprintf(stderr, "gradsync predict: %s: '%s' is not a size (e.g. 64MiB)\n",
					arg, val);
				return -EINVAL;
			}
			*(!strcmp(arg, "--size") ? &a->po.size : &a->po.min_size) = (double)b;
		} else if (val && !strcmp(arg, "--hosts")) {
			if ((a->nhosts = int_list(arg, argv[++i], a->hosts, PROJECT_MAX_LAYOUTS)) < 0)
				return -EINVAL;
		} else if (val && !strcmp(arg, "--ranks-per-host")) {
			if ((a->nrph = int_list(arg, argv[++i], a->rph, PROJECT_MAX_LAYOUTS)) < 0)
				return -EINVAL;
		} else if (val && !strcmp(arg, "--ranks")) {
			if ((a->nranks = int_list(arg, argv[++i], a->ranks, PROJECT_MAX_LAYOUTS)) < 0)
				return -EINVAL;
		} else if (arg[0] != '-' && a->nin < 16) {
			a->in[a->nin++] = arg;
		} else {
			fprintf(stderr, "gradsync predict: unexpected argument '%s' (see --help)\n", arg);
			return -EINVAL;
		}
	}
	if (!a->nin) {
		predict_usage(stderr);
		return -EINVAL;
	}
	return 0;
}

/* Add a layout the flags asked for; -EINVAL after one line when it cannot be projected:
 * the table silently left out layouts past 64 and those of more than 1024 ranks. */
static int layout_add(struct predict_args *a, int hosts, int rph)
{
	if ((long)hosts * rph > TIER_MAX_RANKS) {
		fprintf(stderr, "gradsync predict: %d hosts x %d ranks per host is %ld ranks, more than the %d projected\n",
			hosts, rph, (long)hosts * rph, TIER_MAX_RANKS);
		return -EINVAL;
	}
	if (a->po.nlays >= PROJECT_MAX_LAYOUTS) {
		fprintf(stderr, "gradsync predict: --hosts, --ranks and --ranks-per-host ask for more than %d layouts\n",
			PROJECT_MAX_LAYOUTS);
		return -EINVAL;
	}
	a->po.lays[a->po.nlays++] = (struct tier_layout){ hosts, rph };
	return 0;
}

/* --hosts x --ranks-per-host, and --ranks N at each ranks-per-host count dividing N. */
static int predict_layouts(struct predict_args *a)
{
	int i, k, nr = a->nrph ? a->nrph : 1, one = 1, *rph = a->nrph ? a->rph : &one;

	for (k = 0; k < nr; k++) {
		for (i = 0; i < a->nhosts; i++)
			if (layout_add(a, a->hosts[i], rph[k]))
				return -EINVAL;
		for (i = 0; i < a->nranks; i++)
			if (a->ranks[i] % rph[k] == 0 && layout_add(a, a->ranks[i] / rph[k], rph[k]))
				return -EINVAL;
	}
	/* a count no ranks-per-host divides would project nothing, and say nothing */
	for (i = 0; i < a->nranks; i++) {
		for (k = 0; k < nr && a->ranks[i] % rph[k]; k++)
			;
		if (k == nr) {
			fprintf(stderr, "gradsync predict: --ranks %d: no --ranks-per-host count divides it\n",
				a->ranks[i]);
			return -EINVAL;
		}
	}
	/* --ranks-per-host alone: the default host counts at each */
	if (!a->nhosts && !a->nranks && a->nrph)
		for (k = 0; k < nr; k++)
			for (i = 2; i <= 64 && (long)i * rph[k] <= TIER_MAX_RANKS; i *= i < 16 ? 2 : 4)
				if (layout_add(a, i, rph[k]))
					return -EINVAL;
	return 0;
}

/*
 * --case as the report shows the name ("bind=cpus:0$,1,transport=tcp"), or typed as the
 * values read, without the '$' escapes, when exactly one case reads so; *name becomes
 * the report's spelling. 0, or -EINVAL with one line said.
 */
static int predict_case(const struct report_set *s, const char **name)
{
	int i, found = -1, n = 0;

	if (report_set_find(s, *name) >= 0)
		return 0;
	for (i = 0; i < s->ncases; i++) {
		char plain[sizeof(s->cases[0].name)];

		snprintf(plain, sizeof(plain), "%s", s->cases[i].name);
		esc_unescape(plain);
		if (!strcmp(plain, *name)) {
			found = i;
			n++;
		}
	}
	if (n == 1) {
		*name = s->cases[found].name;
		return 0;
	}
	if (n > 1)
		fprintf(stderr, "gradsync predict: --case '%s': %d cases read so without their "
			"'$' escapes; give the name as the report shows it\n", *name, n);
	else
		fprintf(stderr, "gradsync predict: --case '%s': no such case in the runs given "
			"(names as the report shows them)\n", *name);
	return -EINVAL;
}

int cmd_predict(int argc, char **argv)
{
	struct predict_args a = { .timeout_ns = fsb_timeout_default_ns() };
	struct report_set set = { 0 };
	char path[PATH_MAX];
	bool fit_run[32];
	struct rdoc d = { 0 };
	int i, ret, code = GS_EXIT_OK;

	ret = predict_parse(argc, argv, &a);
	if (ret)
		return ret > 0 ? GS_EXIT_OK : GS_EXIT_USAGE;
	for (i = 0; i < a.nin + a.ncmp; i++) {
		const char *in = i < a.nin ? a.in[i] : a.cmp[i - a.nin];

		if (resolve_input(in, a.timeout_ns, path, sizeof(path)) ||
		    report_set_add_path(&set, path, a.timeout_ns)) {
			code = GS_EXIT_USAGE;
			goto out_free;
		}
		fit_run[set.nruns - 1] = i < a.nin;
	}
	if (report_set_finish(&set, NULL)) {
		code = GS_EXIT_USAGE;
		goto out_free;
	}
	/* a --case that names no case projected every workload and said nothing */
	if (a.po.case_name && predict_case(&set, &a.po.case_name)) {
		code = GS_EXIT_USAGE;
		goto out_free;
	}
	a.po.fit_run = fit_run;
	if (predict_layouts(&a)) {
		code = GS_EXIT_USAGE;
		goto out_free;
	}
	project_default_layouts(&set, &a.po);
	ret = project_doc(&set, &a.po, &d);
	doc_render_text(stdout, &d);
	fflush(stdout);
	if (ret == -ENOENT) {
		fprintf(stderr, "gradsync predict: no AllReduce sweep of two or more ranks to fit in %s%s%s\n",
			a.in[0], a.nin > 1 ? " and the other runs" : "",
			a.po.min_size > 0 ? " at --fit-from's sizes" : "");
		code = GS_EXIT_USAGE;
	} else if (ret == FIT_UNUSABLE && !a.po.force) {
		fprintf(stderr, "gradsync predict: a fit is unusable (see ERROR above): nothing projected from it\n");
		code = GS_EXIT_FAIL;
	} else if (ret == FIT_POOR) {
		fprintf(stderr, "gradsync predict: warning: a fit is poor (see WARNING above): treat the projection with care\n");
	}
out_free:
	doc_free(&d);
	report_set_free(&set);
	return code;
}
