/*
 * Before a case allocates: do the data buffers of every rank on this machine fit in its
 * available memory? They are touched at setup (run/dbuf.c), so a case that cannot fit
 * would have the kernel's OOM killer pick a victim mid-setup (a rank, or another job's
 * process); it fails at once instead, with the arithmetic.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "run/run.h"
#include "util/dtype.h"
#include "util/log.h"
#include "util/units.h"
#include "workload/model.h"

uint64_t run_case_host_bytes(const struct exp_case *c)
{
	const struct cfg *cfg = &c->cfg;
	struct tensor_list tl;
	uint64_t max = 0, bytes;
	char err[256];

	/* GPU buffers: host mirrors only on some paths, decided later; nothing certain */
	if (gpu_opts_wanted(&cfg->gpu))
		return 0;
	if (!workload_has_model(&cfg->workload)) {
		/* the sweep's pristine copy and its work buffer, each the largest size */
		for (int i = 0; i < cfg->collective.nsizes; i++)
			max = GS_MAX(max, cfg->collective.sizes[i]);
		return 2 * max;
	}
	/* the gradients, one buffer (the buckets are views into it) */
	if (model_build_err(&cfg->workload, &tl, NULL, err, sizeof(err)))
		return 0; /* the case fails on its own, saying why */
	bytes = tl.numel * dtype_size(model_grad_dtype(&cfg->workload));
	tensor_list_free(&tl);
	return bytes;
}

bool run_memfit(uint64_t per_rank, int nranks, uint64_t avail)
{
	/* in long double: 64 GiB x 1024 ranks is still exact enough and cannot wrap */
	return (long double)per_rank * nranks <= (long double)avail;
}

/* Unbounded: /proc is the kernel's own text, never on a device or the network. */
int run_mem_available(uint64_t *bytes)
{
	char line[128];
	unsigned long long kib;
	FILE *f = fopen("/proc/meminfo", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
			*bytes = (uint64_t)kib * 1024;
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

char *run_memfit_need(char *buf, size_t len, uint64_t per_rank, int nranks)
{
	char all[32], each[32];

	snprintf(buf, len, "need%s %s for %s buffers (%s each)", nranks == 1 ? "s" : "",
		 units_fmt_size_approx(per_rank * (uint64_t)nranks, all, sizeof(all)),
		 nranks == 1 ? "its" : "their", units_fmt_size_approx(per_rank, each, sizeof(each)));
	return buf;
}

int run_memfit_check(struct run_rank *rr)
{
	uint64_t per_rank = run_case_host_bytes(rr->ecase), avail = 0;
	int here = 0, me = rr->li.rank, first = rr->kernel_of_rank[me];
	char need[128], a[32], why[400];

	if (!per_rank || run_mem_available(&avail))
		return 0;
	/* the ranks that share this kernel share its memory (rank.c's host exchange) */
	for (int r = 0; r < rr->li.nranks; r++)
		here += rr->kernel_of_rank[r] == first;
	if (run_memfit(per_rank, here, avail))
		return 0;
	/* every rank here fails; the first one says why and stops the job with it, before
	 * the others' vaguer "Cannot allocate memory" */
	if (me == first) {
		snprintf(why, sizeof(why), "case %s: %d rank%s on host %s %s, %s available (MemAvailable): %s",
			 rr->ecase->name, here, here == 1 ? "" : "s", rr->hosts[me].hostname,
			 run_memfit_need(need, sizeof(need), per_rank, here),
			 units_fmt_size_approx(avail, a, sizeof(a)),
			 workload_has_model(&rr->ecase->cfg.workload)
				 ? "use a smaller model, grad_dtype = bf16, or fewer ranks per host"
				 : "lower [collective] sizes or use fewer ranks per host");
		log_err(LOG_MAIN, "%s", why);
		bootstrap_abort(rr->bs, why);
	}
	return -ENOMEM;
}
