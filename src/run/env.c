/*
 * The node's fingerprint for every report: what makes two runs comparable or not
 * (kernel, CPU, memory, glibc, NUMA layout), and the environment variables that
 * change transport behaviour.
 */
#include <dirent.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "report/rjson.h"
#include "run/run.h"
#include "topo/topo.h"
#include "util/common.h"
#include "util/jtext.h"
#include "util/sysread.h"

extern char **environ;

/*
 * First line of file starting with key, value after the separator, quotes stripped.
 * Unbounded: the files are the node's own (/proc, the kernel's text; /etc on the root
 * file system, whose loss would have hung loading this binary first), not paths a user
 * names.
 */
static void read_field(const char *file, const char *key, char sep, char *out, size_t len)
{
	FILE *f = fopen(file, "r");
	char line[512];

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *v, *end;

		if (strncmp(line, key, strlen(key)))
			continue;
		v = strchr(line, sep);
		if (!v)
			continue;
		v++;
		while (*v == ' ' || *v == '\t' || *v == '"')
			v++;
		end = v + strlen(v);
		while (end > v && (end[-1] == '\n' || end[-1] == '"' || end[-1] == ' '))
			*--end = '\0';
		snprintf(out, len, "%s", v);
		break;
	}
	fclose(f);
}

/* Unbounded: the kernel's own directory of its NUMA nodes, no driver behind it. */
static int count_numa_nodes(void)
{
	DIR *d = opendir("/sys/devices/system/node");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 1;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "node", 4) && e->d_name[4] >= '0' && e->d_name[4] <= '9')
			n++;
	closedir(d);
	return n ? n : 1;
}

/*
 * The node's GPUs and RDMA NICs from sysfs, and the GPU kernel driver's version: the
 * driver process builds the fingerprint and must not initialise CUDA before it forks the
 * ranks (gpu/gpu.h). Each case adds the CUDA view of its rank 0's GPU ("gpu") and the
 * path it used ("path": active MTU, GID, QPs).
 */
/* A RoCE port's MTU is its netdev's (the NIC's first); IB's is known to verbs only. */
static int netdev_mtu(const struct topo *t, const struct topo_nic *n)
{
	for (int i = 0; n->n_netdevs > 0 && i < t->n_netdevs; i++)
		if (!strcmp(t->netdevs[i].name, n->netdevs[0]))
			return t->netdevs[i].mtu;
	return 0;
}

json_t *run_env_fingerprint(void)
{
	struct topo *t = calloc(1, sizeof(*t));
	struct rj_gpu_dev *gpus = NULL;
	struct rj_nic_port *nics = NULL;
	struct utsname u;
	char host[256] = "", os[256], cpu[256], kernel[512] = "", driver[64] = "";
	struct rj_fingerprint fp = {.hostname = host, .kernel = kernel, .os = os, .cpu_model = cpu,
				    .glibc = gnu_get_libc_version(), .gpu_driver = driver,
				    .cpus = sysconf(_SC_NPROCESSORS_ONLN),
				    .numa_nodes = count_numa_nodes(),
				    .memory_bytes = (long long)sysconf(_SC_PHYS_PAGES) *
						    sysconf(_SC_PAGESIZE)};
	json_t *j;

	gethostname(host, sizeof(host) - 1);
	if (uname(&u) == 0)
		snprintf(kernel, sizeof(kernel), "%s %s", u.release, u.machine);
	read_field("/etc/os-release", "PRETTY_NAME", '=', os, sizeof(os));
	read_field("/proc/cpuinfo", "model name", ':', cpu, sizeof(cpu));
	/* a module's version: a constant string in the kernel (unbounded, as run/gpu.c's) */
	if (sys_read_str("/sys", driver, sizeof(driver), "module/nvidia/version"))
		driver[0] = '\0';
	if (t && topo_discover("/sys", t) == 0) {
		int nports = 0;

		for (int i = 0; i < t->n_nics; i++)
			nports += t->nics[i].n_ports;
		gpus = calloc((size_t)t->n_gpus + 1, sizeof(*gpus));
		nics = calloc((size_t)nports + 1, sizeof(*nics));
		for (int i = 0; gpus && i < t->n_gpus; i++) {
			const struct topo_gpu *g = &t->gpus[i];

			gpus[fp.ngpus++] = (struct rj_gpu_dev){
				.bus_id = g->pci, .name = g->model, .numa = g->numa,
				.pcie_gen = topo_pcie_gen(g->link.cur_gts),
				.pcie_width = g->link.cur_width};
		}
		/* one entry per port: firmware, rate and link layer make comparisons (un)fair */
		for (int i = 0; nics && i < t->n_nics; i++) {
			const struct topo_nic *n = &t->nics[i];

			for (int p = 0; p < n->n_ports; p++)
				nics[fp.nnics++] = (struct rj_nic_port){
					.device = n->name, .port = n->ports[p].num, .fw_ver = n->fw_ver,
					.rate = n->ports[p].rate, .link_layer = n->ports[p].link_layer,
					.state = n->ports[p].state, .numa = n->numa,
					.mtu = strcmp(n->ports[p].link_layer, "Ethernet") ? 0 :
					       netdev_mtu(t, n)};
		}
	}
	fp.gpus = gpus;
	fp.nics = nics;
	j = rj_fingerprint_json(&fp);
	free(nics);
	free(gpus);
	free(t);
	return j;
}

/* Variables that change how transports behave, echoed so a report can be reproduced. */
json_t *run_env_vars(void)
{
	static const char *const prefixes[] = {
		"NCCL_", "GRADSYNC_", "UCX_", "MLX5_", "RDMAV_", "IBV_", "CUDA_VISIBLE_DEVICES",
		"CUDA_DEVICE_ORDER", "OMP_", "SLURM_JOB_ID", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE",
	};
	json_t *j = json_object();
	char **e;
	size_t i;

	for (e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		char name[128];

		if (!eq || (size_t)(eq - *e) >= sizeof(name))
			continue;
		for (i = 0; i < ARRAY_SIZE(prefixes); i++) {
			if (strncmp(*e, prefixes[i], strlen(prefixes[i])))
				continue;
			memcpy(name, *e, eq - *e);
			name[eq - *e] = '\0';
			/* the job token is a credential, not a setting */
			if (strcmp(name, "GRADSYNC_TOKEN") && strcmp(name, "GRADSYNC_LISTEN_FD")) {
				json_t *key = json_text(name); /* a key must be UTF-8 too */

				if (key)
					json_object_set_new(j, json_string_value(key),
							    json_text(eq + 1));
				json_decref(key);
			}
			break;
		}
	}
	return j;
}
