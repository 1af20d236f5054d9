/*
 * `gradsync run FILE.ini`: its command line. The job itself (the driver that spawns
 * each case's ranks, or one rank of a launched job) is run/job.c.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "run/job.h"
#include "util/common.h"

static void run_usage(FILE *f)
{
	fprintf(f,
		"usage: gradsync run FILE.ini [options]\n"
		"       gradsync run --replay DIR|report.json [options]\n"
		"Run every case of the experiment and write results/<name>-<time>/ (report.json,\n"
		"report.csv, report.md, report.html, the resolved experiment).\n"
		"  --out DIR             parent of the run directory (default [experiment] output_dir)\n"
		"  --case N              run only case N (1-based, as 'gradsync check' numbers them)\n"
		"  --replay REPORT       rerun the exact experiment recorded in a report\n"
		"  --rank R --world-size N --rendezvous HOST:PORT [--token T]\n"
		"                        join a job started by hand (one command per rank)\n"
		"Launchers detected from the environment: Slurm, Open MPI, PMIx, PMI (Hydra,\n"
		"PALS), torchrun.\n");
}

/* The options parse_args knows, each taking a value. */
static bool takes_value(const char *o)
{
	static const char *const opts[] = { "--out", "--replay", "--case", "--rank",
					    "--world-size", "--rendezvous", "--token" };

	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		if (!strcmp(o, opts[i]))
			return true;
	return false;
}

static int parse_args(int argc, char **argv, struct run_job_args *a)
{
	struct cmd_once once = { .n = 0 };
	int i;

	memset(a, 0, sizeof(*a));
	a->only_case = -1;
	a->flags.rank = -1;
	a->flags.world_size = -1;
	for (i = 1; i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			run_usage(stdout);
			return 1;
		}
		if (o[0] != '-') {
			if (a->file) {
				fprintf(stderr, "gradsync run: unexpected argument '%s'\n", o);
				return -EINVAL;
			}
			a->file = o;
			continue;
		}
		/* an unknown option before a missing value: '--bogus' is not '--bogus needs a
		 * value' */
		if (!takes_value(o)) {
			fprintf(stderr, "gradsync run: unknown option '%s' (see --help)\n", o);
			return -EINVAL;
		}
		if (!v) {
			fprintf(stderr, "gradsync run: option %s needs a value\n", o);
			return -EINVAL;
		}
		i++;
		if (cmd_once("run", &once, o + 2))
			return -EINVAL;
		if (!strcmp(o, "--out")) {
			if (!*v) { /* "" + "/name-time" is a directory in / */
				fprintf(stderr, "gradsync run: --out '': expected a directory ('.' for the working directory)\n");
				return -EINVAL;
			}
			a->out = v;
		} else if (!strcmp(o, "--replay")) {
			a->replay = v;
		} else if (!strcmp(o, "--case")) {
			/* atoi ran case 2 for '2x' and for 4294967298 */
			if (cmd_int_arg("run", o, v, 1, INT_MAX, &a->only_case))
				return -EINVAL;
			a->only_case--;
		} else if (!strcmp(o, "--rank")) {
			if (cmd_int_arg("run", o, v, 0, LAUNCH_RANKS_MAX - 1, &a->flags.rank))
				return -EINVAL;
		} else if (!strcmp(o, "--world-size")) {
			if (cmd_int_arg("run", o, v, 1, LAUNCH_RANKS_MAX, &a->flags.world_size))
				return -EINVAL;
		} else if (!strcmp(o, "--rendezvous")) {
			if (!launch_rendezvous_valid(v)) {
				fprintf(stderr, "gradsync run: --rendezvous '%s': expected HOST:PORT, "
					"PORT 1..65535\n", v);
				return -EINVAL;
			}
			a->flags.rendezvous = v;
		} else { /* --token: scrubbed from argv by cmd_run before anything copies argv */
			a->flags.token = a->token;
		}
	}
	if (!a->file == !a->replay) {
		fprintf(stderr, "gradsync run: give one experiment FILE.ini or --replay REPORT\n");
		return -EINVAL;
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_job_args a;
	int ret;

	ret = parse_args(argc, argv, &a);
	if (!ret && launch_argv_scrub_token(argc, argv, a.token, sizeof(a.token)))
		ret = -EINVAL;
	if (ret)
		return ret > 0 ? GS_EXIT_OK : GS_EXIT_USAGE;
	/*
	 * A reader of our output gone (`gradsync run x.ini 2>&1 | head`, ssh without a tty
	 * whose connection dropped) must not kill a run mid-case with its status left
	 * "running" and no report: writes to it fail with EPIPE instead, the run goes on to
	 * its report, and main's stdout_done says the output was lost. The ranks are runs
	 * too. The other verbs keep the default: `gradsync keys | head` ends quietly.
	 */
	signal(SIGPIPE, SIG_IGN);
	return run_job(&a, argc, argv);
}
