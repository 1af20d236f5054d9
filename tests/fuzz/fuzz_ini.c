/*
 * libFuzzer harness for the experiment loader: the input is an INI file, loaded as
 * `gradsync check --full` loads it (includes, ${ENV}, every value parsed and validated,
 * the matrix expanded), then every case and the resolved file are formatted back.
 * Any crash, sanitizer report, leak or hang is a finding; errors are expected.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/experiment.h"

static char path[64];
static int fd = -1;
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "/tmp/gradsync-fuzz-ini-XXXXXX");
	fd = mkstemp(path);
	devnull = fopen("/dev/null", "w");
	if (fd < 0 || !devnull)
		abort();
	/* the ${ENV} expansion sees a known variable and a known empty one */
	setenv("GS_FUZZ_VAR", "tcp", 1);
	setenv("GS_FUZZ_EMPTY", "", 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct experiment *exp;
	char err[EXP_ERR_MAX];
	size_t i;

	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	exp = calloc(1, sizeof(*exp));
	if (!exp)
		abort();
	if (experiment_load(path, exp, err, sizeof(err)) == 0) {
		experiment_write_resolved(devnull, exp);
		/* a few cases suffice: the others go through the same code, only slower */
		for (i = 0; i < exp->ncases && i < 16; i++)
			experiment_write_case_ini(devnull, exp, &exp->cases[i]);
	} else if (!memchr(err, '\0', sizeof(err)) || !err[0]) {
		abort(); /* a failed load always says why, in one terminated line */
	}
	experiment_delete(exp);
	return 0;
}
