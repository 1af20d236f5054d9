/*
 * What this binary is: the version, commit and date stamped when ninja built it
 * (tools/build_stamp.sh, build/build_stamp.h) and its build-id (util/build_id.h).
 * The one reader of the stamp: `gradsync version`, report.json and the ranks' build
 * check (run/agree.c) all take the build's identity from here.
 */
#ifndef GS_UTIL_BUILD_INFO_H
#define GS_UTIL_BUILD_INFO_H

#include <stddef.h>

#include "util/build_id.h"

struct build_info {
	const char *version; /* the VERSION file's */
	const char *commit;  /* git HEAD, 12 digits; "-dirty": sources differ; "unknown" */
	const char *date;    /* when the stamp was written, "2026-11-29T16:00:00Z" (UTC) */
	char build_id[BUILD_ID_HEX_LEN]; /* lowercase hex; "none" if linked without one */
};

/* Hex digits of the build-id that build_info_line shows (64 bits: no two builds meet). */
#define BUILD_INFO_ID_SHOWN 16

void build_info_get(struct build_info *bi);
/*
 * "gradsync 0.1.0 (commit 2cd4541afdd6, build-id 1a2b3c4d5e6f7a8b)": the line that names
 * a build to a person and to the other ranks, who compare it whole. Fits 96 bytes for
 * any commit and a version of up to 30 characters. Returns snprintf's count.
 */
int build_info_line(const struct build_info *bi, char *buf, size_t len);

#endif
