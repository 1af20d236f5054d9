/* `gradsync version`: what this binary is and what it was built with. */
#include <stdio.h>

#include "cmd/cmd.h"
#include "config.h"
#include "util/common.h"

int cmd_version(int argc, char **argv)
{
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
