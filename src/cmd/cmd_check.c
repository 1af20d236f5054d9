/* `gradsync check FILE.ini`: parse, validate and print the case matrix; runs nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "config/experiment.h"
#include "run/job.h"
#include "run/run.h"
#include "util/common.h"
#include "util/units.h"

static void print_axes(const struct experiment *exp)
{
	int i, j;

	for (i = 0; i < exp->naxes; i++) {
		char label[128], v[2 * EXP_VALUE_MAX];

		printf("  axis %-24s", experiment_key_label(exp->axes[i].key, label, sizeof(label)));
		for (j = 0; j < exp->axes[i].nvalues; j++)
			printf("%s%s", j ? ", " : "",
			       experiment_value_text(exp->axes[i].values[j], v, sizeof(v)));
		printf("\n");
	}
}

/* Keys the file changed from their defaults (beyond the matrix), for the summary. */
static void print_base(const struct experiment *exp)
{
	struct cfg *def = malloc(sizeof(*def));
	char e[256];
	size_t i;

	if (!def || cfg_defaults(def, e, sizeof(e))) {
		free(def);
		return;
	}
	for (i = 0; i < cfg_key_count(); i++) {
		const struct cfg_key *k = cfg_key_at(i);
		char a[8192], b[8192];

		cfg_value_format(&exp->base, k, a, sizeof(a));
		cfg_value_format(def, k, b, sizeof(b));
		if (strcmp(a, b) && !experiment_key_swept(exp, k))
			printf("  set  %s.%s = %s\n", k->section, k->name, a);
	}
	free(def);
}

/*
 * Cases whose local ranks' buffers would not fit in this machine's memory now: warnings,
 * as the file may be meant for other machines; run refuses such a case at its start.
 */
static void warn_memory(const struct experiment *exp, const char *path)
{
	uint64_t avail, per;
	char need[128], a[32];

	if (run_mem_available(&avail))
		return;
	for (size_t i = 0; i < exp->ncases; i++) {
		const struct exp_case *c = &exp->cases[i];
		int n = c->cfg.launch.local_ranks;

		per = run_case_host_bytes(c);
		if (!per || run_memfit(per, n, avail))
			continue;
		fprintf(stderr, "%s: warning: case %zu (%s): %d local rank%s %s, this machine has %s available (MemAvailable): run would stop it here\n",
			path, i + 1, c->name, n, n == 1 ? "" : "s",
			run_memfit_need(need, sizeof(need), per, n),
			units_fmt_size_approx(avail, a, sizeof(a)));
	}
}

int cmd_check(int argc, char **argv)
{
	struct experiment *exp;
	bool full = false;
	const char *path = NULL;
	size_t i;

	for (i = 1; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "--full")) {
			full = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: gradsync check FILE.ini [--full]\n"
			       "Parse and validate FILE.ini (includes, ${ENV}, [matrix]) and print one line\n"
			       "per case; --full prints every resolved key of every case. Runs nothing.\n"
			       "Exit 0 when valid, 2 with FILE:LINE: section.key: error otherwise.\n");
			return GS_EXIT_OK;
		} else if (argv[i][0] == '-' || path) {
			fprintf(stderr, "gradsync check: unexpected argument '%s'\n", argv[i]);
			return GS_EXIT_USAGE;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		fprintf(stderr, "gradsync check: missing FILE.ini\n");
		return GS_EXIT_USAGE;
	}
	exp = experiment_open(path);
	if (!exp)
		return GS_EXIT_USAGE;
	/* a launcher may add ranks: local_ranks = 1 under write_bw only warns */
	if (run_lint(exp, false, true)) {
		experiment_delete(exp);
		return GS_EXIT_USAGE;
	}
	warn_memory(exp, path);
	printf("%s: experiment '%s', %zu case%s\n", path, exp->base.experiment.name, exp->ncases,
	       exp->ncases == 1 ? "" : "s");
	print_base(exp);
	print_axes(exp);
	for (i = 0; i < exp->ncases; i++) {
		printf("  case %-3zu %s%s\n", i + 1, exp->cases[i].name,
		       exp->cases[i].baseline == (int)i ? "  (baseline)" : "");
		if (full)
			experiment_write_case_ini(stdout, exp, &exp->cases[i]);
	}
	experiment_delete(exp);
	return GS_EXIT_OK;
}
