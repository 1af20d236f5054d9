/* RDMA decisions that need no device: GID choice, RoCE MTU, path MTU (see rdma_policy.h). */
#include "transport/rdma_policy.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define IBOE_HEADERS 88 /* GRH 40 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4 */

static bool gid_zero(const uint8_t *r)
{
	static const uint8_t zero[16];

	return !memcmp(r, zero, 16);
}

static bool gid_v4mapped(const uint8_t *r)
{
	static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return !memcmp(r, pfx, 12);
}

static bool gid_linklocal(const uint8_t *r)
{
	return r[0] == 0xfe && (r[1] & 0xc0) == 0x80;
}

int rdma_gid_score(const struct rdma_gid *g)
{
	if (gid_zero(g->raw))
		return 0;
	if (g->type == RDMA_GID_ROCE_V2) {
		if (gid_v4mapped(g->raw))
			return 4;
		return gid_linklocal(g->raw) ? 2 : 3;
	}
	return 1;
}

int rdma_gid_pick(const struct rdma_gid *g, int n)
{
	int best = -1, best_sc = 0;

	for (int i = 0; i < n; i++) {
		int sc = rdma_gid_score(&g[i]);

		if (sc > best_sc) {
			best_sc = sc;
			best = i;
		}
	}
	return best;
}

const char *rdma_gid_str(const uint8_t raw[16], char *buf, unsigned len)
{
	if (!inet_ntop(AF_INET6, raw, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

int rdma_iboe_mtu(int netdev_mtu)
{
	int room = netdev_mtu - IBOE_HEADERS;

	for (int m = 4096; m >= 256; m /= 2)
		if (room >= m)
			return m;
	return 0;
}

int rdma_path_mtu(int local_active, int remote_active, int requested)
{
	int m = local_active < remote_active ? local_active : remote_active;

	if (requested > 0 && requested < m)
		m = requested;
	if (m < 256)
		m = 256;
	/* round down to a power of two the verbs enum can carry */
	for (int p = 4096; p >= 256; p /= 2)
		if (m >= p)
			return p;
	return 256;
}
