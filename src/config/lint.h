/*
 * Checks across keys of a loaded experiment, run by `check` and `run` before anything
 * runs: what a single key's bounds cannot see. Errors stop (exit 2), warnings are
 * printed; every message is one line "FILE:LINE: section.key: ...", naming where the
 * value was set (the [matrix] axis, or the key's line in the file or an include).
 *
 * Errors: a size that is not a whole number of elements of the case's dtype (it would
 * be truncated), gdr = on without GPU buffers or over a transport without GPUDirect,
 * compute = gemm / spin without a GPU, a min_busbw range holding none of a case's sizes,
 * transport = nccl without GPU buffers,
 * numa.bind node:N or cpus:LIST naming a NUMA node or CPU this node does not have,
 * baseline / exclude terms on keys that are not [matrix] axes, a point-to-point op with
 * local_ranks = 1 when gradsync starts every rank itself. Warnings: a key set or swept
 * that does nothing for the case's transport, model or op (the swept cases are
 * identical), an exclude rule that excludes nothing, a cpus:LIST with fewer CPUs than
 * local ranks (they share them), that point-to-point op when a launcher may add ranks.
 */
#ifndef GS_CONFIG_LINT_H
#define GS_CONFIG_LINT_H

#include <stdbool.h>
#include <stdio.h>

#include "config/experiment.h"

struct topo;

#define LINT_MAX_MSGS 64

struct lint_msg {
	bool error;
	size_t where_len; /* text opens with the location ("FILE:LINE: key") this long, then ": " */
	char text[640];
};

struct lint_result {
	int n;
	int nerrors;
	struct lint_msg msg[LINT_MAX_MSGS];
};

/* Where the experiment is checked: what the checks that depend on it know. */
struct lint_node {
	const struct topo *topo; /* this node's: bind = node:N / cpus:LIST checked on it;
				  * NULL = not checked */
	bool local;              /* no launcher: gradsync starts every rank (local_ranks) */
};

void experiment_lint(const struct experiment *exp, const struct lint_node *node,
		     struct lint_result *out);
/* Print every message to f ("warning: " / "error: " after the location); returns nerrors. */
int lint_print(FILE *f, const struct lint_result *r);

#endif
