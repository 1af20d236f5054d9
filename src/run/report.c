/*
 * Assembling a run's report.json from the case files rank 0 wrote, with everything
 * needed to reproduce it: binary, argv, the resolved experiment and its hash, the
 * node's fingerprint and the environment.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "doctor/doctor.h"
#include "run/run.h"
#include "report/report.h"
#include "report/jget.h"
#include "report/rjson.h"
#include "config.h"
#include "util/build_info.h"
#include "util/common.h"
#include "util/fsbound.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/strutil.h"

int run_report_write(const char *dir, json_t *root, const struct report_opts *o,
		     char *thr_why, size_t len, bool *written);

/* The resolved experiment as INI text (malloc'd). */
static char *resolved_text(const struct experiment *exp, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	experiment_write_resolved(f, exp);
	fclose(f);
	return text;
}

int run_dir_write(const char *dir, const char *path, const json_t *doc, const char *text,
		  uint64_t timeout_ns, char *why, size_t whylen)
{
	char cases[PATH_MAX + 16];
	struct fsb_write w = { .path = path, .data = text, .len = text ? strlen(text) : 0,
			       .remake = *dir ? cases : NULL };
	int ret;

	snprintf(cases, sizeof(cases), "%s/cases", dir);
	ret = doc ? rj_save(&w, doc, timeout_ns, why, whylen)
		  : fsb_write(&w, timeout_ns, why, whylen);
	if (w.remade)
		log_err(LOG_REPORT, "run directory %s was removed during the run: made it again; what was written there before is gone",
			dir);
	return ret;
}

int run_status_write(const char *dir, uint64_t timeout_ns, const char *state, const char *detail)
{
	char path[PATH_MAX + 16], line[512], why[PATH_MAX + 160];
	int ret;

	snprintf(path, sizeof(path), "%s/status", dir);
	snprintf(line, sizeof(line), "%s%s%s\n", state, detail && *detail ? ": " : "",
		 detail ? detail : "");
	ret = run_dir_write(dir, path, NULL, line, timeout_ns, why, sizeof(why));
	if (ret)
		log_warn(LOG_REPORT, "write %s: %s", path, why);
	return ret;
}

int run_report_begin(const char *dir, const struct experiment *exp)
{
	char path[PATH_MAX + 32], why[PATH_MAX + 160];
	uint64_t tmo = exp->base.report.write_timeout_ns;
	size_t len = 0;
	char *text = resolved_text(exp, &len);
	int ret = text ? 0 : -ENOMEM, st;

	/* written now, so a run killed midway still says what it was running */
	snprintf(path, sizeof(path), "%s/experiment.ini", dir);
	if (text)
		ret = run_dir_write(dir, path, NULL, text, tmo, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "%s", strerror(ENOMEM));
	if (ret)
		log_warn(LOG_REPORT, "write %s: %s", path, why);
	free(text);
	snprintf(path, sizeof(path), "pid %d", (int)getpid());
	st = run_status_write(dir, tmo, "running", path);
	return ret ? ret : st;
}

void run_case_file(char *buf, size_t len, const char *dir, size_t index)
{
	snprintf(buf, len, "%s/cases/%04zu.json", dir, index);
}

bool run_case_standin_claim(struct run_rank *rr, size_t index)
{
	int mark = (int)index + 1;
	bool ok;

	pthread_mutex_lock(&rr->save_lock);
	ok = rr->case_final != mark;
	if (ok)
		rr->case_named = mark;
	pthread_mutex_unlock(&rr->save_lock);
	return ok;
}

int run_case_save(struct run_rank *rr, size_t index, const json_t *c, enum run_case_account who,
		  bool *named, char *path, size_t len, char *why, size_t whylen)
{
	int ret, mark = (int)index + 1;

	run_case_file(path, len, rr->run_dir, index);
	if (named)
		*named = false;
	/* the main thread and rank 0's bootstrap reader (rank.c, self_stuck) may both
	 * write a case: one writer at a time of its one temporary file, and the decision
	 * of which account stays taken with the lock held */
	pthread_mutex_lock(&rr->save_lock);
	if (who == RUN_CASE_STANDIN && rr->case_final == mark) {
		pthread_mutex_unlock(&rr->save_lock);
		snprintf(why, whylen, "not written: the main thread's own account of the case is in");
		return -EALREADY;
	}
	ret = run_dir_write(rr->run_dir, path, c, NULL, rr->exp->base.report.write_timeout_ns,
			    why, whylen);
	if (who == RUN_CASE_FINAL) {
		/* even when the write failed: a stand-in written after would be the file's
		 * last word on a case whose main thread came back */
		rr->case_final = mark;
		if (named)
			*named = rr->case_named == mark;
	}
	pthread_mutex_unlock(&rr->save_lock);
	return ret;
}

void run_iso_time(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/*
 * Why case i's file, there perhaps, was not read back (unread: fsb_read's why; timedout:
 * its directory stopped answering): the case may well have run to its end, so it is
 * marked unread, not failed; what the driver saw of its ranks' end is added.
 */
static void unread_why(const char *dir, size_t i, const struct run_outcome *oc,
		       const char *unread, bool timedout, char *why, size_t len)
{
	char file[PATH_MAX + 32];
	size_t off = 0;
	int st = oc->case_exit ? oc->case_exit[i] : -1;
	const char *ended = oc->case_why ? oc->case_why[i] : "";

	run_case_file(file, sizeof(file), dir, i);
	str_appendf(why, len, &off, "its results file %s was not read back%s: %s", file,
		    timedout ? ", the run directory stopped answering" : "", unread);
	if (st == 0)
		str_appendf(why, len, &off, "; its ranks exited 0");
	else if (st > 0)
		str_appendf(why, len, &off, "; its ranks exited with status %d%s%s", st,
			    *ended ? ": " : "", ended);
	if (timedout)
		str_appendf(why, len, &off, "; gradsync report %s shows what was written once the directory answers",
			    dir);
}

/*
 * The stand-in for case i, whose results file could not be read: its settings, no
 * ranks, status failed (its ranks crashed, were killed or timed out; oc->case_why, when
 * there, is the driver's account of how they ended), unread (unread is why a file
 * that may be there could not be read: unread_why) or, with signo, interrupted (a
 * signal stopped it: not its fault).
 */
static json_t *standin_case(const struct experiment *exp, const char *dir, size_t i, int signo,
			    const struct run_outcome *oc, const char *unread, bool timedout)
{
	const char *ended = oc->case_why ? oc->case_why[i] : NULL;
	json_t *c = run_case_doc_new(exp, i);
	char why[2 * PATH_MAX + 800];

	if (!c)
		return NULL;
	rj_case_set_ranks(c, (int)i, 0, "", NULL);
	if (signo) {
		/* not "before it finished": it may have, its file's write cut short by the
		 * stop (a directory that did not answer) */
		snprintf(why, sizeof(why), "interrupted by %s before its results file was written (rank 0 writes it as the case ends)",
			 strsignal(signo));
		rj_case_set_status(c, "interrupted", why);
	} else if (unread) {
		unread_why(dir, i, oc, unread, timedout, why, sizeof(why));
		rj_case_set_status(c, "unread", why);
	} else if (ended && *ended) {
		/* rank 0 writes the file: it failed or hung too; the driver saw how */
		snprintf(why, sizeof(why), "no results file, rank 0 writes it: %s", ended);
		rj_case_fail(c, why);
	} else {
		rj_case_fail(c, "no results file: the case's ranks failed before writing it, or "
				"the write failed (see the log)");
	}
	return c;
}

/* Exit status contribution of one case: failed or wrong results make the run fail. */
static bool case_ok(json_t *c)
{
	json_t *rows = json_object_get(c, "collective"), *row;
	size_t i;

	if (strcmp(json_string_value(json_object_get(c, "status")) ?: "", "ok"))
		return false;
	json_array_foreach(rows, i, row)
		if (json_integer_value(json_object_get(row, "wrong")) > 0)
			return false;
	return true;
}

/* The hosts of the widest case stand for the run's per-rank hostnames. */
static json_t *run_hosts(json_t *cases)
{
	json_t *hosts = NULL, *cj;
	size_t i;

	json_array_foreach(cases, i, cj) {
		json_t *h = json_object_get(cj, "hosts");

		if (json_is_array(h) && (!hosts || json_array_size(h) > json_array_size(hosts)))
			hosts = h;
	}
	return hosts ? json_incref(hosts) : json_array();
}

/*
 * A case file its rank 0 left part way (run_case_save_partial: "the case stopped after
 * K of N sizes"): the stop signal's when the run was stopped, else its ranks died.
 */
static void partial_case(json_t *c, int signo)
{
	const char *st = json_string_value(json_object_get(c, "status"));
	char why[192];

	if (!st || strcmp(st, "interrupted"))
		return;
	if (signo)
		snprintf(why, sizeof(why), "interrupted by %s: %s", strsignal(signo),
			 json_string_value(json_object_get(c, "error")) ?: "");
	else
		snprintf(why, sizeof(why), "its ranks ended before it finished: %s (the "
			 "sizes measured are kept)",
			 json_string_value(json_object_get(c, "error")) ?: "");
	rj_case_set_status(c, signo ? "interrupted" : "failed", why);
}

/* The report document could not be built (no memory): said, and the status says so. */
static int report_unbuilt(const char *dir, uint64_t timeout_ns)
{
	log_err(LOG_REPORT, "%s/report.json: cannot build the report: %s; the results are in "
		"%s/cases/", dir, strerror(ENOMEM), dir);
	run_status_write(dir, timeout_ns, "failed",
			 "report.json could not be built, the results are in cases/");
	return GS_EXIT_FAIL;
}

/* Case c's file read back (fsb_read: within the timeout), parsed; NULL with unread filled
 * when it may be there and could not be read (*timedout: its directory does not
 * answer), "" when it is missing or not whole. */
static json_t *case_load(const char *path, uint64_t timeout_ns, char *unread, size_t len,
			 bool *timedout)
{
	struct fsb_read r = { .path = path, .max = REPORT_MAX_FILE };
	json_t *cj = NULL;
	int ret;

	ret = fsb_read(&r, timeout_ns, unread, len);
	if (!ret)
		cj = json_loadb(r.data, r.len, 0, NULL);
	free(r.data);
	if (!ret || ret == -ENOENT)
		unread[0] = '\0';
	*timedout = fsb_gave_up(ret);
	return cj;
}

/* What the cases read back came to. */
struct case_tally {
	int nran;     /* cases in the report */
	int nfailed;  /* failed, or a result wrong */
	int nunread;  /* results file not read back (the directory did not answer) */
	int nranks;   /* the widest case's */
};

/*
 * Each case started, from its file in dir/cases/ or a stand-in, into root's cases. The
 * first whose file the directory did not give back in time is said in one line: the
 * cases were not lost to a failure of theirs, and what they wrote may be there.
 */
static void add_cases(json_t *root, const char *dir, const struct experiment *exp,
		      int only_case, const struct run_outcome *oc, struct case_tally *t)
{
	char path[PATH_MAX + 32], unread[PATH_MAX + 160];
	uint64_t tmo = exp->base.report.write_timeout_ns;
	bool timedout, said = false;
	size_t c;

	for (c = 0; c < exp->ncases && c < oc->ncases; c++) {
		json_t *cj;
		int signo, ref;

		if (only_case >= 0 && (int)c != only_case)
			continue;
		run_case_file(path, sizeof(path), dir, c);
		/* the signal stopped the last case started; an earlier one's ranks died */
		signo = c + 1 == oc->ncases ? oc->signo : 0;
		cj = case_load(path, tmo, unread, sizeof(unread), &timedout);
		if (timedout && !said) {
			log_err(LOG_REPORT, "run directory %s stopped answering as the results were read back: %s; a case not read back is marked unread, not failed (gradsync report %s shows what was written once the directory answers)",
				dir, unread, dir);
			said = true;
		}
		if (cj)
			partial_case(cj, signo);
		else
			cj = standin_case(exp, dir, c, signo, oc, *unread ? unread : NULL, timedout);
		t->nran++;
		if (oc->case_exit && oc->case_exit[c] && case_ok(cj)) {
			char why[160];

			/* its figures are whole, its ranks' exits were not: a crash in teardown */
			snprintf(why, sizeof(why), "a rank of this case exited with status %d after its results were written (the figures are kept)",
				 oc->case_exit[c]);
			rj_case_fail(cj, why);
		}
		if (!strcmp(jget_str(cj, "status"), "unread"))
			t->nunread++;
		else if (!case_ok(cj))
			t->nfailed++;
		t->nranks = GS_MAX(t->nranks, (int)json_integer_value(json_object_get(cj, "nranks")));
		ref = exp->cases[c].baseline;
		rj_case_set_baseline(cj, ref >= 0 ? exp->cases[ref].name : NULL);
		rj_doc_add_case(root, cj);
	}
}

int run_report_assemble(const char *dir, const char *started, const struct experiment *exp,
			int only_case, int argc, char **argv, const struct launch_info *li,
			const struct run_outcome *oc)
{
	char when[32], detail[PATH_MAX + 640] = "", thr[384], cuda[128], hash[24], rule[1024];
	uint64_t tmo = exp->base.report.write_timeout_ns;
	char **jargv = calloc((size_t)argc + 1, sizeof(*jargv)), *resolved;
	int i, st, code = GS_EXIT_OK;
	struct case_tally t = { 0 };
	bool end_failed, written;
	size_t len = 0, off = 0;
	struct build_info bi;
	json_t *root, *cases;

	resolved = resolved_text(exp, &len);
	if (!jargv || !resolved) {
		free(jargv);
		free(resolved);
		return report_unbuilt(dir, tmo);
	}
	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)hash_fnv1a64(resolved, len));
	jargv[0] = "gradsync";
	for (i = 0; i < argc; i++)
		jargv[i + 1] = argv[i];
	if (GS_HAVE_CUDA)
		snprintf(cuda, sizeof(cuda), "on %s", GS_CUDA_ARCHS);
	else
		snprintf(cuda, sizeof(cuda), "off");
	run_iso_time(when, sizeof(when));
	experiment_cond_format(&exp->baseline, rule, sizeof(rule));
	build_info_get(&bi);
	root = rj_doc_new(&(struct rj_meta){
		.version = bi.version, .commit = bi.commit, .build_date = bi.date,
		.build_id = bi.build_id, .compiler = GS_COMPILER, .cuda = cuda,
		.verbs_providers = GS_HAVE_VERBS ? GS_VERBS_PROVIDERS : "off",
		.experiment = exp->base.experiment.name, .experiment_file = exp->path,
		.experiment_hash = hash, .resolved = resolved,
		.description = exp->base.experiment.description, .only_case = only_case + 1,
		.started = started,
		.finished = when, .launcher = li ? li->launcher : "local",
		.baseline = exp->baseline_case >= 0 ? exp->cases[exp->baseline_case].name : NULL,
		.baseline_rule = exp->has_baseline ? rule : NULL,
		.argc = argc + 1, .argv = jargv });
	free(resolved);
	free(jargv);
	if (!root)
		return report_unbuilt(dir, tmo);
	rj_doc_set(root, "fingerprint", run_env_fingerprint());
	/* what on this node (rank 0's) stops the fast path, judged at the experiment's gdr_level */
	rj_doc_set(root, "doctor", doctor_node_json("/sys", exp->base.gpu.gdr_level));
	rj_doc_set(root, "env", run_env_vars());
	cases = json_object_get(root, "cases");
	add_cases(root, dir, exp, only_case, oc, &t);
	rj_cases_fill_scaling(cases);
	rj_doc_set(root, "hosts", run_hosts(cases));
	rj_doc_set(root, "nranks", json_integer(t.nranks));
	end_failed = !oc->signo && oc->end_err;
	if (oc->signo)
		str_appendf(detail, sizeof(detail), &off, "%s after %d of %zu case%s",
			    strsignal(oc->signo), t.nran, only_case >= 0 ? (size_t)1 : exp->ncases,
			    only_case >= 0 || exp->ncases == 1 ? "" : "s");
	if (!oc->signo && t.nunread)
		str_appendf(detail, sizeof(detail), &off, "the results of %d case%s were not read back from %s/cases/ (marked unread): the report is incomplete",
			    t.nunread, t.nunread == 1 ? "" : "s", dir);
	if (end_failed)
		str_appendf(detail, sizeof(detail), &off, "%sthe ranks' barrier after the last case failed (%s): a rank was lost after its results were written (the figures are kept)",
			    off ? "; " : "", strerror(-oc->end_err));
	if (end_failed || t.nfailed || t.nunread)
		code = GS_EXIT_FAIL;
	rj_doc_set_status(root, oc->signo ? "interrupted" : code ? "failed" : "done",
			  off ? detail : NULL);
	st = run_report_write(dir, root, &exp->base.report, thr, sizeof(thr), &written);
	code = GS_MAX(code, st);
	if (!oc->signo) {
		/* the status line: each reason short, the report has them whole */
		off = 0;
		detail[0] = '\0';
		if (t.nfailed)
			str_appendf(detail, sizeof(detail), &off, "some cases failed");
		if (t.nunread)
			str_appendf(detail, sizeof(detail), &off, "%s%d case%s not read back",
				    off ? "; " : "", t.nunread, t.nunread == 1 ? "" : "s");
		if (end_failed)
			str_appendf(detail, sizeof(detail), &off, "%sa rank was lost after the last case",
				    off ? "; " : "");
		if (*thr)
			str_appendf(detail, sizeof(detail), &off, "%s%s", off ? "; " : "", thr);
		if (!written)
			str_appendf(detail, sizeof(detail), &off, "%sreport.json could not be written, the results are in cases/",
				    off ? "; " : "");
	}
	run_status_write(dir, tmo, oc->signo ? "interrupted" : code ? "failed" : "done",
			 oc->signo || code ? detail : NULL);
	json_decref(root);
	return code;
}

void run_report_path(const char *report, char *path, size_t len)
{
	if (strstr(report, ".json"))
		snprintf(path, len, "%s", report);
	else
		snprintf(path, len, "%s/report.json", report);
}

int run_report_load(const char *report, bool need, json_t **root)
{
	char path[PATH_MAX + 32], why[PATH_MAX + 160];
	struct fsb_read r = { .path = path, .max = REPORT_MAX_FILE };
	json_error_t jerr;
	int ret;

	*root = NULL;
	run_report_path(report, path, sizeof(path));
	/* the report's [report] write_timeout is not known before it is read: the default */
	ret = fsb_read(&r, fsb_timeout_default_ns(), why, sizeof(why));
	if (ret) {
		if (need || fsb_gave_up(ret))
			fprintf(stderr, "%s: cannot read report: %s\n", path, why);
		return ret;
	}
	*root = json_loadb(r.data, r.len, 0, &jerr);
	free(r.data);
	if (!*root && need)
		fprintf(stderr, "%s:%d: cannot read report: %s\n", path, jerr.line, jerr.text);
	return *root ? 0 : -EINVAL;
}

int run_report_extract_experiment(const char *report, char *tmpfile, size_t len)
{
	json_t *root, *text;
	int fd, ret;

	ret = run_report_load(report, true, &root);
	if (ret)
		return ret;
	text = json_object_get(json_object_get(root, "experiment"), "resolved");
	if (!json_is_string(text)) {
		char path[PATH_MAX + 32];

		run_report_path(report, path, sizeof(path));
		fprintf(stderr, "%s: experiment.resolved: missing (not a gradsync report?)\n", path);
		json_decref(root);
		return -EINVAL;
	}
	/* unbounded: /tmp is this node's own scratch, not a place a user names */
	snprintf(tmpfile, len, "/tmp/gradsync-replay-XXXXXX.ini");
	fd = mkstemps(tmpfile, 4);
	if (fd < 0 || write(fd, json_string_value(text), json_string_length(text)) < 0)
		ret = -errno;
	if (fd >= 0)
		close(fd);
	json_decref(root);
	return ret;
}

/*
 * The pass/fail threshold ([report] min_busbw) on the finished report: each case that
 * falls short logged, and a run that was done becomes failed with the reason in its
 * "error", so report.json, the status file and the exit code tell the same (the
 * threshold used to be judged after report.json was written: "done" beside exit 1).
 * Returns GS_EXIT_OK, GS_EXIT_FAIL (short, or the report unreadable) or GS_EXIT_USAGE;
 * why gets the one-line reason when it is not OK.
 */
static int report_threshold(json_t *root, const char *min_busbw, char *why, size_t len)
{
	struct report_set set = { 0 };
	struct report_failure *fails = NULL;
	int nfail, i, code = GS_EXIT_OK;

	*why = '\0';
	if (report_set_add_json(&set, "run", root) || report_set_finish(&set, NULL)) {
		snprintf(why, len, "min_busbw %s: the report could not be read back to judge it",
			 min_busbw);
		code = GS_EXIT_FAIL;
		goto out_set;
	}
	nfail = report_check_threshold(&set, min_busbw, &fails);
	if (nfail < 0) {
		snprintf(why, len, "min_busbw %s: not a threshold", min_busbw);
		code = GS_EXIT_USAGE;
	} else if (nfail > 0) {
		for (i = 0; i < nfail; i++)
			log_err(LOG_REPORT, "min_busbw %s: case %s: %s", min_busbw,
				set.cases[fails[i].case_idx].name, fails[i].why);
		snprintf(why, len, "min_busbw %s missed by %d of %d case%s; first %s: %s",
			 min_busbw, nfail, set.ncases, set.ncases == 1 ? "" : "s",
			 set.cases[fails[0].case_idx].name, fails[0].why);
		code = GS_EXIT_FAIL;
	} else {
		log_info(LOG_REPORT, "min_busbw %s: every case passes", min_busbw);
	}
	free(fails);
out_set:
	report_set_free(&set);
	if (code != GS_EXIT_OK && !strcmp(jget_str(root, "status"), "done"))
		rj_doc_set_status(root, "failed", why);
	return code;
}

/*
 * The pass/fail threshold, then report.json and the formats of [report] formats.
 * thr_why gets the threshold's reason when it failed the run ("" otherwise); *written
 * says whether report.json was.
 */
int run_report_write(const char *dir, json_t *root, const struct report_opts *o,
		     char *thr_why, size_t len, bool *written)
{
	char path[PATH_MAX + 32], files[128], why[PATH_MAX + 160];
	int ret, code = GS_EXIT_OK;

	*thr_why = '\0';
	if (*o->min_busbw)
		code = report_threshold(root, o->min_busbw, thr_why, len);
	snprintf(path, sizeof(path), "%s/report.json", dir);
	ret = run_dir_write(dir, path, root, NULL, o->write_timeout_ns, why, sizeof(why));
	*written = !ret;
	if (ret) {
		/* the figures must not be lost with the file: the table goes to the terminal */
		struct report_opts term = *o;
		char where[2 * PATH_MAX + 200];

		if (fsb_gave_up(ret)) /* the directory does not answer (or a stop came
				       * first): what reached it is there once it does */
			snprintf(where, sizeof(where), "the case files written before are in %s/cases/ (gradsync report %s reads them once it answers), a case that could not write its own printed its table as it ended",
				 dir, dir);
		else
			snprintf(where, sizeof(where), "every finished case's results are in %s/cases/ (gradsync report %s reads them)",
				 dir, dir);
		log_err(LOG_REPORT, "write %s: %s; %s; the table follows", path, why, where);
		snprintf(term.formats, sizeof(term.formats), "table");
		report_write_all(dir, root, &term);
		return GS_EXIT_FAIL;
	}
	ret = report_write_all(dir, root, o);
	/* the files named at the end are those the formats asked for and that were written */
	report_files_named(o->formats, files, sizeof(files));
	if (ret) {
		/* each file that failed has said so, naming itself and why */
		log_err(LOG_REPORT, "the reports into %s were not all written (see above)", dir);
		files[0] = '\0';
	}
	log_info(LOG_REPORT, "report: %s/report.json%s%s%s", dir, files[0] ? " (and " : "", files,
		 files[0] ? ")" : "");
	return ret && code == GS_EXIT_OK ? GS_EXIT_FAIL : code;
}
