/* The report's projection section: workload cases replayed at [report] project_ranks. */
#ifndef GS_REPORT_PROJECT_H
#define GS_REPORT_PROJECT_H

#include <stdio.h>

#include "report/doc.h"
#include "report/fit.h"
#include "report/report.h"

/*
 * The alpha-beta model for workload case i: fitted on the case's own sweep, else
 * on the first case over the same transport that has one. Returns the case index
 * the fit came from, or -1.
 */
int project_find_model(const struct report_set *s, int i, struct ab_model *m);

/*
 * What `gradsync predict` prints from earlier runs: for every workload case of s
 * (only case_name when non-NULL), "case: " then predict_print at nranks, with the
 * measured figures and the error when a case of s ran at that rank count. Returns
 * the number of cases printed, or -ENOENT when none had a timeline and a fit.
 */
int project_print(FILE *f, const struct report_set *s, const char *case_name, int nranks);

void section_projection(const struct report_set *s, const struct report_opts *o, struct rdoc *d);

#endif
