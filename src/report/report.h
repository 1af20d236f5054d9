/* [report] options; report writers live beside this header. */
#ifndef GS_REPORT_REPORT_H
#define GS_REPORT_REPORT_H

#include <stdint.h>

#define REPORT_MAX_PROJECT 16

/* [report] section, resolved by config/. */
struct report_opts {
	char formats[128];        /* list of table, json, csv, md, html */
	char min_busbw[32];       /* "20GB/s" or "80%" of the detected bound, "" = no threshold */
	int project_ranks[REPORT_MAX_PROJECT];
	int nproject_ranks;
};

#endif
