/* The logging family: level/subsystem filter, rank prefix, one write per line. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "util/strutil.h"

/* Logging state is process-wide by nature (stderr is); it holds no options of a run. */
static enum log_level log_level_max = LOG_INFO;
static unsigned int log_mask = LOG_ALL;
static int log_rank = -1;
/* The first error since log_first_error_reset(): the cause a report should keep. */
static char first_error[LOG_FIRST_ERROR_LEN];

static const char *const log_level_names[] = {
	[LOG_ERR] = "error", [LOG_WARN] = "warning", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

void log_setup(enum log_level level, unsigned int subsys_mask)
{
	log_level_max = level;
	log_mask = subsys_mask;
}

void log_set_rank(int rank)
{
	log_rank = rank;
}

bool log_enabled(enum log_level level, enum log_subsys subsys)
{
	return level <= log_level_max && (level <= LOG_WARN || (log_mask & subsys));
}

void log_msg(enum log_level level, enum log_subsys subsys, const char *fmt, ...)
{
	char line[1024];
	size_t n = 0, msg;
	va_list ap;

	if (!log_enabled(level, subsys))
		return;
	if (log_rank >= 0)
		str_appendf(line, sizeof(line), &n, "gradsync[rank %d]: ", log_rank);
	else
		str_appendf(line, sizeof(line), &n, "gradsync: ");
	if (level != LOG_INFO)
		str_appendf(line, sizeof(line), &n, "%s: ", log_level_names[level]);
	msg = n; /* the message without the prefix is what a report keeps */
	va_start(ap, fmt);
	str_vappendf(line, sizeof(line), &n, fmt, ap);
	va_end(ap);
	if (level == LOG_ERR && !first_error[0])
		snprintf(first_error, sizeof(first_error), "%s", line + msg);
	n = strlen(line);
	if (n == sizeof(line) - 1)
		n--;
	line[n++] = '\n';
	/* what this process printed before the line comes first where both streams meet */
	fflush(stdout);
	/* One write() so lines of concurrent ranks never interleave mid-line. */
	if (write(STDERR_FILENO, line, n) < 0)
		return;
}

void log_first_error_reset(void)
{
	first_error[0] = '\0';
}

const char *log_first_error(void)
{
	return first_error;
}
