/* Host checks: ulimit -l, IOMMU mode, CPU governor, huge pages; and the non-sysfs facts. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* memmem */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "doctor/doctor_priv.h"
#include "util/strutil.h"
#include "util/sysread.h"

#define MEMLOCK_MIN (1ll << 30) /* below this, registering one large host buffer fails */

void doctor_host_facts(const char *root, struct doc_input *in)
{
	char buf[64];
	FILE *f;

	in->memlock = -2;
	in->mem_total = 0;
	in->cmdline[0] = '\0';
	if (sys_is_live(root)) {
		/* /proc's files are the kernel's own text, never on a device or the
		 * network: they cannot hang */
		struct rlimit rl;
		long long kb;

		if (!getrlimit(RLIMIT_MEMLOCK, &rl))
			in->memlock = rl.rlim_cur == RLIM_INFINITY ? -1 : (long long)rl.rlim_cur;
		f = fopen("/proc/cmdline", "re");
		if (f) {
			if (fgets(in->cmdline, sizeof(in->cmdline), f))
				in->cmdline[strcspn(in->cmdline, "\n")] = '\0';
			fclose(f);
		}
		f = fopen("/proc/meminfo", "re");
		if (f) {
			if (fscanf(f, "MemTotal: %lld kB", &kb) == 1)
				in->mem_total = kb * 1024;
			fclose(f);
		}
		return;
	}
	/* a fixture keeps what sysfs does not show in files of its own */
	if (!sys_read_str(root, buf, sizeof(buf), "memlock"))
		in->memlock = !strcmp(buf, "unlimited") ? -1 : atoll(buf);
	in->mem_total = sys_read_long(root, 0, "meminfo_total");
	sys_read_str(root, in->cmdline, sizeof(in->cmdline), "cmdline");
}

static void human(long long b, char *buf, size_t len)
{
	if (b >= 1ll << 30)
		snprintf(buf, len, "%.1f GiB", (double)b / (1ll << 30));
	else if (b >= 1 << 20)
		snprintf(buf, len, "%lld MiB", b >> 20);
	else
		snprintf(buf, len, "%lld KiB", b >> 10);
}

int doc_memlock(const struct doc_input *in, struct doc_report *r)
{
	static const char fix[] =
	    "raise it to unlimited for the job: `ulimit -l unlimited`, '* - memlock unlimited' in "
	    "/etc/security/limits.conf, LimitMEMLOCK=infinity for systemd/slurmd, docker --ulimit "
	    "memlock=-1";
	bool rdma = in->topo->n_nics > 0;
	char lim[32];

	if (in->memlock == -2)
		return doctor_add(r, "memlock", DOC_SKIP, "host", NULL, "RLIMIT_MEMLOCK unknown");
	if (in->memlock == -1)
		return doctor_add(r, "memlock", DOC_PASS, "host", NULL,
				  "unlimited: verbs may pin any host buffer");
	human(in->memlock, lim, sizeof(lim));
	if (in->mem_total && in->memlock >= in->mem_total)
		return doctor_add(r, "memlock", DOC_PASS, "host", NULL,
				  "%s, at least the host's memory", lim);
	if (!rdma)
		return doctor_add(r, "memlock", DOC_PASS, "host", NULL,
				  "%s; only ib/roce pin host memory and there is no RDMA device", lim);
	return doctor_add(r, "memlock", in->memlock < MEMLOCK_MIN ? DOC_FAIL : DOC_WARN, "host", fix,
			  "%s locked memory: ibv_reg_mr of host buffers (staged GPU paths, host "
			  "benchmarks) beyond it fails with ENOMEM, as NCCL's does",
			  lim);
}

static bool is_group(const char *name)
{
	return name[0] != '.';
}

/* The IOMMU domain type of PCI function bdf: "identity", "DMA", "DMA-FQ", or "". */
static void group_type(const char *root, const char *bdf, char *buf, size_t len)
{
	/* iommu_group links to kernel/iommu_groups/N, whose type file names the domain */
	if (sys_read_str(root, buf, len, "bus/pci/devices/%s/iommu_group/type", bdf))
		buf[0] = '\0';
}

/* The iommu= / intel_iommu= / amd_iommu= words of the kernel command line. */
static void iommu_args(const char *cmdline, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (const char *p = cmdline; *p;) {
		size_t n = strcspn(p, " ");

		if (n && memmem(p, n, "iommu", 5))
			str_appendf(buf, len, &off, "%s%.*s", off ? " " : "", (int)n, p);
		p += n;
		while (*p == ' ')
			p++;
	}
}

int doc_iommu(const struct doc_input *in, struct doc_report *r)
{
	static const char fix[] =
	    "boot with iommu=pt (intel_iommu=on iommu=pt, or amd_iommu=on iommu=pt): GPUDirect "
	    "RDMA and P2P need untranslated DMA (NVIDIA's GPUDirect guide)";
	const struct topo *t = in->topo;
	char (*units)[64] = NULL, type[32], args[160], bad[96] = "", badtype[32] = "";
	int n = sys_list(in->root, is_group, &units, "class/iommu"), devs = 0, pt = 0, tr = 0;

	free(units);
	iommu_args(in->cmdline, args, sizeof(args));
	if (n <= 0)
		return doctor_add(r, "iommu", DOC_PASS, "host", NULL,
				  "no IOMMU (DMA remapping off)%s%s", args[0] ? "; cmdline: " : "",
				  args);
	/* one finding for the node: every GPU and NIC shares the boot-time mode */
	for (int i = 0; i < t->n_gpus + t->n_nics; i++) {
		bool gpu = i < t->n_gpus;
		const char *bdf = gpu ? t->gpus[i].pci : t->nics[i - t->n_gpus].pci;

		group_type(in->root, bdf, type, sizeof(type));
		if (!type[0])
			continue;
		devs++;
		if (!strcmp(type, "identity")) {
			pt++;
			continue;
		}
		if (!tr++) {
			snprintf(badtype, sizeof(badtype), "%s", type);
			snprintf(bad, sizeof(bad), "%s", gpu ? bdf : t->nics[i - t->n_gpus].name);
		}
	}
	if (tr)
		return doctor_add(r, "iommu", DOC_WARN, "host", fix,
				  "IOMMU on (%d units, cmdline '%s'): %d of %d GPUs and NICs have "
				  "translated DMA (domain %s, first %s): their peer-to-peer traffic is "
				  "remapped, slower or refused",
				  n, args, tr, devs, badtype, bad);
	if (!devs && t->n_gpus + t->n_nics)
		return doctor_add(r, "iommu", DOC_SKIP, "host", NULL,
				  "IOMMU on (%d units, cmdline '%s'); the devices' domain types are "
				  "not readable",
				  n, args);
	return doctor_add(r, "iommu", DOC_PASS, "host", NULL,
			  "IOMMU on (%d units, cmdline '%s'), passthrough for all %d GPUs and NICs",
			  n, args, pt);
}

static bool is_cpu(const char *name)
{
	return !strncmp(name, "cpu", 3) && name[3] >= '0' && name[3] <= '9';
}

int doc_cpu_governor(const struct doc_input *in, struct doc_report *r)
{
	char (*cpus)[64] = NULL, gov[32], first[32] = "", other[32] = "";
	int n = sys_list(in->root, is_cpu, &cpus, "devices/system/cpu"), have = 0, slow = 0, e;

	for (int i = 0; i < n; i++) {
		if (sys_read_str(in->root, gov, sizeof(gov),
				 "devices/system/cpu/%s/cpufreq/scaling_governor", cpus[i]))
			continue;
		have++;
		if (!first[0])
			snprintf(first, sizeof(first), "%s", gov);
		if (strcmp(gov, "performance")) {
			slow++;
			snprintf(other, sizeof(other), "%s", gov);
		}
	}
	free(cpus);
	if (!have)
		return doctor_add(r, "cpu_governor", DOC_SKIP, "host", NULL,
				  "no cpufreq governor: frequency managed by firmware or a hypervisor");
	if (!slow)
		e = doctor_add(r, "cpu_governor", DOC_PASS, "host", NULL,
			       "performance on all %d CPUs", have);
	else
		e = doctor_add(r, "cpu_governor", DOC_WARN, "host",
			       "`cpupower frequency-set -g performance` (or the BIOS power profile): "
			       "polling progress threads and small-message latency depend on it",
			       "%d of %d CPUs run governor '%s', not performance", slow, have, other);
	return e;
}

static bool is_hp(const char *name)
{
	return !strncmp(name, "hugepages-", 10);
}

int doc_hugepages(const struct doc_input *in, struct doc_report *r)
{
	char thp[96], mode[32] = "", (*sizes)[64] = NULL, res[160] = "";
	int n = sys_list(in->root, is_hp, &sizes, "kernel/mm/hugepages"), e;
	size_t off = 0;
	const char *b, *c;

	for (int i = 0; i < n; i++) {
		long nr = sys_read_long(in->root, 0, "kernel/mm/hugepages/%s/nr_hugepages", sizes[i]);

		str_appendf(res, sizeof(res), &off, "%s%ld x %s", off ? ", " : "", nr, sizes[i] + 10);
	}
	free(sizes);
	if (sys_read_str(in->root, thp, sizeof(thp), "kernel/mm/transparent_hugepage/enabled"))
		return doctor_add(r, "hugepages", DOC_SKIP, "host", NULL,
				  "transparent huge pages not reported%s%s", res[0] ? "; reserved " : "",
				  res);
	/* "always [madvise] never": the bracketed word is the mode */
	b = strchr(thp, '[');
	c = b ? strchr(b, ']') : NULL;
	if (b && c && c - b - 1 < (long)sizeof(mode))
		snprintf(mode, sizeof(mode), "%.*s", (int)(c - b - 1), b + 1);
	else
		snprintf(mode, sizeof(mode), "%s", thp);
	if (!strcmp(mode, "never"))
		e = doctor_add(r, "hugepages", DOC_WARN, "host",
			       "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled",
			       "transparent huge pages off: large host buffers use 4 KiB pages (more "
			       "TLB misses in host reductions, more NIC translation entries)%s%s",
			       res[0] ? "; reserved " : "", res);
	else
		e = doctor_add(r, "hugepages", DOC_PASS, "host", NULL,
			       "transparent huge pages '%s'%s%s", mode[0] ? mode : thp,
			       res[0] ? "; reserved " : "", res);
	return e;
}
