/*
 * Rank 0, after a failed case: which ranks caused it. A hung rank makes its neighbours
 * time out, and the ranks waiting on those too, each naming the peer it waited on, and
 * which of their aborts reached rank 0 first is chance. The bootstrap's probe asks every
 * rank what its application's threads do; a rank that does not answer (stopped, a frozen
 * host) or one whose thread has not returned from the case a grace after the abort (a
 * deadlock, a spin, a driver call that never returns; or a GPU wait, told as such) is
 * named ahead of that reason.
 */
#include <stdlib.h>

#include "run/run.h"
#include "util/common.h"
#include "util/log.h"
#include "util/strutil.h"

/* Ranks named one by one, with host and pid; those past it are counted. */
#define BLAME_SILENT_SHOWN 8
#define BLAME_STUCK_SHOWN  4

static void rank_name(char *out, size_t len, size_t *o, const struct run_host *hosts, int r)
{
	str_appendf(out, len, o, "%d", r);
	if (hosts)
		str_appendf(out, len, o, " (host %s, pid %d)", hosts[r].hostname,
			    (int)hosts[r].pid);
}

/* "rank 1 (host n2, pid 4242) does not answer: ...; " for the silent ranks; how many. */
static int silent_text(const struct bootstrap_rank_state *st, int n,
		       const struct run_host *hosts, char *out, size_t len, size_t *o)
{
	int nsilent = 0, shown = 0;

	for (int r = 0; r < n; r++)
		nsilent += st[r].heard == BS_HEARD_SILENT;
	for (int r = 0; r < n && nsilent && shown < BLAME_SILENT_SHOWN; r++) {
		if (st[r].heard != BS_HEARD_SILENT)
			continue;
		str_appendf(out, len, o, "%s", shown ? ", " : nsilent > 1 ? "ranks " : "rank ");
		rank_name(out, len, o, hosts, r);
		shown++;
	}
	if (nsilent)
		str_appendf(out, len, o,
			    "%s %s not answer: %s (SIGSTOP, Ctrl-Z or a debugger) or %s froze; ",
			    nsilent > shown ? " and more" : "", nsilent > 1 ? "do" : "does",
			    nsilent > 1 ? "their processes are stopped" : "its process is stopped",
			    nsilent > 1 ? "their hosts" : "its host");
	return nsilent;
}

/*
 * How a rank whose thread did not return from the case is told, by the verdict: a
 * thread stuck (it looks at the abort and did not react), or one in a GPU wait, which
 * only the GPU's work ends: a long kernel or a hung GPU, not a hung rank.
 */
static const struct {
	enum act_verdict v;
	const char *is;	  /* "rank 2 (...) <is>: its main thread has not returned ..." */
	const char *more; /* "3 more ranks <more>; " */
	const char *note; /* after "... for 4.2 s" */
} blame_kinds[] = {
	{ ACT_STUCK, "is stuck", "are stuck", "" },
	{ ACT_GPU_WAIT, "is in a GPU synchronize", "are in a GPU synchronize",
	  " (the abort cannot end a GPU wait: a kernel that long, or a hung GPU)" },
};

/* "rank 2 (...) is stuck: its main thread ...; " for each rank whose verdict is k's;
 * how many. */
static int kind_text(const struct bootstrap_rank_state *st, int n, const struct run_host *hosts,
		     uint32_t grace_ms, size_t k, char *out, size_t len, size_t *o)
{
	int found = 0;

	for (int r = 0; r < n; r++) {
		const struct bootstrap_rank_state *s = &st[r];
		const struct act_snap *a;
		char what[128];
		uint32_t w;

		if (s->heard != BS_HEARD_ANSWERED || s->nact < 1)
			continue;
		a = &s->act[act_pick(s->act, s->nact, s->abort_age_ms, grace_ms)];
		if (act_judge(a, s->abort_age_ms, grace_ms, &w) != blame_kinds[k].v)
			continue;
		if (++found > BLAME_STUCK_SHOWN)
			continue;
		str_appendf(out, len, o, "rank ");
		rank_name(out, len, o, hosts, r);
		str_appendf(out, len, o,
			    " %s: its %s has not returned from the case %.1f s after the job aborted; it has been %s for %.1f s%s; ",
			    blame_kinds[k].is, act_thread_name((enum act_thread)a->thread),
			    s->abort_age_ms / 1e3, act_describe(a, what, sizeof(what)),
			    a->age_ms / 1e3, blame_kinds[k].note);
	}
	if (found > BLAME_STUCK_SHOWN)
		str_appendf(out, len, o, "%d more ranks %s; ", found - BLAME_STUCK_SHOWN,
			    blame_kinds[k].more);
	return found;
}

const char *run_blame_text(const struct bootstrap_rank_state *st, int n,
			   const struct run_host *hosts, uint32_t grace_ms, const char *why,
			   char *out, size_t len)
{
	size_t o = 0;
	int found;

	if (!len)
		return why;
	out[0] = '\0';
	found = silent_text(st, n, hosts, out, len, &o);
	for (size_t k = 0; k < ARRAY_SIZE(blame_kinds); k++)
		found += kind_text(st, n, hosts, grace_ms, k, out, len, &o);
	if (!found)
		return why;
	str_appendf(out, len, &o, "the job stopped on: %s", why);
	return out;
}

const char *run_blame(struct run_rank *rr, const char *why, char *out, size_t len)
{
	int n = rr->li.nranks;
	struct bootstrap_rank_state *st = calloc((size_t)n, sizeof(*st));
	const char *text = why;

	if (st && !bootstrap_probe(rr->bs, (int)rr->blame.probe_wait_ms,
				   (int)rr->blame.probe_grace_ms, st))
		text = run_blame_text(st, n, rr->hosts, rr->blame.probe_grace_ms, why, out, len);
	if (text != why)
		log_err(LOG_MAIN, "%s", text);
	free(st);
	return text;
}
