/*
 * Topology discovery: walks a sysfs tree (live /sys or a test fixture) and fills struct topo,
 * the walk bounded as a whole (util/fsbound.h: fsb_walk), each call noted before it is made.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "topo/topo.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "topo/cpulist.h"
#include "topo/pci_ids.h"
#include "util/common.h"
#include "util/fsbound.h"
#include "util/log.h"

struct walk {
	const char *root;          /* as given */
	char real[PATH_MAX];       /* realpath of the root */
	struct topo *t;
};

/* out = root/rel: 0 or -ENAMETOOLONG. */
static int join(char *out, size_t len, const char *root, const char *rel)
{
	int n = snprintf(out, len, "%s/%s", root, rel);

	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

/* Read <root>/<rel> into buf without the trailing newline: 0 or -errno. */
static int read_str(const struct walk *w, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	size_t n;

	if (join(path, sizeof(path), w->root, rel))
		return -ENAMETOOLONG;
	fsb_note("read", path); /* the open and the read: one note, one call said */
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	if (ferror(f)) {
		int e = errno ? errno : EIO;

		fclose(f);
		return -e;
	}
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static long read_long(const struct walk *w, const char *rel, long dflt)
{
	char buf[64], *end;
	long v;

	if (read_str(w, rel, buf, sizeof(buf)))
		return dflt;
	errno = 0;
	v = strtol(buf, &end, 0);
	return (errno || end == buf) ? dflt : v;
}

/* Attribute `attr` of the sysfs directory <root>/<dir>, as read_str / read_long. */
static int read_attr_str(const struct walk *w, const char *dir, const char *attr, char *buf,
			 size_t len)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s/%s", dir, attr);
	return read_str(w, rel, buf, len);
}

static long read_attr_long(const struct walk *w, const char *dir, const char *attr, long dflt)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s/%s", dir, attr);
	return read_long(w, rel, dflt);
}

/* Copy a directory entry name, truncating to len - 1 bytes. */
static void copy_name(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static bool exists(const struct walk *w, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	if (join(path, sizeof(path), w->root, rel))
		return false;
	fsb_note("stat", path);
	return stat(path, &st) == 0;
}

/* A directory of the tree: its full name, noted before each readdir. */
struct tdir {
	DIR *d;
	char path[PATH_MAX];
};

/* Open the directory <root>/<rel> into td: false when it is not there. */
static bool open_dir(const struct walk *w, const char *rel, struct tdir *td)
{
	td->d = NULL;
	if (join(td->path, sizeof(td->path), w->root, rel))
		return false;
	fsb_note("open", td->path);
	td->d = opendir(td->path);
	return td->d;
}

/* The next entry of td: NULL at the end. */
static struct dirent *read_dir(struct tdir *td)
{
	fsb_note("readdir", td->path);
	return readdir(td->d);
}

static void close_dir(struct tdir *td)
{
	if (td->d)
		closedir(td->d);
}

/* Resolve the symlinks of <root>/<rel> and give the result relative to the root. */
static int resolve(const struct walk *w, const char *rel, char *out, size_t len)
{
	char path[PATH_MAX], res[PATH_MAX];
	size_t rl = strlen(w->real);

	if (join(path, sizeof(path), w->root, rel))
		return -ENAMETOOLONG;
	fsb_note("realpath", path);
	if (!realpath(path, res))
		return -errno;
	if (strncmp(res, w->real, rl) != 0 || res[rl] != '/')
		return -EXDEV;  /* a link leaving the tree: broken fixture */
	snprintf(out, len, "%s", res + rl + 1);
	return 0;
}

bool topo_is_bdf(const char *s, size_t n)
{
	static const char pat[] = "xxxx:xx:xx.x";

	if (n != sizeof(pat) - 1)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (pat[i] == 'x' ? !isxdigit((unsigned char)s[i]) : s[i] != pat[i])
			return false;
	}
	return true;
}

/* Cut a resolved path after its last BDF element; copy that BDF to pci. -ENODEV if none. */
static int pci_of_path(char *path, char *pci)
{
	char *best = NULL;
	size_t bestlen = 0;

	for (char *p = path; *p;) {
		size_t n = strcspn(p, "/");

		if (topo_is_bdf(p, n)) {
			best = p;
			bestlen = n;
		}
		p += n;
		if (*p)
			p++;
	}
	if (!best)
		return -ENODEV;
	best[bestlen] = '\0';
	memcpy(pci, best, bestlen + 1);
	return 0;
}

static void read_link(const struct walk *w, const char *dev, struct topo_pcie_link *l)
{
	char buf[64];

	l->cur_gts = read_attr_str(w, dev, "current_link_speed", buf, sizeof(buf)) ?
			     0 : strtod(buf, NULL);
	l->max_gts = read_attr_str(w, dev, "max_link_speed", buf, sizeof(buf)) ?
			     0 : strtod(buf, NULL);
	l->cur_width = (int)read_attr_long(w, dev, "current_link_width", 0);
	l->max_width = (int)read_attr_long(w, dev, "max_link_width", 0);
}

static int dev_numa(const struct walk *w, const char *dev)
{
	return (int)read_attr_long(w, dev, "numa_node", -1);
}

static void scan_gpus(struct walk *w)
{
	struct topo *t = w->t;
	char rel[PATH_MAX];
	struct dirent *de;
	struct tdir d;

	if (!open_dir(w, "bus/pci/devices", &d))
		return;
	while ((de = read_dir(&d))) {
		long vendor, cls, device;
		struct topo_gpu *g;

		if (!topo_is_bdf(de->d_name, strlen(de->d_name)))
			continue;
		snprintf(rel, sizeof(rel), "bus/pci/devices/%s", de->d_name);
		vendor = read_attr_long(w, rel, "vendor", -1);
		cls = read_attr_long(w, rel, "class", -1) >> 8;
		if (!pci_is_gpu((int)vendor, (int)cls))
			continue;
		if (t->n_gpus == TOPO_MAX_GPUS) {
			log_warn(LOG_TOPO, "more than %d GPUs: %s and later ignored", TOPO_MAX_GPUS,
				 de->d_name);
			break;
		}
		g = &t->gpus[t->n_gpus];
		int r = resolve(w, rel, g->path, sizeof(g->path));

		if (r) {
			log_warn(LOG_TOPO, "realpath %s: %s", rel, strerror(-r));
			continue;
		}
		copy_name(g->pci, sizeof(g->pci), de->d_name);
		device = read_attr_long(w, rel, "device", 0);
		g->vendor = (uint16_t)vendor;
		g->device = (uint16_t)device;
		pci_gpu_model(g->vendor, g->device, g->model, sizeof(g->model));
		g->numa = dev_numa(w, g->path);
		read_link(w, g->path, &g->link);
		t->n_gpus++;
	}
	close_dir(&d);
}

static void scan_ports(const struct walk *w, struct topo_nic *n)
{
	char dir[PATH_MAX], rel[PATH_MAX];
	struct dirent *de;
	struct tdir d;

	snprintf(dir, sizeof(dir), "class/infiniband/%s/ports", n->name);
	if (!open_dir(w, dir, &d))
		return;
	while ((de = read_dir(&d)) && n->n_ports < TOPO_MAX_PORTS) {
		struct topo_ib_port *p;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		p = &n->ports[n->n_ports++];
		p->num = atoi(de->d_name);
		snprintf(rel, sizeof(rel), "%s/%s", dir, de->d_name);
		read_attr_str(w, rel, "state", p->state, sizeof(p->state));
		read_attr_str(w, rel, "phys_state", p->phys_state, sizeof(p->phys_state));
		read_attr_str(w, rel, "link_layer", p->link_layer, sizeof(p->link_layer));
		read_attr_str(w, rel, "rate", p->rate, sizeof(p->rate));
	}
	close_dir(&d);
	for (int i = 1; i < n->n_ports; i++) {  /* insertion sort by port number */
		struct topo_ib_port k = n->ports[i];
		int j = i - 1;

		for (; j >= 0 && n->ports[j].num > k.num; j--)
			n->ports[j + 1] = n->ports[j];
		n->ports[j + 1] = k;
	}
}

static void scan_nic_netdevs(const struct walk *w, struct topo_nic *n)
{
	char dir[PATH_MAX];
	struct dirent *de;
	struct tdir d;

	snprintf(dir, sizeof(dir), "class/infiniband/%s/device/net", n->name);
	if (!open_dir(w, dir, &d))
		return;
	while ((de = read_dir(&d)) && n->n_netdevs < TOPO_MAX_NIC_NETDEVS) {
		if (de->d_name[0] == '.')
			continue;
		copy_name(n->netdevs[n->n_netdevs++], sizeof(n->netdevs[0]), de->d_name);
	}
	close_dir(&d);
	qsort(n->netdevs, (size_t)n->n_netdevs, sizeof(n->netdevs[0]),
	      (int (*)(const void *, const void *))strcmp);
}

static void scan_nics(struct walk *w)
{
	struct topo *t = w->t;
	char rel[PATH_MAX];
	struct dirent *de;
	struct tdir d;

	if (!open_dir(w, "class/infiniband", &d))
		return;
	while ((de = read_dir(&d))) {
		struct topo_nic *n;

		if (de->d_name[0] == '.')
			continue;
		if (t->n_nics == TOPO_MAX_NICS) {
			log_warn(LOG_TOPO, "more than %d RDMA devices: %s ignored", TOPO_MAX_NICS,
				 de->d_name);
			break;
		}
		n = &t->nics[t->n_nics];
		memset(n, 0, sizeof(*n));
		copy_name(n->name, sizeof(n->name), de->d_name);
		snprintf(rel, sizeof(rel), "class/infiniband/%s/device", de->d_name);
		if (resolve(w, rel, n->path, sizeof(n->path)) || pci_of_path(n->path, n->pci)) {
			/* software devices (rxe, siw) have none: they still work as
			 * transports, they only have no place in the PCI tree */
			log_dbg(LOG_TOPO, "RDMA device %s: no PCI device behind it, not placed",
				n->name);
			continue;
		}
		n->numa = dev_numa(w, n->path);
		read_link(w, n->path, &n->link);
		snprintf(rel, sizeof(rel), "class/infiniband/%s", n->name);
		read_attr_str(w, rel, "fw_ver", n->fw_ver, sizeof(n->fw_ver));
		read_attr_str(w, rel, "node_type", n->node_type, sizeof(n->node_type));
		read_attr_str(w, rel, "board_id", n->board_id, sizeof(n->board_id));
		scan_ports(w, n);
		scan_nic_netdevs(w, n);
		t->n_nics++;
	}
	close_dir(&d);
}

static void scan_netdevs(struct walk *w)
{
	struct topo *t = w->t;
	char dir[PATH_MAX], rel[PATH_MAX];
	struct dirent *de;
	struct tdir d;

	if (!open_dir(w, "class/net", &d))
		return;
	while ((de = read_dir(&d)) && t->n_netdevs < TOPO_MAX_NETDEVS) {
		struct topo_netdev *n;

		if (de->d_name[0] == '.')
			continue;
		n = &t->netdevs[t->n_netdevs++];
		memset(n, 0, sizeof(*n));
		n->numa = -1;
		copy_name(n->name, sizeof(n->name), de->d_name);
		snprintf(dir, sizeof(dir), "class/net/%s", de->d_name);
		snprintf(rel, sizeof(rel), "%s/device", dir);
		if (exists(w, rel) && !resolve(w, rel, n->path, sizeof(n->path)) &&
		    !pci_of_path(n->path, n->pci))
			n->numa = dev_numa(w, n->path);
		else
			n->path[0] = '\0';
		n->speed_mbps = (int)read_attr_long(w, dir, "speed", -1);
		if (n->speed_mbps <= 0)
			n->speed_mbps = -1;  /* virtio and link-down NICs report -1 or fail */
		n->mtu = (int)read_attr_long(w, dir, "mtu", 0);
		read_attr_str(w, dir, "operstate", n->operstate, sizeof(n->operstate));
		for (int i = 0; i < t->n_nics; i++) {
			for (int j = 0; j < t->nics[i].n_netdevs; j++) {
				if (!strcmp(t->nics[i].netdevs[j], n->name))
					snprintf(n->rdma, sizeof(n->rdma), "%s", t->nics[i].name);
			}
		}
	}
	close_dir(&d);
}

static void add_switch(struct walk *w, const char *path, size_t len, const char *bdf)
{
	struct topo *t = w->t;
	struct topo_switch *s;
	char dev[TOPO_PATH_LEN];

	for (int i = 0; i < t->n_switches; i++) {
		if (!strcmp(t->switches[i].pci, bdf))
			return;
	}
	if (t->n_switches == TOPO_MAX_SWITCHES || len >= sizeof(dev))
		return;
	s = &t->switches[t->n_switches++];
	copy_name(s->pci, sizeof(s->pci), bdf);
	memcpy(dev, path, len);
	dev[len] = '\0';
	s->vendor = (uint16_t)read_attr_long(w, dev, "vendor", 0);
	s->device = (uint16_t)read_attr_long(w, dev, "device", 0);
	s->subsys_vendor = (uint16_t)read_attr_long(w, dev, "subsystem_vendor", 0);
	s->subsys_device = (uint16_t)read_attr_long(w, dev, "subsystem_device", 0);
}

/* Record the switches above a device: elements n-2, n-4, ... of its path, as NCCL walks. */
static void scan_switches(struct walk *w, const char *path)
{
	size_t start[64], len[64];
	int n = 0;

	for (const char *p = path; *p && n < 64;) {
		size_t l = strcspn(p, "/");

		if (n || !strncmp(p, "pci", 3)) {
			start[n] = (size_t)(p - path);
			len[n++] = l;
		}
		p += l;
		if (*p)
			p++;
	}
	for (int i = n - 1; i - 2 >= 1;) {
		char bdf[TOPO_PCI_LEN];

		i -= 2;
		if (len[i] >= sizeof(bdf))
			return;
		memcpy(bdf, path + start[i], len[i]);
		bdf[len[i]] = '\0';
		add_switch(w, path, start[i] + len[i], bdf);
	}
}

static void parse_meminfo(const char *s, long *kb)
{
	const char *p = strstr(s, "MemTotal:");

	*kb = p ? strtol(p + strlen("MemTotal:"), NULL, 10) : -1;
}

static void scan_numa(struct walk *w)
{
	struct topo *t = w->t;
	char dir[PATH_MAX], buf[4096], err[128];
	struct dirent *de;
	cpu_set_t set;
	struct tdir d;

	open_dir(w, "devices/system/node", &d);
	while (d.d && (de = read_dir(&d)) && t->n_numa < TOPO_MAX_NUMA) {
		struct topo_numa *n;

		if (strncmp(de->d_name, "node", 4) || !isdigit((unsigned char)de->d_name[4]))
			continue;
		n = &t->numa[t->n_numa++];
		memset(n, 0, sizeof(*n));
		n->id = atoi(de->d_name + 4);
		snprintf(dir, sizeof(dir), "devices/system/node/%s", de->d_name);
		read_attr_str(w, dir, "cpulist", n->cpulist, sizeof(n->cpulist));
		n->mem_kb = -1;
		if (!read_attr_str(w, dir, "meminfo", buf, sizeof(buf)))
			parse_meminfo(buf, &n->mem_kb);
		if (!read_attr_str(w, dir, "distance", buf, sizeof(buf))) {
			char *p = buf;

			for (int i = 0; i < TOPO_MAX_NUMA && *p; i++)
				n->distance[i] = (int)strtol(p, &p, 10);
		}
	}
	close_dir(&d);
	if (t->n_numa == 0) {  /* kernel without CONFIG_NUMA: one pseudo node */
		struct topo_numa *n = &t->numa[t->n_numa++];

		n->id = 0;
		n->mem_kb = -1;
		read_str(w, "devices/system/cpu/online", n->cpulist, sizeof(n->cpulist));
	}
	for (int i = 1; i < t->n_numa; i++) {  /* sort by id; distances follow node order */
		struct topo_numa k = t->numa[i];
		int j = i - 1;

		for (; j >= 0 && t->numa[j].id > k.id; j--)
			t->numa[j + 1] = t->numa[j];
		t->numa[j + 1] = k;
	}
	for (int i = 0; i < t->n_numa; i++) {
		struct topo_numa *n = &t->numa[i];

		n->ncpus = cpulist_parse(n->cpulist, &set, err, sizeof(err)) ? 0 : CPU_COUNT(&set);
	}
}

static void read_kernel(struct walk *w)
{
	struct topo *t = w->t;
	int major = 0, minor = 0;
	FILE *f = NULL;

	/* A fixture keeps the release it was captured on in <root>/osrelease. /proc's files
	 * are the kernel's own text, never on a device or the network: they cannot hang. */
	if (!strcmp(w->real, "/sys"))
		f = fopen("/proc/sys/kernel/osrelease", "re");
	else if (exists(w, "osrelease"))
		read_str(w, "osrelease", t->kernel, sizeof(t->kernel));
	if (f) {
		if (fgets(t->kernel, sizeof(t->kernel), f))
			t->kernel[strcspn(t->kernel, "\n")] = '\0';
		fclose(f);
	}
	if (sscanf(t->kernel, "%d.%d", &major, &minor) == 2)
		t->dmabuf_kernel = major > 5 || (major == 5 && minor >= 12);
}

static int cmp_gpu(const void *a, const void *b)
{
	return strcmp(((const struct topo_gpu *)a)->pci, ((const struct topo_gpu *)b)->pci);
}

static int cmp_nic(const void *a, const void *b)
{
	return strverscmp(((const struct topo_nic *)a)->name, ((const struct topo_nic *)b)->name);
}

static int cmp_netdev(const void *a, const void *b)
{
	return strverscmp(((const struct topo_netdev *)a)->name,
			  ((const struct topo_netdev *)b)->name);
}

static int discover(const char *sysfs_root, struct topo *out)
{
	struct walk w = { .root = sysfs_root, .t = out };

	memset(out, 0, sizeof(*out));
	snprintf(out->root, sizeof(out->root), "%s", sysfs_root);
	fsb_note("realpath", sysfs_root);
	if (!realpath(sysfs_root, w.real)) {
		int e = errno;

		log_err(LOG_TOPO, "realpath sysfs root %s: %s", sysfs_root, strerror(e));
		return -e;
	}
	if (!exists(&w, "bus/pci")) {
		log_err(LOG_TOPO, "sysfs root %s: no bus/pci directory", sysfs_root);
		return -ENOENT;
	}
	read_kernel(&w);
	if (exists(&w, "module/nvidia_peermem"))
		snprintf(out->peermem, sizeof(out->peermem), "nvidia_peermem");
	else if (exists(&w, "module/nv_peer_mem"))
		snprintf(out->peermem, sizeof(out->peermem), "nv_peer_mem");
	scan_numa(&w);
	scan_gpus(&w);
	qsort(out->gpus, (size_t)out->n_gpus, sizeof(out->gpus[0]), cmp_gpu);
	scan_nics(&w);
	qsort(out->nics, (size_t)out->n_nics, sizeof(out->nics[0]), cmp_nic);
	scan_netdevs(&w);
	qsort(out->netdevs, (size_t)out->n_netdevs, sizeof(out->netdevs[0]), cmp_netdev);
	for (int i = 0; i < out->n_gpus; i++)
		scan_switches(&w, out->gpus[i].path);
	for (int i = 0; i < out->n_nics; i++)
		scan_switches(&w, out->nics[i].path);
	for (int i = 0; i < out->n_netdevs; i++)
		scan_switches(&w, out->netdevs[i].path);
	log_dbg(LOG_TOPO, "topo %s: %d GPUs, %d RDMA NICs, %d netdevs, %d NUMA nodes", sysfs_root,
		out->n_gpus, out->n_nics, out->n_netdevs, out->n_numa);
	return 0;
}

/* A discovery on a walk's thread: its own root and topo, the caller's only once done. */
struct discovery {
	char root[PATH_MAX];
	int ret;
	struct topo t;
};

static void discovery_walk(void *arg)
{
	struct discovery *d = arg;

	d->ret = discover(d->root, &d->t);
}

static void discovery_drop(void *arg)
{
	free(arg);
}

int topo_discover_within(const char *sysfs_root, struct topo *out, uint64_t timeout_ns)
{
	struct discovery *d = malloc(sizeof(*d));
	char why[PATH_MAX + 200];
	int ret;

	memset(out, 0, sizeof(*out));
	snprintf(out->root, sizeof(out->root), "%s", sysfs_root);
	if (!d) {
		log_err(LOG_TOPO, "sysfs root %s: %s", sysfs_root, strerror(ENOMEM));
		return -ENOMEM;
	}
	snprintf(d->root, sizeof(d->root), "%s", sysfs_root);
	/* one thread for the whole walk: one per read would cost as much as the reads */
	ret = fsb_walk(discovery_walk, d, discovery_drop, sysfs_root, timeout_ns, why,
		       sizeof(why));
	if (ret) {
		log_err(LOG_TOPO, "sysfs root %s: %s", sysfs_root, why);
		return ret;
	}
	ret = d->ret;
	memcpy(out, &d->t, sizeof(*out));
	free(d);
	return ret;
}

int topo_discover(const char *sysfs_root, struct topo *out)
{
	return topo_discover_within(sysfs_root, out, fsb_timeout_default_ns());
}
