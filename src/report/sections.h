/* The report's sections, built once into a document for every output format. */
#ifndef GS_REPORT_SECTIONS_H
#define GS_REPORT_SECTIONS_H

#include "report/doc.h"
#include "report/report.h"

/* Charts the HTML writer draws where the document places them. */
enum report_chart {
	CHART_BUSBW = 0,  /* arg: collective group "allreduce ring f32" */
	CHART_ITER,       /* compute / exposed communication per workload case */
	CHART_COMM_WAIT,  /* comm-wait share per workload case */
	CHART_CPU,        /* CPU seconds per GB per transport */
	CHART_TIMELINE,   /* arg: workload case index; its buckets as a Gantt chart */
};

/* "12.3", "0.456", "1234": three significant-ish figures; "-" for NAN. */
char *fmt_num(double v, char *buf, size_t len);
/* Collective group key of a result row: "allreduce f32" (the algorithm is the case's). */
void row_group(const json_t *row, char *buf, size_t len);
/* Case c's collective row of group (row_group) and size, NULL if it has none. */
const json_t *row_find(const json_t *c, const char *group, double size);

int report_build_doc(const struct report_set *s, const struct report_opts *o, struct rdoc *d);

#endif
