/*
 * RDMA decisions that need no device, shared by the verbs transport and `gradsync doctor`:
 * which GID a RoCE port routes on (NCCL's choice), the path MTU a RoCE netdev allows, and
 * the path MTU two ports agree on. Pure: built with or without libibverbs, unit-tested.
 */
#ifndef GS_TRANSPORT_RDMA_POLICY_H
#define GS_TRANSPORT_RDMA_POLICY_H

#include <stdint.h>

enum rdma_gid_type {
	RDMA_GID_IB = 0,  /* "IB/RoCE v1" on an InfiniBand port */
	RDMA_GID_ROCE_V1, /* "IB/RoCE v1" on an Ethernet port */
	RDMA_GID_ROCE_V2, /* "RoCE v2" (UDP, routable) */
};

struct rdma_gid {
	int index; /* in the port's GID table */
	uint8_t raw[16];
	int type;  /* enum rdma_gid_type */
};

/*
 * How good a RoCE GID is, NCCL_IB_GID_INDEX = -1 style (NCCL prefers RoCE v2 with an IPv4
 * address, NCCL_IB_ADDR_FAMILY = AF_INET): 4 RoCEv2 IPv4-mapped, 3 RoCEv2 global IPv6,
 * 2 RoCEv2 link-local (one L2 only), 1 RoCEv1, 0 empty (unusable).
 */
int rdma_gid_score(const struct rdma_gid *g);
/* Index into g[0..n) of the best GID (first of equal scores), -1 when none is usable. */
int rdma_gid_pick(const struct rdma_gid *g, int n);
/* "::ffff:10.0.0.1" style text of a GID (buf >= 46 bytes). */
const char *rdma_gid_str(const uint8_t raw[16], char *buf, unsigned len);

/*
 * RoCE: the largest IB MTU (256..4096 bytes) whose packet, with the GRH, BTH, extension
 * headers and ICRC (88 bytes, the kernel's iboe_get_mtu), fits the netdev MTU; 0 when
 * even 256 does not fit. A 1500-byte netdev gives 1024, 9000 gives 4096, 4096 gives 2048.
 */
int rdma_iboe_mtu(int netdev_mtu);
/* Path MTU of a connection, as NCCL: min(local active, remote active), lowered to the
 * requested one (0 = no request); all in bytes, result one of 256..4096. */
int rdma_path_mtu(int local_active, int remote_active, int requested);

#endif
