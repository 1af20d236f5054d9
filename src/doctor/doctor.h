/*
 * `gradsync doctor`: what on this node stops the fast path, before anyone trusts a number.
 * Each check (one row of the table in doctor.c, one concept per doctor_*.c file) reads the
 * sysfs tree under in->root (the live /sys, or a captured fixture in tests), the topology
 * topo/ built from it, and optional facts from verbs and CUDA when they are present; it
 * adds findings with a level and, unless it passed, the fix. Nothing here needs a GPU
 * driver or an RDMA device; nothing here changes the machine.
 */
#ifndef GS_DOCTOR_DOCTOR_H
#define GS_DOCTOR_DOCTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "topo/topo.h"
#include "util/common.h"

/* Severity order: a report's verdict is its worst finding. */
enum doc_level {
	DOC_PASS = 0, /* checked and fine */
	DOC_SKIP,     /* not applicable or not readable here (says why) */
	DOC_WARN,     /* works, but slower or fragile; the fix says how */
	DOC_FAIL,     /* stops a fast path or makes a number untrustworthy */
	DOC_LEVELS,
};

struct doc_finding {
	const char *check;  /* the check table's row name ("rdma_port") */
	enum doc_level level;
	char subject[64];   /* what it is about: "mlx5_0:1", "GPU 0000:1b:00.0", "host" */
	char what[400];     /* the finding, with its numbers */
	char fix[320];      /* what to do; "" when it passed */
};

/* What CUDA says about a GPU when a driver is there (the doctor never needs it). */
struct doc_gpu_fact {
	int topo_index;     /* into topo->gpus */
	bool dmabuf;        /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED */
	int cc_major, cc_minor;
};

/* What verbs says about a port (sysfs shows no IB MTU). */
struct doc_port_fact {
	char dev[32];
	int port;
	int active_mtu, max_mtu; /* bytes */
};

/* What became of a library probe (CUDA, verbs) of the live node. */
struct doc_probe {
	bool made;          /* asked: the live /sys (CUDA: a GPU and its driver's module) */
	bool hung;          /* given up on at the bound: a call did not return */
	int n;              /* what it answered with: CUDA devices, verbs ports */
	char subject[64];   /* hung: what the call was on ("CUDA driver", "mlx5_0 port 1") */
	char what[160];     /* hung: "cuInit did not return within 30s (driver wedged?)" */
};

struct doc_input {
	const char *root;          /* sysfs root the topology was read from */
	const struct topo *topo;
	int gdr_level;             /* enum gdr_level the GPU-NIC paths are judged against */
	long long memlock;         /* RLIMIT_MEMLOCK bytes; -1 unlimited, -2 unknown */
	long long mem_total;       /* host memory bytes, 0 unknown */
	char cmdline[1024];        /* kernel command line, "" unknown */
	const struct doc_gpu_fact *gpus;
	int n_gpus;                /* 0: no driver (facts inferred from sysfs) */
	const struct doc_port_fact *ports;
	int n_ports;               /* 0: no verbs */
	struct doc_probe cuda, verbs;
};

struct doc_report {
	struct doc_finding *f;
	int n, cap;
	int count[DOC_LEVELS];
};

/* One row per check: the vocabulary of `doctor --checks`, the JSON and the README. */
struct doc_check {
	const char *name;
	const char *title;
	int (*run)(const struct doc_input *in, struct doc_report *r); /* 0 or -ENOMEM */
};

const struct doc_check *doctor_checks(size_t *n);

/* Run every check into *r (zeroed first); 0 or -ENOMEM. Free with doctor_report_free(). */
int doctor_run(const struct doc_input *in, struct doc_report *r);
void doctor_report_free(struct doc_report *r);
/* Add a finding; fix may be NULL. 0 or -ENOMEM. */
int doctor_add(struct doc_report *r, const char *check, enum doc_level lv, const char *subject,
	       const char *fix, const char *fmt, ...) GS_PRINTF(6, 7);
enum doc_level doctor_verdict(const struct doc_report *r);
const char *doctor_level_name(enum doc_level lv);
/* Findings of one check about one subject (tests, and callers that summarise). */
const struct doc_finding *doctor_find(const struct doc_report *r, const char *check,
				      const char *subject);

/*
 * Facts from outside sysfs for root: on the live /sys, getrlimit(RLIMIT_MEMLOCK),
 * /proc/meminfo and /proc/cmdline; for a fixture, <root>/memlock ("unlimited" or bytes),
 * <root>/meminfo_total (bytes) and <root>/cmdline, like topo's <root>/osrelease.
 */
void doctor_host_facts(const char *root, struct doc_input *in);

#define DOC_MAX_PORTS 64

/* Everything the checks read about one node, gathered once. */
struct doctor_node {
	struct topo *topo;
	struct doc_gpu_fact gpus[TOPO_MAX_GPUS];
	struct doc_port_fact ports[DOC_MAX_PORTS];
	struct doc_input in;
	bool live;           /* the root is the live /sys */
	bool nvidia_module;  /* <root>/module/nvidia: the GPU driver is loaded */
	uint64_t timeout_ns; /* the bound of each walk of the root, and of the library probes
			      * (run at once) together */
};

/* What doctor_node_collect() may ask beyond sysfs (only on the live /sys). */
enum doc_ask {
	DOC_ASK_VERBS = 1u << 0, /* verbs: each port's MTU */
	DOC_ASK_CUDA = 1u << 1,  /* CUDA, when the NVIDIA module is loaded: dma-buf per GPU;
				  * never in a launcher that forks ranks later (gpu/gpu.h) */
};

/*
 * Gather the node under root: the topology, the host facts, and what the ask flags allow,
 * each within timeout_ns. NULL on failure (logged). Free with doctor_node_free(). Its reads
 * of root are bounded as a whole (util/fsbound.h: fsb_walk): a tree that does not answer,
 * or a stop signal, fails it in one line naming the call and the file. CUDA and verbs are
 * asked as bounded groups (util/callbound.h), at once and within one timeout_ns for both:
 * one whose call does not return (a wedged driver, a dead HCA) is given up on, said in one
 * line and kept in in.cuda / in.verbs for the checks gpu_driver and rdma_verbs to fail; a
 * stop signal while they wait fails it.
 */
struct doctor_node *doctor_node_collect(const char *root, int gdr_level, unsigned ask,
					uint64_t timeout_ns);
void doctor_node_free(struct doctor_node *n);
/* doctor_run() on n, its reads of the root bounded as doctor_node_collect's: 0, -ENOMEM,
 * or the walk's -errno (logged). Free *r with doctor_report_free(). */
int doctor_node_run(const struct doctor_node *n, struct doc_report *r);
/* Collect (verbs only, no CUDA: safe in any process; FSB_TIMEOUT_DEFAULT's bound), run,
 * and return the JSON form: what every report.json embeds as "doctor". NULL on failure. */
json_t *doctor_node_json(const char *root, int gdr_level);

/* Terminal and JSON forms ({"verdict", "counts", "findings": [...]}). */
void doctor_print(FILE *f, const struct doc_report *r);
json_t *doctor_json(const struct doc_report *r);

#endif
