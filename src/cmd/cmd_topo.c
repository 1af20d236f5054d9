/*
 * `gradsync topo [--json] [--sysfs-root DIR] [--gdr-level L] [--timeout DURATION]
 * [--bind VALUE [--gpu N]]`: what this machine looks like, and (with --bind) whether a
 * [numa] bind value really places this process's CPUs and pages where it says.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cmd/cmd.h"
#include "gpu/gpu.h"
#include "topo/numa.h"
#include "topo/topo.h"
#include "topo/topo_print.h"
#include "util/common.h"
#include "util/fsbound.h"
#include "util/log.h"

static void usage(FILE *f)
{
	char levels[64], binds[128];

	cmd_gdr_levels(levels, sizeof(levels), "|", "|");
	numa_bind_list(binds, sizeof(binds), ", ", ", ");
	fprintf(f, "usage: gradsync topo [--json] [--sysfs-root DIR] [--gdr-level %s]\n"
		   "                     [--timeout DURATION] [--bind VALUE [--gpu N]]\n"
		   "  GPUs, RDMA NICs, network interfaces and NUMA nodes from sysfs, the PCIe path\n"
		   "  class of every GPU/NIC pair (NCCL semantics) and whether GPUDirect RDMA is\n"
		   "  possible at the given NCCL_NET_GDR_LEVEL (default PXB, as NCCL).\n"
		   "  --timeout DURATION: bound of the walk of the sysfs tree (default %s): one\n"
		   "  that does not answer (a dead mount, a hung driver) fails the command.\n"
		   "  --bind VALUE: apply a [numa] bind value (%s)\n"
		   "  to this process for GPU --gpu N (default 0) and its closest NIC, touch a 64 MiB\n"
		   "  buffer and report requested vs actual placement.\n",
		levels, FSB_TIMEOUT_DEFAULT, binds);
}

#define CHECK_BUF_LEN (64u << 20)

/* --bind: resolve, apply, touch, verify. Output in *line; 0, or GS_EXIT_* on error. */
static int bind_check(const struct topo *t, const char *bind, int gpu, char *line, size_t len)
{
	struct numa_opts o;
	struct numa_plan p;
	struct numa_actual a;
	enum topo_path cls;
	int gpu_numa = -1, nic_numa = -1, nic, r;
	void *buf;

	snprintf(o.bind, sizeof(o.bind), "%s", bind);
	if (t->n_gpus && (gpu < 0 || gpu >= t->n_gpus)) {
		snprintf(line, len, "--gpu %d: this machine has GPUs 0..%d", gpu, t->n_gpus - 1);
		return GS_EXIT_USAGE;
	}
	if (t->n_gpus)
		gpu_numa = topo_gpu_numa_node(t, gpu);
	nic = t->n_gpus ? topo_nic_closest_to_gpu(t, gpu, &cls) : (t->n_nics ? 0 : -1);
	if (nic >= 0)
		nic_numa = topo_nic_numa_node(t, t->nics[nic].name);
	if (numa_bind_resolve(&o, t, gpu_numa, nic_numa, &p))
		return GS_EXIT_USAGE;  /* numa_bind_resolve() logged why */
	r = numa_bind_apply(&p);
	if (r && r != -EOPNOTSUPP) {
		snprintf(line, len, "bind=%s: applying failed: %s", bind, strerror(-r));
		return GS_EXIT_FAIL;
	}
	buf = mmap(NULL, CHECK_BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		snprintf(line, len, "mmap %u bytes: %s", CHECK_BUF_LEN, strerror(errno));
		return GS_EXIT_FAIL;
	}
	memset(buf, 1, CHECK_BUF_LEN);  /* first touch places the pages under the new policy */
	r = numa_placement_verify(buf, CHECK_BUF_LEN, &a);
	munmap(buf, CHECK_BUF_LEN);
	if (r) {
		snprintf(line, len, "placement query failed: %s", strerror(-r));
		return GS_EXIT_FAIL;
	}
	numa_describe(&p, &a, line, len);
	return 0;
}

int cmd_topo(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "sysfs-root", required_argument, NULL, 'r' },
		{ "gdr-level", required_argument, NULL, 'g' },
		{ "bind", required_argument, NULL, 'b' },
		{ "gpu", required_argument, NULL, 'G' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cmd_node_args na = { .root = "/sys", .gdr_level = GDR_PXB,
				    .timeout_ns = fsb_timeout_default_ns() };
	struct cmd_once once = { .n = 0 };
	const char *bind = NULL;
	bool gpu_given = false;
	int gpu = 0, c, r;
	char line[1024];
	struct topo *t;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jr:g:b:G:t:h", longopts, NULL)) != -1) {
		if (cmd_once_getopt("topo", &once, longopts, c))
			return GS_EXIT_USAGE;
		r = cmd_node_opt("topo", c, optarg, &na);
		if (r < 0)
			return GS_EXIT_USAGE;
		if (r)
			continue;
		if (c == 'b') {
			bind = optarg;
		} else if (c == 'G') {
			if (cmd_int_arg("topo", "--gpu", optarg, 0, 1023, &gpu))
				return GS_EXIT_USAGE;
			gpu_given = true;
		} else {
			return cmd_opt_other(c, usage);
		}
	}
	if (cmd_no_operands("topo", argc, argv, optind, usage))
		return GS_EXIT_USAGE;
	if (gpu_given && !bind) { /* it picks the GPU --bind places for: alone it did nothing */
		fprintf(stderr, "gradsync topo: --gpu goes with --bind VALUE\n");
		return GS_EXIT_USAGE;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		fprintf(stderr, "gradsync topo: out of memory\n");
		return GS_EXIT_FAIL;
	}
	log_first_error_reset();
	r = topo_discover_within(na.root, t, na.timeout_ns);
	if (r) {
		if (!*log_first_error()) /* topo_discover said why in its own line */
			fprintf(stderr, "gradsync topo: cannot read topology under %s: %s\n",
				na.root, strerror(-r));
		free(t);
		return GS_EXIT_FAIL;
	}
	line[0] = '\0';
	if (bind) {
		r = bind_check(t, bind, gpu, line, sizeof(line));
		if (r) {
			if (line[0])
				fprintf(stderr, "gradsync topo: --bind %s\n", line);
			free(t);
			return r;
		}
	}
	if (na.json) {
		json_t *o = topo_to_json(t, na.gdr_level);

		if (o && bind)
			json_object_set_new(o, "numa_check",
					    json_pack("{s:s,s:s}", "bind", bind, "result", line));

		r = o ? json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
		json_decref(o);
		fputc('\n', stdout);
		if (r) {
			fprintf(stderr, "gradsync topo: JSON output failed\n");
			free(t);
			return GS_EXIT_FAIL;
		}
	} else {
		topo_print_text(stdout, t, na.gdr_level);
		if (bind)
			printf("\nNUMA binding check (bind=%s, this process):\n  %s\n", bind, line);
	}
	free(t);
	return GS_EXIT_OK;
}
