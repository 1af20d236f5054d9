/*
 * The key table: every INI key of the experiment language, once. Adding a key is
 * adding a row here (and a field to the owning layer's options struct).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "config/keys.h"
#include "config/vocab.h"
#include "util/common.h"
#include "util/fsbound.h"
#include "workload/costmodel.h"

#define FIELD(sec, f) .offset = offsetof(struct cfg, sec.f), .size = sizeof(((struct cfg *)0)->sec.f)
#define LISTFIELD(sec, f, n)                                                                  \
	FIELD(sec, f), .count_offset = offsetof(struct cfg, sec.n)
#define CHOICES(a) .choices = (a), .nchoices = ARRAY_SIZE(a)
#define UNBOUNDED .min = 1, .max = 0
/* Keys only some transports read: lint warns when one is set or swept for none of them. */
#define READ_BY(mask, who) .read_by = (mask), .read_by_who = (who)
#define ON_TCP (1u << TP_TCP)
#define ON_SHM (1u << TP_SHM)
#define ON_ROCE (1u << TP_ROCE)
#define ON_VERBS ((1u << TP_IB) | (1u << TP_ROCE))
#define ON_ALLREDUCE (1u << COLL_OP_ALLREDUCE)

static const struct cfg_choice bool_choices[] = {
	{ "on", 1, "enabled" },
	{ "off", 0, "disabled" },
};

static const struct cfg_choice grad_dtype_choices[] = {
	{ "auto", GRAD_DTYPE_AUTO,
	  "the parameters' dtype, what DDP reduces: bf16 under precision = bf16, else f32 (autocast keeps fp32 parameters)" },
	{ "f32", DT_F32, "fp32 gradients (DDP default)" },
	{ "bf16", DT_BF16, "bf16 gradients (mixed precision, bf16 params)" },
	{ "f16", DT_F16, "fp16 gradients" },
};

static const struct cfg_choice verify_choices[] = {
	{ "first", VERIFY_FIRST, "check the result of the first iteration of each size" },
	{ "all", VERIFY_ALL, "check every iteration (slower)" },
	{ "off", VERIFY_OFF, "no checking" },
};

static const struct cfg_choice mtu_choices[] = {
	{ "auto", 0, "the port's active MTU" },
	{ "256", 256, "" }, { "512", 512, "" }, { "1024", 1024, "" },
	{ "2048", 2048, "" }, { "4096", 4096, "" },
};

static const struct cfg_choice cq_choices[] = {
	{ "poll", TP_CQ_POLL, "busy-poll the completion queue (lowest latency)" },
	{ "event", TP_CQ_EVENT, "sleep on completion events (least CPU)" },
};

static const struct cfg_choice progress_choices[] = {
	{ "auto", TP_PROGRESS_AUTO, "inline: measured ahead of the thread on 2- and 32-core hosts" },
	{ "thread", TP_PROGRESS_THREAD, "a progress thread per rank drives the sockets" },
	{ "inline", TP_PROGRESS_INLINE, "the collective's polling thread drives the sockets itself" },
};

static const struct cfg_choice shm_copy_choices[] = {
	{ "auto", TP_SHM_COPY_AUTO, "direct where the peer's buffer can be mapped, from " GS_XSTR(TP_SHM_DIRECT_MIN_MIB) "MiB messages, else slots: the measured crossover" },
	{ "direct", TP_SHM_COPY_DIRECT, "the receiver reduces or copies straight from the sender's buffer, mapped (one pass); connect fails when it cannot map it" },
	{ "slots", TP_SHM_COPY_SLOTS, "through the ring's slots: the sender copies in, the receiver copies or reduces out" },
};

static const struct cfg_choice tristate_choices[] = {
	{ "auto", GPU_AUTO, "use it when possible, else fall back and say why" },
	{ "on", GPU_ON, "require it; fail clearly when impossible" },
	{ "off", GPU_OFF, "never use it" },
};

static const struct cfg_choice format_choices[] = {
	{ "table", 0, "terminal table (nccl-tests columns)" },
	{ "json", 1, "report.json (always written)" },
	{ "csv", 2, "report.csv, one row per case and size" },
	{ "md", 3, "report.md, pastes into a ticket" },
	{ "html", 4, "report.html with SVG charts, self-contained" },
};

static const struct cfg_key keys[] = {
	/* [experiment] */
	{ "experiment", "name", CFG_STRING, "experiment", "", UNBOUNDED, .check = vocab_check_name,
	  FIELD(experiment, name), .help = "experiment name; the results directory is named after it" },
	{ "experiment", "output_dir", CFG_STRING, "results", "", UNBOUNDED, .path = true, .check = vocab_check_dir,
	  FIELD(experiment, output_dir),
	  .help = "where run directories are created (relative to the working directory)" },
	{ "experiment", "seed", CFG_INT, "1", "", 0, 2147483647, FIELD(experiment, seed),
	  .help = "seed of the verification patterns",
	  .same_on_all_ranks = true },
	{ "experiment", "repeat", CFG_INT, "1", "", 1, 1000, FIELD(experiment, repeat),
	  .help = "run the whole case list this many times, in rounds; each repetition is a case "
		  "of its own (\"...,repeat=k\") whose results are kept",
	  .same_on_all_ranks = true },
	{ "experiment", "description", CFG_STRING, "", "", UNBOUNDED, FIELD(experiment, description),
	  .help = "free text copied into the report" },

	/* [workload] */
	{ "workload", "model", CFG_ENUM, "none", "", UNBOUNDED, .choice_at = vocab_model_at,
	  .sweepable = true, FIELD(workload, model),
	  .help = "DDP workload to run; none = collective benchmark of [collective] sizes",
	  .same_on_all_ranks = true },
	{ "workload", "batch", CFG_INT, "32", "samples", 1, 65536, .sweepable = true,
	  FIELD(workload, batch), .set_offset = offsetof(struct cfg, workload.batch_set),
	  .help = "per-rank batch size (model = trace: the trace's batch line unless given)" },
	{ "workload", "seq_len", CFG_INT, "512", "tokens", 1, 1048576, .sweepable = true,
	  FIELD(workload, seq_len), .help = "sequence length of transformer language models" },
	{ "workload", "image_size", CFG_INT, "224", "pixels", 16, 4096, .sweepable = true,
	  FIELD(workload, image_size), .help = "image side of vision models" },
	{ "workload", "bucket_cap", CFG_SIZE, "25MiB", "bytes", 1024, 17179869184.0,
	  .sweepable = true, FIELD(workload, bucket_cap),
	  .set_offset = offsetof(struct cfg, workload.bucket_cap_set),
	  .help = "DDP bucket_cap_mb: a bucket closes when it reaches this size",
	  .same_on_all_ranks = true },
	{ "workload", "first_bucket_cap", CFG_SIZE, "auto", "bytes", 1024, 17179869184.0,
	  .sweepable = true, .size_auto = true, FIELD(workload, first_bucket_cap),
	  .help = "cap of the first bucket; auto = DDP's rule: 1MiB while bucket_cap is left unset, bucket_cap once it is given",
	  .same_on_all_ranks = true },
	{ "workload", "grad_dtype", CFG_ENUM, "auto", "", UNBOUNDED, CHOICES(grad_dtype_choices),
	  .sweepable = true, FIELD(workload, grad_dtype), .help = "gradient element type DDP reduces; auto = the parameters': bf16 under precision = bf16, else f32",
	  .same_on_all_ranks = true },
	{ "workload", "compute", CFG_ENUM, "sleep", "", UNBOUNDED, .choice_at = vocab_compute_at,
	  .sweepable = true, FIELD(workload, compute), .help = "how forward/backward compute is played" },
	{ "workload", "precision", CFG_ENUM, "fp32", "", UNBOUNDED, .choice_at = vocab_precision_at,
	  .sweepable = true, FIELD(workload, precision),
	  .help = "training precision the compute model prices (matrix rates, activation bytes, casts, ready order)",
	  .same_on_all_ranks = true },
	{ "workload", "launch_gap", CFG_DURATION, "auto", "ns", 0, 1e9, .size_auto = true,
	  .sweepable = true, FIELD(workload, launch_gap_ns),
	  .help = "host time per eager call (autograd node: the profile's share of it); auto = the GPU profile's (PyTorch eager), 0 = CUDA graphs: no host time" },
	{ "workload", "gpu_tflops", CFG_FLOAT, "0", "TFLOP/s", 0, 100000, .sweepable = true,
	  FIELD(workload, gpu_tflops),
	  .help = "> 0: GEMM TFLOP/s of the precision, replacing the GPU profile's (other units keep their ratio); 0 = the profile's" },
	{ "workload", "overlap", CFG_BOOL, "on", "", UNBOUNDED, CHOICES(bool_choices),
	  .sweepable = true, FIELD(workload, overlap),
	  .help = "start each bucket's AllReduce when ready (DDP) instead of after backward",
	  .same_on_all_ranks = true },
	{ "workload", "iterations", CFG_INT, "20", "", 1, 1000000, FIELD(workload, iterations),
	  .help = "measured training iterations",
	  .same_on_all_ranks = true },
	{ "workload", "warmup", CFG_INT, "3", "", 0, 1000000, FIELD(workload, warmup),
	  .help = "iterations run before measuring",
	  .same_on_all_ranks = true },
	{ "workload", "hidden_size", CFG_INT, "0", "", 0, 1048576, .sweepable = true,
	  FIELD(workload, hidden_size), .help = "transformer models: hidden size (0 = preset)",
	  .same_on_all_ranks = true },
	{ "workload", "num_layers", CFG_INT, "0", "", 0, 4096, .sweepable = true,
	  FIELD(workload, num_layers), .help = "transformer models: layers (0 = preset)",
	  .same_on_all_ranks = true },
	{ "workload", "num_heads", CFG_INT, "0", "", 0, 4096, FIELD(workload, num_heads),
	  .help = "transformer models: attention heads (0 = preset)",
	  .same_on_all_ranks = true },
	{ "workload", "num_kv_heads", CFG_INT, "0", "", 0, 4096, FIELD(workload, num_kv_heads),
	  .help = "Llama-style models: key/value heads, grouped-query attention (0 = preset)",
	  .same_on_all_ranks = true },
	{ "workload", "ffn_size", CFG_INT, "0", "", 0, 4194304, FIELD(workload, ffn_size),
	  .help = "transformer models: MLP intermediate size (0 = preset)",
	  .same_on_all_ranks = true },
	{ "workload", "vocab_size", CFG_INT, "0", "", 0, 4194304, FIELD(workload, vocab_size),
	  .help = "transformer models: vocabulary size (0 = preset)",
	  .same_on_all_ranks = true },
	{ "workload", "op_trace", CFG_STRING, "", "", UNBOUNDED, .path = true, .sweepable = true,
	  FIELD(workload, op_trace),
	  .help = "model = trace: a step recorded by tests/workload/record_op_trace.py, replayed as recorded" },
	{ "workload", "layers", CFG_STRING, "", "", UNBOUNDED, .check = vocab_check_layers,
	  FIELD(workload, layers),
	  .help = "model = custom: layers as 'name:params[:gflops], ...' in registration order",
	  .same_on_all_ranks = true },

	/* [collective] */
	{ "collective", "op", CFG_ENUM, "allreduce", "", UNBOUNDED, .choice_at = vocab_op_at,
	  .sweepable = true, FIELD(collective, op), .help = "what is measured when model = none",
	  .same_on_all_ranks = true },
	{ "collective", "algorithm", CFG_ENUM, "auto", "", UNBOUNDED, .choice_at = vocab_algo_at,
	  .sweepable = true, FIELD(collective, algo), .read_by_ops = ON_ALLREDUCE, .ddp_reads = true, .help = "AllReduce algorithm",
	  .same_on_all_ranks = true },
	{ "collective", "dtype", CFG_ENUM, "f32", "", UNBOUNDED, .choice_at = vocab_dtype_at,
	  .sweepable = true, FIELD(collective, dtype), .read_by_ops = ON_ALLREDUCE, .help = "element type of the benchmark",
	  .same_on_all_ranks = true },
	{ "collective", "reduce_op", CFG_ENUM, "sum", "", UNBOUNDED, .choice_at = vocab_redop_at,
	  .sweepable = true, FIELD(collective, redop), .read_by_ops = ON_ALLREDUCE, .help = "reduction operator",
	  .same_on_all_ranks = true },
	{ "collective", "sizes", CFG_SIZES, "4KiB..64MiB x2", "bytes", 4, 68719476736.0,
	  LISTFIELD(collective, sizes, nsizes),
	  .help = "buffer sizes per rank: list and/or ranges 'A..B xF' (geometric) or 'A..B +S'",
	  .same_on_all_ranks = true },
	{ "collective", "iterations", CFG_INT, "20", "", 1, 1000000, FIELD(collective, iterations),
	  .help = "timed iterations per size",
	  .same_on_all_ranks = true },
	{ "collective", "warmup", CFG_INT, "5", "", 0, 1000000, FIELD(collective, warmup),
	  .help = "untimed iterations per size",
	  .same_on_all_ranks = true },
	{ "collective", "chunk_size", CFG_SIZE, "auto", "bytes", 4096, 1073741824.0,
	  .sweepable = true, .size_auto = true, FIELD(collective, chunk_size), .ddp_reads = true,
	  .help = "bytes per message, the executor's pipelining unit; auto = what the case's "
		  "transports choose for the size (the smallest of them); each row's chunk_bytes "
		  "says which",
	  .same_on_all_ranks = true },
	{ "collective", "channels", CFG_INT, "2", "", 1, 64, .sweepable = true,
	  FIELD(collective, channels), .read_by_ops = ON_ALLREDUCE, .ddp_reads = true, .help = "pipeline pieces in flight at once",
	  .same_on_all_ranks = true },
	{ "collective", "window", CFG_INT, "64", "", 1, 4096, .sweepable = true,
	  FIELD(collective, window), .read_by_ops = (1u << COLL_OP_WRITE_BW) | (1u << COLL_OP_PAIRWISE), .help = "write_bw: sends outstanding at once (perftest's tx depth)",
	  .same_on_all_ranks = true },
	{ "collective", "verify", CFG_ENUM, "first", "", UNBOUNDED, CHOICES(verify_choices),
	  FIELD(collective, verify), .read_by_ops = ON_ALLREDUCE, .ddp_reads = true, .help = "bit-exact result checking",
	  .same_on_all_ranks = true },

	/* [transport] */
	{ "transport", "transport", CFG_ENUM, "tcp", "", UNBOUNDED, .choice_at = vocab_transport_at,
	  .sweepable = true, FIELD(transport, kind), .help = "how ranks exchange data",
	  .same_on_all_ranks = true },
	{ "transport", "streams", CFG_INT, "2", "", 1, 64, .sweepable = true,
	  FIELD(transport, streams), READ_BY(ON_TCP, "tcp"), .help = "tcp: connections per peer",
	  .same_on_all_ranks = true },
	{ "transport", "sockbuf", CFG_SIZE, "4MiB", "bytes", 0, 1073741824.0, .sweepable = true,
	  FIELD(transport, sockbuf), READ_BY(ON_TCP, "tcp"), .help = "tcp: socket send/receive buffer, 0 = kernel default" },
	{ "transport", "progress", CFG_ENUM, "auto", "", UNBOUNDED, CHOICES(progress_choices),
	  .sweepable = true, FIELD(transport, progress), READ_BY(ON_TCP, "tcp"), .help = "tcp: who drives the sockets" },
	{ "transport", "tcp_interface", CFG_STRING, "", "", UNBOUNDED,
	  FIELD(transport, tcp_interface), READ_BY(ON_TCP, "tcp"), .help = "tcp: interface name or address to use, empty = any" },
	{ "transport", "shm_ring", CFG_SIZE, "8MiB", "bytes", 65536, 1073741824.0, .sweepable = true,
	  FIELD(transport, shm_ring), READ_BY(ON_SHM, "shm"), .help = "shm: bytes of each directional ring",
	  .same_on_all_ranks = true },
	{ "transport", "shm_copy", CFG_ENUM, "auto", "", UNBOUNDED, CHOICES(shm_copy_choices),
	  .sweepable = true, FIELD(transport, shm_copy), READ_BY(ON_SHM, "shm"), .help = "shm: how a message's bytes cross",
	  .same_on_all_ranks = true },
	{ "transport", "slot_size", CFG_SIZE, "1MiB", "bytes", 4096, 268435456.0, .sweepable = true,
	  FIELD(transport, slot_size), READ_BY(ON_SHM | ON_VERBS, "shm or ib/roce"), .help = "bytes of one ring slot or bounce buffer",
	  .same_on_all_ranks = true },
	{ "transport", "device", CFG_STRING, "auto", "", UNBOUNDED, .check = vocab_check_ibdev,
	  .sweepable = true, FIELD(transport, device), READ_BY(ON_VERBS, "ib/roce"),
	  .help = "ib/roce: DEVICE:PORT (mlx5_0:1) or auto (first ACTIVE port of the link layer)" },
	{ "transport", "gid_index", CFG_INT, "auto", "", -1, 255, .sweepable = true,
	  FIELD(transport, gid_index), READ_BY(ON_ROCE, "roce"), .help = "roce: GID index, auto = RoCEv2 IPv4 like NCCL" },
	{ "transport", "mtu", CFG_ENUM, "auto", "bytes", UNBOUNDED, CHOICES(mtu_choices),
	  .sweepable = true, FIELD(transport, mtu), READ_BY(ON_VERBS, "ib/roce"), .help = "ib/roce: path MTU" },
	{ "transport", "traffic_class", CFG_INT, "0", "", 0, 255, .sweepable = true,
	  FIELD(transport, traffic_class), READ_BY(ON_VERBS, "ib/roce"), .help = "ib/roce: traffic class (DSCP << 2 for RoCE)" },
	{ "transport", "service_level", CFG_INT, "0", "", 0, 15, .sweepable = true,
	  FIELD(transport, service_level), READ_BY(ON_VERBS, "ib/roce"), .help = "ib/roce: service level" },
	{ "transport", "qps_per_peer", CFG_INT, "1", "", 1, 64, .sweepable = true,
	  FIELD(transport, qps_per_peer), READ_BY(ON_VERBS, "ib/roce"), .help = "ib/roce: queue pairs per peer, messages striped",
	  .same_on_all_ranks = true },
	{ "transport", "qp_depth", CFG_INT, "256", "", 16, 32768, FIELD(transport, qp_depth), READ_BY(ON_VERBS, "ib/roce"),
	  .help = "ib/roce: work requests per queue" },
	{ "transport", "qp_timeout", CFG_INT, "20", "", 1, 31, FIELD(transport, qp_timeout), READ_BY(ON_VERBS, "ib/roce"),
	  .help = "ib/roce: ACK timeout, 4.096us x 2^N a try (NCCL_IB_TIMEOUT; 20 = 4.3 s)" },
	{ "transport", "inline_threshold", CFG_SIZE, "64", "bytes", 0, 1024,
	  FIELD(transport, inline_threshold), READ_BY(ON_VERBS, "ib/roce"), .help = "ib/roce: messages up to this size go inline" },
	{ "transport", "cq_mode", CFG_ENUM, "poll", "", UNBOUNDED, CHOICES(cq_choices),
	  .sweepable = true, FIELD(transport, cq_mode), READ_BY(ON_VERBS, "ib/roce"), .help = "ib/roce: completion handling" },

	/* [gpu] */
	{ "gpu", "device", CFG_STRING, "none", "", UNBOUNDED, .check = vocab_check_gpu_device,
	  FIELD(gpu, device),
	  .help = "auto (local rank -> GPU), none (host buffers), or a list '0,1' by local rank" },
	{ "gpu", "profile", CFG_STRING, "h200", "", UNBOUNDED, .path = true, .sweepable = true,
	  .check = vocab_check_gpu_profile, FIELD(workload, gpu_profile),
	  .help = "GPU of the compute model: h200 (measured), h100 (datasheet, its host and BatchNorm measured), a100, b200 (datasheets) or a profile FILE" },
	{ "gpu", "gdr", CFG_ENUM, "auto", "", UNBOUNDED, CHOICES(tristate_choices),
	  .sweepable = true, FIELD(gpu, gdr), READ_BY(ON_VERBS, "ib/roce with GPU buffers"), .help = "GPUDirect RDMA for GPU buffers over ib/roce" },
	{ "gpu", "gdr_level", CFG_ENUM, "PXB", "", UNBOUNDED, .choice_at = vocab_gdr_level_at,
	  .sweepable = true, FIELD(gpu, gdr_level), READ_BY(ON_VERBS, "ib/roce with GPU buffers"),
	  .help = "farthest GPU-NIC path class allowed for GDR (NCCL_NET_GDR_LEVEL)" },
	{ "gpu", "gdr_read", CFG_ENUM, "auto", "", UNBOUNDED, CHOICES(tristate_choices),
	  .sweepable = true, FIELD(gpu, gdr_read), READ_BY(ON_VERBS, "ib/roce with GPU buffers"),
	  .help = "send side reads GPU memory directly (else stages sends)" },
	{ "gpu", "gdr_mode", CFG_ENUM, "auto", "", UNBOUNDED, .choice_at = vocab_gdr_mode_at,
	  .sweepable = true, FIELD(gpu, gdr_mode), READ_BY(ON_VERBS, "ib/roce with GPU buffers"), .help = "how GPU memory is registered with the NIC" },

	/* [numa] */
	{ "numa", "bind", CFG_STRING, "none", "", UNBOUNDED, .check = numa_bind_check,
	  .sweepable = true, FIELD(numa, bind),
	  .help = "none | gpu | nic | remote | interleave | node:N | cpus:LIST (threads and buffers)" },

	/* [launch] */
	{ "launch", "local_ranks", CFG_INT, "4", "ranks", 1, 1024, .sweepable = true,
	  FIELD(launch, local_ranks), .help = "ranks gradsync starts itself when no launcher is present" },
	{ "launch", "timeout", CFG_DURATION, "60s", "ns", 1e6, 86400e9, FIELD(launch, timeout_ns),
	  .help = "bound of every wait (rendezvous, connection, one collective)" },
	{ "launch", "rendezvous", CFG_STRING, "", "", UNBOUNDED, .check = vocab_check_rendezvous,
	  FIELD(launch, rendezvous),
	  .help = "HOST:PORT of rank 0; empty = 127.0.0.1 and a free port" },
	{ "launch", "token", CFG_STRING, "", "", UNBOUNDED, FIELD(launch, token), .secret = true,
	  .help = "job token every rank proves (prefer token_file; reports show it redacted)" },
	{ "launch", "token_file", CFG_STRING, "", "", UNBOUNDED, .path = true, FIELD(launch, token_file),
	  .help = "file holding the job token, mode 0600 (multi-node and launcher runs); "
		  "empty = GRADSYNC_TOKEN, or random for local runs" },

	/* [report] */
	{ "report", "formats", CFG_LIST, "table,json,csv,md,html", "", UNBOUNDED,
	  CHOICES(format_choices), FIELD(report, formats), .help = "outputs written for each run" },
	{ "report", "min_busbw", CFG_STRING, "", "", UNBOUNDED, .check = vocab_check_threshold,
	  FIELD(report, min_busbw),
	  .help = "pass/fail per size: 20GB/s or 80% of the bound; '80% @ 64MiB..' for a range" },
	{ "report", "project_ranks", CFG_INTS, "", "ranks", 1, 1048576,
	  LISTFIELD(report, project_ranks, nproject_ranks),
	  .help = "rank counts to project the workload to with the fitted alpha-beta model" },
	/* its default also bounds what is read before it is known (util/fsbound.h) */
	{ "report", "write_timeout", CFG_DURATION, FSB_TIMEOUT_DEFAULT, "ns", 100e6, 86400e9,
	  FIELD(report, write_timeout_ns),
	  .help = "bound of each write of results into the run directory (and of each read back), "
		  "and of the check of output_dir at the start: a file system that does not answer "
		  "(a hard-mounted NFS whose server is gone) fails the run with one line naming the "
		  "file and the call; the experiment file, its includes and the files it names are "
		  "read within the default" },
};

size_t cfg_key_count(void)
{
	return ARRAY_SIZE(keys);
}

const struct cfg_key *cfg_key_at(size_t i)
{
	return i < ARRAY_SIZE(keys) ? &keys[i] : NULL;
}

const struct cfg_key *cfg_key_find(const char *section, const char *name)
{
	const struct cfg_key *found = NULL;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		if (strcmp(keys[i].name, name))
			continue;
		if (section && strcmp(keys[i].section, section) == 0)
			return &keys[i];
		if (!section) {
			if (found)
				return NULL; /* ambiguous bare name */
			found = &keys[i];
		}
	}
	return found;
}

const struct cfg_key *cfg_key_find_dotted(const char *dotted)
{
	char sec[64];
	const char *dot = strchr(dotted, '.');

	if (!dot)
		return cfg_key_find(NULL, dotted);
	if ((size_t)(dot - dotted) >= sizeof(sec))
		return NULL;
	memcpy(sec, dotted, dot - dotted);
	sec[dot - dotted] = '\0';
	return cfg_key_find(sec, dot + 1);
}

bool cfg_section_known(const char *section)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (strcmp(keys[i].section, section) == 0)
			return true;
	return false;
}

size_t cfg_key_nchoices(const struct cfg_key *k)
{
	struct cfg_choice c;
	size_t n = 0;

	if (k->choices)
		return k->nchoices;
	if (!k->choice_at)
		return 0;
	while (k->choice_at(n, &c))
		n++;
	return n;
}

bool cfg_key_choice(const struct cfg_key *k, size_t i, struct cfg_choice *out)
{
	if (k->choices) {
		if (i >= k->nchoices)
			return false;
		*out = k->choices[i];
		return true;
	}
	return k->choice_at && k->choice_at(i, out);
}

/* Levenshtein distance, case-insensitive, for did-you-mean suggestions. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[65];

	if (la > 64 || lb > 64)
		return (size_t)-1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t prev = row[0], tmp;

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t cost = (a[i - 1] | 32) == (b[j - 1] | 32) ? 0 : 1;

			tmp = row[j];
			row[j] = GS_MIN(GS_MIN(row[j] + 1, row[j - 1] + 1), prev + cost);
			prev = tmp;
		}
	}
	return row[lb];
}

/* Suggest only when the distance is small relative to the word. */
static bool close_enough(size_t d, const char *word)
{
	return d <= GS_MAX((size_t)2, strlen(word) / 3);
}

const struct cfg_key *cfg_key_suggest(const char *section, const char *name)
{
	const struct cfg_key *best = NULL;
	size_t bestd = (size_t)-1, i;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		size_t d = edit_distance(keys[i].name, name);

		/* prefer the key's own section on ties */
		if (section && strcmp(keys[i].section, section))
			d = d * 2 + 1;
		if (d < bestd) {
			bestd = d;
			best = &keys[i];
		}
	}
	if (best && !close_enough(bestd, name) && !(section && strcmp(best->section, section) &&
						   edit_distance(best->name, name) == 0))
		return NULL;
	return best;
}

const char *cfg_section_suggest(const char *section)
{
	static const char *const extra[] = { "matrix" };
	const char *best = NULL;
	size_t bestd = (size_t)-1, i;

	for (i = 0; i < ARRAY_SIZE(keys) + ARRAY_SIZE(extra); i++) {
		const char *s = i < ARRAY_SIZE(keys) ? keys[i].section : extra[i - ARRAY_SIZE(keys)];
		size_t d = edit_distance(s, section);

		if (d < bestd) {
			bestd = d;
			best = s;
		}
	}
	return best && close_enough(bestd, section) ? best : NULL;
}
