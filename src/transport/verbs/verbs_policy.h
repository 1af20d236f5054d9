/*
 * The verbs transport's decisions as pure functions over verbs types, each held against
 * what NCCL's net_ib does (README "The verbs path against NCCL"): MR access flags, when a
 * QP needs a GRH, the hint an error completion deserves, MTU enum conversions and the QP
 * timing constants. No device calls: verbs_policy_test.c checks them without a NIC.
 */
#ifndef GS_TRANSPORT_VERBS_VERBS_POLICY_H
#define GS_TRANSPORT_VERBS_VERBS_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#ifndef RDMA_STATIC_PROVIDERS
#define RDMA_STATIC_PROVIDERS all
#endif
#include <infiniband/verbs.h>

/* RTS attributes, NCCL's defaults: NCCL_IB_TIMEOUT 20 (4.096 us x 2^20 = 4.3 s a try; the
 * [transport] qp_timeout key, default 20, sets it per case),
 * rnr_retry 7 (infinite; our credits keep RNR away), min_rnr_timer 12, one READ in flight.
 * retry_cnt stays 6, not NCCL's 7: rxe reads 7 as "retry forever", and a dead peer must
 * end in a completion error (6 x 4.3 s < the 60 s default [launch] timeout). */
#define VERBS_QP_TIMEOUT       20
#define VERBS_QP_RETRY	       6
#define VERBS_QP_RNR_RETRY     7
#define VERBS_QP_MIN_RNR_TIMER 12
#define VERBS_QP_RD_ATOMIC     1
#define VERBS_QP_HOP_LIMIT     255 /* NCCL's; routed RoCE v2 crosses any number of L3 hops */

/*
 * Access flags of a data MR: local write, remote write (data lands by RDMA WRITE), remote
 * read (the receive flush READs it), and with relaxed Relaxed Ordering as NCCL
 * (NCCL_IB_PCI_RELAXED_ORDERING = 2) and perftest do: IBV_ACCESS_RELAXED_ORDERING is an
 * optional flag that libibverbs drops where the device or kernel lacks it.
 */
unsigned verbs_mr_access(bool relaxed);

/*
 * Whether the address vector needs a GRH: always on RoCE (GID routed); on InfiniBand, as
 * NCCL, only when the two GIDs' subnet prefixes differ (routed between subnets) or the port
 * says IBV_QPF_GRH_REQUIRED; else LID routing.
 */
bool verbs_ah_global(int link_layer, const uint8_t local_gid[16], const uint8_t remote_gid[16],
		     unsigned port_flags);

/* What usually causes an error completion (NCCL's hints and ours), "" when nothing apt. */
const char *verbs_wc_hint(enum ibv_wc_status st);

/*
 * RC's promise for a send work request at the head of its queue: a completion, success or
 * IBV_WC_RETRY_EXC_ERR, within retry_cnt + 1 tries of 4.096 us x 2^timeout each (the IB
 * spec's local ACK timeout). The QP's qp_timeout exponent, 0 for VERBS_QP_TIMEOUT.
 */
uint64_t verbs_rc_budget_ns(int qp_timeout, int retry_cnt);

/*
 * When a send queue that has gone that long without any completion is given up: twice the
 * promise (a device may stretch its timer), at least 5 s. Past it the device has neither
 * delivered nor failed the work (a driver or firmware fault, never a peer's: a dead peer
 * ends in IBV_WC_RETRY_EXC_ERR within the promise), and waiting on for the job's timeout
 * would only hide which side stalled.
 */
uint64_t verbs_lost_after_ns(uint64_t rc_budget_ns);

/*
 * The send queue watchdog's state for one QP: its completion count at the last look and
 * when a look first found work outstanding with no completion since (0: none).
 */
struct verbs_qwatch {
	uint64_t comps;
	uint64_t since;
};

/*
 * How long, at now (ns), a queue that has completed comps send work requests so far and
 * has outstanding more posted has gone without a completion while holding work, as of the
 * watchdog's last look: 0 while it moves or is empty. Reads w alone (the timeout line's
 * account, verbs_pending).
 */
uint64_t verbs_qwatch_stuck(const struct verbs_qwatch *w, uint64_t comps, int outstanding,
			    uint64_t now);

/*
 * One look: verbs_qwatch_stuck after w has taken in this look. The first look that finds
 * the queue stalled starts the count, so a stall is seen one look late, never early.
 */
uint64_t verbs_qwatch_look(struct verbs_qwatch *w, uint64_t comps, int outstanding,
			   uint64_t now);

/* IBV_MTU_256..4096 for a byte count (rounded down, at least 256) and back. */
enum ibv_mtu verbs_mtu_enum(int bytes);
int verbs_mtu_bytes(enum ibv_mtu m);

#endif
