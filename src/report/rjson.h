/*
 * Writer helpers for report.json (schema "gradsync-report/1"): C structs in,
 * jansson objects out, in the field order and with the key names of the schema.
 * `gradsync run` builds its document with these; the fixture tests use them too.
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

/* Summarise n samples (nearest-rank percentiles); a copy is sorted, x is untouched. */
int rj_stats_from_samples(const double *x, int n, struct rj_stats *out);
json_t *rj_stats_json(const struct rj_stats *s, bool mean_key);

/* Top-level fields of a run; strings may be NULL (written as ""). */
struct rj_meta {
	const char *version, *commit, *build_date, *compiler, *cuda, *verbs_providers;
	const char *experiment, *experiment_file, *experiment_hash, *resolved;
	const char *started, *finished; /* rj_iso8601() */
	const char *launcher;
	int nranks;
	const char *baseline;
	int argc;
	char *const *argv;
};

/* {"schema", "gradsync", "argv", "experiment", "started", "finished", "launcher",
 *  "nranks", "hosts": [], "fingerprint": {}, "env": {}, "baseline", "cases": []} */
json_t *rj_doc_new(const struct rj_meta *m);
/* Replace one top-level member ("fingerprint", "env", "hosts", "finished"...). */
int rj_doc_set(json_t *doc, const char *key, json_t *value);
int rj_doc_add_case(json_t *doc, json_t *c);
/* UTC "2026-11-29T16:00:00Z" into buf (>= 21 bytes); returns buf. */
char *rj_iso8601(long long unix_s, char *buf, size_t len);

struct rj_path {
	const char *transport, *device, *link_layer, *rate;
	double rate_bps;
	int mtu, gid_index;
	const char *gid_type;
	int qps;
	const char *fw_ver, *note, *gpu_path;
};

struct rj_numa {
	const char *requested, *actual;
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
	double cpu_s_per_GB;
	double host_cpu_s_per_GB; /* the whole host's busy time per GB (kernel work too) */
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
	int buckets, batch, iterations, ranks;
	struct rj_stats iter_ms, fwd_ms, bwd_ms, exposed_comm_ms, allreduce_ms;
	double comm_wait_share, overlap_efficiency, samples_per_s, samples_per_s_rank;
	double busbw_GBps, scaling_efficiency; /* NAN = null (no single-rank reference) */
	const struct rj_bucket *timeline;
	int ntimeline;
};

/* {"name", "swept", "config", "status": "ok", "path": {}, "numa": {}, "bound": {},
 * "reduce_isa": "", "collective": [], "workload": null}; steals
 * swept and config (NULL = empty object). */
json_t *rj_case_new(const char *name, json_t *swept, json_t *config);
int rj_case_set_path(json_t *c, const struct rj_path *p);
int rj_case_set_numa(json_t *c, const struct rj_numa *n);
int rj_case_set_bound(json_t *c, const struct rj_bound *b);
int rj_case_set_reduce_isa(json_t *c, const char *isa);
int rj_case_add_coll(json_t *c, const struct rj_coll_row *r);
int rj_case_set_workload(json_t *c, const struct rj_workload *w);
/* status "failed" with the message; results gathered so far are kept. */
int rj_case_fail(json_t *c, const char *error);

/* Write doc to path atomically (path.tmp + rename), indented, keys in insertion order. */
int rj_save(const char *path, const json_t *doc);
/* The same text into a malloc'd string (tests, stdout). */
char *rj_dumps(const json_t *doc);

#endif
