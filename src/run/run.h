/*
 * The runtime of `gradsync run`, shared by its files: the driver (spawns local ranks
 * per case and assembles the report) and the rank side (bootstrap, transports,
 * benchmark or workload, results to rank 0).
 *
 * Files: job.c (the driver, job.h), rank.c (one rank's life), node.c (NUMA binding,
 * bounds), gpu.c (the rank's GPU and the case's GPU path), comm.c (transport choice and
 * connection), dbuf.c (a case's buffers), bench.c (size sweep, point-to-point),
 * workload.c + wl_gpu.c (the DDP workload), result.c (statistics of a size), links.c
 * (per-link waits), report.c (report.json and the other formats), env.c (fingerprint of
 * the node), agree.c (do all ranks run the same case?), memfit.c (do the buffers fit in
 * memory?), stop.c (stop signals around the bootstrap, stop.h, shared with `gradsync
 * rendezvous`). cmd/cmd_run.c only parses the command line.
 */
#ifndef GS_RUN_RUN_H
#define GS_RUN_RUN_H

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <jansson.h>

#include "coll/exec.h"
#include "coll/nccl_ref.h"
#include "config/experiment.h"
#include "launch/blame_window.h"
#include "launch/bootstrap.h"
#include "launch/launch.h"
#include "report/rjson.h"
#include "gpu/gpu.h"
#include "topo/gdr.h"
#include "topo/numa.h"
#include "topo/topo.h"
#include "transport/transport.h"
#include "util/activity.h"
#include "util/progress.h"

#define RUN_HOST_MAX 64

/* One rank's record in the host exchange. */
struct run_host {
	char hostname[RUN_HOST_MAX];
	char boot_id[40];   /* distinguishes hosts with equal names (containers, VMs) */
	cpu_set_t cpus;     /* affinity at start (run_node.cpus0): whose CPUs it shares */
	int32_t pid;
	int32_t rank;
};

/* The node as this rank found it and bound to it; written by node.c only. */
struct run_node {
	struct topo *topo;         /* discovered once per rank */
	cpu_set_t cpus0;           /* affinity at start, restored before each case */
	struct numa_plan numa_plan;
	char numa_actual[512];     /* where the current case's buffer landed, "" = not checked */
	double memcpy_Bps;         /* measured once, the shm bound */
};

/* This rank's GPU; written by gpu.c only. */
struct run_rank_gpu {
	int index;                 /* in topo->gpus, -1 = none */
	struct gpu_ctx *ctx;       /* opened by the first case with [gpu] device */
	double tflops_cal;         /* gpu_calibrate's TFLOP/s, 0 = not run */
};

/*
 * What a rank knows about the job while running one case. The job's identity, the
 * bootstrap and the host exchange are written by rank.c (run_rank_main, run_rank_case);
 * node and gpu by their files; the other files read it.
 */
struct run_rank {
	const struct experiment *exp;
	const struct exp_case *ecase;  /* the case running now (rank.c) */
	int case_index;
	struct launch_info li;
	struct bootstrap *bs;
	struct run_host *hosts;  /* nranks records */
	int *host_of_rank;       /* nranks: index of the first rank on the same host */
	int *kernel_of_rank;     /* nranks: index of the first rank on the same kernel (one
				    boot_id, whatever the host names): who shares its CPUs */
	cpu_set_t *cpus_of_rank; /* nranks: each rank's affinity at start (run_host.cpus) */
	uint64_t job_nonce;      /* random, drawn by rank 0: shm names, transport job ids */
	char run_dir[PATH_MAX];
	char **argv;
	int argc;
	struct run_node node;      /* node.c */
	struct run_rank_gpu gpu;   /* gpu.c */
	struct progress progress;  /* rank 0's live lines; disabled elsewhere and with -q */
	json_t *case_doc;          /* rank 0: the running case's document (rank.c) */
	bool partial_lost;         /* rank 0: a file of the case's rows so far failed (said
				    * once; the case's end writes it) */
	/* what the main thread and the DDP comm thread do (util/activity.h), each written
	 * by its thread only; the bootstrap reads them for rank 0's probe (blame.c);
	 * ACT_THREADS records on the heap */
	struct activity *act;
	/* a thread of this rank did not return from the case (the DDP comm thread,
	 * ddp_result.comm_stuck): what it may still use, the case's comm and buffers, the
	 * records, the bootstrap, the GPU, stays allocated until the process exits */
	bool thread_stuck;
	/* one writer of a case's file at a time: the main thread, or rank 0's bootstrap
	 * reader naming rank 0 stuck (rank.c); a default mutex, never destroyed */
	pthread_mutex_t save_lock;
	/* under save_lock (run_case_save): 1 + the index of the case whose final account
	 * the main thread wrote, and of the case the reader named rank 0 stuck in; 0: none */
	int case_final, case_named;
	/* the steps of naming a failed case's culprits, from [launch] timeout (rank.c) */
	struct blame_window blame;
};

/* How a run ended: report.json's status and which cases it lists. */
struct run_outcome {
	int signo;	   /* the stop signal (util/stopsig.h) that ended the run; 0 = none */
	size_t ncases; /* cases started, in index order; the others never ran */
	int *case_exit;	   /* local driver: per case, the spawner's exit status (0: every
			    * rank exited 0); NULL under a launcher */
	char (*case_why)[256]; /* local driver: per case, how its ranks ended after a failure
				* (launch_spawn_local's why), for a case rank 0 left no file
				* of; NULL under a launcher */
	int end_err;	   /* under a launcher: the ranks' barrier after the last case failed
			    * (-errno; a rank lost after its results were written), 0 = none */
	bool thread_stuck; /* run_rank.thread_stuck: the experiment, which its call may
			    * still read, is not freed */
};

/* The case's GPU buffers' path and memops; written by gpu.c only (run_gpu_path_setup
 * before the transports open, run_gpu_comm_setup after). */
struct run_comm_gpu {
	struct gpu_ctx *ctx;             /* the case's GPU, NULL = host buffers */
	struct gpu_memops *mem;          /* the executor's memops for GPU buffers */
	struct gdr_path path;            /* how GPU buffers reach the wire, fixed before the
					  * transports open */
	char nic[64];                    /* the NIC path was judged on, "" = auto */
};

/* Transports of one case, opened and connected, the executor's comm on top: written by
 * comm.c; gpu by gpu.c. */
struct run_comm {
	struct transport tp[TP_KIND_COUNT];
	bool open[TP_KIND_COUNT];
	struct transport_env env[TP_KIND_COUNT];
	bool *use_peer[TP_KIND_COUNT];   /* nranks flags per transport */
	int *peer_kind;                  /* nranks: transport kind used for each peer */
	struct transport **peer_tp;      /* nranks: &tp[peer_kind[p]], NULL for self */
	struct coll_comm *coll;
	struct nccl_ref *nccl;           /* transport = nccl: the reference instead of coll */
	int timeout_ms;
	int nranks;
	bool crowded;                    /* the ranks sharing our CPUs outnumber them (cpus_crowded,
					    once per case: after this case's binding) */
	struct run_comm_gpu gpu;         /* gpu.c */
	struct activity *act;            /* the record of the thread that runs the case's
					  * collectives: the main thread's for a benchmark, the
					  * DDP comm thread's for a workload (comm.c) */
};

/* A data buffer of a case: GPU memory (with a pinned host mirror when staged) or host. */
struct run_dbuf {
	struct coll_buf cb;  /* what the executor works on and the transports register */
	void *dev;           /* device memory, NULL for a host buffer */
	void *host;          /* the pinned mirror, or the host buffer; NULL when direct */
	bool pinned;
	bool shared;         /* host is a shmem allocation (util/shmem.h) */
};

/* Per-iteration wall times of one size on one rank, gathered to rank 0. */
struct run_samples {
	uint64_t size;
	int iterations;
	uint64_t wrong;          /* mismatching elements seen by verification */
	int64_t first_wrong;     /* -1 = none */
	uint64_t cpu_ns;         /* executor thread + transport threads during the timed loop */
	uint64_t bytes_sent;     /* on the wire during the timed loop */
	/* the whole host's busy CPU time (/proc/stat) over the timed loop, and how many
	 * ranks share that host: kernel work on other threads (softirq, rxe, kworkers)
	 * counts too, so transports compare fairly */
	uint64_t host_cpu_ns;
	int host_ranks;
	uint64_t ns[];           /* iterations entries */
};

int run_comm_open(struct run_rank *rr, struct run_comm *rc);
void run_comm_close(struct run_comm *rc);
/*
 * One AllReduce of count elements at byte offset off of buf: our executor, or with
 * transport = nccl ncclAllReduce on the rank's comm stream (waited for, bounded).
 */
int run_comm_allreduce(struct run_comm *rc, const struct run_dbuf *buf, uint64_t off,
		       const struct run_dbuf *scratch, uint64_t count, enum dtype dt, enum redop op,
		       const struct coll_opts *co, struct coll_stats *cs);
/* The algorithm an AllReduce ran, for reports ("nccl" under the reference). */
const char *run_comm_algo_name(const struct run_comm *rc, int algo);
/* The chunk of an AllReduce of bytes (coll_comm_chunk: resolved there, once); 0 under
 * transport = nccl, which cuts its own. */
uint64_t run_comm_chunk(const struct run_comm *rc, uint64_t bytes);
/* Sum of stats over the open transports. */
void run_comm_stats(struct run_comm *rc, struct tp_stats *st);
/*
 * The path facts of every open transport into all[0..*nall) (TP_KIND_COUNT entries), and
 * the index of the case's path: the transport most peers use (across hosts on ties); -1
 * when none is open. Under transport = nccl all[0] describes the reference, *nall = 0.
 */
int run_comm_paths(struct run_comm *rc, struct tp_path_info *all, int *nall);

/*
 * Rank 0, a case failed and why is the job's first reason: the ranks that cause it,
 * ahead of it, when the bootstrap's probe finds some (a rank that does not answer, or
 * one stuck in the case the blame window's grace after the abort), logged; else why.
 * Waits at most the window's two probe waits and its grace (blame.c).
 */
const char *run_blame(struct run_rank *rr, const char *why, char *out, size_t len);
/* Its text from the probe's n states (hosts: NULL = not known yet); why when nobody is
 * to blame. Pure (blame_test.c). */
const char *run_blame_text(const struct bootstrap_rank_state *st, int n,
			   const struct run_host *hosts, uint32_t grace_ms, const char *why,
			   char *out, size_t len);

/*
 * The test hook GRADSYNC_TEST_DELAY=RANK:USEC[@N] (test_delay.c): on that rank, a sleep
 * before each AllReduce (a benchmark's of each size, a workload's buckets' on its comm
 * thread), or with @N before the Nth only (1-based, warm-up ones counted).
 */
struct run_test_delay {
	uint64_t ns; /* 0: no hook */
	int at;	     /* 1-based AllReduce; 0: every one */
};

struct run_test_delay run_test_delay_get(int rank);
/* Before AllReduce i (0-based): the hook's sleep, shown in a (the calling thread's
 * record) as ACT_TEST_DELAY. */
void run_test_delay_sleep(struct activity *a, const struct run_test_delay *d, int i);

/* Collective sweep or point-to-point mode: results JSON array on rank 0 (NULL elsewhere). */
int run_bench(struct run_rank *rr, struct run_comm *rc, json_t **results);
/* The DDP workload of the case: its metrics JSON on rank 0 (NULL elsewhere). */
int run_workload(struct run_rank *rr, struct run_comm *rc, json_t **out);

/*
 * The rank's GPU for this case (opens it on the first case that asks, sets rr->gpu.index,
 * calibrates when gpu_tflops = 0); every rank calls it, it may use the bootstrap.
 * 0, or -errno with one log line naming the case.
 */
int run_gpu_case_open(struct run_rank *rr);
void run_gpu_close(struct run_rank *rr);
/*
 * Decide the case's GPU path once the peers' transports are chosen (rc->peer_kind) and
 * before any transport opens, so the env each is opened with is final (gdr_flush).
 */
int run_gpu_path_setup(struct run_rank *rr, struct run_comm *rc);
/*
 * After the transports open, before any buffer: with device = auto, the GPU path judged
 * again if verbs opened another NIC than the rail; then the executor's memops for the
 * case's GPU buffers (rc->coll not yet created).
 */
int run_gpu_comm_setup(struct run_rank *rr, struct run_comm *rc);
void run_gpu_comm_close(struct run_comm *rc);
/* gpu_stream_sync, the wait shown in a (the calling thread's record; NULL: none) as
 * ACT_GPU_SYNC: a driver that never returns is named by rank 0's probe. */
int run_gpu_sync(struct activity *a, struct gpu_stream *s, int timeout_ms);
/* The case's GPU facts for its JSON (rank side: may call gpu_*), NULL without a GPU. */
/* The case's GPU facts for its report (rank side: may call gpu_*); false without a GPU.
 * g's strings point into drv and cc. */
bool run_gpu_facts(const struct run_rank *rr, struct rj_gpu *g, char *drv, size_t drvlen,
		   char *cc, size_t cclen);
/*
 * Allocate (and touch), then register with the case's comm, a buffer of the case's data
 * (which = GPU_MIRROR_DATA) or receive scratch (GPU_MIRROR_SCRATCH): host memory without a
 * GPU; with one, device memory plus, where rc->gpu.path stages it, a pinned host mirror
 * that the transports use and rc->gpu.mem copies (coll/gpu_memops.h).
 */
int run_dbuf_alloc(struct run_comm *rc, struct run_dbuf *b, uint64_t bytes, int which);
void run_dbuf_free(struct run_comm *rc, struct run_dbuf *b, int which);

/* An iteration's time (ns) from every rank's samples: their mean, the largest for p2p. */
double run_iter_time(struct run_samples **per_rank, int nranks, int i, bool p2p);
/*
 * Host CPU s/GB: the host's busy seconds (/proc/stat, whole ticks of tick_ns) per GB
 * sent; NAN (shown '-') under CPUS_HOST_MIN_TICKS ticks, where rounding is most of it.
 */
double run_host_cpu_s_per_GB(double host_cpu_s, double GB, uint64_t tick_ns);
/* The "ranks" of a result row: slowest rank, spread, per-rank times, straggler; 0 or
 * -ENOMEM. rs's arrays are allocated: run_rank_stats_free() releases them. */
int run_rank_stats(struct run_samples **per_rank, int nranks, const char *const *hosts,
		   struct rj_rank_stats *rs);
void run_rank_stats_free(struct rj_rank_stats *rs);
/* Median of n values (the stats' p50, rj_stats_from_samples); 0 for none. */
double run_median(const double *v, int n);
/* The row of a pairwise size from every rank's (bw GB/s, lat us) per pair (result.c). */
json_t *run_pairwise_row(const struct run_rank *rr, uint64_t size, int iterations,
			 double **per_rank, int npairs);
/* Reduce per-rank samples (max over ranks per iteration) to one JSON result row. */
json_t *run_result_row(const struct run_rank *rr, const struct run_comm *rc,
		       struct run_samples **per_rank, int nranks, double bus_factor,
		       const char *op, const char *algo);
/* The figures of n samples times scale (report/rjson.h's routine); NAN without samples. */
void run_stats(const double *v, size_t n, double scale, struct rj_stats *out);

/* Node fingerprint (kernel, CPU, memory, glibc, NUMA nodes, hostname) and relevant env. */
json_t *run_env_fingerprint(void);
json_t *run_env_vars(void);

/* The node: topology, NUMA binding of a case and its verification, the bandwidth bound. */
int run_node_init(struct run_rank *rr);
void run_node_fini(struct run_rank *rr);
/* Before any thread or buffer of the case exists. */
/* A case starts: nothing of the previous case's binding is reported for it. */
void run_node_case_begin(struct run_rank *rr);
int run_node_bind(struct run_rank *rr);
/* After the case's main buffer is allocated and touched. */
void run_node_verify(struct run_rank *rr, void *buf, size_t len);
/* The figure the case's bandwidth is held against; desc (len bytes) holds b->desc. */
void run_node_bound(struct run_rank *rr, struct run_comm *rc, struct rj_bound *b, char *desc,
		    size_t len);
/*
 * The shm bound: for a rank the driver spawned (from_driver), RUN_MEMCPY_ENV, which the
 * driver measured once per run on a quiet machine before the first case, so every case
 * of the run has the same bound; else measured now (best of RUN_MEMCPY_REPS 64 MiB
 * copies). The variable is the driver's hand-off, never read from the user's
 * environment: an inherited GRADSYNC_MEMCPY_BPS=1 was reported as a measured 0.0 GB/s.
 */
#define RUN_MEMCPY_ENV "GRADSYNC_MEMCPY_BPS"
#define RUN_MEMCPY_REPS 5
double run_node_memcpy_Bps(bool from_driver);
const char *run_node_reduce_isa(void);

/* One case on this rank; rank 0 writes RUN_DIR/cases/NNNN.json. */
int run_rank_case(struct run_rank *rr);
/*
 * The document of case i of exp before it runs: its name, every key of its config and
 * the swept ones. A case that never wrote its own file (killed, failed early) still
 * names every setting, so the report's fairness check does not see them all differ.
 */
json_t *run_case_doc_new(const struct experiment *exp, size_t i);
/*
 * Rank 0, after each size of a sweep but the last: the case's file with the rows so far,
 * its status interrupted ("after K of N sizes"). Ctrl-C kills local ranks at once; the
 * sizes they measured stay. The case's end overwrites the file. 0 or -errno (logged).
 */
int run_case_save_partial(struct run_rank *rr, json_t *rows);
/*
 * memfit.c: the host bytes one rank of case c allocates for its data buffers, touched at
 * setup (a lower bound: transport rings and scratch left out; 0 for GPU buffers, whose
 * host mirrors depend on the path chosen later).
 */
uint64_t run_case_host_bytes(const struct exp_case *c);
/* Do nranks buffers of per_rank bytes fit in avail? (pure) */
bool run_memfit(uint64_t per_rank, int nranks, uint64_t avail);
/* This machine's MemAvailable (/proc/meminfo) in bytes: 0 or -errno. */
int run_mem_available(uint64_t *bytes);
/* "need 32GiB for their buffers (16GiB each)" ("needs ... its" for one rank); buf. */
char *run_memfit_need(char *buf, size_t len, uint64_t per_rank, int nranks);
/*
 * At a case's start, on every rank: -ENOMEM with one line when the ranks sharing this
 * machine's kernel need more for their buffers than its MemAvailable, else 0.
 */
int run_memfit_check(struct run_rank *rr);
/*
 * Collective, at the start of each case: 0 when every rank's keys marked
 * same_on_all_ranks (config/keys.h) hold rank 0's values for this case; else -EINVAL
 * on every rank, rank 0 having logged and aborted the job with the first rank, host,
 * key and values that differ.
 */
int run_rank_agree(struct run_rank *rr);
/*
 * Collective, the job's first exchange: 0 when every rank runs this build (version and
 * commit), else -EINVAL on every rank, rank 0 having logged and aborted the job naming
 * the first rank, its host and both builds, and each other rank of another build
 * having said so.
 */
int run_rank_agree_build(const struct run_rank *rr);
/*
 * A rank started by a launcher or the spawner: runs its case(s); oc says how many
 * started and which stop signal (util/stopsig.h) stopped them (launcher ranks catch the
 * first one and stop the job through the bootstrap; a second one kills).
 */
int run_rank_main(const struct experiment *exp, const struct launch_info *li, int only_case,
		  const char *run_dir, int argc, char **argv, struct run_outcome *oc);

/*
 * Rank 0 / the driver: read RUN_DIR/cases/NNNN.json, write report.json (and the other
 * formats) and print the table. Returns an exit code: 0, or 1 when a case failed,
 * a result was wrong or a threshold was missed. li is NULL when the driver spawned.
 */
int run_report_assemble(const char *dir, const char *started, const struct experiment *exp,
			int only_case, int argc, char **argv, const struct launch_info *li,
			const struct run_outcome *oc);
/*
 * The run directory's `status` file, rewritten atomically at each change: one line
 * "STATE[: detail]" with STATE running, interrupted, failed or done. A directory whose
 * status still reads running after its driver is gone was killed (kill -9, power):
 * `gradsync report DIR` then reads what cases/ holds. 0 or -errno, a failure logged.
 */
int run_status_write(const char *dir, uint64_t timeout_ns, const char *state, const char *detail);
/* At the start of a run: experiment.ini (resolved, secrets redacted) and status running.
 * 0 or the first -errno (-ETIMEDOUT: the directory does not answer), each logged. */
int run_report_begin(const char *dir, const struct experiment *exp);
/* Case index's results file in run directory dir: DIR/cases/NNNN.json. */
void run_case_file(char *buf, size_t len, const char *dir, size_t index);
/*
 * A file of run directory dir, path, written whole and durable within timeout_ns
 * ([report] write_timeout; util/fsbound.h): doc's JSON, or text. A run directory removed
 * during the run (rm -rf by hand, a cleanup job) is made again first with its cases/,
 * and one line says so, so that the cases still to come keep their results (the report
 * reads those written before as failed). 0, or -errno with why filled (the caller's line
 * names path); -ETIMEDOUT: the directory does not answer.
 */
int run_dir_write(const char *dir, const char *path, const json_t *doc, const char *text,
		  uint64_t timeout_ns, char *why, size_t whylen);
/* Who writes a case's file, and what it holds (run_case_save). */
enum run_case_account {
	RUN_CASE_PARTIAL, /* the main thread: the rows so far, the case going on */
	RUN_CASE_FINAL,	  /* the main thread: its account of the case, as it ended */
	RUN_CASE_STANDIN, /* rank 0's bootstrap reader: its main thread stuck in the case */
};
/*
 * Rank 0: case index's results file (run_case_file, into path) in rr's run directory,
 * written by run_dir_write under rr->save_lock: 0 or -errno with why filled, nothing
 * logged. One writer decides what the file ends with, whatever the order the two threads
 * come in: the main thread's final account. A stand-in for case index is not written
 * once it is in (-EALREADY, why saying so), and a final account replaces a stand-in
 * (*named, when not NULL, says whether the reader had named rank 0 stuck in the case).
 * Its probe asked every rank after rank 0's own thread came back, and it holds the
 * case's figures: it is the fuller account; a stand-in only speaks for a main thread
 * that may never return.
 */
int run_case_save(struct run_rank *rr, size_t index, const json_t *c, enum run_case_account who,
		  bool *named, char *path, size_t len, char *why, size_t whylen);
/*
 * Rank 0's reader, about to name rank 0 stuck in case index and write its stand-in:
 * false when the main thread's final account is in (it came back: nothing to say or
 * write), else true, the case marked as named. The stand-in's write decides again.
 */
bool run_case_standin_claim(struct run_rank *rr, size_t index);
/* Now as ISO 8601 UTC, "2026-11-29T16:00:00Z". */
void run_iso_time(char *buf, size_t len);
/* Write the experiment recorded in a report (DIR or DIR/report.json) to a temp file;
 * -errno after one line on stderr naming the report. */
int run_report_extract_experiment(const char *report, char *tmpfile, size_t len);
/*
 * The report.json a --replay argument names, read within the bound of an input
 * (util/fsbound.h's default) and parsed into *root. -errno when it cannot be, said on
 * stderr in one line naming it when need, or when its file system does not answer
 * (-ETIMEDOUT): a replay must not go on as if there were no report.
 */
int run_report_load(const char *report, bool need, json_t **root);
/* The report.json a --replay argument names: the file itself, or DIR/report.json. */
void run_report_path(const char *report, char *path, size_t len);

/*
 * links.c: the per-link waits of the measured iterations of one AllReduce size. snap
 * (nranks entries) is taken before them; run_links_collect gathers every rank's waits
 * since and, on rank 0, sets row's "links". Collective; nothing for nccl.
 */
void run_links_snap(const struct run_comm *rc, struct coll_peer_busy *snap);
/* Ready the transfer log for the iterations to come (coll_xfers_prepare: up to ~11 ms):
 * before the barrier that precedes them. */
void run_links_prepare(const struct run_comm *rc);
int run_links_collect(struct run_rank *rr, const struct run_comm *rc,
		      const struct coll_peer_busy *snap, json_t *row);

#endif
