/*
 * `gradsync doctor [--json] [--sysfs-root DIR] [--gdr-level L] [--timeout DURATION]
 * [--checks]`: argv only; the checks live in src/doctor/. Exit 0 when nothing failed, 1
 * when a check failed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "doctor/doctor.h"
#include "gpu/gpu.h"
#include "util/common.h"
#include "util/fsbound.h"

static void usage(FILE *f)
{
	char levels[64];

	cmd_gdr_levels(levels, sizeof(levels), "|", "|");
	fprintf(f, "usage: gradsync doctor [--json] [--sysfs-root DIR] [--gdr-level %s]\n"
		   "                      [--timeout DURATION] [--checks]\n"
		   "  Checks this node for what stops the fast path (RDMA ports, MTU, GIDs, ulimit -l,\n"
		   "  GPUDirect RDMA, PCIe ACS, IOMMU, relaxed ordering, degraded links, GPU-NIC\n"
		   "  distance, CPU governor, huge pages) and says what transport = auto and gdr = auto\n"
		   "  would pick per GPU. Each finding is pass, warn, fail or skip, with the fix.\n"
		   "  Reads sysfs (and verbs / CUDA when present); needs no GPU driver.\n"
		   "  --sysfs-root DIR  read a captured tree (tests/fixtures/sysfs/capture.sh)\n"
		   "  --gdr-level L     the [gpu] gdr_level GPU-NIC paths are judged against (PXB)\n"
		   "  --timeout D       bound of each: the walk of the sysfs tree, the checks' reads,\n"
		   "                    the CUDA and verbs probes (run at once, one bound for both;\n"
		   "                    default %s); a probe that does not return (a wedged driver)\n"
		   "                    fails its check\n"
		   "  --checks          list the checks and exit\n"
		   "  exit status: 0 no check failed, 1 a check failed, 2 usage\n", levels,
		FSB_TIMEOUT_DEFAULT);
}

/* The checks, as text or (json) [{"name", "title"}]: --json --checks printed text. */
static int list_checks(bool json)
{
	size_t n;
	const struct doc_check *c = doctor_checks(&n);
	json_t *arr = json ? json_array() : NULL;
	int err = json && !arr;

	for (size_t i = 0; i < n && !err; i++) {
		if (json)
			err = json_array_append_new(arr, json_pack("{s:s, s:s}", "name", c[i].name,
								   "title", c[i].title));
		else
			printf("%-17s %s\n", c[i].name, c[i].title);
	}
	if (json && !err) {
		err = json_dumpf(arr, stdout, JSON_INDENT(2));
		putchar('\n');
	}
	json_decref(arr);
	return err ? GS_EXIT_FAIL : GS_EXIT_OK;
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "sysfs-root", required_argument, NULL, 'r' },
		{ "gdr-level", required_argument, NULL, 'g' },
		{ "checks", no_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cmd_node_args na = { .root = "/sys", .gdr_level = GDR_PXB,
				    .timeout_ns = fsb_timeout_default_ns() };
	struct doctor_node *node;
	struct doc_report r;
	struct cmd_once once = { .n = 0 };
	bool checks = false;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jr:g:ct:h", longopts, NULL)) != -1) {
		if (cmd_once_getopt("doctor", &once, longopts, c))
			return GS_EXIT_USAGE;
		rc = cmd_node_opt("doctor", c, optarg, &na);
		if (rc < 0)
			return GS_EXIT_USAGE;
		if (rc)
			continue;
		if (c != 'c')
			return cmd_opt_other(c, usage);
		checks = true; /* after every option: --json may come later */
	}
	if (cmd_no_operands("doctor", argc, argv, optind, usage))
		return GS_EXIT_USAGE;
	if (checks)
		return list_checks(na.json);
	node = doctor_node_collect(na.root, na.gdr_level, DOC_ASK_VERBS | DOC_ASK_CUDA,
				   na.timeout_ns);
	if (!node) /* logged which root, or which probe a stop signal ended, and why */
		return GS_EXIT_FAIL;
	rc = doctor_node_run(node, &r);
	if (rc) {
		if (rc == -ENOMEM) /* else it said why */
			fprintf(stderr, "gradsync doctor: out of memory\n");
		doctor_node_free(node);
		return GS_EXIT_FAIL;
	}
	if (na.json) {
		json_t *j = doctor_json(&r);

		if (!j || json_dumpf(j, stdout, JSON_INDENT(2)) || fputc('\n', stdout) == EOF) {
			fprintf(stderr, "gradsync doctor: writing JSON failed\n");
			json_decref(j);
			doctor_report_free(&r);
			doctor_node_free(node);
			return GS_EXIT_FAIL;
		}
		json_decref(j);
	} else {
		printf("gradsync doctor: %s (%d GPUs, %d RDMA devices, kernel %s)\n\n", na.root,
		       node->topo->n_gpus, node->topo->n_nics,
		       node->topo->kernel[0] ? node->topo->kernel : "?");
		doctor_print(stdout, &r);
	}
	rc = doctor_verdict(&r) == DOC_FAIL ? GS_EXIT_FAIL : GS_EXIT_OK;
	doctor_report_free(&r);
	doctor_node_free(node);
	return rc;
}
