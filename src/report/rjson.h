/*
 * The one writer of report.json (schema "gradsync-report/1", defined member by member in
 * src/report/report.schema.json): C structs in, jansson objects out, in the field order
 * and with the key names of the schema. `gradsync run` builds its case files and its
 * report with these, the fixtures too; tests/report/test_schema.sh validates both.
 * Ownership: functions named rj_*_new and rj_*_json return a new reference; rj_*_add and
 * rj_*_set steal the reference of the json_t they are given (as json_object_set_new).
 * NAN doubles are written as null (a figure that does not apply or was not measured).
 */
#ifndef GS_REPORT_RJSON_H
#define GS_REPORT_RJSON_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

/* avg (or "mean" for the workload's millisecond figures), p50, p99, min, max. */
struct rj_stats {
	double avg, p50, p99, min, max;
};

/* Summarise n samples (nearest-rank percentiles); a copy is sorted, x is untouched.
 * The one statistics routine of every report figure. */
int rj_stats_from_samples(const double *x, int n, struct rj_stats *out);
/* Every member times scale (ns -> us or ms). */
void rj_stats_scale(struct rj_stats *s, double scale);
json_t *rj_stats_json(const struct rj_stats *s, bool mean_key);

/* Top-level fields of a run; strings may be NULL (written as ""). */
struct rj_meta {
	const char *version, *commit, *build_date, *compiler, *cuda, *verbs_providers;
	const char *build_id; /* the binary's GNU build-id, hex (util/build_id.h) */
	const char *experiment, *experiment_file, *experiment_hash, *resolved, *description;
	int only_case; /* run --case N: N (1-based); 0 = every case (null) */
	const char *started, *finished; /* rj_iso8601() */
	const char *launcher;
	int nranks;
	const char *baseline; /* the first baseline case; NULL = none (null) */
	const char *baseline_rule; /* [matrix] baseline as written, "key=value,..."; NULL = none */
	int argc;
	char *const *argv;
};

/* {"schema", "gradsync", "argv", "experiment", "started", "finished", "launcher",
 *  "nranks", "hosts": [], "fingerprint": {}, "env": {}, "baseline", "baseline_rule",
 *  "cases": []} */
json_t *rj_doc_new(const struct rj_meta *m);
/* Replace one top-level member ("fingerprint", "env", "hosts", "finished"...). */
int rj_doc_set(json_t *doc, const char *key, json_t *value);
/* How the run ended: "done", "failed" or "interrupted"; detail (NULL: none) says what
 * stopped it ("interrupted") or what failed though no case did ("error"). */
int rj_doc_set_status(json_t *doc, const char *status, const char *detail);
int rj_doc_add_case(json_t *doc, json_t *c);
/* UTC "2026-11-29T16:00:00Z" into buf (>= 21 bytes); returns buf. */
char *rj_iso8601(long long unix_s, char *buf, size_t len);

/* Where each rank ran: the run's and each case's "hosts". */
struct rj_host {
	int rank;
	const char *hostname;
	int host_index; /* the first rank on the same host */
	int pid;
};
json_t *rj_hosts_json(const struct rj_host *h, int n);

/* The node's fingerprint: what makes two runs comparable (report.json "fingerprint"). */
struct rj_gpu_dev {
	const char *bus_id, *name;
	int numa, pcie_gen, pcie_width;
};
struct rj_nic_port {
	const char *device, *fw_ver, *rate, *link_layer, *state;
	int port, numa;
	int mtu; /* the port's netdev MTU (RoCE); 0 = not known (IB: verbs only), not written */
};
struct rj_fingerprint {
	const char *hostname, *kernel, *os, *cpu_model, *glibc;
	const char *gpu_driver; /* the NVIDIA kernel module's version, "" without one */
	long cpus, numa_nodes;
	long long memory_bytes;
	const struct rj_gpu_dev *gpus;
	int ngpus;
	const struct rj_nic_port *nics; /* one entry per port */
	int nnics;
};
json_t *rj_fingerprint_json(const struct rj_fingerprint *f);
/*
 * Each workload case's "scaling_efficiency" against the 1-rank case of the same
 * configuration where the matrix has one: per-rank throughput over the single rank's.
 */
void rj_cases_fill_scaling(json_t *cases);

struct rj_path {
	const char *transport, *device, *link_layer, *rate;
	int port;
	uint64_t rate_bps; /* 0 = unknown */
	int mtu, gid_index;
	const char *gid_type;
	int qps;
	const char *fw_ver, *note, *gpu_path;
};

struct rj_numa {
	const char *requested, *plan, *actual;
	bool applicable;
	const char *note;
};

/* The figure a bandwidth is held against: kind memcpy|nic|pcie|tcp_if|none. */
struct rj_bound {
	const char *kind;
	double Bps;
	const char *desc;
};

struct rj_coll_row {
	const char *op, *algo, *dtype, *redop;
	uint64_t size, count;
	int iterations;
	struct rj_stats time_us;
	double algbw_GBps, busbw_GBps;
	uint64_t wrong;
	int64_t first_wrong;      /* index of the first wrong element, -1 = none */
	bool unchecked;           /* verify = off: nothing was checked, wrong is null */
	double cpu_s_per_GB;
	double host_cpu_s_per_GB; /* the whole host's busy time per GB (kernel work too) */
	uint64_t chunk_bytes;     /* the executor's chunk; 0 = not ours (NCCL cuts its own) */
	int samples;              /* write_bw/lat: measurements the times summarise, each of
				   * `iterations` messages; 0 = allreduce (one per iteration) */
	const struct rj_rank_stats *ranks; /* allreduce on > 1 rank; NULL = no "ranks" */
	const struct rj_pair *pairs;       /* op = pairwise: every pair; NULL = no "pairs" */
	int npairs;
};

/* A rank the others persistently wait for; rank -1 = none (null). */
struct rj_straggler {
	int rank;
	const char *host;
	double share;        /* of the iterations in which it was the slowest */
	double wait_share;   /* median share of the others' time spent waiting for it */
};

/* A row's "ranks": the slowest rank, the spread and every rank's times (run/result.c). */
struct rj_rank_stats {
	int nranks, iterations;
	int slowest;
	double slowest_share, spread, wait_share;
	const double *mean_us;   /* nranks */
	const double *iter_us;   /* nranks rows of iterations; NULL = null (too many) */
	struct rj_straggler straggler;
};

/* One pair of a pairwise row, as its sender measured it. */
struct rj_pair {
	int a, b;
	const char *host_a, *host_b;
	double bw_GBps, lat_us;
	bool slow;
};

/* Times are milliseconds from the start of the backward pass of the iteration. */
struct rj_bucket {
	int index;
	uint64_t bytes;
	int tensors;
	double ready_ms, start_ms, end_ms, busbw_GBps;
};

struct rj_workload {
	const char *model;
	uint64_t params;
	int tensors, buckets, batch, iterations, ranks;
	const char *compute;     /* none | sleep | gemm | spin */
	bool overlap;
	uint64_t grad_bytes;
	uint64_t wrong;
	int64_t first_wrong;     /* -1 = none */
	bool unchecked;          /* verify = off: nothing was checked, wrong is null */
	struct rj_stats iter_ms, fwd_ms, bwd_ms, exposed_comm_ms, allreduce_ms;
	double comm_wait_share, overlap_efficiency, samples_per_s, samples_per_s_rank;
	double busbw_GBps, scaling_efficiency; /* NAN = null (no single-rank reference) */
	const struct rj_bucket *timeline;
	int ntimeline;
	/* the rank whose timeline decided most iterations, and in how many of them */
	int critical_rank;
	double critical_share;
	/* what ddp._get_ddp_logging_data() gives a real job (rank 0, ns) */
	double avg_forward_compute_time, avg_backward_compute_time, avg_backward_comm_time,
		avg_backward_compute_comm_overlap_time;
	const char *precision;   /* fp32 | bf16 | fp16 (the cost model's) */
	const char *grad_dtype;  /* what the buckets reduce (grad_dtype auto resolved) */
	const char *gpu_profile; /* the GPU the compute times are modelled on */
	/* GPU compute: calibrated TFLOP/s (NAN = not run), used, kernels launched */
	double gpu_tflops_calibrated, gpu_tflops_used;
	uint64_t gpu_kernels;
};

struct rj_gpu {
	int device;
	const char *name, *bus_id, *driver, *cc;
	int sm_count;
	uint64_t mem_bytes;
	bool dmabuf, gdr;
	int topo_index; /* in the node's topology, -1 unknown */
};

/* How GPU buffers reached the wire (topo/gdr.h's decision, as text). */
struct rj_gpu_path {
	const char *mode, *mechanism, *gpu_nic_path, *gdr_level;
	bool flush;
	const char *reason;
};

/* {"name", "index", "nranks", "launcher", "hosts": [], "swept", "config", "status": "ok",
 * "path": {}, "paths": [], "numa": {}, "bound": {}, "gpu": null, "gpu_path": null,
 * "reduce_isa": "", "collective": [], "workload": null}; steals swept and config
 * (NULL = empty object). */
json_t *rj_case_new(const char *name, json_t *swept, json_t *config);
/* Which case of the experiment (0-based), its ranks, launcher and hosts (stolen). */
int rj_case_set_ranks(json_t *c, int index, int nranks, const char *launcher, json_t *hosts);
int rj_case_set_path(json_t *c, const struct rj_path *p);
/* One open transport's path ("paths": every transport the case used). */
int rj_case_add_path(json_t *c, const struct rj_path *p);
int rj_case_set_gpu(json_t *c, const struct rj_gpu *g);
int rj_case_set_gpu_path(json_t *c, const struct rj_gpu_path *p);
int rj_case_set_numa(json_t *c, const struct rj_numa *n);
int rj_case_set_bound(json_t *c, const struct rj_bound *b);
int rj_case_set_reduce_isa(json_t *c, const char *isa);
/* The case its speed-ups are against (its own name for a baseline case), NULL = none. */
int rj_case_set_baseline(json_t *c, const char *name);
int rj_case_add_coll(json_t *c, const struct rj_coll_row *r);
/* The row / workload objects alone (a rank builds them before its case is written). */
json_t *rj_coll_row_json(const struct rj_coll_row *r);
json_t *rj_workload_json(const struct rj_workload *w);
struct link_obs;
/* A row's "links": one object per directed link that carried bytes (report/links.h). */
int rj_row_set_links(json_t *row, const struct link_obs *l, int n);
/* Replace "collective" with rows (an array, stolen) / "workload" with w (stolen). */
int rj_case_set_collective(json_t *c, json_t *rows);
int rj_case_set_workload_json(json_t *c, json_t *w);
int rj_case_set_workload(json_t *c, const struct rj_workload *w);
/* status "failed" with the message; results gathered so far are kept. */
int rj_case_fail(json_t *c, const char *error);
/*
 * Any status and, unless NULL, its error: "ok"; "failed" (the case, or a result of it,
 * failed); "interrupted" (a signal stopped the run in it); "unread" (its results file,
 * written perhaps, was not read back: the run directory stopped answering; not the
 * case's failure, its outcome unknown to the report).
 */
int rj_case_set_status(json_t *c, const char *status, const char *error);

/* Write doc (rj_dumps' text) to w->path whole and durable within timeout_ns
 * (util/fsbound.h's fsb_write, with w's path, remake and no_replace): 0 or -errno, why
 * filled, nothing logged. */
struct fsb_write;
int rj_save(struct fsb_write *w, const json_t *doc, uint64_t timeout_ns, char *why,
	    size_t whylen);
/* The same text into a malloc'd string (tests, stdout). */
char *rj_dumps(const json_t *doc);

#endif
