/*
 * Internal state of the verbs transport (ib and roce share it): device selection in
 * verbs_dev.c, QP setup in verbs_conn.c, the data path in verbs.c and verbs_proto.c, the
 * receive flush in verbs_flush.c.
 */
#ifndef GS_TRANSPORT_VERBS_PRIV_H
#define GS_TRANSPORT_VERBS_PRIV_H

#ifndef RDMA_STATIC_PROVIDERS
#define RDMA_STATIC_PROVIDERS all
#endif
#include <infiniband/verbs.h>

#include "transport/transport.h"
#include "transport/verbs/verbs_policy.h" /* QP attributes, access flags */
#include "util/fifo.h"

#define VERBS_MAX_QPS	   16	       /* qps_per_peer upper bound */
#define VERBS_DEF_DEPTH	   128	       /* qp_depth when the option is 0 */
#define VERBS_REQ_MAX	   1024	       /* outstanding sends / receives / stashed CTS per peer */
#define VERBS_RID_IDX_BITS 10	       /* log2(VERBS_REQ_MAX): the rest of a rid is a generation */
#define VERBS_CREDIT_MAX   127	       /* credits one immediate can return (7 bits) */
#define VERBS_EP_MAGIC	   0x67735652u /* "gsVR" */
#define VERBS_FLUSH_BYTES  4 /* bytes one flush READ fetches */

/* Immediate data of a data write: [31] length mismatch, [30:24] credits, [23:0] rid. */
#define IMM_ERR	       (1u << 31)
#define IMM_CRED_SHIFT 24
#define IMM_RID_MASK   0xffffffu

/* wr_id: [63:60] kind, [59:36] peer, [35:28] qp index, [27:0] slot or request index */
enum verbs_wr_kind {
	WR_RECV = 1,  /* a control receive buffer (also consumed by data immediates) */
	WR_CTRL = 2,  /* a control send */
	WR_DATA = 3,  /* one stripe write of a send request */
	WR_FLUSH = 4, /* a loopback RDMA READ flushing a receive (verbs_flush.c) */
};
#define WRID(k, peer, q, idx)                                                                      \
	((uint64_t)(k) << 60 | (uint64_t)(peer) << 36 | (uint64_t)(q) << 28 | (uint64_t)(idx))
#define WRID_KIND(w) ((int)((w) >> 60))
#define WRID_PEER(w) ((int)(((w) >> 36) & 0xffffff))
#define WRID_QP(w)   ((int)(((w) >> 28) & 0xff))
#define WRID_IDX(w)  ((uint32_t)((w)&0xfffffff))

enum verbs_msg_type {
	VMSG_CTS = 1,	 /* clear-to-send: where the receiver wants message `tag` */
	VMSG_CREDIT = 2, /* credit return only */
};

/* A control message (SEND, inline when the QP allows). */
struct verbs_msg {
	uint8_t type;
	uint8_t credits; /* receive credits returned for the QP it travels on */
	uint16_t pad;
	uint32_t rid; /* receiver's request id, echoed in the data's immediate */
	uint64_t tag;
	uint64_t addr;
	uint64_t len;
	uint32_t rkey;
	uint32_t pad2;
};

/* Selected device, port and GID: the facts path_info and connect need. */
struct verbs_dev {
	struct ibv_context *ctx;
	char name[64];
	int port;
	struct ibv_port_attr pattr;
	struct ibv_device_attr dattr;
	int link_layer; /* IBV_LINK_LAYER_* */
	int gid_index;	/* -1 for IB without a GID */
	union ibv_gid gid;
	int gid_type; /* IBV_GID_TYPE_* */
	enum ibv_mtu mtu;
};

struct tp_mr {
	struct ibv_mr *mr;
	void *addr;
	size_t len;
	int refs;
	bool flush; /* receives into it are flushed before they complete (verbs_flush.c) */
	struct tp_mr *next;
};

/* One posted receive: the CTS is sent, data arrives as write-with-immediate. */
struct verbs_rreq {
	uint64_t tag, cookie;
	size_t len, got;
	uint32_t gen; /* upper 14 bits of the rid: stale immediates are caught */
	bool used, seen, mismatch;
	struct tp_mr *mr;
	size_t off;
};

/* One posted send; matched with a CTS it becomes active and issues stripe writes. */
struct verbs_sreq {
	uint64_t tag, cookie;
	int peer;
	struct tp_mr *mr;
	size_t off, len;
	bool used, matched, mismatch;
	uint64_t raddr;
	uint32_t rkey, rid;
	size_t issued;	/* bytes posted so far */
	int writes_out; /* posted, not yet completed */
	bool all_issued;
	int next_qp;
	struct fifo_link active; /* on verbs_state.active while matched with stripes left */
};

/* A CTS that arrived before its send was posted. */
struct verbs_cts {
	struct verbs_msg m;
	bool used;
};

struct verbs_peer {
	bool used;
	int nqp;
	struct ibv_qp *qp[VERBS_MAX_QPS];
	uint32_t rqpn[VERBS_MAX_QPS];
	int cred[VERBS_MAX_QPS]; /* peer receives we may still consume */
	int owed[VERBS_MAX_QPS]; /* our reposted receives not yet announced */
	int sq_used[VERBS_MAX_QPS];
	uint64_t sq_comps[VERBS_MAX_QPS];	    /* send completions so far */
	struct verbs_qwatch watch[VERBS_MAX_QPS]; /* verbs_watch_queues */
	struct verbs_msg *ring;	 /* nqp * depth receive buffers (inside ctrl_mr) */
	struct verbs_msg *txbuf; /* nqp * depth send buffers when not inline */
	int txnext[VERBS_MAX_QPS];
	struct verbs_rreq rreq[VERBS_REQ_MAX];
	uint32_t rreq_next; /* round-robin search start */
	uint32_t rgen;
	struct verbs_sreq sreq[VERBS_REQ_MAX];
	struct verbs_cts cts[VERBS_REQ_MAX]; /* unmatched CTS, FIFO by seq */
	uint64_t cts_seq[VERBS_REQ_MAX];
	uint64_t sreq_seq[VERBS_REQ_MAX];
	uint64_t seq;
	/* CTS waiting for a credit, FIFO ring of rreq indices */
	uint32_t ctsq[VERBS_REQ_MAX];
	uint32_t ctsq_head, ctsq_tail;
};

/* A receive completion held back until the flush READs enqueued up to it completed. */
struct verbs_held {
	struct tp_completion c;
	uint64_t seq;	/* it is released once this many flush READs have completed */
	uint64_t raddr; /* read: the READ's source in the received region */
	uint32_t rkey, rlen;
	bool read; /* it needs a READ of its own (else it only waits for earlier ones) */
};

/*
 * The receive flush (GPUDirect RDMA before Hopper, as NCCL's ncclIbIflush): an RC QP
 * connected to itself reads VERBS_FLUSH_BYTES of the received region into buf; the PCIe
 * read completes only after the NIC's earlier writes to that memory are visible.
 * held[] is a FIFO of receive completions (counters are absolute, index % cap): entries
 * [head, tail) wait, READs of [head, posted) are posted. All receive completions pass
 * through it while it is not empty, so completions keep their order.
 */
struct verbs_flush {
	bool force; /* GRADSYNC_VERBS_FLUSH=1: every receive is flushed */
	struct ibv_qp *qp;
	void *buf;
	struct ibv_mr *mr;
	int depth, sq_used;
	struct verbs_held *held;
	uint64_t cap, head, tail, posted;
	uint64_t reads_enq, reads_done; /* reads_done: the count the path note reports */
};

struct verbs_state {
	const struct transport_env *env;
	int kind; /* TP_IB or TP_ROCE */
	struct verbs_dev dev;
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan;
	struct ibv_cq *cq;
	bool cq_armed;
	int depth; /* send and receive depth of each QP */
	int nqp;
	uint32_t max_inline;
	uint64_t max_write;
	uint32_t psn;
	void *ctrl; /* all peers' receive rings and send buffers */
	size_t ctrl_len;
	struct ibv_mr *ctrl_mr;
	struct verbs_peer **peers; /* nranks entries, NULL for peers not connected */
	struct tp_mr *mrs;
	struct fifo active; /* verbs_sreq: matched sends with stripes left, in match order */
	struct tp_completion *done;		/* completions not yet returned */
	int done_head, done_n, done_cap;
	int fatal;	     /* 0, or the sticky -errno every later post and poll returns */
	bool credit_pending; /* some peer QP owes credits it could not send yet */
	uint64_t rc_budget_ns;	 /* verbs_rc_budget_ns of our QPs */
	uint64_t watch_ns;	 /* the send queue watchdog's last look */
	uint32_t idle_polls;	 /* empty polls, for the watchdog's pace */
	struct verbs_flush fl;
	struct tp_stats st;
};

/* verbs_dev.c */
const char *verbs_ll_name(int link_layer);
/* rail: the ibdev preferred for device = auto ("" none, see transport_env.rail) */
int verbs_dev_open(struct verbs_dev *d, const struct transport_opts *o, const char *rail,
		   int want_ll);
void verbs_dev_close(struct verbs_dev *d);
bool verbs_dev_usable(const char *device, int want_ll);
int verbs_path_info(const struct verbs_state *s, struct tp_path_info *info);

/* verbs_proto.c: the wire protocol; every function returns 0 / -errno */
void verbs_done_push(struct verbs_state *s, uint64_t cookie, int status, int peer, size_t len,
		     bool is_send);
struct verbs_peer *verbs_peer_of(struct verbs_state *s, int peer); /* NULL: not connected */
int verbs_flush_cts(struct verbs_state *s, int peer); /* send queued CTS as credits allow */
void verbs_activate(struct verbs_state *s, struct verbs_sreq *r, const struct verbs_msg *m);
int verbs_progress_sends(struct verbs_state *s);	 /* post stripes of matched sends */
int verbs_find_cts(struct verbs_peer *pp, uint64_t tag); /* oldest stashed CTS or -1 */
int verbs_drain(struct verbs_state *s);			 /* handle CQ entries: count or -errno */
int verbs_progress(struct verbs_state *s);		 /* pending credits, CTS and sends */
int verbs_watch_queues(struct verbs_state *s, uint64_t now); /* -ETIMEDOUT: work lost */
/* transport_ops.pending: the peer's requests, credits and queues in one clause */
int verbs_pending(struct verbs_state *s, int peer, char *buf, size_t len);

/* verbs_conn.c */
int verbs_open(struct transport *t, const struct transport_env *env, int kind);
int verbs_endpoint(struct transport *t, void *buf, size_t *len);
int verbs_connect(struct transport *t, const void *eps);
void verbs_close(struct transport *t);
int verbs_post_ctrl_recv(struct verbs_state *s, int peer, int q, int slot);

/* verbs_flush.c: the receive flush; all return 0 / -errno and never block */
int verbs_flush_setup(struct verbs_state *s); /* loopback QP + READ target; idempotent */
void verbs_flush_close(struct verbs_state *s);
/* receive r of peer completed: to poll() now, or after a flush READ (and earlier ones) */
int verbs_recv_complete(struct verbs_state *s, const struct verbs_rreq *r, int peer, int status,
			size_t len);
int verbs_flush_post(struct verbs_state *s);			    /* post READs queued */
int verbs_flush_wc(struct verbs_state *s, const struct ibv_wc *wc); /* a READ completed */
static inline uint64_t verbs_held_n(const struct verbs_state *s)
{
	return s->fl.tail - s->fl.head;
}

/* Where a QP sends: the remote (or, for the flush loopback, its own) queue pair. */
struct verbs_qp_dest {
	uint32_t qpn;
	uint32_t psn;
	uint16_t lid;
	uint8_t gid[16];
	enum ibv_mtu mtu;
	int rd_atomic;   /* RDMA READs the QP serves at once */
	int rd_init;     /* RDMA READs the QP issues at once */
};

/* INIT -> RTR -> RTS toward d; who names the QP in the one log line on failure. */
int verbs_qp_rtr_rts(struct verbs_state *s, struct ibv_qp *qp, const struct verbs_qp_dest *d,
		     const char *who);

#endif
