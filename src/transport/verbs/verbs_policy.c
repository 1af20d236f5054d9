/*
 * The verbs transport's pure decisions (verbs_policy.h): access flags, GRH, hints, MTU, RC's
 * completion promise and the send queue watchdog.
 */
#include <string.h>

#include "transport/verbs/verbs_policy.h"

unsigned verbs_mr_access(bool relaxed)
{
	unsigned a = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

	return relaxed ? a | IBV_ACCESS_RELAXED_ORDERING : a;
}

bool verbs_ah_global(int link_layer, const uint8_t local_gid[16], const uint8_t remote_gid[16],
		     unsigned port_flags)
{
	if (link_layer == IBV_LINK_LAYER_ETHERNET)
		return true;
	/* the subnet prefix is the GID's first 8 bytes */
	return memcmp(local_gid, remote_gid, 8) != 0 || (port_flags & IBV_QPF_GRH_REQUIRED);
}

const char *verbs_wc_hint(enum ibv_wc_status st)
{
	switch (st) {
	case IBV_WC_LOC_PROT_ERR:
		return "often PCIe ACS redirecting GPU-NIC peer traffic, or an IOMMU translating it "
		       "(gradsync doctor: pcie_acs, iommu); set [gpu] gdr = off to confirm";
	case IBV_WC_REM_ACCESS_ERR:
		return "the peer's region or rkey no longer matches (deregistered too early?)";
	case IBV_WC_RETRY_EXC_ERR:
		return "no ACK within qp_timeout x retries (~30 s at the default 20): the peer or a link on the "
		       "way is gone, or the fabric drops (RoCE without PFC/ECN: gradsync doctor "
		       "roce_qos)";
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return "the peer posted no receive in time (credit accounting bug)";
	case IBV_WC_WR_FLUSH_ERR:
		return "flushed after an earlier error on this QP; that first error is the cause";
	case IBV_WC_LOC_LEN_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
		return "a message longer than the receive posted for it";
	default:
		return "";
	}
}

enum ibv_mtu verbs_mtu_enum(int bytes)
{
	return bytes >= 4096   ? IBV_MTU_4096
	       : bytes >= 2048 ? IBV_MTU_2048
	       : bytes >= 1024 ? IBV_MTU_1024
	       : bytes >= 512  ? IBV_MTU_512
			       : IBV_MTU_256;
}

int verbs_mtu_bytes(enum ibv_mtu m)
{
	return 128 << m;
}

uint64_t verbs_rc_budget_ns(int qp_timeout, int retry_cnt)
{
	int t = qp_timeout > 0 ? qp_timeout : VERBS_QP_TIMEOUT;

	/* 4.096 us << t, in ns: 4096 << t */
	return ((uint64_t)4096 << t) * (uint64_t)(retry_cnt + 1);
}

uint64_t verbs_lost_after_ns(uint64_t rc_budget_ns)
{
	uint64_t floor_ns = 5000000000ull;

	return 2 * rc_budget_ns > floor_ns ? 2 * rc_budget_ns : floor_ns;
}

uint64_t verbs_qwatch_stuck(const struct verbs_qwatch *w, uint64_t comps, int outstanding,
			    uint64_t now)
{
	return outstanding > 0 && w->since && comps == w->comps ? now - w->since : 0;
}

uint64_t verbs_qwatch_look(struct verbs_qwatch *w, uint64_t comps, int outstanding, uint64_t now)
{
	/* empty, moved since the last look, or the first look at work: the count restarts */
	if (outstanding <= 0 || comps != w->comps || !w->since) {
		w->comps = comps;
		w->since = outstanding > 0 ? now : 0;
	}
	return verbs_qwatch_stuck(w, comps, outstanding, now);
}
