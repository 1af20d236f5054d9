/* `gradsync version`: what this binary is and what it was built with. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "config.h"
#include "util/common.h"

int cmd_version(int argc, char **argv)
{
	/* -h / --help only: anything else was a mistake the user should hear about */
	if (argc > 1 && strcmp(argv[1], "-h") && strcmp(argv[1], "--help")) {
		fprintf(stderr, "gradsync version: unexpected argument '%s' (it takes none)\n",
			argv[1]);
		return GS_EXIT_USAGE;
	}
	if (argc > 1) {
		printf("usage: gradsync version | gradsync --version\n"
		       "Prints the version, commit, build date, compiler, CUDA architectures and\n"
		       "the verbs providers linked in.\n");
		return GS_EXIT_OK;
	}
	printf("gradsync %s (commit %s, built %s)\n", GS_VERSION, GS_COMMIT, GS_BUILD_DATE);
	printf("compiler: %s\n", GS_COMPILER);
	if (GS_HAVE_CUDA)
		printf("cuda:     on (%s)\n", GS_CUDA_ARCHS);
	else
		printf("cuda:     off (built without CUDA)\n");
	if (GS_HAVE_VERBS)
		printf("verbs:    on (rdma-core static, providers: %s)\n", GS_VERBS_PROVIDERS);
	else
		printf("verbs:    off (built without rdma-core)\n");
	return GS_EXIT_OK;
}
