/* `gradsync topo [--json] [--sysfs-root DIR] [--gdr-level L]`: what this machine looks like. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "topo/topo.h"
#include "topo/topo_print.h"
#include "util/common.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: gradsync topo [--json] [--sysfs-root DIR] [--gdr-level LOC|PIX|PXB|PHB|SYS]\n"
		   "  GPUs, RDMA NICs, network interfaces and NUMA nodes from sysfs, the PCIe path\n"
		   "  class of every GPU/NIC pair (NCCL semantics) and whether GPUDirect RDMA is\n"
		   "  possible at the given NCCL_NET_GDR_LEVEL (default PXB, as NCCL).\n");
}

int cmd_topo(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "sysfs-root", required_argument, NULL, 'r' },
		{ "gdr-level", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = "/sys";
	int gdr_level = GDR_PXB, json = 0, c, r;
	struct topo *t;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jr:g:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'r':
			root = optarg;
			break;
		case 'g':
			if (topo_gdr_level_parse(optarg, &gdr_level)) {
				fprintf(stderr, "gradsync topo: --gdr-level '%s': expected LOC, PIX, "
						"PXB, PHB or SYS\n", optarg);
				return GS_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return GS_EXIT_OK;
		default:
			usage(stderr);
			return GS_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gradsync topo: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return GS_EXIT_USAGE;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		fprintf(stderr, "gradsync topo: out of memory\n");
		return GS_EXIT_FAIL;
	}
	r = topo_discover(root, t);
	if (r) {
		fprintf(stderr, "gradsync topo: cannot read topology under %s: %s\n", root,
			strerror(-r));
		free(t);
		return GS_EXIT_FAIL;
	}
	if (json) {
		json_t *o = topo_to_json(t, gdr_level);

		r = o ? json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
		json_decref(o);
		fputc('\n', stdout);
		if (r) {
			fprintf(stderr, "gradsync topo: JSON output failed\n");
			free(t);
			return GS_EXIT_FAIL;
		}
	} else {
		topo_print_text(stdout, t, gdr_level);
	}
	free(t);
	return GS_EXIT_OK;
}
