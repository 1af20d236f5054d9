/* Rank 0's live progress line and measured rows (contract in progress.h). */
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "util/progress.h"
#include "util/timeutil.h"

void progress_init(struct progress *p, FILE *f, bool enabled)
{
	memset(p, 0, sizeof(*p));
	p->f = f ? f : stderr;
	p->enabled = enabled;
	p->tty = enabled && isatty(fileno(p->f));
}

static void clear_live(struct progress *p)
{
	if (p->live_shown)
		fputs("\r\033[K", p->f);
	p->live_shown = false;
}

void progress_case(struct progress *p, int k, int ncases, const char *name, int nranks)
{
	if (!p->enabled)
		return;
	p->case_k = k;
	p->ncases = ncases;
	p->case_t0_ns = time_now_ns();
	p->last_ns = p->case_t0_ns;
	clear_live(p);
	fprintf(p->f, "case %d/%d: %s (%d rank%s)\n", k, ncases, name, nranks,
		nranks == 1 ? "" : "s");
	fflush(p->f);
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

void progress_tick(struct progress *p, const char *what, int i, int n, double done)
{
	uint64_t now;
	char line[256];

	if (!p->enabled)
		return;
	now = time_now_ns();
	if (now - p->last_ns < (p->tty ? PROGRESS_TTY_NS : PROGRESS_PLAIN_NS))
		return;
	p->last_ns = now;
	progress_format(line, sizeof(line), p->case_k, p->ncases, what, i, n,
			(now - p->case_t0_ns) / 1e9, done);
	if (p->tty) {
		fprintf(p->f, "\r\033[K%s", line);
		p->live_shown = true;
	} else {
		fprintf(p->f, "%s\n", line);
	}
	fflush(p->f);
}

void progress_row(struct progress *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->enabled)
		return;
	clear_live(p);
	va_start(ap, fmt);
	vfprintf(p->f, fmt, ap);
	va_end(ap);
	fputc('\n', p->f);
	fflush(p->f);
}
