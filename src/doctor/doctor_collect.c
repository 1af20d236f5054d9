/*
 * Gathering one node's facts for the checks: sysfs topology, host limits, CUDA, verbs; and
 * the checks run on them. What reads the sysfs tree (a fixture a user names, or an
 * attribute whose driver hangs) runs as a bounded walk (util/fsbound.h: fsb_walk): one
 * thread for the gathering, one for the checks, never one per read. CUDA and verbs (the
 * live /sys only) are bounded groups of their own, run at once (doctor_probe.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/doctor.h"
#include "doctor/doctor_priv.h"
#include "util/fsbound.h"
#include "util/log.h"
#include "util/sysread.h"

/* The sysfs part of a node, on a walk's thread: the node is the walk's until it is done. */
struct node_walk {
	char root[PATH_MAX];
	struct doctor_node *n;
	int ret;
};

static void node_walk(void *arg)
{
	struct node_walk *w = arg;
	struct doctor_node *n = w->n;

	w->ret = topo_discover(w->root, n->topo); /* it logged the root and why */
	if (w->ret)
		return;
	n->in.root = n->topo->root;
	doctor_host_facts(w->root, &n->in);
	n->live = sys_is_live(w->root);
	n->nvidia_module = sys_exists(w->root, "module/nvidia");
}

static void node_walk_drop(void *arg)
{
	struct node_walk *w = arg;

	doctor_node_free(w->n);
	free(w);
}

struct doctor_node *doctor_node_collect(const char *root, int gdr_level, unsigned ask,
					uint64_t timeout_ns)
{
	struct doctor_node *n = calloc(1, sizeof(*n));
	struct node_walk *w = calloc(1, sizeof(*w));
	char why[PATH_MAX + 200];
	int ret;

	if (!n || !w)
		goto out_free;
	n->topo = calloc(1, sizeof(*n->topo));
	if (!n->topo)
		goto out_free;
	n->in.topo = n->topo;
	n->in.gdr_level = gdr_level;
	n->in.gpus = n->gpus;
	n->in.ports = n->ports;
	n->timeout_ns = timeout_ns;
	snprintf(w->root, sizeof(w->root), "%s", root);
	w->n = n;
	ret = fsb_walk(node_walk, w, node_walk_drop, root, timeout_ns, why, sizeof(why));
	if (ret) { /* n and w are the walk's */
		log_err(LOG_TOPO, "sysfs root %s: %s", root, why);
		return NULL;
	}
	ret = w->ret;
	free(w);
	if (ret) {
		doctor_node_free(n);
		return NULL;
	}
	ret = n->live ? doc_probe(n, ask) : 0;
	if (ret == -ENOMEM)
		log_err(LOG_MAIN, "doctor: %s", strerror(ENOMEM));
	if (ret) { /* a stop signal (said) ends the command */
		doctor_node_free(n);
		return NULL;
	}
	return n;
out_free:
	free(w);
	doctor_node_free(n);
	return NULL;
}

/* The checks on a walk's thread, over a copy of the node: one given up on keeps reading
 * its own, whatever its caller frees. */
struct run_walk {
	struct doctor_node n;
	struct topo topo;
	struct doc_report r;
	int ret;
};

static void run_walk(void *arg)
{
	struct run_walk *w = arg;

	w->ret = doctor_run(&w->n.in, &w->r);
}

static void run_walk_drop(void *arg)
{
	struct run_walk *w = arg;

	doctor_report_free(&w->r);
	free(w);
}

int doctor_node_run(const struct doctor_node *n, struct doc_report *r)
{
	struct run_walk *w = calloc(1, sizeof(*w));
	char why[PATH_MAX + 200];
	int ret;

	memset(r, 0, sizeof(*r));
	if (!w)
		return -ENOMEM;
	w->n = *n;
	w->topo = *n->topo;
	w->n.topo = &w->topo;
	w->n.in.topo = &w->topo;
	w->n.in.root = w->topo.root;
	w->n.in.gpus = w->n.gpus;
	w->n.in.ports = w->n.ports;
	ret = fsb_walk(run_walk, w, run_walk_drop, n->in.root, n->timeout_ns, why, sizeof(why));
	if (ret) {
		log_err(LOG_TOPO, "sysfs root %s: %s", n->in.root, why);
		return ret;
	}
	ret = w->ret;
	*r = w->r;
	free(w);
	return ret;
}

void doctor_node_free(struct doctor_node *n)
{
	if (!n)
		return;
	free(n->topo);
	free(n);
}

json_t *doctor_node_json(const char *root, int gdr_level)
{
	struct doctor_node *n = doctor_node_collect(root, gdr_level, DOC_ASK_VERBS,
						    fsb_timeout_default_ns());
	struct doc_report r;
	json_t *j = NULL;

	if (!n)
		return NULL;
	if (!doctor_node_run(n, &r)) {
		j = doctor_json(&r);
		doctor_report_free(&r);
	}
	doctor_node_free(n);
	return j;
}
