/* Rank 0's live progress line, its ticker thread and measured rows (contract in progress.h). */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/progress.h"
#include "util/timeutil.h"

static uint64_t interval(const struct progress *p)
{
	return p->tty ? PROGRESS_TTY_NS : PROGRESS_PLAIN_NS;
}

static void clear_live(struct progress *p)
{
	if (p->live_shown)
		fputs("\r\033[K", p->f);
	p->live_shown = false;
}

/* "12.3s", "4m05s", "1h02m" */
static void fmt_dur(char *buf, size_t len, double s)
{
	if (s < 0 || s != s)
		snprintf(buf, len, "?");
	else if (s < 60)
		snprintf(buf, len, "%.1fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, len, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
}

void progress_format(char *buf, size_t len, int k, int ncases, const char *what, int i, int n,
		     double elapsed_s, double done)
{
	char el[16], eta[16];

	fmt_dur(el, sizeof(el), elapsed_s);
	if (done > 0.001 && done <= 1)
		fmt_dur(eta, sizeof(eta), elapsed_s * (1 - done) / done);
	else
		snprintf(eta, sizeof(eta), "?");
	snprintf(buf, len, "case %d/%d: %s iteration %d/%d, %3.0f%%, elapsed %s, ETA %s", k,
		 ncases, what, i, n, 100 * (done > 1 ? 1 : done < 0 ? 0 : done), el, eta);
}

void progress_format_wait(char *buf, size_t len, int k, int ncases, const char *what,
			  int arrived, int n, double elapsed_s)
{
	char el[16];

	fmt_dur(el, sizeof(el), elapsed_s);
	if (k > 0)
		snprintf(buf, len, "case %d/%d: %s, %d/%d ranks, %s", k, ncases, what, arrived, n,
			 el);
	else
		snprintf(buf, len, "%s: %d/%d ranks, %s", what, arrived, n, el);
}

/* The live line from the stored state; the caller holds the lock. */
static void draw(struct progress *p, uint64_t now)
{
	char line[256];
	double el = (now - p->case_t0_ns) / 1e9;

	p->last_ns = now;
	if (p->waiting)
		progress_format_wait(line, sizeof(line), p->case_k, p->ncases, p->what, p->i,
				     p->n, el);
	else
		progress_format(line, sizeof(line), p->case_k, p->ncases, p->what, p->i, p->n,
				el, p->done);
	if (p->tty) {
		fprintf(p->f, "\r\033[K%s", line);
		p->live_shown = true;
	} else {
		fprintf(p->f, "%s\n", line);
	}
	fflush(p->f);
}

/* Redraws the live line when the main thread has not for an interval (a long iteration). */
static void *ticker(void *arg)
{
	struct progress *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		uint64_t now = time_now_ns(), due = p->last_ns + interval(p);
		struct timespec ts;

		if (p->have_state && now >= due) {
			draw(p, now);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)(interval(p) / 2);
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&p->cond, &p->lock, &ts);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

void progress_init(struct progress *p, FILE *f, bool enabled)
{
	memset(p, 0, sizeof(*p));
	p->f = f ? f : stderr;
	p->enabled = enabled;
	p->tty = enabled && isatty(fileno(p->f));
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	/* without the ticker, lines still come with every tick */
	if (enabled)
		p->ticker = pthread_create(&p->tid, NULL, ticker, p) == 0;
}

void progress_fini(struct progress *p)
{
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	/*
	 * Unbounded on purpose: the ticker waits on nothing but its condition (timed, half
	 * an interval) and, holding the lock, on writes to p->f, never on a peer or a
	 * device. A stream that does not drain (a pipe nobody reads) blocks the caller's
	 * own lines and the lock above as well, so a bound here would bound nothing.
	 */
	if (p->ticker)
		pthread_join(p->tid, NULL);
	p->ticker = false;
	if (p->enabled) {
		clear_live(p);
		fflush(p->f);
	}
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
}

void progress_case(struct progress *p, int k, int ncases, const char *name, int nranks)
{
	if (!p->enabled)
		return;
	pthread_mutex_lock(&p->lock);
	p->case_k = k;
	p->ncases = ncases;
	p->case_t0_ns = time_now_ns();
	p->last_ns = p->case_t0_ns;
	p->have_state = false;
	p->waiting = false;
	clear_live(p);
	fprintf(p->f, "case %d/%d: %s (%d rank%s)\n", k, ncases, name, nranks,
		nranks == 1 ? "" : "s");
	fflush(p->f);
	pthread_mutex_unlock(&p->lock);
}

void progress_tick(struct progress *p, const char *what, int i, int n, double done)
{
	uint64_t now;

	if (!p->enabled)
		return;
	pthread_mutex_lock(&p->lock);
	snprintf(p->what, sizeof(p->what), "%s", what);
	p->i = i;
	p->n = n;
	p->done = done;
	p->have_state = true;
	p->waiting = false;
	now = time_now_ns();
	if (now - p->last_ns >= interval(p))
		draw(p, now);
	pthread_mutex_unlock(&p->lock);
}

void progress_idle(struct progress *p)
{
	if (!p->enabled)
		return;
	pthread_mutex_lock(&p->lock);
	p->have_state = false;
	p->waiting = false;
	pthread_mutex_unlock(&p->lock);
}

void progress_wait(struct progress *p, const char *what, int arrived, int n)
{
	if (!p->enabled)
		return;
	pthread_mutex_lock(&p->lock);
	snprintf(p->what, sizeof(p->what), "%s", what);
	p->i = arrived;
	p->n = n;
	p->done = 0;
	p->have_state = true;
	p->waiting = true;
	/* before the first case nothing set the clock: the wait starts it */
	if (!p->case_k)
		p->case_t0_ns = p->last_ns = time_now_ns();
	pthread_mutex_unlock(&p->lock);
}

void progress_arrived(struct progress *p, int arrived, int n)
{
	if (!p->enabled)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->waiting) {
		p->i = arrived;
		p->n = n;
	}
	pthread_mutex_unlock(&p->lock);
}

void progress_row(struct progress *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->enabled)
		return;
	pthread_mutex_lock(&p->lock);
	clear_live(p);
	va_start(ap, fmt);
	vfprintf(p->f, fmt, ap);
	va_end(ap);
	fputc('\n', p->f);
	fflush(p->f);
	pthread_mutex_unlock(&p->lock);
}
