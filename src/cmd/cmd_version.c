/* `gradsync version`: what this binary is and what it was built with. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "config.h"
#include "util/build_info.h"
#include "util/common.h"

int cmd_version(int argc, char **argv)
{
	struct build_info bi;

	/* -h / --help only: anything else was a mistake the user should hear about */
	if (argc > 1 && strcmp(argv[1], "-h") && strcmp(argv[1], "--help")) {
		fprintf(stderr, "gradsync version: unexpected argument '%s' (it takes none)\n",
			argv[1]);
		return GS_EXIT_USAGE;
	}
	if (argc > 1) {
		printf("usage: gradsync version | gradsync --version\n"
		       "Prints the version, the commit the sources came from (-dirty: they were\n"
		       "modified), when it was built, the binary's build-id (every rank of a job\n"
		       "must run the same), the compiler, CUDA architectures and the verbs\n"
		       "providers linked in.\n");
		return GS_EXIT_OK;
	}
	build_info_get(&bi);
	printf("gradsync %s (commit %s, built %s)\n", bi.version, bi.commit, bi.date);
	printf("build-id: %s\n", bi.build_id);
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
