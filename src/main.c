/* gradsync entry point: global options, then dispatch to a verb from one table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "util/bounded.h"
#include "util/common.h"
#include "util/fdlimit.h"
#include "util/fsbound.h"
#include "util/log.h"

struct verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct verb verbs[] = {
	{ "run", cmd_run, "run an experiment file: every case of its matrix, then write reports" },
	{ "check", cmd_check, "parse and validate an experiment file, print its case matrix" },
	{ "plan", cmd_plan, "a model's tensors and DDP bucket plan (FILE.ini or --model NAME)" },
	{ "predict", cmd_predict, "fit alpha-beta per tier on runs' sweeps, project AllReduces and workloads to other layouts" },
	{ "doctor", cmd_doctor, "what on this node stops the fast path: checks with pass/warn/fail and the fix" },
	{ "topo", cmd_topo, "GPUs, RDMA NICs, NUMA nodes and their PCIe path classes" },
	{ "report", cmd_report, "compare runs: tables, Markdown, CSV, HTML with charts" },
	{ "keys", cmd_keys, "reference of every experiment key (section, type, default, range, help)" },
	{ "gpu", cmd_gpu, "GPUs of this node: name, PCI bus, SMs, memory, dma-buf/GDR; --calibrate" },
	{ "rendezvous", cmd_rendezvous, "check every rank reaches rank 0: who runs where, bootstrap latency" },
	{ "version", cmd_version, "version, commit, compiler, CUDA and verbs support" },
};

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: gradsync [-v|-q] <verb> [options]\n\nverbs:\n");
	for (i = 0; i < ARRAY_SIZE(verbs); i++)
		fprintf(out, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(out, "\n'gradsync <verb> --help' describes each verb.\n"
		     "exit codes: 0 ok, 1 run failed (error, wrong result, threshold missed), 2 usage or config error,\n"
		     "            130 / 143 / 129 run stopped by SIGINT / SIGTERM / SIGHUP (the report of what ran is written)\n"
		     "environment: GRADSYNC_LOG=debug[,subsystem...] for more detail\n");
}

/*
 * A verb's output that could not be written (a full disk, a closed pipe's reader gone:
 * > /dev/full) is a failure, said once: the table was lost, exit 0 hid it.
 */
static int stdout_done(int ret)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return ret;
	fprintf(stderr, "gradsync: writing standard output: %s\n",
		errno ? strerror(errno) : "write error");
	return ret ? ret : GS_EXIT_FAIL;
}

/*
 * A stop signal that fsbound took in place of its default action, while a call on a file
 * system waited (util/fsbound.h), ends the verb as that action would have, in a shell's
 * words: 128 + the signal (130 for Ctrl-C), whatever the verb made of its failed read.
 */
static int stop_code(int ret)
{
	int sig = fsb_stop_signo();

	return sig ? 128 + sig : ret;
}

/*
 * The verb's code, as the process's. A library call given up on and still under way (a
 * wedged driver's cuInit, util/bounded.h) holds that library's locks, and its exit handlers
 * (the CUDA runtime's unregistration of our kernels) would wait on them for ever: with one
 * pending, the output is flushed here and the handlers are skipped.
 */
static int verb_end(int ret)
{
	ret = stop_code(stdout_done(ret));
	if (bounded_pending()) {
		fflush(NULL);
		_exit(ret);
	}
	return ret;
}

int main(int argc, char **argv)
{
	enum log_level level = LOG_INFO;
	unsigned int mask = LOG_ALL;
	char err[320];
	int i = 1;
	size_t v;

	/* GRADSYNC_LOG=debug,transport,coll: level and subsystems of the logging family */
	if (getenv("GRADSYNC_LOG") &&
	    log_spec_parse(getenv("GRADSYNC_LOG"), &level, &mask, err, sizeof(err))) {
		fprintf(stderr, "gradsync: GRADSYNC_LOG=%s: %s\n", getenv("GRADSYNC_LOG"), err);
		return GS_EXIT_USAGE;
	}
	for (; i < argc && argv[i][0] == '-'; i++) {
		/* the environment carries the level to the ranks gradsync spawns */
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			level = LOG_DEBUG;
			setenv("GRADSYNC_LOG", "debug", 1);
		} else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
			level = LOG_WARN;
			setenv("GRADSYNC_LOG", "warn", 1);
		} else if (!strcmp(argv[i], "--version")) {
			return cmd_version(argc - i, argv + i);
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return GS_EXIT_OK;
		} else {
			fprintf(stderr, "gradsync: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return GS_EXIT_USAGE;
		}
	}
	log_setup(level, mask);
	v = (size_t)-fd_limit_raise();
	if (v)
		log_dbg(LOG_MAIN, "raising RLIMIT_NOFILE to its hard limit: %s", strerror((int)v));
	if (i >= argc) {
		usage(stderr);
		return GS_EXIT_USAGE;
	}
	for (v = 0; v < ARRAY_SIZE(verbs); v++)
		if (!strcmp(argv[i], verbs[v].name))
			return verb_end(verbs[v].fn(argc - i, argv + i));
	fprintf(stderr, "gradsync: unknown verb '%s' (see gradsync --help)\n", argv[i]);
	return GS_EXIT_USAGE;
}
