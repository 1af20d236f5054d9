/* Choosing each pair's transport from the reachability matrix (contract in transport_select.h). */
#include <errno.h>

#include "transport/transport_select.h"

int transport_select_candidates(int want, int *kinds, int max)
{
	int n = 0;

	for (size_t i = 0; i < transport_count() && n < max; i++) {
		const struct transport_ops *ops = transport_at(i);

		if (want == TP_AUTO) {
			/* never the reference; cudaipc only says yes for GPU buffers */
			if (ops->kind == TP_NCCL)
				continue;
		} else if (ops->kind != want) {
			continue;
		}
		kinds[n++] = ops->kind;
	}
	return n;
}

int transport_select_pairs(const int *kinds, int nk, int n, const uint32_t *can, int *pair_kind,
			   int *bad_a, int *bad_b)
{
	int a, b, i;

	for (a = 0; a < n; a++)
		pair_kind[(size_t)a * n + a] = -1;
	for (a = 0; a < n; a++) {
		for (b = a + 1; b < n; b++) {
			int chosen = -1;

			for (i = 0; i < nk && chosen < 0; i++) {
				uint32_t bit = 1u << kinds[i];

				if ((can[(size_t)a * n + b] & bit) && (can[(size_t)b * n + a] & bit))
					chosen = kinds[i];
			}
			if (chosen < 0) {
				*bad_a = a;
				*bad_b = b;
				return -EHOSTUNREACH;
			}
			pair_kind[(size_t)a * n + b] = chosen;
			pair_kind[(size_t)b * n + a] = chosen;
		}
	}
	return 0;
}
