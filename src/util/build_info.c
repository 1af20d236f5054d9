/* The build's identity: the stamp ninja wrote and the build-id the linker wrote. */
#include <stdio.h>

#include "build_stamp.h"
#include "util/build_info.h"

void build_info_get(struct build_info *bi)
{
	bi->version = GS_VERSION;
	bi->commit = GS_COMMIT;
	bi->date = GS_BUILD_DATE;
	if (build_id_self(bi->build_id, sizeof(bi->build_id)))
		snprintf(bi->build_id, sizeof(bi->build_id), "none");
}

int build_info_line(const struct build_info *bi, char *buf, size_t len)
{
	return snprintf(buf, len, "gradsync %s (commit %s, build-id %.*s)", bi->version, bi->commit,
			BUILD_INFO_ID_SHOWN, bi->build_id);
}
