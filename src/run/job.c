/*
 * The job driver of `gradsync run` (fio's backend.c: a thin driver over tested parts):
 * load and lint the experiment, detect the launcher, then either drive the cases on
 * this host (no launcher: the results directory, one spawn of local_ranks copies per
 * case, a stop signal between cases) or run this rank's cases (run/rank.c); rank 0's
 * case files become report.json (run/report.c). The token and spawn steps, and the
 * rank's bootstrap options, are shared with `gradsync rendezvous`.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/lint.h"
#include "run/job.h"
#include "run/run.h"
#include "topo/topo.h"
#include "util/common.h"
#include "util/fsbound.h"
#include "util/log.h"
#include "util/rand.h"
#include "util/stopsig.h"

int run_job_token(const struct launch_opts *o, const char *flag, char *token, size_t len)
{
	const char *from;
	int ret;

	/* the user's token if one was given, else a random one nobody else can know */
	ret = launch_token_resolve(o, flag, token, len, &from);
	if (ret == 0)
		ret = launch_token_random(token, len);
	return ret < 0 ? ret : 0;
}

void run_job_bootstrap_opts(const struct launch_info *li, uint64_t timeout_ns,
			    struct bootstrap_opts *bo)
{
	*bo = (struct bootstrap_opts){
		.rank = li->rank,
		.nranks = li->nranks,
		.addr = li->rendezvous,
		.token = li->token,
		/* a day at most: an int of milliseconds */
		.timeout_ms = (int)GS_MIN(timeout_ns / 1000000, 86400000ull),
		.listen_fd = li->listen_fd,
	};
}

/*
 * The run directory and its cases/, then a probe file written, fsync'ed, renamed and
 * removed in it, all within [report] write_timeout: a directory whose file system does
 * not answer (a hard-mounted NFS whose server is gone) fails the run here, before any
 * case, instead of hanging it at the first result.
 */
static int make_run_dir(const struct experiment *exp, const struct run_job_args *a, char *dir,
			size_t len)
{
	const char *parent = a->out ? a->out : exp->base.experiment.output_dir;
	char why[PATH_MAX + 160];
	int ret;

	ret = fsb_make_unique_dir(parent, exp->base.experiment.name, "cases", dir, len,
				  exp->base.report.write_timeout_ns, why, sizeof(why));
	if (ret == -ETIMEDOUT)
		log_err(LOG_MAIN, "%s directory %s does not answer: %s; no case has run",
			*dir ? "run" : "output", *dir ? dir : parent, why);
	else if (ret)
		log_err(LOG_MAIN, "create run directory under %s: %s", parent, why);
	return ret;
}

static bool may_use_shm(const struct experiment *exp)
{
	size_t i;

	for (i = 0; i < exp->ncases; i++)
		if (exp->cases[i].cfg.transport.kind == TP_SHM ||
		    exp->cases[i].cfg.transport.kind == TP_AUTO)
			return true;
	return false;
}

/* A stop signal (util/stopsig.h) that arrived between two cases (blocked while we drive). */
static int pending_stop(const sigset_t *stop)
{
	struct timespec zero = {0, 0};
	int sig = sigtimedwait(stop, NULL, &zero);

	return stop_sig_is(sig) ? sig : 0;
}

/* After a failed case: does the run directory still answer (fsb_probe)? When it does not,
 * one line says so and true. */
static bool dir_gone(const struct experiment *exp, const char *dir)
{
	char why[PATH_MAX + 160];

	if (fsb_probe(dir, exp->base.report.write_timeout_ns, why, sizeof(why)) != -ETIMEDOUT)
		return false;
	log_err(LOG_MAIN, "run directory %s does not answer: %s; no further case starts", dir, why);
	return true;
}

/*
 * No launcher: spawn each case's ranks on this host, one job per case. A stop signal
 * (blocked by the caller, in `stop`) ends the run: the spawner forwards it and kills the
 * case's ranks within a second, no further case starts, oc says what ran.
 */
static int drive_local(const struct experiment *exp, const struct run_job_args *a, const char *dir,
		       int argc, char **argv, const sigset_t *stop, struct run_outcome *oc)
{
	char **cv, token[LAUNCH_TOKEN_MAX + 1];
	bool dead = false;
	size_t i;
	int failed = 0, ret;

	ret = run_job_token(&exp->base.launch, a->flags.token, token, sizeof(token));
	if (ret < 0)
		return ret;
	cv = launch_child_argv(argc, argv);
	if (!cv)
		return -ENOMEM;
	/* the shm bound, once for the whole run: measured between cases it moved 5x;
	 * only when a case may use shm (it costs seconds on a small VM) */
	if (may_use_shm(exp)) {
		char bps[32];

		snprintf(bps, sizeof(bps), "%.0f", run_node_memcpy_Bps(false));
		setenv(RUN_MEMCPY_ENV, bps, 1);
	} else {
		unsetenv(RUN_MEMCPY_ENV); /* ours only: never the user's */
	}
	for (i = 0; i < exp->ncases && !oc->signo && !dead; i++) {
		const struct cfg *c = &exp->cases[i].cfg;
		char num[16], nonce_hex[24];
		uint64_t nonce;
		int st, swept;

		if (a->only_case >= 0 && (int)i != a->only_case)
			continue;
		oc->signo = pending_stop(stop);
		if (oc->signo)
			break;
		snprintf(num, sizeof(num), "%zu", i);
		setenv("GRADSYNC_CASE", num, 1);
		ret = rand_u64(&nonce);
		if (ret)
			break;
		snprintf(nonce_hex, sizeof(nonce_hex), "%016llx", (unsigned long long)nonce);
		setenv("GRADSYNC_JOB_NONCE", nonce_hex, 1);
		setenv("GRADSYNC_RUN_DIR", dir, 1);
		/* rank 0 of the case prints its "case k/N" line and its progress */
		oc->ncases = i + 1;
		st = launch_spawn_local(c->launch.local_ranks, cv,
					*c->launch.rendezvous ? c->launch.rendezvous : NULL, token,
					c->launch.timeout_ns, &oc->signo,
					oc->case_why ? oc->case_why[i] : NULL,
					sizeof(*oc->case_why));
		if (oc->signo) {
			log_err(LOG_MAIN, "case %s interrupted by %s: stopping the run",
				exp->cases[i].name, strsignal(oc->signo));
		} else if (st) {
			log_err(LOG_MAIN, "case %s failed (exit status %d)", exp->cases[i].name, st);
			failed++;
			/* its rank 0 may have found the directory stopped answering: each
			 * case to come would wait as long to lose its results too */
			if (dir_gone(exp, dir))
				dead = true;
		}
		if (oc->case_exit)
			oc->case_exit[i] = oc->signo ? 0 : st;
		/* ranks killed mid-setup cannot unlink their segments: we know the names */
		swept = transport_sweep_job(nonce ^ ((uint64_t)i << 48));
		if (swept)
			log_warn(LOG_MAIN, "case %s: removed %d shared-memory segments its ranks left "
				 "in /dev/shm", exp->cases[i].name, swept);
	}
	if (!oc->signo)
		oc->signo = pending_stop(stop);
	if (oc->signo) {
		/* the user asked to stop: no write of ours from now on (this status, the
		 * report) may keep them write_timeout more on a directory that does not answer */
		fsb_stop_taken(oc->signo);
		/* before the report: a second signal may kill us while we write it */
		run_status_write(dir, exp->base.report.write_timeout_ns, "interrupted",
				 strsignal(oc->signo));
	}
	unsetenv("GRADSYNC_CASE");
	unsetenv("GRADSYNC_JOB_NONCE");
	unsetenv("GRADSYNC_RUN_DIR");
	free(cv);
	memset(token, 0, sizeof(token));
	if (ret < 0)
		return ret;
	return failed ? -EIO : 0;
}

/*
 * The case a replay without --case runs: the one its run ran with --case N (report.json's
 * experiment.only_case); every case when it ran them all or the report cannot tell (a
 * run directory without report.json). -ETIMEDOUT, said, when the report's file system
 * does not answer.
 */
static int replay_only_case(struct run_job_args *a)
{
	json_t *root, *n;
	int ret;

	if (!a->replay || a->only_case >= 0)
		return 0;
	ret = run_report_load(a->replay, false, &root);
	if (ret)
		return fsb_gave_up(ret) ? ret : 0;
	n = json_object_get(json_object_get(root, "experiment"), "only_case");
	if (json_is_integer(n) && json_integer_value(n) >= 1 &&
	    json_integer_value(n) <= INT_MAX)
		a->only_case = (int)json_integer_value(n) - 1;
	json_decref(root);
	return 0;
}

static int load_experiment(struct run_job_args *a, struct experiment *exp, char *tmpfile,
			   size_t len)
{
	char err[EXP_ERR_MAX], ini[PATH_MAX + 16], why[PATH_MAX + 200];
	const char *path = a->file;
	int ret;

	tmpfile[0] = '\0';
	if (a->replay) {
		struct stat st;

		/* a run directory's experiment.ini is what ran (README), report.json or not
		 * (a driver killed with -9 wrote none), and its errors name a file that stays;
		 * looked for within the bound of an input (the experiment's is not known) */
		snprintf(ini, sizeof(ini), "%s/experiment.ini", a->replay);
		ret = fsb_stat(ini, &st, fsb_timeout_default_ns(), why, sizeof(why));
		if (fsb_gave_up(ret)) {
			fprintf(stderr, "gradsync run: --replay %s: %s\n", a->replay, why);
			return ret;
		}
		if (!ret && S_ISREG(st.st_mode)) {
			path = ini;
		} else {
			ret = run_report_extract_experiment(a->replay, tmpfile, len);
			if (ret)
				return ret;
			path = tmpfile;
		}
	}
	ret = experiment_load(path, exp, err, sizeof(err));
	if (ret)
		fprintf(stderr, "%s\n", err);
	if (!ret)
		ret = replay_only_case(a);
	if (a->only_case >= 0 && !ret && (size_t)a->only_case >= exp->ncases) {
		fprintf(stderr, "gradsync run: --case %d: the experiment has %zu case%s\n",
			a->only_case + 1, exp->ncases, exp->ncases == 1 ? "" : "s");
		ret = -EINVAL;
	}
	return ret;
}

int run_lint(const struct experiment *exp, bool local, bool speak)
{
	struct lint_result *lint = malloc(sizeof(*lint));
	struct topo *t = calloc(1, sizeof(*t));
	struct lint_node node = { .topo = t, .local = local };
	int ret;

	if (!lint || !t) {
		ret = -ENOMEM;
		goto out_free;
	}
	if (topo_discover("/sys", t)) /* it said why; the run's own bind says it again */
		node.topo = NULL;
	experiment_lint(exp, &node, lint);
	if (speak)
		lint_print(stderr, lint);
	ret = lint->nerrors ? -EINVAL : 0;
out_free:
	free(t);
	free(lint);
	return ret;
}

int run_job(const struct run_job_args *in, int argc, char **argv)
{
	struct run_job_args args = *in, *a = &args; /* a replay may pick its run's case */
	struct experiment *exp = calloc(1, sizeof(*exp));
	struct launch_info li;
	char dir[PATH_MAX] = "", tmpfile[PATH_MAX], started[32], pending[PATH_MAX + 32];
	const char *env_dir = getenv("GRADSYNC_RUN_DIR"), *env_case = getenv("GRADSYNC_CASE");
	struct run_outcome oc = {0};
	int ret, code = GS_EXIT_OK;
	bool driven;

	if (!exp)
		return GS_EXIT_FAIL;
	run_iso_time(started, sizeof(started));
	if (load_experiment(a, exp, tmpfile, sizeof(tmpfile))) {
		/* what a load that failed part-way holds (its files' names, a case list
		 * refused by --case) goes with it */
		experiment_delete(exp);
		return GS_EXIT_USAGE;
	}
	ret = launch_detect(&exp->base.launch, &a->flags, &li);
	driven = ret == -ENOENT;
	if (ret && !driven) {
		code = GS_EXIT_USAGE;
		goto out;
	}
	/* what `check` refuses, run refuses too; the driver or rank 0 says it, once */
	if (run_lint(exp, driven || li.spawned, driven || (li.rank == 0 && !li.spawned))) {
		code = GS_EXIT_USAGE;
		goto out;
	}
	if (in->only_case < 0 && a->only_case >= 0 && (driven || (li.rank == 0 && !li.spawned)))
		log_info(LOG_MAIN, "replaying case %d only, as its run did (--case N picks another)",
			 a->only_case + 1);
	if (!ret && li.spawned && env_dir && env_case) {
		/* a rank of one case, started by the driver below */
		ret = run_rank_main(exp, &li, atoi(env_case), env_dir, argc, argv, &oc);
		code = ret ? GS_EXIT_FAIL : GS_EXIT_OK;
		goto out;
	}
	if (driven || li.rank == 0) {
		if (make_run_dir(exp, a, dir, sizeof(dir))) {
			code = GS_EXIT_FAIL;
			goto out;
		}
		/* the probe answered a moment ago: this one failing in time is said, and
		 * ends the run as the probe would have */
		ret = run_report_begin(dir, exp);
		if (fsb_gave_up(ret)) {
			log_err(LOG_MAIN, "run directory %s %s: no case has run", dir,
				ret == -EINTR ? "was not written to (stopped)" : "does not answer");
			code = GS_EXIT_FAIL;
			goto out;
		}
		log_info(LOG_MAIN, "results: %s", dir);
	}
	oc.ncases = exp->ncases;
	if (driven) {
		sigset_t stop, old;

		/* taken with sigtimedwait while driving; afterwards a new Ctrl-C kills at once */
		sigemptyset(&stop);
		stop_sigs_set(&stop, false);
		pthread_sigmask(SIG_BLOCK, &stop, &old);
		oc.ncases = 0;
		/* without it a rank that failed after writing its case's results would leave
		 * a "done" report beside exit 1; report.c then says so in the case (NULL on
		 * ENOMEM: the run goes on, only that note is lost; the exit code still says 1) */
		oc.case_exit = calloc(exp->ncases, sizeof(*oc.case_exit));
		oc.case_why = calloc(exp->ncases, sizeof(*oc.case_why)); /* the same on ENOMEM */
		ret = drive_local(exp, a, dir, argc, argv, &stop, &oc);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	} else {
		ret = run_rank_main(exp, &li, a->only_case, dir, argc, argv, &oc);
	}
	if (ret)
		code = GS_EXIT_FAIL;
	if (*dir && oc.signo && fsb_pending(pending, sizeof(pending))) {
		/*
		 * Stopped while a write there had not returned (a directory that does not
		 * answer): every call of ours would be refused now, each with a line that
		 * blames the file system for what the stop left pending. One line instead;
		 * the user asked for the run to end, not for the bound to be waited out.
		 */
		log_err(LOG_MAIN, "%s/report.json not written: stopped by SIG%s while %s was pending; the case files written before are in %s/cases/ (gradsync report %s reads them once the directory answers)",
			dir, sigabbrev_np(oc.signo) ?: "?", pending, dir, dir);
	} else if (*dir) {
		int st = run_report_assemble(dir, started, exp, a->only_case, argc, argv,
					     driven ? NULL : &li, &oc);

		if (st && code == GS_EXIT_OK)
			code = st;
	}
	if (oc.signo) /* as a shell reports a command a signal stopped: 129, 130, 143 */
		code = 128 + oc.signo;
out:
	free(oc.case_exit);
	free(oc.case_why);
	if (*tmpfile)
		unlink(tmpfile);
	/* a thread that never returned from a case may still read its settings (rank.c) */
	if (!oc.thread_stuck) {
		experiment_free(exp);
		free(exp);
	}
	return code;
}
