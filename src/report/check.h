/* "Is my number good?": a case's figures against its bound and against [report] min_busbw. */
#ifndef GS_REPORT_CHECK_H
#define GS_REPORT_CHECK_H

#include <stdbool.h>
#include <jansson.h>

/* The case's bound in GB/s (1e9 B/s), NAN when it has none (kind none or Bps <= 0). */
double case_bound_GBps(const json_t *c);
/* busbw as a percentage of the case's bound, NAN without a bound. */
double case_pct_of_bound(const json_t *c, double busbw_GBps);
/* Peak busbw over the collective rows, else the workload's busbw, else NAN. */
double case_headline_busbw(const json_t *c);
/* CPU seconds per GB at the case's largest size (the throughput regime), NAN if none. */
double case_cpu_s_per_GB(const json_t *c, const char *key);
/* Not failed (ok, interrupted or unread: its sizes, if any, are whole). */
bool case_ok(const json_t *c);
/* Its results file was not read back (status "unread"): no figures, not a failure. */
bool case_unread(const json_t *c);

#endif
