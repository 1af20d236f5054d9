/*
 * The job driver of `gradsync run` (run/job.c) and the start-up steps it shares with
 * `gradsync rendezvous`: the job token and a rank's bootstrap options.
 */
#ifndef GS_RUN_JOB_H
#define GS_RUN_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/experiment.h"

#include "launch/bootstrap.h"
#include "launch/launch.h"

/* What `gradsync run`'s command line asked for (src/cmd/cmd_run.c parses it). */
struct run_job_args {
	const char *file;    /* FILE.ini, or NULL with replay */
	const char *out;     /* --out: parent of the run directory, NULL = output_dir */
	const char *replay;  /* --replay REPORT */
	int only_case;       /* --case N - 1, -1 = every case */
	struct launch_flags flags;
	char token[LAUNCH_TOKEN_MAX + 1]; /* --token's value, moved out of argv */
};

/*
 * The whole of `gradsync run` after its arguments: the driver (no launcher) or one
 * rank of a launched job. Returns the process exit code (GS_EXIT_*, 128 + signal).
 * argv is the command line the ranks are spawned with (token already scrubbed).
 */
int run_job(const struct run_job_args *a, int argc, char **argv);

/*
 * What `check` refuses, run refuses too: experiment_lint on this node (its topology), with
 * local when gradsync starts every rank itself. 0, or -EINVAL when it found an error
 * (every message printed when speak), -ENOMEM.
 */
int run_lint(const struct experiment *exp, bool local, bool speak);

/* The job's token: the user's (flag, [launch] token / token_file), else a random one.
 * 0 or -errno (logged). */
int run_job_token(const struct launch_opts *o, const char *flag, char *token, size_t len);

/* A rank's bootstrap options from what the launcher said, timeout capped at a day. */
void run_job_bootstrap_opts(const struct launch_info *li, uint64_t timeout_ns,
			    struct bootstrap_opts *bo);

#endif
