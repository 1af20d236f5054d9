/*
 * Test-only: the captured sysfs trees in tests/fixtures/sysfs and topologies loaded from them.
 * Include after <cmocka.h>. GS_SYSFS_FIXTURES names the folder; otherwise it is looked for
 * from the cwd (tests/run.sh runs in the repository) and up to four parents.
 */
#ifndef GS_TOPO_TEST_SYSFS_H
#define GS_TOPO_TEST_SYSFS_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topo/topo.h"

static inline const char *sysfs_fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *env = getenv("GS_SYSFS_FIXTURES");
	char up[64] = "";

	if (env) {
		snprintf(path, sizeof(path), "%s/%s", env, name);
		return path;
	}
	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%stests/fixtures/sysfs/%s", up, name);
		if (access(path, F_OK) == 0)
			return path;
		strcat(up, "../");
	}
	fail_msg("fixture %s not found (run from the repository or set GS_SYSFS_FIXTURES)", name);
	return NULL;
}

/* The topology under ROOT (a fixture's path or /sys itself); the test fails if it cannot be read. */
static inline struct topo *topo_load_root(const char *root)
{
	struct topo *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	assert_int_equal(topo_discover(root, t), 0);
	return t;
}

static inline struct topo *topo_load_fixture(const char *name)
{
	return topo_load_root(sysfs_fixture(name));
}

#endif
