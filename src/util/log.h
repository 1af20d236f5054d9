/*
 * One logging family for the whole binary: a level and a subsystem per message.
 * Messages are single greppable lines that name the failed call and the object
 * ("ibv_create_qp peer=3: ENOMEM"). Output goes to stderr, prefixed with the rank
 * once a rank is known.
 */
#ifndef GS_UTIL_LOG_H
#define GS_UTIL_LOG_H

#include "util/common.h"

enum log_level {
	LOG_ERR = 0,
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
};

enum log_subsys {
	LOG_MAIN = 1u << 0,
	LOG_CONFIG = 1u << 1,
	LOG_WORKLOAD = 1u << 2,
	LOG_COLL = 1u << 3,
	LOG_TRANSPORT = 1u << 4,
	LOG_GPU = 1u << 5,
	LOG_TOPO = 1u << 6,
	LOG_LAUNCH = 1u << 7,
	LOG_REPORT = 1u << 8,
	LOG_ALL = 0xffffffffu,
};

/*
 * GRADSYNC_LOG's value ("debug,transport,coll"): a level and the subsystems whose debug and
 * info lines show (all when none is named). 0, or -EINVAL with err naming the unknown word
 * and the words there are; *level and *mask keep what they held for what is not said.
 */
int log_spec_parse(const char *spec, enum log_level *level, unsigned int *mask, char *err,
		   size_t errlen);
/* Set from main() only: --verbose/-q and GRADSYNC_LOG=debug,transport. */
void log_setup(enum log_level level, unsigned int subsys_mask);
/* Prefix every message with "rank N:" from now on (-1 clears it). */
void log_set_rank(int rank);
bool log_enabled(enum log_level level, enum log_subsys subsys);
void log_msg(enum log_level level, enum log_subsys subsys, const char *fmt, ...) GS_PRINTF(3, 4);

/*
 * The text of the first error logged since the last reset ("" if none): a failed case
 * reports its first real cause, not the errno its callers passed up.
 */
#define LOG_FIRST_ERROR_LEN 1024
void log_first_error_reset(void);
const char *log_first_error(void);

#define log_err(sub, ...) log_msg(LOG_ERR, sub, __VA_ARGS__)
#define log_warn(sub, ...) log_msg(LOG_WARN, sub, __VA_ARGS__)
#define log_info(sub, ...) log_msg(LOG_INFO, sub, __VA_ARGS__)
#define log_dbg(sub, ...) log_msg(LOG_DEBUG, sub, __VA_ARGS__)

#endif
