/*
 * `gradsync rendezvous`: prove every rank can reach rank 0 before running anything:
 * launcher detection (or a local spawn), the bootstrap, a table of who is where, and
 * the bootstrap's barrier and allgather latency.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "launch/bootstrap.h"
#include "launch/launch.h"
#include "run/job.h"
#include "run/stop.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

/* What each rank tells the others (fixed size: it travels in one allgather). */
struct rdv_rec {
	int32_t rank, nranks, local_rank, local_nranks, pid;
	char host[64];
	char launcher[16];
};

struct rdv_args {
	struct launch_opts opts;
	struct launch_flags flags;
	int iters;
	char token[LAUNCH_TOKEN_MAX + 1]; /* --token's value, moved out of argv */
};

static void rdv_usage(FILE *out)
{
	fprintf(out, "usage: gradsync rendezvous [--local-ranks N] [--timeout DURATION] "
		     "[--iters N]\n"
		     "                            [--rank R --world-size N] [--rendezvous HOST:PORT] "
		     "[--token STR]\n"
		     "Starts or joins a job (Slurm, Open MPI, PMIx, PMI, torchrun, flags, or N local\n"
		     "ranks), connects every rank to rank 0 and prints where each rank runs and\n"
		     "the bootstrap's barrier/allgather latency. Exit 0 when every rank took part;\n"
		     "130 / 143 / 129 for the rank stopped by SIGINT / SIGTERM / SIGHUP.\n");
}

static int parse_args(int argc, char **argv, struct rdv_args *a)
{
	struct cmd_once once = { .n = 0 };

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int ret = 0;

		if (!strcmp(o, "-h") || !strcmp(o, "--help"))
			return 1;
		if (o[0] != '-') {
			fprintf(stderr, "gradsync rendezvous: unexpected argument '%s' (it takes options only, no experiment file)\n",
				o);
			return -EINVAL;
		}
		if (!v) {
			fprintf(stderr, "gradsync rendezvous: %s needs a value\n", o);
			return -EINVAL;
		}
		i++;
		if (o[1] == '-' && cmd_once("rendezvous", &once, o + 2))
			return -EINVAL;
		if (!strcmp(o, "--local-ranks"))
			ret = cmd_int_arg("rendezvous", o, v, 1, 1024, &a->opts.local_ranks);
		else if (!strcmp(o, "--iters"))
			ret = cmd_int_arg("rendezvous", o, v, 1, 1000000, &a->iters);
		else if (!strcmp(o, "--rank"))
			ret = cmd_int_arg("rendezvous", o, v, 0, LAUNCH_RANKS_MAX - 1, &a->flags.rank);
		else if (!strcmp(o, "--world-size"))
			ret = cmd_int_arg("rendezvous", o, v, 1, LAUNCH_RANKS_MAX, &a->flags.world_size);
		else if (!strcmp(o, "--rendezvous")) /* launch_detect checks it, in one line */
			a->flags.rendezvous = v;
		else if (!strcmp(o, "--token"))
			a->flags.token = a->token; /* filled by launch_argv_scrub_token */
		else if (!strcmp(o, "--timeout")) /* 1ns passed here and failed every rank */
			ret = cmd_duration_arg("rendezvous", o, v, "launch", "timeout",
					       &a->opts.timeout_ns);
		else {
			fprintf(stderr, "gradsync rendezvous: unknown option '%s'\n", o);
			ret = -EINVAL;
		}
		if (ret)
			return ret;
	}
	return 0;
}

/* No launcher: start local_ranks copies of this very command line, with a fresh token. */
static int spawn_local(int argc, char **argv, const struct rdv_args *a)
{
	char **child_argv = launch_child_argv(argc, argv), token[LAUNCH_TOKEN_MAX + 1];
	int ret, signo = 0;

	if (!child_argv)
		return GS_EXIT_FAIL;
	ret = run_job_token(&a->opts, a->flags.token, token, sizeof(token));
	if (!ret)
		ret = launch_spawn_local(a->opts.local_ranks, child_argv,
					 a->flags.rendezvous ? a->flags.rendezvous
							     : a->opts.rendezvous,
					 token, a->opts.timeout_ns, &signo, NULL, 0);
	memset(token, 0, sizeof(token));
	free(child_argv);
	return signo ? 128 + signo : ret ? GS_EXIT_FAIL : GS_EXIT_OK;
}

static void print_table(const struct launch_info *info, const struct rdv_rec *all)
{
	printf("%d rank%s via %s, job '%s', rendezvous %s\n", info->nranks,
	       info->nranks == 1 ? "" : "s", info->launcher, info->job_id, info->rendezvous);
	printf("%-6s %-24s %-8s %s\n", "rank", "host", "pid", "local");
	for (int r = 0; r < info->nranks; r++)
		printf("%-6d %-24s %-8d %d/%d\n", all[r].rank, all[r].host, all[r].pid,
		       all[r].local_rank, all[r].local_nranks);
}

/* Every rank must agree on who it is: a mix of launchers or sizes means a broken job. */
static int check_table(const struct launch_info *info, const struct rdv_rec *all)
{
	for (int r = 0; r < info->nranks; r++) {
		if (all[r].rank != r || all[r].nranks != info->nranks ||
		    strcmp(all[r].launcher, info->launcher)) {
			log_err(LOG_LAUNCH, "rendezvous: rank %d reports rank %d of %d via %s, "
					    "rank 0 expected rank %d of %d via %s",
				r, all[r].rank, all[r].nranks, all[r].launcher, r, info->nranks,
				info->launcher);
			return -EPROTO;
		}
	}
	return 0;
}

/*
 * One rank. Under a launcher its stop signals are `gradsync run`'s (run/stop.h): the
 * signalled rank stops the job naming itself and the signal, the others each say so.
 */
static int run_rank(const struct launch_info *info, const struct rdv_args *a)
{
	struct bootstrap_opts bo;
	struct rdv_rec mine = {.rank = info->rank,
			       .nranks = info->nranks,
			       .local_rank = info->local_rank,
			       .local_nranks = info->local_nranks,
			       .pid = (int32_t)getpid()};
	struct rdv_rec *all = calloc((size_t)info->nranks, sizeof(*all));
	struct bootstrap *b;
	uint64_t t0, t1, t2;
	int ret;

	if (!all)
		return -ENOMEM;
	run_job_bootstrap_opts(info, a->opts.timeout_ns, &bo);
	gethostname(mine.host, sizeof(mine.host) - 1);
	snprintf(mine.launcher, sizeof(mine.launcher), "%s", info->launcher);
	if (!info->spawned)
		run_stop_early(&bo);
	ret = bootstrap_open(&bo, &b);
	if (ret)
		goto out_close; /* b is NULL; a stop (-EINTR) said by the bootstrap */
	if (!info->spawned)
		run_stop_catch(b);
	ret = bootstrap_allgather(b, &mine, all, sizeof(mine));
	if (!ret && info->rank == 0)
		ret = check_table(info, all);
	if (ret)
		goto out_abort;
	t0 = time_now_ns();
	for (int i = 0; i < a->iters && !ret; i++)
		ret = bootstrap_barrier(b);
	t1 = time_now_ns();
	for (int i = 0; i < a->iters && !ret; i++)
		ret = bootstrap_allgather(b, &mine, all, sizeof(mine));
	t2 = time_now_ns();
	if (!ret)
		ret = bootstrap_barrier(b);
	if (ret)
		goto out_abort;
	if (info->rank == 0) {
		print_table(info, all);
		printf("bootstrap barrier: %.1f us, allgather %zu B/rank: %.1f us (mean of %d)\n",
		       (t1 - t0) / 1e3 / a->iters, sizeof(mine), (t2 - t1) / 1e3 / a->iters,
		       a->iters);
		fflush(stdout);
	}
	goto out_close;
out_abort:
	if (ret != -ECANCELED)
		bootstrap_abort(b, "rendezvous check failed");
out_close:
	/* before the close: the handler writes to the bootstrap's signal fd */
	if (!info->spawned)
		run_stop_release();
	bootstrap_close(b);
	free(all);
	return ret;
}

int cmd_rendezvous(int argc, char **argv)
{
	struct rdv_args a = {
		.opts = {.local_ranks = 2, .timeout_ns = 30000000000ull},
		.flags = {.rank = -1, .world_size = -1},
		.iters = 100,
	};
	struct launch_info info;
	int ret;

	ret = parse_args(argc, argv, &a);
	if (!ret && launch_argv_scrub_token(argc, argv, a.token, sizeof(a.token)))
		ret = -EINVAL;
	if (ret) {
		rdv_usage(ret > 0 ? stdout : stderr);
		return ret > 0 ? GS_EXIT_OK : GS_EXIT_USAGE;
	}
	ret = launch_detect(&a.opts, &a.flags, &info);
	if (ret == -ENOENT)
		return spawn_local(argc, argv, &a);
	if (ret)
		return GS_EXIT_USAGE;
	log_set_rank(info.rank);
	ret = run_rank(&info, &a);
	/* as a shell reports a command a signal stopped: 130, 143, 129 */
	if (run_stop_signo())
		return 128 + run_stop_signo();
	return ret ? GS_EXIT_FAIL : GS_EXIT_OK;
}
