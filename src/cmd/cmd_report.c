/* `gradsync report`: compare runs (report.json files or run directories) side by side. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>

#include "cmd/cmd.h"
#include "config/keys.h"
#include "report/report.h"
#include "util/common.h"
#include "util/fsbound.h"
#include "util/log.h"
#include "util/threshold.h"
#include "util/units.h"

static void usage(FILE *f)
{
	char formats[64];

	report_format_list(formats, sizeof(formats), ",");
	fprintf(f, "usage: gradsync report RUN_DIR|report.json ... [options]\n"
		   "  --baseline CASE       case every speed-up is measured against (default:\n"
		   "                        each case's baseline under its run's [matrix] baseline)\n"
		   "  --format LIST         %s (default: table; with --out: all)\n"
		   "  --out DIR             where report.md/csv/html go; required for them\n"
		   "                        (--out . for the working directory); existing\n"
		   "                        files are never overwritten\n"
		   "  --min-busbw X         20GB/s or 80%% (of each case's bound), every size or\n"
		   "                        those of '@ 64MiB..' / '@ 4KiB..1MiB': exit 1 below it\n"
		   "  --project-ranks LIST  2,4,8,16: project workload cases to these rank counts\n"
		   "  --timeout DURATION    bound of each read of an input and each write into\n"
		   "                        --out (default %s): a file system that does not\n"
		   "                        answer (a dead NFS or FUSE mount) fails the command\n",
		formats, FSB_TIMEOUT_DEFAULT);
}

static int parse_ranks(const char *s, struct report_opts *o)
{
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	o->nproject_ranks = 0;
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		long long v;

		if (o->nproject_ranks == REPORT_MAX_PROJECT || units_parse_int(tok, &v) || v < 1 ||
		    v > 1048576)
			return -EINVAL;
		o->project_ranks[o->nproject_ranks++] = (int)v;
	}
	return o->nproject_ranks ? 0 : -EINVAL;
}

/* Every name in the list is a format this verb writes. */
static bool formats_ok(const char *list)
{
	char buf[128], *tok, *save = NULL;

	if (!*list)
		return false; /* --format "" is no format, not the default */
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save))
		if (!report_format_writable(tok))
			return false;
	return true;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "baseline", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' },
		{ "out", required_argument, NULL, 'o' },
		{ "min-busbw", required_argument, NULL, 'm' },
		{ "project-ranks", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* write_timeout_ns bounds the reads of the inputs too: --timeout */
	struct report_opts o = { .formats = "", .write_timeout_ns = fsb_timeout_default_ns() };
	struct report_set s = { .baseline = -1 };
	struct cmd_once once = { .n = 0 };
	const char *baseline = NULL, *out = NULL;
	struct report_failure *fails = NULL;
	char exist[PATH_MAX + 160];
	int c, i, n, ret = GS_EXIT_USAGE;
	struct threshold th;

	optind = 1;
	while ((c = getopt_long(argc, argv, "b:f:o:m:p:t:h", longopts, NULL)) != -1) {
		if (cmd_once_getopt("report", &once, longopts, c))
			return GS_EXIT_USAGE;
		switch (c) {
		case 'b':
			if (!*optarg) {
				fprintf(stderr, "gradsync report: --baseline '': expected a case name or "
						"KEY=VALUE\n");
				return GS_EXIT_USAGE;
			}
			baseline = optarg;
			break;
		case 'f':
			if (!formats_ok(optarg)) {
				report_format_list(exist, sizeof(exist), ", ");
				fprintf(stderr, "gradsync report: --format '%s': want a list of %s\n",
					optarg, exist);
				return GS_EXIT_USAGE;
			}
			snprintf(o.formats, sizeof(o.formats), "%s", optarg);
			break;
		case 'o':
			if (!*optarg) { /* mkdir "" would fail only after the inputs were read */
				fprintf(stderr, "gradsync report: --out '': expected a directory "
						"('.' for the working directory)\n");
				return GS_EXIT_USAGE;
			}
			out = optarg;
			break;
		case 'm':
			if (!*optarg) {
				fprintf(stderr, "gradsync report: --min-busbw '': expected e.g. 20GB/s "
						"or 80%% [@ 64MiB..]\n");
				return GS_EXIT_USAGE;
			}
			snprintf(o.min_busbw, sizeof(o.min_busbw), "%s", optarg);
			break;
		case 'p':
			if (parse_ranks(optarg, &o)) {
				fprintf(stderr, "gradsync report: --project-ranks %s: want a list "
						"of rank counts like 2,4,8\n", optarg);
				return GS_EXIT_USAGE;
			}
			break;
		case 't':
			/* the bound it is of a run's writes: its bounds */
			if (cmd_timeout_arg("report", optarg, &o.write_timeout_ns))
				return GS_EXIT_USAGE;
			break;
		default:
			return cmd_opt_other(c, usage);
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return GS_EXIT_USAGE;
	}
	if (o.min_busbw[0] && threshold_parse(o.min_busbw, &th, exist, sizeof(exist))) {
		fprintf(stderr, "gradsync report: --min-busbw: %s\n", exist);
		return GS_EXIT_USAGE;
	}
	if (!o.formats[0] && out)
		report_format_list(o.formats, sizeof(o.formats), ",");
	else if (!o.formats[0])
		snprintf(o.formats, sizeof(o.formats), "table");
	if (!out && report_formats_write_files(o.formats)) {
		fprintf(stderr, "gradsync report: --format %s writes files: say where with --out "
				"DIR (--out . for the working directory)\n", o.formats);
		return GS_EXIT_USAGE;
	}
	n = out ? report_files_existing(out, &o, exist, sizeof(exist)) : 0;
	if (fsb_gave_up(n)) {
		log_err(LOG_REPORT, "--out %s: %s", out, exist);
		return GS_EXIT_FAIL;
	}
	if (n) {
		fprintf(stderr, "gradsync report: %s already exist%s: not overwritten; choose "
				"another --out or remove them\n", exist,
			strchr(exist, ',') ? "" : "s");
		return GS_EXIT_USAGE;
	}
	/* an input that cannot be read, whatever the why (a hung file system too), is
	 * GS_EXIT_USAGE's; what cannot be written into --out, GS_EXIT_FAIL's */
	for (i = optind; i < argc; i++)
		if (report_set_add_path(&s, argv[i], o.write_timeout_ns))
			goto out_free;
	if (report_set_finish(&s, baseline))
		goto out_free;
	if (out && fsb_mkdir(out, o.write_timeout_ns, exist, sizeof(exist))) {
		log_err(LOG_REPORT, "mkdir %s: %s", out, exist);
		ret = GS_EXIT_FAIL;
		goto out_free;
	}
	if (report_write_set(out ? out : ".", &s, &o, true)) {
		ret = GS_EXIT_FAIL;
		goto out_free;
	}
	ret = GS_EXIT_OK;
	if (!o.min_busbw[0])
		goto out_free;
	n = report_check_threshold(&s, o.min_busbw, &fails);
	if (n < 0) {
		fprintf(stderr, "gradsync report: --min-busbw %s: not a rate or a percentage\n",
			o.min_busbw);
		ret = GS_EXIT_USAGE;
		goto out_free;
	}
	for (i = 0; i < n; i++)
		fprintf(stderr, "gradsync report: FAIL %s: %s\n", s.cases[fails[i].case_idx].name,
			fails[i].why);
	if (n)
		ret = GS_EXIT_FAIL;
	free(fails);
out_free:
	report_set_free(&s);
	return ret;
}
