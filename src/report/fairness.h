/*
 * Differences that make a comparison unfair: fingerprints of the runs (kernel,
 * driver, firmware, link rate...), the path of cases over the same transport
 * (MTU, rate, firmware), settings that differ between cases without being swept,
 * and NUMA bindings that were requested but could not be applied.
 */
#ifndef GS_REPORT_FAIRNESS_H
#define GS_REPORT_FAIRNESS_H

#include "report/report.h"

struct fair_item {
	char what[96];      /* "kernel", "NIC firmware", "transport ib: MTU", "collective.sizes" */
	char detail[640];   /* "6.1.0 (run-a); 6.5.0 (run-b)" */
};

/* Fills *items (malloc'd, caller frees) and returns their number, or -ENOMEM. */
int report_fairness(const struct report_set *s, struct fair_item **items);

#endif
