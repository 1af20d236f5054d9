/*
 * Where a rank comes from: launcher detection (Slurm, Open MPI, PMIx, torchrun,
 * flags, or gradsync's own local spawner) and the local spawner itself.
 */
#ifndef GS_LAUNCH_LAUNCH_H
#define GS_LAUNCH_LAUNCH_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

/* Longest job token, bytes. */
#define LAUNCH_TOKEN_MAX 255
/* What reports, logs and argv copies show in place of a secret. */
#define LAUNCH_REDACTED "(redacted)"

/* [launch] section, resolved by config/. */
struct launch_opts {
	int local_ranks;          /* ranks gradsync spawns itself when no launcher is present */
	uint64_t timeout_ns;      /* bound of every wait: rendezvous, connect, one collective */
	char rendezvous[128];     /* HOST:PORT of rank 0, "" = 127.0.0.1 with a free port */
	char token[LAUNCH_TOKEN_MAX + 1]; /* job token; "" = token_file, GRADSYNC_TOKEN or random */
	char token_file[256];     /* file holding the job token (mode 0600), "" = none */
};

/* Who this process is in the job, and how that was learnt. */
struct launch_info {
	int rank;
	int nranks;
	int local_rank;
	int local_nranks;
	char launcher[16];        /* "local", "slurm", "openmpi", "pmix", "pmi", "torchrun", "flags" */
	char job_id[64];
	char rendezvous[128];     /* HOST:PORT */
	char token[LAUNCH_TOKEN_MAX + 1]; /* the job's secret; never printed, never written */
	bool spawned;             /* started by gradsync's local spawner */
	int listen_fd;            /* > 0: rank 0's inherited listener (GRADSYNC_LISTEN_FD) */
};

/* Command-line overrides: --rank --world-size --rendezvous --token (-1 / "" = unset). */
#define LAUNCH_RANKS_MAX (1 << 20) /* the largest --world-size the verbs take */
struct launch_flags {
	int rank;
	int world_size;
	const char *rendezvous;
	const char *token;
};

/*
 * Fill *info from flags, then the environment (GRADSYNC_*, Slurm, Open MPI, PMIx,
 * torchrun, first match wins; flags name rank and size together or not at all);
 * returns 0, -ENOENT when no launcher is present (the caller then spawns local
 * ranks), or -EINVAL with one logged line naming the bad variable and its value.
 * Rendezvous: GRADSYNC_RENDEZVOUS for spawned ranks (the spawner resolved it), else
 * --rendezvous, [launch] rendezvous, GRADSYNC_RENDEZVOUS, the launcher's own (Slurm:
 * first node of the step + a port derived from the job id; torchrun: MASTER_ADDR and
 * MASTER_PORT + 1, as the agent holds MASTER_PORT), or 127.0.0.1 + derived port when
 * all ranks share this host. Token: GRADSYNC_TOKEN for spawned ranks (the spawner
 * resolved it), else launch_token_resolve; a job of several ranks without one is
 * refused with a line saying what to set (a guessable default would let neighbours in).
 */
int launch_detect(const struct launch_opts *opts, const struct launch_flags *flags,
		  struct launch_info *info);

/*
 * Start nranks copies of /proc/self/exe (fork + execve: CUDA needs a fresh image) with
 * argv and GRADSYNC_RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_SIZE/RENDEZVOUS/TOKEN/JOB_ID set.
 * With no rendezvous, the spawner binds 127.0.0.1:0 itself and hands the listening
 * socket to rank 0 (GRADSYNC_LISTEN_FD, the fd number): no window in which another
 * process could take the port. The ranks form one process group, killed with the spawner
 * (PR_SET_PDEATHSIG). Waits for all ranks: once one fails (non-zero exit or signal), the
 * others get timeout_ns to exit, and never less than the blame window of timeout_ns in
 * which rank 0 names the ranks that caused it and writes the case (launch/blame_window.h,
 * 1.5 to 3.5 s: a stuck rank must be there to be asked, and no timeout of 1.5 s or more
 * is outlived); 1 s once rank 0, which writes the results, is gone: a rank left
 * then is hung; then SIGTERM (and SIGCONT, for a stopped one), then SIGKILL
 * min(timeout_ns, 2 s) later. A stop signal to the spawner (SIGINT, SIGTERM, SIGHUP:
 * util/stopsig.h) is forwarded to the ranks, which get 0.7 s before SIGKILL; a second one
 * kills them at once; *signo names the first (0: none). Returns 0 when all exited 0, 128 +
 * *signo when interrupted, else the first failure as a shell reports it (exit status, or
 * 128 + signal), logging which rank failed and how; -errno when it could not start them.
 * Call it from the main thread before other threads exist: it blocks SIGCHLD and the stop
 * signals in the calling thread while it waits (a caller may keep the stop signals blocked
 * around it, to take one arriving between two calls with sigtimedwait).
 * why (whylen bytes; NULL = not wanted): after a failure, one line of how the ranks ended,
 * "rank 2 exited with status 1; rank 0, still running 1.0s after it, was terminated:
 * hung or stopped",
 * for a report whose rank 0 could not write its own; "" otherwise.
 */
int launch_spawn_local(int nranks, char *const argv[], const char *rendezvous, const char *token,
		       uint64_t timeout_ns, int *signo, char *why, size_t whylen);

/* A stable 64-bit hash of a job id (FNV-1a): derives rendezvous ports, never tokens. */
uint64_t launch_job_hash(const char *s);
/* HOST:PORT with a host under 120 bytes and a port 1..65535 (the caller says what is
 * wrong, in one line): [launch] rendezvous's check, and --rendezvous's and the env's. */
bool launch_rendezvous_valid(const char *s);

/*
 * The user's job token: --token (flag), [launch] token, [launch] token_file (regular,
 * owned by us, mode 0600 or stricter, "~/" expanded), GRADSYNC_TOKEN; into out with
 * *from naming the source. 1 = found, 0 = none given, -EINVAL = unusable (logged,
 * naming the file or the source).
 */
int launch_token_resolve(const struct launch_opts *o, const char *flag, char *out, size_t len,
			 const char **from);
int launch_token_read_file(const char *path, char *out, size_t len);
/* A fresh random token (64 hex digits) for a job whose ranks we start ourselves. */
int launch_token_random(char *out, size_t len);
/*
 * Take `--token VALUE` out of sight: VALUE is copied to saved, its bytes in argv are
 * overwritten (ps shows them no more) and argv[i + 1] points to LAUNCH_REDACTED, so
 * every later copy of argv (child ranks, report.json) holds the redaction. 0, or
 * -E2BIG (logged) when the value is longer than LAUNCH_TOKEN_MAX.
 */
int launch_argv_scrub_token(int argc, char **argv, char *saved, size_t len);
/*
 * argv for spawned ranks: "gradsync", then argv[0..argc) (the verb and its options)
 * without any --token pair: the token reaches them through GRADSYNC_TOKEN. calloc'd,
 * NULL-terminated; free the array only.
 */
char **launch_child_argv(int argc, char **argv);

/* First host of a Slurm hostlist ("gpu[03-06],x" -> "gpu03"); 0 or -EINVAL. */
int launch_slurm_first_host(const char *list, char *host, size_t len);

#endif
