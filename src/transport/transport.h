/*
 * The transport contract: one `const struct transport_ops` per transport (tcp, shm,
 * verbs, cudaipc), listed in preference order in transport.c. The collective
 * executor only ever talks to this interface.
 *
 * Lifecycle (all setup calls may block, bounded by env->timeout_ms):
 *   1. ops->open(t, env)          create local resources (sockets, rings, QPs);
 *   2. ops->endpoint(t, buf, &len) describe them in at most TRANSPORT_EP_MAX bytes;
 *   3. the engine all-gathers every rank's endpoint through the bootstrap;
 *   4. ops->connect(t, eps)       connect to every peer for which env->use_peer[p];
 *   5. data path: mr_reg once per buffer, then post_send / post_recv / poll;
 *   6. ops->close(t)              tear down; safe after a failed open or connect.
 *
 * Data-path contract (nothing here blocks):
 *  - post_send(peer, tag, mr, off, len) sends bytes [off, off+len) of a registered
 *    region; post_recv(peer, tag, mr, off, len) names where the matching message goes.
 *    A send matches the receive with the same (peer, tag); both sides may post in any
 *    order and the transport must cope with a send arriving before its receive (buffer
 *    it, or hold it until the receiver's clear-to-send). Lengths must be equal; a
 *    mismatch completes the receive with status -EMSGSIZE (shm also completes the
 *    send with -EMSGSIZE; tcp does for sends above its eager limit, 64 KiB, while a
 *    smaller send completes once written and the mismatch is logged on both ranks).
 *  - A post may return -EAGAIN when the transport is out of slots or credits; the
 *    caller polls and retries. Any other negative return is fatal for the run.
 *  - wait() (optional) sleeps until poll() may have news; never required for progress.
 *  - poll() returns up to max completions (0 when none) or -errno on a fatal error
 *    (peer gone, completion error), after logging one line naming the peer and call.
 *  - A send completion means the source bytes may be overwritten; a receive completion
 *    means the bytes are in place and visible to the next reader of that memory
 *    (for MEM_CUDA: to work queued on the GPU after the completion is seen).
 *  - Ownership: registered memory stays owned by the caller and must outlive its mr.
 */
#ifndef GS_TRANSPORT_TRANSPORT_H
#define GS_TRANSPORT_TRANSPORT_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#include "util/dtype.h"

#define TRANSPORT_EP_MAX 512   /* bytes of one rank's endpoint record */
#define TP_CHUNK_DEFAULT (1u << 20)
/* a piece that stays in a core's L2 between the copy that lands it and the reduce that
 * reads it (512 KiB on the dev VM's EPYC): tcp's chunk, and shm's while a collective is
 * small enough to stay cached */
#define TP_CHUNK_CACHED (512u << 10)
#define TRANSPORT_NAME_MAX 64

/* One row per transport; config's enum for [transport] transport uses these names. */
enum transport_kind {
	TP_AUTO = 0, /* per peer: first transport in preference order whose can_connect() says yes */
	TP_TCP,
	TP_SHM,
	TP_IB,      /* verbs, InfiniBand link layer */
	TP_ROCE,    /* verbs, Ethernet link layer (RoCEv2) */
	TP_CUDAIPC,
	TP_NCCL,    /* reference: the whole collective is handed to libnccl */
	TP_KIND_COUNT,
};

enum tp_cq_mode {
	TP_CQ_POLL = 0,
	TP_CQ_EVENT,
};

/* tcp: who drives the sockets */
enum tp_progress {
	TP_PROGRESS_AUTO = 0, /* inline (measured ahead on small and large hosts) */
	TP_PROGRESS_THREAD,   /* a progress thread per rank, asleep in epoll */
	TP_PROGRESS_INLINE,   /* the caller of post/poll does the socket work itself */
};

/* shm: messages of at least this many MiB go direct under copy = auto (shm.c says what
 * measured it); one definition for the transport and the key's help */
#define TP_SHM_DIRECT_MIN_MIB 1

/* shm: how a message's bytes cross (shm_progress.c's protocol) */
enum tp_shm_copy {
	TP_SHM_COPY_AUTO = 0, /* direct from SHM_DIRECT_MIN bytes where possible, else slots */
	TP_SHM_COPY_DIRECT,   /* direct whenever the sender's buffer is shareable */
	TP_SHM_COPY_SLOTS,    /* always through the ring's slots */
};

/* [transport] section of an experiment, as resolved by config/ (read-only here). */
struct transport_opts {
	int kind;                          /* enum transport_kind */
	int streams;                       /* tcp: connections per peer */
	uint64_t sockbuf;                  /* tcp: SO_SNDBUF/SO_RCVBUF bytes, 0 = kernel default */
	char tcp_interface[TRANSPORT_NAME_MAX]; /* tcp: interface name or address, "" = any */
	uint64_t shm_ring;                 /* shm: bytes of each directional ring */
	int shm_copy;                      /* shm: enum tp_shm_copy */
	char device[TRANSPORT_NAME_MAX];   /* verbs: "mlx5_0:1" or "auto" */
	int gid_index;                     /* verbs: -1 = auto */
	int mtu;                           /* verbs: 0 = port's active MTU, else 256..4096 */
	int traffic_class;
	int service_level;
	int qps_per_peer;
	int qp_depth;                      /* verbs: send/recv queue depth */
	int qp_timeout;                    /* verbs: ACK timeout exponent, 0 = NCCL's 20 */
	uint64_t inline_threshold;         /* verbs: bytes sent inline */
	int cq_mode;                       /* enum tp_cq_mode */
	int progress;                      /* tcp: enum tp_progress */
	uint64_t slot_size;                /* bytes of one receive slot / bounce chunk */
};

enum mem_kind {
	MEM_HOST = 0,
	MEM_CUDA,
};

/* What a transport knows about the job when it opens. */
struct transport_env {
	int rank;
	int nranks;
	int local_rank;                  /* index among ranks on this host */
	const int *host_of_rank;         /* nranks entries: equal value = same host */
	const bool *use_peer;            /* nranks entries: connect to this peer (false for self) */
	uint64_t job_id;                 /* random per job and case: names shm segments, tags handshakes */
	int timeout_ms;                  /* bound of every blocking setup call */
	const struct transport_opts *opts;
	int numa_node;                   /* -1 = no binding; where internal buffers should live */
	volatile const int *abort_flag;  /* set by the launcher when the job is aborting */
	bool gpu_buffers;                /* this case's buffers are GPU memory on every rank of a
					  * single host: cudaipc may volunteer under auto */
	bool crowded;                    /* this host's ranks outnumber its CPUs */
	/* receives into MEM_CUDA regions are flushed with a loopback RDMA READ before
	 * completion (GPUs before Hopper) */
	bool gdr_flush;
	/* verbs: the NIC (ibdev name) this rank's traffic should leave through when
	 * [transport] device = auto, its rail (topo/rail.h); "" = the first ACTIVE port */
	char rail[32];
};

/* The job is aborting (env->abort_flag set): a transport's waits stop at their next look. */
static inline bool tp_env_aborting(const struct transport_env *env)
{
	return env->abort_flag && *env->abort_flag;
}

struct tp_completion {
	uint64_t cookie;  /* as given to post_* */
	int status;       /* 0 or -errno */
	int peer;
	size_t len;
	bool is_send;
};

/* Facts about the path a transport uses; the report echoes them per case. */
struct tp_path_info {
	char transport[16];
	char device[64];        /* "mlx5_0", interface name, "shm" */
	int port;
	char link_layer[16];    /* "InfiniBand", "Ethernet", "" */
	char rate[32];          /* "200 Gb/s (4X HDR)", interface speed, "" */
	uint64_t rate_bps;      /* line rate in bits/s when known, else 0 */
	int mtu;
	int gid_index;
	char gid_type[16];      /* "RoCEv2", "IB/RoCEv1", "" */
	int qps;
	char fw_ver[64];
	char note[128];         /* anything else worth a line in the report */
};

struct tp_stats {
	uint64_t bytes_sent;
	uint64_t bytes_recv;
	uint64_t cpu_ns;        /* CPU time of the transport's own threads (progress, I/O) */
};

struct tp_mr;           /* registered region, owned by the transport */
/* dst[i] += src[i] for count elements of dt (the executor's host reduce) */
typedef void (*tp_reduce_fn)(void *dst, const void *src, uint64_t count, enum dtype dt);
struct transport;

struct transport_ops {
	const char *name;
	int kind;                              /* enum transport_kind */
	/* [collective] chunk_size = auto: the message size this transport moves best in an
	 * AllReduce of bytes over nranks (never smaller for more bytes; unset:
	 * TP_CHUNK_DEFAULT); a comm over several transports takes the smallest
	 * (coll_comm_chunk) */
	uint64_t (*chunk_auto)(uint64_t bytes, int nranks);
	/* May this transport reach peer? Pure predicate on env (same host, device present). */
	bool (*can_connect)(const struct transport_env *env, int peer);
	int (*open)(struct transport *t, const struct transport_env *env);
	int (*endpoint)(struct transport *t, void *buf, size_t *len);
	/* eps: nranks records of TRANSPORT_EP_MAX bytes, indexed by rank */
	int (*connect)(struct transport *t, const void *eps);
	int (*mr_reg)(struct transport *t, void *addr, size_t len, enum mem_kind kind,
		      struct tp_mr **mr);
	void (*mr_dereg)(struct transport *t, struct tp_mr *mr);
	int (*post_send)(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
			 size_t len, uint64_t cookie);
	int (*post_recv)(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
			 size_t len, uint64_t cookie);
	int (*poll)(struct transport *t, struct tp_completion *c, int max);
	/* Optional (-EOPNOTSUPP when unset): post_recv whose bytes are added into the
	 * region instead of replacing it: red(dst, src, count, dt) with count elements of dt at a time, called from
	 * post/poll as pieces arrive (host memory only; len a multiple of the element).
	 * Saves the executor's copy into scratch before its own reduce. */
	int (*post_recv_reduce)(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr,
				size_t off, size_t len, enum dtype dt, tp_reduce_fn red,
				uint64_t cookie);
	/* Optional: block up to timeout_ms until a poll may find something (data or
	 * space arrived); 0 after waiting or progressing, -EOPNOTSUPP when this instance
	 * cannot wait (the caller spins or naps instead). Only for a caller with nothing
	 * else to watch: it sleeps in the kernel, so an oversubscribed host runs peers. */
	int (*wait)(struct transport *t, int timeout_ms);
	/* Optional (false when unset): did a peer of this instance last run on CPU cpu?
	 * Cheap enough for a spin loop: two ranks that share a CPU hand it over with a
	 * yield, where a spin burns the slice the other needs (comm_idle). */
	bool (*peer_on_cpu)(struct transport *t, int cpu);
	/* Optional (nothing when unset): a collective over bytes of each rank's buffer
	 * begins; its messages follow until the next call. A transport may move them by
	 * the whole size (shm: copies of collectives too big for the cache skip it). */
	void (*coll_begin)(struct transport *t, uint64_t bytes);
	int (*path_info)(struct transport *t, struct tp_path_info *info);
	int (*stats)(struct transport *t, struct tp_stats *st);
	/* Optional (-EOPNOTSUPP when unset): one clause on what this instance still holds or
	 * waits on for peer (requests, credits, queues), for the line a stalled collective's
	 * timeout ends with: which side stopped, and why, is then in the error itself. */
	int (*pending)(struct transport *t, int peer, char *buf, size_t len);
	void (*close)(struct transport *t);
};

/* An open transport instance; priv belongs to the ops' implementation. */
struct transport {
	const struct transport_ops *ops;
	const struct transport_env *env;
	void *priv;
};

/*
 * Remove what a job with this job_id left in /dev/shm (its ranks were killed before
 * they could unlink): only names of that job owned by this user. Returns how many.
 */
int transport_sweep_job(uint64_t job_id);

/*
 * The registry: every compiled-in transport in preference order (cudaipc, shm, verbs,
 * tcp). The tables it hands out are complete: every op it lacks is a stub (-ENOTSUP,
 * -EOPNOTSUPP for the optional ones, TP_CHUNK_DEFAULT for chunk_auto), so callers never
 * test an op for NULL.
 */
const struct transport_ops *transport_find(int kind);
const struct transport_ops *transport_by_name(const char *name);
size_t transport_count(void);
const struct transport_ops *transport_at(size_t i);
/* Fill unset ops of src with the stubs into dst (the registry does it for its own). */
void transport_ops_complete(struct transport_ops *dst, const struct transport_ops *src);

/* The config vocabulary of enum transport_kind: one row per kind, auto and nccl too. */
struct transport_kind_row {
	int kind;
	const char *name;
	const char *help;
};
const struct transport_kind_row *transport_kind_at(size_t i); /* NULL past the end */
const char *transport_kind_name(int kind);

#endif
