/*
 * Which transport connects each pair of ranks: a pure function of the configured kind
 * and the all-gathered reachability matrix, so every rank computes the same answer for
 * every pair and all agree, without further messages, on which transports take part in
 * each endpoint exchange.
 */
#ifndef GS_TRANSPORT_TRANSPORT_SELECT_H
#define GS_TRANSPORT_TRANSPORT_SELECT_H

#include <stdint.h>

#include "transport/transport.h"

/*
 * The kinds a case considers for want (enum transport_kind), in registry (preference)
 * order: want itself when it is compiled in, or with TP_AUTO every compiled-in kind but
 * the NCCL reference (cudaipc's can_connect says no unless the buffers are GPU memory).
 * Returns how many were written to kinds (at most max).
 */
int transport_select_candidates(int want, int *kinds, int max);

/*
 * For each pair a < b of n ranks, the first of kinds[0..nk) that both can[a * n + b] and
 * can[b * n + a] (bit 1 << kind: that rank's can_connect() says yes for the other) hold.
 * pair_kind[a * n + b] = pair_kind[b * n + a] = the kind; the diagonal is -1. 0, or
 * -EHOSTUNREACH with *bad_a < *bad_b the first pair no candidate connects.
 */
int transport_select_pairs(const int *kinds, int nk, int n, const uint32_t *can, int *pair_kind,
			   int *bad_a, int *bad_b);

#endif
