/*
 * One rank's life in `gradsync run`: join the bootstrap, learn which ranks share a
 * host, then for each case open the transports, run the benchmark or the workload,
 * and (rank 0) write the case's results as RUN_DIR/cases/NNNN.json.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/report.h"
#include "run/job.h"
#include "run/run.h"
#include "run/stop.h"
#include "util/common.h"
#include "util/fdlimit.h"
#include "util/fsbound.h"
#include "util/jtext.h"
#include "util/log.h"
#include "util/rand.h"
#include "util/timeutil.h"

/* Unbounded: /proc is the kernel's own text, never on a device or the network. */
static void read_boot_id(char *out, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	out[0] = '\0';
	if (f) {
		if (fgets(out, (int)len, f))
			out[strcspn(out, "\n")] = '\0';
		fclose(f);
	}
}

static int exchange_hosts(struct run_rank *rr)
{
	struct run_host me = { .pid = getpid(), .rank = rr->li.rank, .cpus = rr->node.cpus0 };
	int n = rr->li.nranks, r, q, ret;

	gethostname(me.hostname, sizeof(me.hostname) - 1);
	read_boot_id(me.boot_id, sizeof(me.boot_id));
	rr->hosts = calloc(n, sizeof(*rr->hosts));
	rr->host_of_rank = calloc(n, sizeof(*rr->host_of_rank));
	rr->kernel_of_rank = calloc(n, sizeof(*rr->kernel_of_rank));
	rr->cpus_of_rank = calloc(n, sizeof(*rr->cpus_of_rank));
	if (!rr->hosts || !rr->host_of_rank || !rr->kernel_of_rank || !rr->cpus_of_rank)
		return -ENOMEM;
	ret = bootstrap_allgather(rr->bs, &me, rr->hosts, sizeof(me));
	if (ret)
		return ret;
	for (r = 0; r < n; r++) {
		rr->hosts[r].hostname[RUN_HOST_MAX - 1] = '\0';
		rr->hosts[r].boot_id[sizeof(rr->hosts[r].boot_id) - 1] = '\0';
		rr->host_of_rank[r] = r;
		for (q = 0; q < r; q++) {
			if (!strcmp(rr->hosts[q].hostname, rr->hosts[r].hostname) &&
			    !strcmp(rr->hosts[q].boot_id, rr->hosts[r].boot_id)) {
				rr->host_of_rank[r] = rr->host_of_rank[q];
				break;
			}
		}
		/* one kernel, one set of CPUs; without a boot_id the host name decides */
		rr->kernel_of_rank[r] = rr->host_of_rank[r];
		for (q = 0; q < r && rr->hosts[r].boot_id[0]; q++) {
			if (!strcmp(rr->hosts[q].boot_id, rr->hosts[r].boot_id)) {
				rr->kernel_of_rank[r] = rr->kernel_of_rank[q];
				break;
			}
		}
		rr->cpus_of_rank[r] = rr->hosts[r].cpus;
	}
	return 0;
}

/*
 * The job's nonce, drawn by rank 0: names the shm segments (with the case index), so
 * no other user can predict a name and squat on it, and tags transport handshakes.
 */
static int job_nonce(struct run_rank *rr)
{
	const char *env = getenv("GRADSYNC_JOB_NONCE");
	int ret = 0;

	/* the local driver draws it, so it can sweep /dev/shm after killed ranks */
	if (rr->li.rank == 0 && rr->li.spawned && env && *env)
		rr->job_nonce = strtoull(env, NULL, 16);
	else if (rr->li.rank == 0)
		ret = rand_u64(&rr->job_nonce);
	if (!ret)
		ret = bootstrap_bcast(rr->bs, &rr->job_nonce, sizeof(rr->job_nonce));
	return ret;
}

/*
 * A case failed here. A dead peer shows in the transport before the bootstrap's
 * watchdog names it: give the watchdog a moment so the job's reason names the rank.
 */
static void wait_abort_reason(struct run_rank *rr)
{
	volatile const int *flag = bootstrap_abort_flag(rr->bs);
	int i;

	for (i = 0; i < (int)rr->blame.reason_wait_ms / 50 && !*flag; i++)
		usleep(50000);
}

/* The job's reason: this rank's first logged error of the case (the real cause), else
 * the errno that came up. */
static void rank_abort(struct run_rank *rr, int err)
{
	char why[LOG_FIRST_ERROR_LEN + 32], lim[96];

	if (err == -EMFILE || err == -ENFILE)
		log_err(LOG_MAIN, "case %s: out of file descriptors (%s): a rank holds about one "
			"per peer and stream; raise ulimit -n or use fewer [transport] streams",
			rr->ecase->name, fd_limit_describe(lim, sizeof(lim)));

	if (*bootstrap_abort_flag(rr->bs))
		return;
	snprintf(why, sizeof(why), "rank %d: %s", rr->li.rank,
		 *log_first_error() ? log_first_error() : strerror(-err));
	bootstrap_abort(rr->bs, why);
}

/* Where each rank ran: the report's per-rank hostnames. */
static json_t *hosts_json(const struct run_rank *rr)
{
	struct rj_host *h = calloc(rr->li.nranks ? rr->li.nranks : 1, sizeof(*h));
	json_t *arr;
	int r;

	if (!h)
		return NULL;
	for (r = 0; rr->hosts && r < rr->li.nranks; r++)
		h[r] = (struct rj_host){ .rank = r, .hostname = rr->hosts[r].hostname,
					 .host_index = rr->host_of_rank[r], .pid = rr->hosts[r].pid };
	arr = rj_hosts_json(h, rr->hosts ? rr->li.nranks : 0);
	free(h);
	return arr;
}

/* Every key of the case, "section.key": "value", and the swept ones apart. */
json_t *run_case_doc_new(const struct experiment *exp, size_t index)
{
	json_t *cfg = json_object(), *swept = json_object();
	size_t i;

	for (i = 0; i < cfg_key_count(); i++) {
		const struct cfg_key *k = cfg_key_at(i);
		char name[128], v[8192];

		snprintf(name, sizeof(name), "%s.%s", k->section, k->name);
		cfg_value_format(&exp->cases[index].cfg, k, v, sizeof(v));
		json_object_set_new(cfg, name, json_text(v));
		if (experiment_key_swept(exp, k))
			json_object_set_new(swept, name, json_text(v));
	}
	return rj_case_new(exp->cases[index].name, swept, cfg);
}

int run_case_save_partial(struct run_rank *rr, json_t *rows)
{
	char path[PATH_MAX + 32], why[96], err[PATH_MAX + 160];
	int ret = -ENOMEM;
	json_t *p;

	/* the last size's: the case's own file follows at once, with its path and bound;
	 * after one that failed (said once), the case's end tries again */
	if (rr->li.rank != 0 || !rr->case_doc || rr->partial_lost ||
	    json_array_size(rows) >= (size_t)rr->ecase->cfg.collective.nsizes)
		return 0;
	p = json_copy(rr->case_doc); /* shallow: the setters below replace members only */
	snprintf(why, sizeof(why), "the case stopped after %zu of %d sizes",
		 json_array_size(rows), rr->ecase->cfg.collective.nsizes);
	if (p && !rj_case_set_ranks(p, rr->case_index, rr->li.nranks, rr->li.launcher,
				    hosts_json(rr)) &&
	    !rj_case_set_collective(p, json_incref(rows)) &&
	    !rj_case_set_status(p, "interrupted", why)) {
		ret = run_case_save(rr, (size_t)rr->case_index, p, RUN_CASE_PARTIAL, NULL, path,
				    sizeof(path), err, sizeof(err));
		rr->partial_lost = ret != 0;
		if (ret)
			log_err(LOG_MAIN, "write %s: %s; the case goes on, its file is written as it ends",
				path, err);
	} else {
		log_warn(LOG_MAIN, "case %s: its rows so far could not be kept: %s",
			 rr->ecase->name, strerror(ENOMEM));
	}
	json_decref(p);
	return ret;
}

static void rj_path_of(struct rj_path *o, const struct tp_path_info *pi, const char *gpu_path)
{
	*o = (struct rj_path){
		.transport = pi->transport, .device = pi->device, .port = pi->port,
		.link_layer = pi->link_layer, .rate = pi->rate, .rate_bps = pi->rate_bps,
		.mtu = pi->mtu, .gid_index = pi->gid_index, .gid_type = pi->gid_type,
		.qps = pi->qps, .fw_ver = pi->fw_ver, .note = pi->note, .gpu_path = gpu_path,
	};
}

/* Rank 0, the case's transports still open: what carried it and what bounds it. */
static void case_paths(struct run_rank *rr, struct run_comm *rc, json_t *c)
{
	struct tp_path_info all[TP_KIND_COUNT];
	struct rj_path rp;
	struct rj_bound b;
	struct rj_gpu g;
	char gp[64], desc[160], drv[64], cc[16];
	int n, i, best = run_comm_paths(rc, all, &n);

	/* the report's path column shows the mode; the gpu_path object has the why */
	snprintf(gp, sizeof(gp), "%s%s%s%s", gdr_path_mode_name(rc->gpu.path.mode),
		 *rc->gpu.path.mechanism ? " (" : "", rc->gpu.path.mechanism,
		 *rc->gpu.path.mechanism ? ")" : "");
	if (best >= 0 || rc->nccl) {
		rj_path_of(&rp, &all[best >= 0 ? best : 0], gp);
	} else {
		rp = (struct rj_path){ .transport = "none", .gid_index = -1, .gpu_path = gp };
	}
	rj_case_set_path(c, &rp);
	for (i = 0; i < n; i++) {
		rj_path_of(&rp, &all[i], "");
		rj_case_add_path(c, &rp);
	}
	run_node_bound(rr, rc, &b, desc, sizeof(desc));
	rj_case_set_bound(c, &b);
	rj_case_set_gpu(c, run_gpu_facts(rr, &g, drv, sizeof(drv), cc, sizeof(cc)) ? &g : NULL);
	rj_case_set_gpu_path(c, &(struct rj_gpu_path){
		.mode = gdr_path_mode_name(rc->gpu.path.mode), .mechanism = rc->gpu.path.mechanism,
		.gpu_nic_path = rc->gpu.path.gpu_nic_path, .gdr_level = rc->gpu.path.gdr_level,
		.flush = rc->gpu.path.flush, .reason = rc->gpu.path.reason });
}

int run_rank_case(struct run_rank *rr)
{
	/* on the heap: a thread that never returns from the case keeps using it */
	struct run_comm *rc = calloc(1, sizeof(*rc));
	json_t *results = NULL, *workload = NULL, *c = NULL;
	bool bench = !workload_has_model(&rr->ecase->cfg.workload);
	const char *abort_why;
	char path[PATH_MAX + 32], blame[2048], why[PATH_MAX + 160];
	int ret, werr, me = rr->li.rank;
	bool named;

	log_first_error_reset();
	act_set(&rr->act[ACT_THREAD_MAIN], ACT_SETUP, -1, 0, time_now_ns());
	progress_case(&rr->progress, rr->case_index + 1, (int)rr->exp->ncases, rr->ecase->name,
		      rr->li.nranks);
	run_node_case_begin(rr);
	rr->partial_lost = false;
	if (me == 0) {
		c = run_case_doc_new(rr->exp, (size_t)rr->case_index);
		rr->case_doc = c;
	}
	if (!rc || (me == 0 && !c)) {
		free(rc);
		json_decref(c);
		rr->case_doc = NULL;
		return -ENOMEM;
	}
	/* before anything opens: a rank with another case would only time out later */
	ret = run_rank_agree(rr);
	/* after agree: every rank of the case is here, none holds its buffers yet */
	if (!ret)
		ret = run_memfit_check(rr);
	if (!ret)
		ret = run_gpu_case_open(rr);
	if (!ret)
		ret = run_node_bind(rr);
	/* the live line counts the ranks that reached the connection's exchanges */
	progress_wait(&rr->progress, "connecting", 1, rr->li.nranks);
	if (!ret)
		ret = run_comm_open(rr, rc);
	if (!ret) {
		progress_wait(&rr->progress, "connected", rr->li.nranks, rr->li.nranks);
		act_set(&rr->act[ACT_THREAD_MAIN], ACT_CASE, -1, 0, time_now_ns());
		ret = bench ? run_bench(rr, rc, &results) : run_workload(rr, rc, &workload);
		/* returned (on the job's abort too): no longer work of the case */
		act_set(&rr->act[ACT_THREAD_MAIN], ACT_CLOSING, -1, 0, time_now_ns());
		progress_idle(&rr->progress);
		if (me == 0)
			case_paths(rr, rc, c);
		/* a thread still inside one of its calls (run_rank.thread_stuck): the comm,
		 * its transports and its GPU memops are left to it, leaked on purpose */
		if (!rr->thread_stuck)
			run_comm_close(rc);
	} else {
		act_set(&rr->act[ACT_THREAD_MAIN], ACT_CLOSING, -1, 0, time_now_ns());
	}
	if (!rr->thread_stuck)
		free(rc);
	if (ret)
		wait_abort_reason(rr);
	if (me != 0)
		return ret;
	rj_case_set_ranks(c, rr->case_index, rr->li.nranks, rr->li.launcher, hosts_json(rr));
	if (ret) {
		/* the first cause: another rank's (it aborted the job), else our first
		 * logged error, else the errno that came up */
		abort_why = bootstrap_abort_reason(rr->bs);
		if (!abort_why || !*abort_why)
			abort_why = *log_first_error() ? log_first_error() : strerror(-ret);
		/* the others are asked how they reacted to the abort: they must have it */
		rank_abort(rr, ret);
		rj_case_fail(c, run_blame(rr, abort_why, blame, sizeof(blame)));
	}
	rj_case_set_numa(c, &(struct rj_numa){
		.requested = rr->ecase->cfg.numa.bind,
		.plan = *rr->node.numa_actual ? rr->node.numa_plan.requested : "",
		.actual = rr->node.numa_actual, .applicable = rr->node.numa_plan.applicable,
		.note = rr->node.numa_plan.reason });
	rj_case_set_reduce_isa(c, run_node_reduce_isa());
	rj_case_set_collective(c, results);
	rj_case_set_workload_json(c, workload);
	werr = run_case_save(rr, (size_t)rr->case_index, c, RUN_CASE_FINAL, &named, path,
			     sizeof(path), why, sizeof(why));
	if (named)
		log_info(LOG_MAIN, "case %s: rank 0's main thread came back after its bootstrap thread named it stuck; the case's file holds the main thread's account",
			 rr->ecase->name);
	if (werr) {
		/* disk full, read-only: the figures must reach the terminal at least */
		json_t *one = json_pack("{s:s, s:[O]}", "schema", REPORT_SCHEMA, "cases", c);
		struct report_opts term = {.formats = "table"};

		log_err(LOG_MAIN, "write %s: %s; this case's results follow", path, why);
		if (one)
			report_write_all(rr->run_dir, one, &term);
		json_decref(one);
	}
	rr->case_doc = NULL;
	json_decref(c);
	/* a directory that does not answer ends the run: each case to come would wait as
	 * long to lose its file too */
	return ret ? ret : fsb_gave_up(werr) ? werr : 0;
}

/* Rank 0: case index's file says it failed, and why, with its ranks' hosts (NULL: not
 * known); no figures; who writes it (run_case_save). Said when it fails. */
static void case_fail_save(struct run_rank *rr, int index, const char *why, json_t *hosts,
			   enum run_case_account who)
{
	json_t *c = rj_case_new(rr->exp->cases[index].name, NULL, NULL);
	char path[PATH_MAX + 32], werr[PATH_MAX + 160];
	int ret;

	if (!c) {
		json_decref(hosts);
		return;
	}
	rj_case_set_ranks(c, index, rr->li.nranks, rr->li.launcher, hosts);
	rj_case_fail(c, why);
	ret = run_case_save(rr, (size_t)index, c, who, NULL, path, sizeof(path), werr,
			    sizeof(werr));
	if (ret && ret != -EALREADY)
		log_err(LOG_MAIN, "write %s: %s; the case failed: %s", path, werr, why);
	json_decref(c);
}

/*
 * Rank 0, the job failed before its first case (a rank vanished or never answered in
 * the host exchange): that case's file says failed and why. Without it the report
 * listed no case and read "done" while the run exited 1.
 */
static void case_fail_early(struct run_rank *rr, int index, int err)
{
	const char *why = rr->bs ? bootstrap_abort_reason(rr->bs) : NULL;

	if (!why || !*why)
		why = *log_first_error() ? log_first_error() : strerror(-err);
	case_fail_save(rr, index, why, NULL, RUN_CASE_FINAL);
}

/*
 * Rank 0's bootstrap reader, the job aborted and a thread of rank 0's own still in the
 * case a grace later (bootstrap_opts.on_self_stuck): the main thread, which would run
 * the probe and write the case, may never return, so the reader names rank 0 in the
 * probe's words and writes the case's file as failed with them (bounded by
 * [report] write_timeout). Should the main thread come back, it writes the case again,
 * its probe's verdict on rank 0 included, and its account stays, whichever thread comes
 * first (run_case_save): back before this one decided, nothing is said or written here.
 */
static void self_stuck(void *ctx, const struct bootstrap_rank_state *self, const char *why)
{
	struct run_rank *rr = ctx;
	/* the main thread wrote the hosts before it stored the case's index */
	int index = __atomic_load_n(&rr->case_index, __ATOMIC_ACQUIRE);
	char text[2048];
	const char *t = run_blame_text(self, 1, rr->hosts, rr->blame.probe_grace_ms, why, text,
				       sizeof(text));

	if (!run_case_standin_claim(rr, (size_t)index))
		return;
	log_err(LOG_MAIN, "%s", t);
	case_fail_save(rr, index, t, hosts_json(rr), RUN_CASE_STANDIN);
}

/* rank 0's bootstrap observer: ranks that arrived show on the live line */
static void ranks_arrived(void *ctx, int arrived, int nranks)
{
	progress_arrived(ctx, arrived, nranks);
}

int run_rank_main(const struct experiment *exp, const struct launch_info *li, int only_case,
		  const char *run_dir, int argc, char **argv, struct run_outcome *oc)
{
	struct run_rank rr = { .exp = exp, .li = *li, .argc = argc, .argv = argv,
			       .gpu = { .index = -1 }, .save_lock = PTHREAD_MUTEX_INITIALIZER };
	struct bootstrap_opts bo;
	size_t i;
	int ret;

	/* on the heap, as the bootstrap is: a thread that never returns writes its record */
	rr.act = calloc(ACT_THREADS, sizeof(*rr.act));
	if (!rr.act)
		return -ENOMEM;

	run_job_bootstrap_opts(li, exp->base.launch.timeout_ns, &bo);
	/* the bootstrap's, the local driver's and this rank's: one timeout, one window */
	blame_window_plan(exp->base.launch.timeout_ns, &rr.blame);
	/* rank 0's live line while the others arrive */
	bo.on_arrival = ranks_arrived;
	bo.arrival_ctx = &rr.progress;
	/* what this rank's threads do, for rank 0's probe after a failed case, and rank
	 * 0's reader to name rank 0 itself */
	bo.acts = rr.act;
	bo.nacts = ACT_THREADS;
	bo.on_self_stuck = self_stuck;
	bo.self_stuck_ctx = &rr;
	log_set_rank(li->rank);
	/* only rank 0 speaks: N ranks printing N copies of every line help nobody */
	progress_init(&rr.progress, stderr, li->rank == 0 && log_enabled(LOG_INFO, LOG_MAIN));
	snprintf(rr.run_dir, sizeof(rr.run_dir), "%s", run_dir);
	ret = run_node_init(&rr);
	if (ret) {
		progress_fini(&rr.progress);
		free(rr.act);
		return ret;
	}
	if (li->nranks > 1)
		progress_wait(&rr.progress, "waiting for ranks", 1, li->nranks);
	if (!li->spawned)
		run_stop_early(&bo);
	ret = bootstrap_open(&bo, &rr.bs);
	progress_idle(&rr.progress);
	if (ret) {
		int first = only_case >= 0 ? only_case : 0;

		/* stopped (-EINTR) or aborted: the bootstrap said what and why */
		if (ret != -EINTR && ret != -ECANCELED)
			log_err(LOG_LAUNCH, "bootstrap with %s: %s", li->rendezvous,
				strerror(-ret));
		/* the case it was to run is the one that failed, or was interrupted */
		oc->ncases = (size_t)first + 1;
		oc->signo = ret == -EINTR ? run_stop_signo() : 0;
		if (li->rank == 0 && ret != -EINTR)
			case_fail_early(&rr, first, ret);
		if (!li->spawned)
			run_stop_release();
		run_node_fini(&rr);
		progress_fini(&rr.progress);
		free(rr.act);
		return ret;
	}
	if (!li->spawned)
		run_stop_catch(rr.bs);
	/* first: ranks of two builds may not read each other's records alike */
	ret = run_rank_agree_build(&rr);
	if (ret && li->rank != 0)
		wait_abort_reason(&rr); /* rank 0's reason, not our goodbye, stops the job */
	if (!ret)
		ret = exchange_hosts(&rr);
	if (!ret)
		ret = job_nonce(&rr);
	oc->ncases = 0;
	if (ret) {
		int first = only_case >= 0 ? only_case : 0;

		/* the first case is the one that failed: the report lists it, with the reason */
		oc->ncases = (size_t)first + 1;
		if (li->rank == 0)
			case_fail_early(&rr, first, ret);
	}
	for (i = 0; !ret && i < exp->ncases; i++) {
		if (only_case >= 0 && (int)i != only_case)
			continue;
		oc->ncases = i + 1;
		/* read by rank 0's bootstrap reader too (self_stuck) */
		__atomic_store_n(&rr.case_index, (int)i, __ATOMIC_RELEASE);
		rr.ecase = &exp->cases[i];
		ret = run_rank_case(&rr);
		if (ret)
			rank_abort(&rr, ret);
	}
	if (!ret) {
		/* every case ended; a rank lost now had its results in, the run still failed */
		ret = bootstrap_barrier(rr.bs);
		oc->end_err = ret;
		/* said by rank 0, whose report it fails; another rank's bootstrap named the
		 * abort (a rank lost, or stopped by a signal: "barrier failed" then misleads),
		 * and so did a stopped rank 0's */
		if (ret && li->rank == 0 && !run_stop_signo())
			log_err(LOG_LAUNCH, "every case ended, but the ranks' barrier after "
				"the last case failed: %s", strerror(-ret));
	}
	if (!li->spawned)
		run_stop_release();
	oc->signo = run_stop_signo();
	if (rr.thread_stuck) {
		/*
		 * A thread never returned from the case (ddp.h, ddp_result.comm_stuck) and may
		 * yet: its call still reads the bootstrap's abort flag, writes its activity
		 * record, drives the GPU, and its transports read the case's settings and
		 * which rank is on which host. They stay allocated until the process exits, on
		 * purpose.
		 */
		oc->thread_stuck = true;
		bootstrap_close_keep(rr.bs);
		run_node_fini(&rr);
		progress_fini(&rr.progress);
		return ret;
	}
	bootstrap_close(rr.bs);
	run_gpu_close(&rr);
	run_node_fini(&rr);
	progress_fini(&rr.progress);
	free(rr.act);
	free(rr.hosts);
	free(rr.host_of_rank);
	free(rr.kernel_of_rank);
	free(rr.cpus_of_rank);
	return ret;
}
