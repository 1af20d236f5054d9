/* Synthetic, deterministic report.json documents for the golden tests and the schema demo. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/schedule.h"
#include "report/fixture.h"
#include "report/rjson.h"
#include "util/common.h"

const char *const report_fixture_names[] = { "tcp_shm", "ib_node_a", "ib_node_b", "resnet_overlap",
					     NULL };

/* A fixed wobble per size, so fits are not exact and numbers look measured. */
static const double wobble[] = { 1.012, 0.992, 1.021, 0.987, 1.004, 0.996, 1.015, 0.983,
				 1.008, 0.995 };

struct fx_case {
	const char *name, *swept_key, *swept_val;
	const char *transport, *device, *link_layer, *rate;
	double rate_bps;
	int mtu;
	const char *fw, *gpu_path;
	double alpha_us, wire_GBps;
	const char *bound_kind;
	double bound_Bps;
	const char *bound_desc, *numa_req, *numa_actual;
	bool numa_ok;
	const char *numa_note;
	double cpu_s_per_GB;
	const char *iterations;
	const char *fail;
};

struct fx_run {
	const char *experiment, *started, *finished, *hostname, *kernel, *nic_fw, *baseline;
	int nranks, nic_mtu;
};

static json_t *fx_doc(const struct fx_run *r)
{
	static char *const argv[] = { "gradsync", "run", "conf/fixture.ini" };
	struct rj_meta m = {
		.version = "0.1.0", .commit = "fixture", .build_date = "2026-11-29",
		.build_id = "f1c7e0d5a9b3c2e4f60718293a4b5c6d7e8f9012",
		.compiler = "gcc 12.2.0", .cuda = "off", .verbs_providers = "mlx5 rxe",
		.experiment = r->experiment, .experiment_file = "conf/fixture.ini",
		.experiment_hash = "5f1d3c0a9e8b7d6c5f4e3d2c1b0a9988"
				   "7766554433221100ffeeddccbbaa9988",
		.resolved = "[collective]\nsizes = 4KiB..1GiB x4\n", .started = r->started,
		.finished = r->finished, .launcher = "local", .nranks = r->nranks,
		.baseline = r->baseline, .argc = 3, .argv = argv,
	};
	json_t *doc = rj_doc_new(&m);
	struct rj_host hosts[64];
	struct rj_nic_port nic;
	struct rj_fingerprint fp;
	int i;

	for (i = 0; i < r->nranks && i < (int)ARRAY_SIZE(hosts); i++)
		hosts[i] = (struct rj_host){ .rank = i, .hostname = r->hostname, .host_index = 0,
					     .pid = 4000 + i };
	rj_doc_set(doc, "hosts", rj_hosts_json(hosts, i));
	nic = (struct rj_nic_port){ .device = "mlx5_0", .port = 1, .fw_ver = r->nic_fw,
				    .rate = "400 Gb/s (4X NDR)", .link_layer = "InfiniBand",
				    .state = "4: ACTIVE", .numa = 0, .mtu = r->nic_mtu };
	fp = (struct rj_fingerprint){ .hostname = r->hostname, .kernel = r->kernel,
				      .os = "Debian 12", .cpu_model = "AMD EPYC 9654 96-Core Processor",
				      .glibc = "2.36", .gpu_driver = "", .cpus = 192, .numa_nodes = 2,
				      .memory_bytes = 1622761472000LL, .nics = &nic, .nnics = 1 };
	rj_doc_set(doc, "fingerprint", rj_fingerprint_json(&fp));
	rj_doc_set(doc, "env", json_pack("{s:s}", "NCCL_IB_HCA", "mlx5_0"));
	return doc;
}

/* The ring's steps and bytes per rank over S (2(n-1), 2(n-1)/n), as coll states them. */
static void fx_shape(int n, double *steps, double *factor)
{
	struct sched_cost c = { 0 };

	sched_cost(ALGO_RING, n, &c);
	*steps = c.steps;
	*factor = c.wire_factor;
}

/* Model time of an allreduce of `bytes` at n ranks, in microseconds. */
static double fx_time_us(const struct fx_case *c, int n, double bytes)
{
	double steps, factor;

	fx_shape(n, &steps, &factor);
	return c->alpha_us * steps + bytes * factor / (c->wire_GBps * 1e3);
}

static json_t *fx_case_new(const struct fx_case *c, int n, bool sweep)
{
	json_t *cfg = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "collective.sizes",
				"4KiB..1GiB x4", "collective.algo", "ring",
				"collective.iterations", c->iterations ? c->iterations : "20",
				"transport.transport", c->transport, "topo.numa", c->numa_req,
				"workload.model", "none");
	json_t *cs = rj_case_new(c->name, json_pack("{s:s}", c->swept_key, c->swept_val), cfg);
	struct rj_host hosts[64];
	double steps, factor, size;
	int k = 0;

	rj_case_set_path(cs, &(struct rj_path){
				     .transport = c->transport, .device = c->device,
				     .link_layer = c->link_layer, .rate = c->rate,
				     .rate_bps = c->rate_bps, .mtu = c->mtu, .gid_index = -1,
				     .gid_type = "", .qps = 1, .fw_ver = c->fw, .note = "",
				     .gpu_path = c->gpu_path });
	rj_case_set_numa(cs, &(struct rj_numa){ .requested = c->numa_req,
						.actual = c->numa_actual,
						.applicable = c->numa_ok, .note = c->numa_note });
	rj_case_set_bound(cs, &(struct rj_bound){ .kind = c->bound_kind, .Bps = c->bound_Bps,
						  .desc = c->bound_desc });
	rj_case_set_reduce_isa(cs, "avx2");
	for (k = 0; k < n && k < (int)ARRAY_SIZE(hosts); k++)
		hosts[k] = (struct rj_host){ .rank = k, .hostname = "node-a", .host_index = 0,
					     .pid = 4000 + k };
	rj_case_set_ranks(cs, 0, n, "local", rj_hosts_json(hosts, k));
	k = 0;
	if (c->fail) {
		rj_case_fail(cs, c->fail);
		return cs;
	}
	fx_shape(n, &steps, &factor);
	for (size = 4096; sweep && size <= 1073741824.0; size *= 4, k++) {
		double t = fx_time_us(c, n, size) * wobble[k % ARRAY_SIZE(wobble)];
		struct rj_coll_row r = {
			.op = "allreduce", .algo = "ring", .dtype = "f32", .redop = "sum",
			.size = (uint64_t)size, .count = (uint64_t)size / 4,
			.iterations = size >= 268435456.0 ? 5 : 20,
			.time_us = { .avg = t, .p50 = t * 0.98, .p99 = t * 1.25, .min = t * 0.95,
				     .max = t * 1.4 },
			.algbw_GBps = size / (t * 1e3), .busbw_GBps = size * factor / (t * 1e3),
			.wrong = 0, .first_wrong = -1, .chunk_bytes = 1 << 20,
			.cpu_s_per_GB = c->cpu_s_per_GB * wobble[(k + 3) % 10],
			.host_cpu_s_per_GB = 1.4 * c->cpu_s_per_GB * wobble[(k + 5) % 10],
		};

		rj_case_add_coll(cs, &r);
	}
	return cs;
}

static const struct fx_case tcp = {
	.name = "transport=tcp", .swept_key = "transport.transport", .swept_val = "tcp",
	.transport = "tcp", .device = "lo", .mtu = 65536, .fw = "", .gpu_path = "host memory",
	.alpha_us = 18, .wire_GBps = 2.6, .bound_kind = "memcpy", .bound_Bps = 12.0e9,
	.bound_desc = "measured memcpy 12.0 GB/s", .numa_req = "none",
	.numa_actual = "cpus 0-191, pages on node 0", .numa_ok = true, .numa_note = "",
	.cpu_s_per_GB = 0.82,
};

static const struct fx_case shm = {
	.name = "transport=shm", .swept_key = "transport.transport", .swept_val = "shm",
	.transport = "shm", .device = "", .mtu = 0, .fw = "", .gpu_path = "host memory",
	.alpha_us = 2.5, .wire_GBps = 9.1, .bound_kind = "memcpy", .bound_Bps = 12.0e9,
	.bound_desc = "measured memcpy 12.0 GB/s", .numa_req = "none",
	.numa_actual = "cpus 0-191, pages on node 0", .numa_ok = true, .numa_note = "",
	.cpu_s_per_GB = 0.21,
};

static const struct fx_case ib_fail = {
	.name = "transport=ib", .swept_key = "transport.transport", .swept_val = "ib",
	.transport = "ib", .device = "", .fw = "", .gpu_path = "", .bound_kind = "none",
	.bound_desc = "", .numa_req = "none", .numa_actual = "", .numa_ok = true,
	.numa_note = "", .fail = "ibv_get_device_list: no RDMA device found",
};

static json_t *fx_tcp_shm(void)
{
	static const struct fx_run run = {
		.experiment = "transports", .started = "2026-11-29T16:00:00Z",
		.finished = "2026-11-29T16:03:12Z", .hostname = "h1",
		.kernel = "6.1.0-28-amd64", .nic_fw = "28.39.1002", .baseline = "transport=tcp",
		.nranks = 4, .nic_mtu = 4096,
	};
	json_t *doc = fx_doc(&run);

	rj_doc_add_case(doc, fx_case_new(&tcp, run.nranks, true));
	rj_doc_add_case(doc, fx_case_new(&shm, run.nranks, true));
	rj_doc_add_case(doc, fx_case_new(&ib_fail, run.nranks, true));
	return doc;
}

/* Two nodes' runs of the same experiment with a different kernel, firmware and MTU. */
static json_t *fx_ib_node(bool b)
{
	struct fx_run run = {
		.experiment = "ib-check", .started = b ? "2026-11-29T17:00:00Z" :
							"2026-11-29T16:30:00Z",
		.finished = b ? "2026-11-29T17:04:00Z" : "2026-11-29T16:34:00Z",
		.hostname = b ? "gpu-b07" : "gpu-a03",
		.kernel = b ? "6.1.0-31-amd64" : "6.1.0-28-amd64",
		.nic_fw = b ? "28.41.1000" : "28.39.1002", .baseline = "transport=tcp",
		.nranks = 2, .nic_mtu = b ? 2048 : 4096,
	};
	struct fx_case ib = {
		.name = "transport=ib", .swept_key = "transport.transport", .swept_val = "ib",
		.transport = "ib", .device = "mlx5_0", .link_layer = "InfiniBand",
		.rate = "400 Gb/s (4X NDR)", .rate_bps = 400e9, .mtu = run.nic_mtu,
		.fw = run.nic_fw, .gpu_path = "host memory", .alpha_us = b ? 3.1 : 2.4,
		.wire_GBps = b ? 38.0 : 46.5, .bound_kind = "nic", .bound_Bps = 50e9,
		.bound_desc = "NIC mlx5_0 400 Gb/s", .numa_req = "nic",
		.numa_actual = b ? "cpus 0-95, pages on node 0" : "cpus 96-191, pages on node 1",
		.numa_ok = !b, .numa_note = b ? "NIC NUMA node unknown; bound to node 0" : "",
		.cpu_s_per_GB = 0.05, .iterations = b ? "50" : "20",
	};
	struct fx_case t = tcp;
	json_t *doc = fx_doc(&run);

	t.iterations = ib.iterations;
	rj_doc_add_case(doc, fx_case_new(&t, run.nranks, true));
	rj_doc_add_case(doc, fx_case_new(&ib, run.nranks, true));
	return doc;
}

/* ResNet-50 over tcp, 4 ranks, with and without overlap; the timeline replays the model. */
static json_t *fx_resnet(void)
{
	static const struct fx_run run = {
		.experiment = "resnet50-overlap", .started = "2026-11-29T18:00:00Z",
		.finished = "2026-11-29T18:06:40Z", .hostname = "h1", .kernel = "6.1.0-28-amd64",
		.nic_fw = "28.39.1002", .baseline = "overlap=off", .nranks = 4, .nic_mtu = 4096,
	};
	static const double bytes[] = { 26214400, 26214400, 26214400, 23805568 };
	static const int tensors[] = { 41, 52, 49, 19 };
	const double fwd = 31.0, bwd = 62.0, slow = 1.04;
	json_t *doc = fx_doc(&run);
	int pass, i;

	for (pass = 0; pass < 2; pass++) {
		bool overlap = pass == 1;
		struct fx_case c = tcp;
		struct rj_bucket tl[4];
		double end = 0, comm = 0, iter;
		json_t *cs;

		c.name = overlap ? "overlap=on" : "overlap=off";
		c.swept_key = "workload.overlap";
		c.swept_val = overlap ? "true" : "false";
		cs = fx_case_new(&c, run.nranks, overlap);
		json_object_set_new(json_object_get(cs, "config"), "workload.model",
				    json_string("resnet50"));
		json_object_set_new(json_object_get(cs, "config"), "workload.overlap",
				    json_string(c.swept_val));
		for (i = 0; i < 4; i++) {
			double t = fx_time_us(&c, run.nranks, bytes[i]) * slow / 1e3;
			double ready = overlap ? bwd * (i + 1) / 4 : bwd;

			tl[i] = (struct rj_bucket){ .index = i, .bytes = (uint64_t)bytes[i],
						    .tensors = tensors[i], .ready_ms = ready,
						    .start_ms = fmax(ready, end) };
			end = tl[i].start_ms + t;
			tl[i].end_ms = end;
			tl[i].busbw_GBps = bytes[i] * 1.5 / (t * 1e6);
			comm += t;
		}
		iter = fwd + fmax(bwd, end);
		rj_case_set_workload(cs, &(struct rj_workload){
			.model = "resnet50", .params = 25557032, .tensors = 161, .buckets = 4,
			.batch = 32, .iterations = 20, .compute = "sleep", .ranks = run.nranks,
			.overlap = overlap, .grad_bytes = 102448768, .first_wrong = -1,
			.gpu_tflops_calibrated = NAN, .gpu_tflops_used = 51, .precision = "fp32",
			.grad_dtype = "f32",
			.gpu_profile = "h200",
			.iter_ms = { iter, iter * 0.99, iter * 1.08, iter * 0.97, iter * 1.12 },
			.fwd_ms = { fwd, fwd, fwd * 1.02, fwd * 0.99, fwd * 1.03 },
			.bwd_ms = { bwd, bwd, bwd * 1.02, bwd * 0.99, bwd * 1.03 },
			.exposed_comm_ms = { iter - fwd - bwd, iter - fwd - bwd,
					     (iter - fwd - bwd) * 1.2, (iter - fwd - bwd) * 0.9,
					     (iter - fwd - bwd) * 1.3 },
			.allreduce_ms = { comm / 4, comm / 4, comm / 4 * 1.1, comm / 4 * 0.9,
					  comm / 4 * 1.15 },
			.comm_wait_share = (iter - fwd - bwd) / iter,
			.overlap_efficiency = 1 - (iter - fwd - bwd) / comm,
			.samples_per_s = 4 * 32 * 1e3 / iter, .samples_per_s_rank = 32 * 1e3 / iter,
			.busbw_GBps = 102660768.0 * 1.5 / (comm * 1e6),
			.scaling_efficiency = (fwd + bwd) / iter, .timeline = tl, .ntimeline = 4 });
		rj_doc_add_case(doc, cs);
	}
	return doc;
}

/*
 * A sweep of n cases with long names (five swept keys), e.g. for the page at 10, 72
 * and 300 cases: every case a collective sweep, every 12th also a workload case with
 * a bucket timeline, so each chart and table has to cope with many long names.
 */
static json_t *fx_sweep(int n)
{
	static const char *const tr[] = { "tcp", "shm" };
	static const char *const algo[] = { "ring", "tree", "rhd", "hierarchical" };
	static const char *const op[] = { "sum", "avg" };
	static const char *const chunk[] = { "256KiB", "512KiB", "1MiB", "4MiB" };
	struct fx_run run = {
		.experiment = "sweep", .started = "2026-11-30T08:00:00Z",
		.finished = "2026-11-30T09:12:00Z", .hostname = "h1", .kernel = "6.1.0-28-amd64",
		.nic_fw = "28.39.1002", .baseline = "", .nranks = 4, .nic_mtu = 4096,
	};
	json_t *doc = fx_doc(&run);
	static char names[1000][160];
	int i;

	for (i = 0; i < n && i < 1000; i++) {
		struct fx_case c = i % 2 ? shm : tcp;
		json_t *cs;

		snprintf(names[i], sizeof(names[i]), "transport=%s,algorithm=%s,reduce_op=%s,"
			 "chunk_size=%s,channels=%d", tr[i % 2], algo[(i / 2) % 4],
			 op[(i / 8) % 2], chunk[(i / 16) % 4], 1 + i / 64);
		c.name = names[i];
		c.swept_key = "transport.transport";
		c.swept_val = tr[i % 2];
		c.alpha_us *= 1 + 0.05 * (i % 7);
		c.wire_GBps *= 1 - 0.03 * (i % 11);
		cs = fx_case_new(&c, run.nranks, true);
		if (i % 12 == 0) {
			struct rj_bucket tl[6];
			double bwd = 40 + i % 5, end = 0;
			int k;

			for (k = 0; k < 6; k++) {
				double ready = bwd * (k + 1) / 6, t = 4 + (i + k) % 3;

				tl[k] = (struct rj_bucket){ .index = k, .bytes = 26214400,
							    .tensors = 10 + k, .ready_ms = ready,
							    .start_ms = fmax(ready, end) };
				end = tl[k].start_ms + t;
				tl[k].end_ms = end;
				tl[k].busbw_GBps = 26214400 * 1.5 / (t * 1e6);
			}
			rj_case_set_workload(cs, &(struct rj_workload){
				.model = "resnet50", .params = 25557032, .tensors = 161, .buckets = 6,
				.batch = 32, .iterations = 20, .compute = "sleep", .ranks = run.nranks,
				.overlap = true, .grad_bytes = 102228128, .first_wrong = -1,
				.gpu_tflops_calibrated = NAN, .precision = "fp32", .grad_dtype = "f32",
				.gpu_profile = "h200",
				.iter_ms = { 20 + bwd + (end - bwd), 0, 0, 0, 0 },
				.fwd_ms = { 20, 20, 20, 20, 20 }, .bwd_ms = { bwd, bwd, bwd, bwd, bwd },
				.exposed_comm_ms = { end - bwd, end - bwd, end - bwd, end - bwd,
						     end - bwd },
				.comm_wait_share = (end - bwd) / (20 + end),
				.overlap_efficiency = 0.5, .samples_per_s = 1000,
				.samples_per_s_rank = 250, .busbw_GBps = 5,
				.scaling_efficiency = NAN, .timeline = tl, .ntimeline = 6 });
		}
		rj_doc_add_case(doc, cs);
	}
	return doc;
}

json_t *report_fixture(const char *name)
{
	if (strcmp(name, "tcp_shm") == 0)
		return fx_tcp_shm();
	if (strcmp(name, "ib_node_a") == 0)
		return fx_ib_node(false);
	if (strcmp(name, "ib_node_b") == 0)
		return fx_ib_node(true);
	if (strcmp(name, "resnet_overlap") == 0)
		return fx_resnet();
	if (strncmp(name, "sweep", 5) == 0 && atoi(name + 5) > 0)
		return fx_sweep(atoi(name + 5));
	return NULL;
}
