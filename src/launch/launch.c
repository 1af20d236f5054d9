/*
 * Launcher detection: who this rank is, how many there are and where rank 0 listens,
 * learnt from flags or from the environment of one launcher (one table, tried in order).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch/launch.h"
#include "util/hash.h"
#include "util/log.h"

/*
 * Rendezvous ports derived from a job id fall in [10000, 32000): below Linux's default
 * ephemeral range (32768-60999), so an outgoing connection never holds the port.
 */
#define LAUNCH_PORT_BASE 10000
#define LAUNCH_PORT_SPAN 22000

uint64_t launch_job_hash(const char *s)
{
	/* stable across hosts and builds, good enough to tell jobs' ports apart */
	return hash_fnv1a64(s, strlen(s));
}

/* Strict decimal: digits only (optional leading '-'), no blanks, no base prefixes. */
static bool dec_in_range(const char *s, long long min, long long max, int *out)
{
	const char *p = s;
	long long v = 0;
	bool neg = false;

	if (*p == '-') {
		neg = true;
		p++;
	}
	if (!*p)
		return false;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || v > (LLONG_MAX - 9) / 10)
			return false;
		v = v * 10 + (*p - '0');
	}
	if (neg)
		v = -v;
	if (v < min || v > max)
		return false;
	*out = (int)v;
	return true;
}

/* dec_in_range, saying what is wrong in one line naming the variable. */
static int parse_dec(const char *name, const char *s, long long min, long long max, int *out)
{
	if (dec_in_range(s, min, max, out))
		return 0;
	log_err(LOG_LAUNCH, "%s=\"%s\": expected an integer in [%lld, %lld]", name, s, min, max);
	return -EINVAL;
}

/* Read a variable: 1 = parsed, 0 = absent, -EINVAL = present but malformed. */
static int env_int(const char *name, long long min, long long max, int *out)
{
	const char *s = getenv(name);
	int ret;

	if (!s)
		return 0;
	ret = parse_dec(name, s, min, max, out);
	return ret ? ret : 1;
}

static const char *env_first(const char *const names[], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *s = getenv(names[i]);

		if (s && *s)
			return s;
	}
	return NULL;
}

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* The variables that name rank, size, local rank and local size for one launcher. */
struct launch_vars {
	const char *rank;
	const char *size;
	const char *local_rank; /* NULL: not provided by this launcher */
	const char *local_size;
};

/*
 * Parse the four numbers; rank and size must both be present (-ENOENT when neither is,
 * -EINVAL when only one is). Absent local values default to 0 / 1 (one rank per host).
 */
static int parse_vars(const struct launch_vars *v, struct launch_info *info)
{
	int has_rank, has_size, ret;

	has_rank = env_int(v->rank, 0, INT_MAX, &info->rank);
	if (has_rank < 0)
		return has_rank;
	has_size = v->size ? env_int(v->size, 1, INT_MAX, &info->nranks) : 0;
	if (has_size < 0)
		return has_size;
	if (!has_rank && !has_size)
		return -ENOENT;
	if (!has_rank || !has_size) {
		log_err(LOG_LAUNCH, "%s is set but %s is not", has_rank ? v->rank : v->size,
			has_rank ? (v->size ? v->size : "a world size") : v->rank);
		return -EINVAL;
	}
	if (info->rank >= info->nranks) {
		log_err(LOG_LAUNCH, "%s=%d: not below %s=%d", v->rank, info->rank, v->size,
			info->nranks);
		return -EINVAL;
	}
	info->local_rank = 0;
	info->local_nranks = 1;
	if (v->local_size) {
		ret = env_int(v->local_size, 1, info->nranks, &info->local_nranks);
		if (ret < 0)
			return ret;
	}
	if (v->local_rank) {
		ret = env_int(v->local_rank, 0, INT_MAX, &info->local_rank);
		if (ret < 0)
			return ret;
		if (ret && !(v->local_size && getenv(v->local_size)))
			info->local_nranks = GS_MAX(info->local_nranks, info->local_rank + 1);
	}
	if (info->local_rank >= info->local_nranks) {
		log_err(LOG_LAUNCH, "%s=%d: not below %s=%d", v->local_rank, info->local_rank,
			v->local_size ? v->local_size : "the local size", info->local_nranks);
		return -EINVAL;
	}
	return 0;
}

static void set_port_from_job(struct launch_info *info, const char *host)
{
	uint64_t h = launch_job_hash(info->job_id);

	snprintf(info->rendezvous, sizeof(info->rendezvous), "%.120s:%u", host,
		 (unsigned int)(LAUNCH_PORT_BASE + h % LAUNCH_PORT_SPAN));
}

/* GRADSYNC_*: set by launch_spawn_local (or by hand). */
static int detect_gradsync(struct launch_info *info)
{
	static const struct launch_vars v = {"GRADSYNC_RANK", "GRADSYNC_WORLD_SIZE",
					     "GRADSYNC_LOCAL_RANK", "GRADSYNC_LOCAL_SIZE"};
	int ret;

	/* GRADSYNC_WORLD_SIZE alone may be completing a PMIx launch. */
	if (!getenv("GRADSYNC_RANK"))
		return -ENOENT;
	ret = parse_vars(&v, info);
	if (ret)
		return ret;
	copy_str(info->job_id, sizeof(info->job_id), getenv("GRADSYNC_JOB_ID"));
	info->spawned = true;
	if (info->rank == 0) {
		ret = env_int("GRADSYNC_LISTEN_FD", 3, INT_MAX, &info->listen_fd);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * First host of a Slurm hostlist: "gpu[03-06,9],login1" -> "gpu03"; "a1,b2" -> "a1".
 * The bracket's first number keeps its zero padding.
 */
int launch_slurm_first_host(const char *list, char *host, size_t len)
{
	const char *open = NULL, *p;
	size_t n;

	for (p = list; *p && *p != ','; p++) {
		if (*p == '[') {
			open = p;
			break;
		}
	}
	if (!open) {
		n = (size_t)(p - list);
		if (!n || n >= len)
			return -EINVAL;
		memcpy(host, list, n);
		host[n] = '\0';
		return 0;
	}
	const char *num = open + 1, *num_end = num, *close = strchr(open, ']');

	while (*num_end >= '0' && *num_end <= '9')
		num_end++;
	if (!close || num_end == num)
		return -EINVAL;
	/* Suffix after ']' up to the next top-level comma ("rack[1-2]-gpu"). */
	const char *suf = close + 1, *suf_end = suf;

	while (*suf_end && *suf_end != ',' && *suf_end != '[')
		suf_end++;
	n = (size_t)(open - list) + (size_t)(num_end - num) + (size_t)(suf_end - suf);
	if (!n || n >= len)
		return -EINVAL;
	snprintf(host, len, "%.*s%.*s%.*s", (int)(open - list), list, (int)(num_end - num), num,
		 (int)(suf_end - suf), suf);
	return 0;
}

/* Tasks on node `node` from "2(x3),1" (SLURM_TASKS_PER_NODE); 0 when it cannot tell. */
static int slurm_tasks_on_node(const char *s, int node)
{
	while (s && *s) {
		char *end;
		long tasks = strtol(s, &end, 10), reps = 1;

		if (end == s || tasks <= 0)
			return 0;
		if (!strncmp(end, "(x", 2)) {
			char *e2;

			reps = strtol(end + 2, &e2, 10);
			if (e2 == end + 2 || *e2 != ')' || reps <= 0)
				return 0;
			end = e2 + 1;
		}
		if (node < reps)
			return tasks > INT_MAX ? 0 : (int)tasks;
		node -= (int)reps;
		if (*end != ',')
			return 0;
		s = end + 1;
	}
	return 0;
}

static int detect_slurm(struct launch_info *info)
{
	static const struct launch_vars v = {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", NULL};
	static const char *const lists[] = {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST",
					    "SLURM_NODELIST"};
	const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
	const char *list = env_first(lists, ARRAY_SIZE(lists));
	char host[128];
	int node = 0, ntasks = 0, ret;

	/*
	 * An sbatch script or an salloc shell of several tasks is not a job step: its one
	 * process would wait for ranks nobody starts (sbatch), or run local ranks beside
	 * the allocation (salloc). Say so now rather than after the timeout.
	 */
	ret = job && !step && !getenv("SLURM_STEPID") ? env_int("SLURM_NTASKS", 1, INT_MAX, &ntasks)
						       : 0;
	if (ret < 0) /* said once, here: parse_vars would read it again */
		return ret;
	if (ret > 0 && ntasks > 1) {
		log_err(LOG_LAUNCH, "inside Slurm job %s (%d tasks) but not in a job step (an sbatch script or salloc shell): start the ranks with 'srun gradsync run FILE.ini'; for local ranks on this node instead, run with SLURM_JOB_ID unset",
			job, ntasks);
		return -EINVAL;
	}
	if (!getenv("SLURM_PROCID"))
		return -ENOENT;
	ret = parse_vars(&v, info);
	if (ret)
		return ret;
	ret = env_int("SLURM_NODEID", 0, INT_MAX, &node);
	if (ret < 0)
		return ret;
	ret = slurm_tasks_on_node(getenv("SLURM_STEP_TASKS_PER_NODE")
				      ? getenv("SLURM_STEP_TASKS_PER_NODE")
				      : getenv("SLURM_TASKS_PER_NODE"),
				  node);
	/* Unknown tasks per node: the local rank is right, the local size a lower bound. */
	info->local_nranks = ret > info->local_rank ? ret : info->local_rank + 1;
	/* Two steps of one job may run side by side: the step id keeps their ports apart. */
	snprintf(info->job_id, sizeof(info->job_id), "%s%s%s", job ? job : "", step ? "." : "",
		 step ? step : "");
	if (list && !launch_slurm_first_host(list, host, sizeof(host)))
		set_port_from_job(info, host);
	else if (getenv("SLURM_LAUNCH_NODE_IPADDR"))
		set_port_from_job(info, getenv("SLURM_LAUNCH_NODE_IPADDR"));
	return 0;
}

static int detect_openmpi(struct launch_info *info)
{
	static const struct launch_vars v = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
					     "OMPI_COMM_WORLD_LOCAL_RANK",
					     "OMPI_COMM_WORLD_LOCAL_SIZE"};
	static const char *const jobs[] = {"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE",
					   "OMPI_MCA_orte_ess_jobid"};
	int ret = parse_vars(&v, info);

	if (ret)
		return ret;
	copy_str(info->job_id, sizeof(info->job_id), env_first(jobs, ARRAY_SIZE(jobs)));
	return 0;
}

/*
 * Plain PMIx launchers (prrte, Slurm --mpi=pmix) export the rank and namespace but
 * not the size: it comes from PMIX_SIZE or GRADSYNC_WORLD_SIZE (or --world-size).
 */
static int detect_pmix(struct launch_info *info)
{
	struct launch_vars v = {"PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK", "PMIX_LOCAL_SIZE"};

	if (!getenv("PMIX_RANK"))
		return -ENOENT;
	if (!getenv("PMIX_SIZE"))
		v.size = getenv("GRADSYNC_WORLD_SIZE") ? "GRADSYNC_WORLD_SIZE" : NULL;
	int ret = parse_vars(&v, info);

	if (ret)
		return ret;
	copy_str(info->job_id, sizeof(info->job_id), getenv("PMIX_NAMESPACE"));
	return 0;
}

/*
 * MPICH's and Intel MPI's Hydra (mpiexec) and Cray PALS: PMI_RANK and PMI_SIZE, the local
 * rank from MPI_LOCALRANKID / MPI_LOCALNRANKS (Hydra) or PMI_LOCAL_RANK / PMI_LOCAL_SIZE
 * (PALS). Neither exports a job id the ranks share, so no port can be derived from one:
 * such a job names its rendezvous (launch_detect says so), even on one host.
 */
static int detect_pmi(struct launch_info *info)
{
	struct launch_vars v = {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"};

	if (!getenv("MPI_LOCALRANKID") && getenv("PMI_LOCAL_RANK")) {
		v.local_rank = "PMI_LOCAL_RANK";
		v.local_size = "PMI_LOCAL_SIZE";
	}
	return parse_vars(&v, info);
}

/*
 * torchrun's elastic agent keeps its own TCPStore on MASTER_PORT for the whole job,
 * so gradsync's rendezvous uses the port just above it.
 */
static int detect_torchrun(struct launch_info *info)
{
	static const struct launch_vars v = {"RANK", "WORLD_SIZE", "LOCAL_RANK",
					     "LOCAL_WORLD_SIZE"};
	const char *addr = getenv("MASTER_ADDR");
	int port, ret;

	ret = parse_vars(&v, info);
	if (ret)
		return ret;
	copy_str(info->job_id, sizeof(info->job_id), getenv("TORCHELASTIC_RUN_ID"));
	ret = env_int("MASTER_PORT", 1, 65534, &port);
	if (ret < 0)
		return ret;
	if (addr && *addr && ret)
		snprintf(info->rendezvous, sizeof(info->rendezvous), "%s:%d", addr, port + 1);
	return 0;
}

struct launcher {
	const char *name;
	int (*detect)(struct launch_info *info);
	bool no_job_id; /* nothing names the job: its ranks cannot derive a common port */
};

/* The environment launchers, in the order they are trusted. */
/* clang-format off */
static const struct launcher launchers[] = {
	{"local",    detect_gradsync, false},
	{"slurm",    detect_slurm,    false},
	{"openmpi",  detect_openmpi,  false},
	{"pmix",     detect_pmix,     false},
	{"pmi",      detect_pmi,      true},
	{"torchrun", detect_torchrun, false},
};
/* clang-format on */

static int detect_flags(const struct launch_flags *f, struct launch_info *info)
{
	int ret;

	if (!f || (f->rank < 0 && f->world_size < 0))
		return -ENOENT;
	if (f->rank < 0 || f->world_size <= 0 || f->rank >= f->world_size) {
		log_err(LOG_LAUNCH, "--rank=%d --world-size=%d: need both, with 0 <= rank < size",
			f->rank, f->world_size);
		return -EINVAL;
	}
	info->rank = f->rank;
	info->nranks = f->world_size;
	info->local_rank = 0;
	info->local_nranks = 1;
	/* GPU choice needs the local rank: take gradsync's variables when the user set them. */
	ret = env_int("GRADSYNC_LOCAL_SIZE", 1, info->nranks, &info->local_nranks);
	if (ret < 0)
		return ret;
	ret = env_int("GRADSYNC_LOCAL_RANK", 0, info->local_nranks - 1, &info->local_rank);
	if (ret < 0)
		return ret;
	copy_str(info->job_id, sizeof(info->job_id), getenv("GRADSYNC_JOB_ID"));
	return 0;
}

bool launch_rendezvous_valid(const char *s)
{
	const char *colon = strrchr(s, ':');
	int port;

	if (!colon || colon == s || (size_t)(colon - s) >= 120)
		return false;
	return dec_in_range(colon + 1, 1, 65535, &port);
}

/*
 * Spawned ranks take the spawner's token; anyone else needs the user's. One rank alone
 * needs none (nobody to authenticate).
 */
static int detect_token(const struct launch_opts *opts, const struct launch_flags *flags,
			struct launch_info *info)
{
	const char *from, *env = getenv("GRADSYNC_TOKEN");
	int ret;

	if (info->spawned && env && *env) {
		if (strlen(env) > LAUNCH_TOKEN_MAX) {
			log_err(LOG_LAUNCH, "GRADSYNC_TOKEN: longer than %d bytes", LAUNCH_TOKEN_MAX);
			return -EINVAL;
		}
		copy_str(info->token, sizeof(info->token), env);
		return 0;
	}
	ret = launch_token_resolve(opts, flags ? flags->token : NULL, info->token,
				   sizeof(info->token), &from);
	if (ret < 0)
		return ret;
	if (ret == 0 && info->nranks > 1) {
		log_err(LOG_LAUNCH,
			"%s launch of %d ranks: no job token; put a secret in a file only you can "
			"read (head -c 32 /dev/urandom | base64 >~/.gradsync-token; chmod 600 "
			"~/.gradsync-token) and set [launch] token_file = ~/.gradsync-token, or "
			"export GRADSYNC_TOKEN to every rank",
			info->launcher, info->nranks);
		return -EINVAL;
	}
	log_dbg(LOG_LAUNCH, "job token from %s", ret ? from : "(none: one rank)");
	return 0;
}

int launch_detect(const struct launch_opts *opts, const struct launch_flags *flags,
		  struct launch_info *info)
{
	const char *rdv = NULL, *rdv_from = NULL;
	bool no_job_id = false;
	int ret = -ENOENT;

	memset(info, 0, sizeof(*info));
	ret = detect_flags(flags, info);
	if (!ret)
		copy_str(info->launcher, sizeof(info->launcher), "flags");
	for (size_t i = 0; ret == -ENOENT && i < ARRAY_SIZE(launchers); i++) {
		memset(info, 0, sizeof(*info));
		ret = launchers[i].detect(info);
		if (!ret) {
			copy_str(info->launcher, sizeof(info->launcher), launchers[i].name);
			no_job_id = launchers[i].no_job_id;
		}
	}
	if (ret)
		return ret;

	/*
	 * Rendezvous: flag, INI, GRADSYNC_RENDEZVOUS, then what the launcher implies. Ranks
	 * of the local spawner take its GRADSYNC_RENDEZVOUS first: the spawner already
	 * resolved flag and INI (and rank 0 may hold the socket it bound).
	 */
	if (info->spawned && getenv("GRADSYNC_RENDEZVOUS") && *getenv("GRADSYNC_RENDEZVOUS")) {
		rdv = getenv("GRADSYNC_RENDEZVOUS");
		rdv_from = "GRADSYNC_RENDEZVOUS";
	} else if (flags && flags->rendezvous && *flags->rendezvous) {
		rdv = flags->rendezvous;
		rdv_from = "--rendezvous";
	} else if (opts && opts->rendezvous[0]) {
		rdv = opts->rendezvous;
		rdv_from = "[launch] rendezvous";
	} else if (getenv("GRADSYNC_RENDEZVOUS") && *getenv("GRADSYNC_RENDEZVOUS")) {
		rdv = getenv("GRADSYNC_RENDEZVOUS");
		rdv_from = "GRADSYNC_RENDEZVOUS";
	}
	if (rdv) {
		if (!launch_rendezvous_valid(rdv)) {
			log_err(LOG_LAUNCH, "%s=\"%s\": expected HOST:PORT, PORT 1..65535", rdv_from,
				rdv);
			return -EINVAL;
		}
		copy_str(info->rendezvous, sizeof(info->rendezvous), rdv);
	} else if (!info->rendezvous[0]) {
		if (info->nranks > info->local_nranks) {
			log_err(LOG_LAUNCH,
				"%s launch over %d hosts: no rendezvous known, set "
				"--rendezvous or GRADSYNC_RENDEZVOUS=HOST:PORT",
				info->launcher, GS_DIV_ROUND_UP(info->nranks, info->local_nranks));
			return -EINVAL;
		}
		if (no_job_id && info->nranks > 1) {
			log_err(LOG_LAUNCH,
				"%s launch of %d ranks: the launcher names no job, so its ranks "
				"cannot pick a port together; set GRADSYNC_RENDEZVOUS=HOST:PORT "
				"(rank 0's host; 127.0.0.1:PORT on one host) or --rendezvous",
				info->launcher, info->nranks);
			return -EINVAL;
		}
		/* All ranks on this host: loopback, port derived from the job id. */
		set_port_from_job(info, "127.0.0.1");
	}

	ret = detect_token(opts, flags, info);
	if (ret)
		return ret;
	log_dbg(LOG_LAUNCH, "launcher %s: rank %d/%d local %d/%d job \"%s\" rendezvous %s",
		info->launcher, info->rank, info->nranks, info->local_rank, info->local_nranks,
		info->job_id, info->rendezvous);
	return 0;
}
