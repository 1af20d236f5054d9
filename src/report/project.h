/* The report's projection section: workload cases replayed at [report] project_ranks. */
#ifndef GS_REPORT_PROJECT_H
#define GS_REPORT_PROJECT_H

#include "report/doc.h"
#include "report/fit.h"
#include "report/report.h"

/*
 * The alpha-beta model for workload case i: fitted on the case's own sweep, else
 * on the first case over the same transport that has one. Returns the case index
 * the fit came from, or -1.
 */
int project_find_model(const struct report_set *s, int i, struct ab_model *m);

void section_projection(const struct report_set *s, const struct report_opts *o, struct rdoc *d);

#endif
