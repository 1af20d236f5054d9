/* `gradsync keys [SECTION] [--markdown]`: the key reference, from the key table. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "config/keys.h"
#include "util/common.h"

int cmd_keys(int argc, char **argv)
{
	const char *section = NULL;
	bool markdown = false;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--markdown")) {
			markdown = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: gradsync keys [SECTION] [--markdown]\n"
			       "Every key of the experiment language: section, name, type, unit, default,\n"
			       "allowed range or values, whether [matrix] may sweep it, and help.\n");
			return GS_EXIT_OK;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "gradsync keys: unknown option '%s'\n", argv[i]);
			return GS_EXIT_USAGE;
		} else if (!section) {
			section = argv[i];
			if (*section == '[')
				section++;
			if (!cfg_section_known(section) && strcmp(section, "matrix")) {
				fprintf(stderr, "gradsync keys: unknown section '%s'\n", argv[i]);
				return GS_EXIT_USAGE;
			}
		} else {
			fprintf(stderr, "gradsync keys: too many arguments\n");
			return GS_EXIT_USAGE;
		}
	}
	cfg_keys_print(stdout, section, markdown);
	return GS_EXIT_OK;
}
