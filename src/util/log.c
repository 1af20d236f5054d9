/* The logging family: level/subsystem filter, rank prefix, one write per line. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
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

/* GRADSYNC_LOG's words: the levels, then the subsystems (one table for parsing and the error). */
static const struct {
	const char *name;
	unsigned int bit;
} log_subsys_names[] = {
	{ "main", LOG_MAIN }, { "config", LOG_CONFIG }, { "workload", LOG_WORKLOAD },
	{ "coll", LOG_COLL }, { "transport", LOG_TRANSPORT }, { "gpu", LOG_GPU },
	{ "topo", LOG_TOPO }, { "launch", LOG_LAUNCH }, { "report", LOG_REPORT },
};
static const struct {
	const char *name;
	enum log_level level;
} log_spec_levels[] = {
	{ "error", LOG_ERR }, { "warn", LOG_WARN }, { "info", LOG_INFO }, { "debug", LOG_DEBUG },
};

int log_spec_parse(const char *spec, enum log_level *level, unsigned int *mask, char *err,
		   size_t errlen)
{
	char buf[256], *tok, *save = NULL;
	unsigned int m = 0;
	size_t i, n = 0;

	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "longer than %zu bytes", sizeof(buf) - 1);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		bool known = false;

		for (i = 0; i < ARRAY_SIZE(log_spec_levels) && !known; i++) {
			if (!strcasecmp(tok, log_spec_levels[i].name)) {
				*level = log_spec_levels[i].level;
				known = true;
			}
		}
		for (i = 0; i < ARRAY_SIZE(log_subsys_names) && !known; i++) {
			if (!strcasecmp(tok, log_subsys_names[i].name)) {
				m |= log_subsys_names[i].bit;
				known = true;
			}
		}
		if (known)
			continue;
		n = (size_t)snprintf(err, errlen, "unknown word '%s' (expected a level:", tok);
		for (i = 0; i < ARRAY_SIZE(log_spec_levels) && n < errlen; i++)
			n += (size_t)snprintf(err + n, errlen - n, "%s %s", i ? "," : "",
					      log_spec_levels[i].name);
		if (n < errlen)
			n += (size_t)snprintf(err + n, errlen - n, "; and subsystems:");
		for (i = 0; i < ARRAY_SIZE(log_subsys_names) && n < errlen; i++)
			n += (size_t)snprintf(err + n, errlen - n, "%s %s", i ? "," : "",
					      log_subsys_names[i].name);
		if (n < errlen)
			snprintf(err + n, errlen - n, ")");
		return -EINVAL;
	}
	if (m)
		*mask = m;
	return 0;
}

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
	char line[2048];
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
