/* Per-link waits of one AllReduce size: every rank's per-peer waits gathered, written into its row. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/links.h"
#include "run/run.h"
#include "util/log.h"

void run_links_snap(const struct run_comm *rc, struct coll_peer_busy *snap)
{
	if (rc->coll)
		coll_peer_busy(rc->coll, snap);
}

/*
 * Every rank sends its waits since snap; rank 0 pairs r's sends to p with p's receives
 * from r into the row's "links" (report/links.h). Collective: every rank calls it.
 */
int run_links_collect(struct run_rank *rr, const struct run_comm *rc,
		      const struct coll_peer_busy *snap, json_t *row)
{
	int n = rr->li.nranks, r, p, k = 0, ret;
	size_t len = (size_t)n * sizeof(struct coll_peer_busy), *lens = NULL;
	struct coll_peer_busy *mine, **all = NULL;
	struct link_obs *obs = NULL;

	if (!rc->coll || n < 2)
		return 0;
	mine = calloc((size_t)n, sizeof(*mine));
	if (!mine)
		return -ENOMEM;
	coll_peer_busy(rc->coll, mine);
	for (p = 0; p < n; p++) {
		mine[p].send_ns -= snap[p].send_ns;
		mine[p].recv_ns -= snap[p].recv_ns;
		mine[p].send_bytes -= snap[p].send_bytes;
		mine[p].recv_bytes -= snap[p].recv_bytes;
	}
	ret = bootstrap_gatherv(rr->bs, mine, len, (void ***)&all, &lens);
	free(mine);
	if (ret || rr->li.rank != 0)
		return ret;
	for (r = 0; r < n && !ret; r++)
		if (lens[r] != len) {
			log_err(LOG_COLL, "link waits of rank %d: %zu bytes, expected %zu", r, lens[r], len);
			ret = -EPROTO;
		}
	obs = ret ? NULL : calloc((size_t)n * (size_t)n, sizeof(*obs));
	if (!ret && !obs)
		ret = -ENOMEM;
	for (r = 0; r < n && obs; r++)
		for (p = 0; p < n; p++)
			if (p != r && all[r][p].send_bytes)
				obs[k++] = (struct link_obs){ r, p, (double)all[r][p].send_bytes,
							      all[r][p].send_ns * 1e-9,
							      all[p][r].recv_ns * 1e-9 };
	if (obs && row)
		rj_row_set_links(row, obs, k);
	free(obs);
	for (r = 0; r < n; r++)
		free(all[r]);
	free(all);
	free(lens);
	return ret;
}
