/*
 * Before a case: do all ranks run the same case? Ranks started by hand or by a launcher
 * each read their own experiment file; one with other sizes, dtype, iterations or case
 * list sends messages nobody expects, and what shows is a timeout naming a live rank,
 * "Message too long", a bad endpoint record or, worst, wrong results. The keys marked
 * same_on_all_ranks are compared, and for a workload the model's gradients (which
 * op_trace's content or ViT's image_size change while the agreed keys stay equal), so
 * the job stops at once naming the rank, its host, the key and both values.
 *
 * Exchange (every rank, in program order, through the bootstrap):
 *   1. allgather of a hash of the case's signature: equal everywhere = done (one round);
 *   2. otherwise gatherv of the signatures to rank 0, which names the first rank that
 *      differs and the first line that differs and aborts the job with it.
 *
 * Before all that, once per job, the build: ranks of two builds (a node left with an
 * older copy) read each other's wire records and results with different code, and
 * nothing need show. The job's first exchange is an allgather of struct agree_build,
 * whose size and layout stay as they are in every later version, so that any two builds
 * compare. What is compared is the binary itself, through its build-id (util/build_id.h):
 * two builds of one commit, from a tree edited since, on another compiler or machine,
 * share a version and commit but not a build-id.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "run/run.h"
#include "util/build_info.h"
#include "util/hash.h"
#include "util/log.h"
#include "workload/model.h"

/* Fixed for good: the first record every build exchanges (see above). */
struct agree_build {
	char build[96]; /* build_info_line(): "gradsync 0.1.0 (commit 2cd4541afdd6, build-id
			 * 1a2b3c4d5e6f7a8b)"; builds before the build-id wrote
			 * "gradsync 0.1.0 (commit 2cd4541afdd6)", which never equals it */
	char host[64];	/* host name, to name the rank's node */
};

int run_rank_agree_build(const struct run_rank *rr)
{
	struct agree_build me, *all;
	struct build_info bi;
	int n = rr->li.nranks, r, first = -1, ndiff = 0, ret;

	if (n < 2)
		return 0;
	memset(&me, 0, sizeof(me)); /* sent whole: no stack bytes on the wire */
	build_info_get(&bi);
	build_info_line(&bi, me.build, sizeof(me.build));
	gethostname(me.host, sizeof(me.host) - 1);
	all = calloc((size_t)n, sizeof(*all));
	if (!all)
		return -ENOMEM;
	ret = bootstrap_allgather(rr->bs, &me, all, sizeof(me));
	if (ret == -EPROTO)
		log_err(LOG_MAIN, "the ranks' first exchange did not match: a rank runs a build of gradsync older than %s, one that does not compare builds; every rank needs the same build",
			me.build);
	if (ret)
		goto out_free;
	for (r = 0; r < n; r++) {
		all[r].build[sizeof(all[r].build) - 1] = '\0';
		all[r].host[sizeof(all[r].host) - 1] = '\0';
		if (strcmp(all[r].build, all[0].build)) {
			ndiff++;
			first = first < 0 ? r : first;
		}
	}
	if (!ndiff)
		goto out_free;
	ret = -EINVAL;
	if (rr->li.rank == 0) {
		char why[400], more[48] = "";

		if (ndiff > 1)
			snprintf(more, sizeof(more), " (and %d more ranks)", ndiff - 1);
		snprintf(why, sizeof(why), "rank %d (host %s) runs %s, rank 0 %s%s: every rank needs the same build",
			 first, all[first].host, all[first].build, all[0].build, more);
		log_err(LOG_MAIN, "%s", why);
		bootstrap_abort(rr->bs, why);
	} else if (strcmp(me.build, all[0].build)) {
		log_err(LOG_MAIN, "this rank runs %s, rank 0 (host %s) %s: every rank needs the same build",
			me.build, all[0].host, all[0].build);
	}
out_free:
	free(all);
	return ret;
}

/*
 * The model's gradients, which every rank cuts its buckets from: they follow from keys
 * a rank may hold apart from the others (ViT's image_size) and from the content of
 * op_trace, so the keys alone do not show a difference. "" for model none.
 */
static void gradients_line(FILE *f, const struct run_rank *rr)
{
	const struct workload_opts *w = &rr->ecase->cfg.workload;
	struct tensor_list tl;
	const char *key;
	char err[256];
	uint64_t *rec;
	uint32_t i;

	if (!strcmp(w->model, "none"))
		return;
	fprintf(f, "case %d [workload] the model's gradients (model, its shape keys, op_trace's content) = ",
		rr->case_index + 1);
	tensor_list_init(&tl);
	if (model_build_err(w, &tl, &key, err, sizeof(err))) {
		fprintf(f, "none: %s\n", err);
		return;
	}
	/* what the buckets are cut from: each gradient's size and type, the ready order */
	rec = calloc((size_t)tl.n * 2 + 1, sizeof(*rec));
	if (rec) {
		for (i = 0; i < tl.n; i++) {
			rec[2 * i] = tl.t[i].numel;
			rec[2 * i + 1] = (uint64_t)(uint32_t)tl.t[i].dtype << 32 | tl.ready[i];
		}
		fprintf(f, "%u tensors, %llu elements (digest %016llx)\n", tl.n,
			(unsigned long long)tl.numel,
			(unsigned long long)hash_fnv1a64(rec, (size_t)tl.n * 2 * sizeof(*rec)));
	} else {
		fprintf(f, "%u tensors, %llu elements\n", tl.n, (unsigned long long)tl.numel);
	}
	free(rec);
	tensor_list_free(&tl);
}

/* The case count, then one line per agreed key: "case 2 [collective] dtype = f16", then
 * the model's gradients. malloc'd text or NULL. */
static char *case_signature(const struct run_rank *rr, size_t *len)
{
	char *text = NULL, v[8192];
	FILE *f = open_memstream(&text, len);
	size_t i;

	if (!f)
		return NULL;
	fprintf(f, "case %d [experiment] cases of the matrix = %zu\n", rr->case_index + 1,
		rr->exp->ncases);
	for (i = 0; i < cfg_key_count(); i++) {
		const struct cfg_key *k = cfg_key_at(i);

		if (!k->same_on_all_ranks)
			continue;
		cfg_value_format(&rr->ecase->cfg, k, v, sizeof(v));
		fprintf(f, "case %d [%s] %s = %s\n", rr->case_index + 1, k->section, k->name, v);
	}
	gradients_line(f, rr);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

/* The first line of a that differs from b's, as a NUL-terminated copy in out. */
static void first_diff(const char *a, size_t alen, const char *b, size_t blen, char *outa,
		       char *outb, size_t len)
{
	size_t i = 0, start = 0, ea, eb;

	while (i < alen && i < blen && a[i] == b[i]) {
		if (a[i] == '\n')
			start = i + 1;
		i++;
	}
	for (ea = start; ea < alen && a[ea] != '\n'; ea++)
		;
	for (eb = start; eb < blen && b[eb] != '\n'; eb++)
		;
	snprintf(outa, len, "%.*s", (int)(ea - start), a + start);
	snprintf(outb, len, "%.*s", (int)(eb - start), b + start);
}

/* Rank 0: "rank 1 (host h) ...: case 1 [collective] dtype = f16 there, bf16 on rank 0". */
static void describe(const struct run_rank *rr, int r, const char *mine, size_t mlen,
		     const char *theirs, size_t tlen, int ndiff, char *why, size_t len)
{
	char l0[512], lr[512];
	const char *v0, *vr;
	char more[48] = "";

	first_diff(mine, mlen, theirs, tlen, l0, lr, sizeof(l0));
	if (ndiff > 1)
		snprintf(more, sizeof(more), " (and %d more ranks)", ndiff - 1);
	v0 = strstr(l0, " = ");
	vr = strstr(lr, " = ");
	if (v0 && vr && v0 - l0 == vr - lr && !strncmp(l0, lr, (size_t)(v0 - l0)))
		snprintf(why, len, "rank %d (host %s) runs another experiment than rank 0%s: %s there, %s on rank 0; every rank needs the same experiment file and matrix",
			 r, rr->hosts[r].hostname, more, lr, v0 + 3);
	else
		snprintf(why, len, "rank %d (host %s) runs another experiment than rank 0%s: '%s' there, '%s' on rank 0; every rank needs the same experiment file and matrix",
			 r, rr->hosts[r].hostname, more, *lr ? lr : "(no more cases)",
			 *l0 ? l0 : "(no more cases)");
}

int run_rank_agree(struct run_rank *rr)
{
	int n = rr->li.nranks, me = rr->li.rank, r, first = -1, ndiff = 0, ret;
	uint64_t h, *all = NULL;
	void **texts = NULL;
	size_t len = 0, *lens = NULL;
	char *text;

	if (n < 2)
		return 0;
	text = case_signature(rr, &len);
	all = calloc((size_t)n, sizeof(*all));
	ret = -ENOMEM;
	if (!text || !all)
		goto out_free;
	h = hash_fnv1a64(text, len);
	ret = bootstrap_allgather(rr->bs, &h, all, sizeof(h));
	if (ret)
		goto out_free;
	for (r = 1; r < n; r++) {
		if (all[r] != all[0]) {
			ndiff++;
			first = first < 0 ? r : first;
		}
	}
	if (!ndiff)
		goto out_free;
	/* every rank saw the hashes: all take the second round and all fail the case */
	if (all[me] != all[0])
		log_err(LOG_MAIN, "case %d: this rank's experiment differs from rank 0's (rank 0 names the first key that differs)",
			rr->case_index + 1);
	ret = bootstrap_gatherv(rr->bs, text, len, &texts, &lens);
	if (!ret && me == 0) {
		char why[1400];

		describe(rr, first, text, len, texts[first], lens[first], ndiff, why, sizeof(why));
		log_err(LOG_MAIN, "%s", why);
		/* the job's reason, before any other rank gives up with a vaguer one */
		bootstrap_abort(rr->bs, why);
	}
	if (texts)
		for (r = 0; r < n; r++)
			free(texts[r]);
	free(texts);
	free(lens);
	ret = ret ? ret : -EINVAL;
out_free:
	free(all);
	free(text);
	return ret;
}
