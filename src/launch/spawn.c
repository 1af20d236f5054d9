/*
 * The local spawner: fork + exec of /proc/self/exe once per rank, in one process group,
 * and a wait that kills the survivors a bounded time after the first failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch/blame_window.h"
#include "launch/bootstrap.h"
#include "launch/launch.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/stopsig.h"
#include "util/timeutil.h"

extern char **environ;

/* Time between SIGTERM and SIGKILL once survivors are being killed. */
#define SPAWN_TERM_GRACE_NS 2000000000ull
#define SPAWN_POLL_NS	    100000000ull
/* After a forwarded stop signal (Ctrl-C, SIGTERM, SIGHUP), the ranks get this long
 * before SIGKILL. */
#define SPAWN_INTERRUPT_GRACE_NS 700000000ull
/* After a failure, ranks still alive this long are named; once rank 0 is gone, stopped. */
#define SPAWN_LINGER_NS	    1000000000ull

/* The variables the spawner sets (build_env fills them in this order). */
/* clang-format off */
static const char *const spawn_vars[] = {
	"GRADSYNC_RANK", "GRADSYNC_WORLD_SIZE", "GRADSYNC_LOCAL_RANK", "GRADSYNC_LOCAL_SIZE",
	"GRADSYNC_RENDEZVOUS", "GRADSYNC_TOKEN", "GRADSYNC_JOB_ID", "GRADSYNC_LISTEN_FD",
};
/* clang-format on */

#define SPAWN_VAR_LEN (64 + LAUNCH_TOKEN_MAX)

struct spawn_rank {
	pid_t pid;
	bool done;
	char vars[ARRAY_SIZE(spawn_vars)][SPAWN_VAR_LEN];
	char **envp;
};

static bool is_spawn_var(const char *kv)
{
	for (size_t i = 0; i < ARRAY_SIZE(spawn_vars); i++) {
		size_t n = strlen(spawn_vars[i]);

		if (!strncmp(kv, spawn_vars[i], n) && kv[n] == '=')
			return true;
	}
	return false;
}

/* Environment of one rank, built before fork: the child only calls execve. */
static int build_env(struct spawn_rank *r, int rank, int nranks, const char *rdv,
		     const char *token, int listen_fd)
{
	size_t n = 0, k = 0;

	while (environ[n])
		n++;
	r->envp = calloc(n + ARRAY_SIZE(spawn_vars) + 1, sizeof(char *));
	if (!r->envp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!is_spawn_var(environ[i]))
			r->envp[k++] = environ[i];
	snprintf(r->vars[0], SPAWN_VAR_LEN, "GRADSYNC_RANK=%d", rank);
	snprintf(r->vars[1], SPAWN_VAR_LEN, "GRADSYNC_WORLD_SIZE=%d", nranks);
	snprintf(r->vars[2], SPAWN_VAR_LEN, "GRADSYNC_LOCAL_RANK=%d", rank);
	snprintf(r->vars[3], SPAWN_VAR_LEN, "GRADSYNC_LOCAL_SIZE=%d", nranks);
	snprintf(r->vars[4], SPAWN_VAR_LEN, "GRADSYNC_RENDEZVOUS=%s", rdv);
	/* the environment, not argv: only this user (and root) can read /proc/PID/environ */
	snprintf(r->vars[5], SPAWN_VAR_LEN, "GRADSYNC_TOKEN=%s", token);
	snprintf(r->vars[6], SPAWN_VAR_LEN, "GRADSYNC_JOB_ID=local-%d", (int)getpid());
	snprintf(r->vars[7], SPAWN_VAR_LEN, "GRADSYNC_LISTEN_FD=%d", listen_fd);
	for (size_t i = 0; i < ARRAY_SIZE(spawn_vars); i++)
		if (i != 7 || (rank == 0 && listen_fd > 0))
			r->envp[k++] = r->vars[i];
	r->envp[k] = NULL;
	return 0;
}

/* A listening socket on 127.0.0.1 with a kernel-chosen port, handed to rank 0. */
static int listen_loopback(char *rdv, size_t len)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	int fd, e;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* With stdin closed the socket could be fd 0: GRADSYNC_LISTEN_FD must be >= 3. */
	if (fd >= 0 && fd < 3) {
		int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);

		close(fd);
		fd = high;
	}
	if (fd < 0) {
		e = errno;
		log_err(LOG_LAUNCH, "socket for the local rendezvous: %s", strerror(e));
		return -e;
	}
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1024) ||
	    getsockname(fd, (struct sockaddr *)&a, &alen)) {
		e = errno;
		log_err(LOG_LAUNCH, "bind/listen 127.0.0.1:0 for the local rendezvous: %s",
			strerror(e));
		close(fd);
		return -e;
	}
	snprintf(rdv, len, "127.0.0.1:%u", (unsigned int)ntohs(a.sin_port));
	return fd;
}

/* Child side, between fork and exec: async-signal-safe calls only. */
static void child_exec(int rank, pid_t pgid, pid_t parent, int listen_fd, char *const argv[],
		       char *const envp[], const sigset_t *mask)
{
	setpgid(0, pgid);
	/* Nothing is left behind when the spawner itself is killed. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	if (rank == 0 && listen_fd > 0)
		fcntl(listen_fd, F_SETFD, 0);
	/* a background shell leaves SIGINT ignored: the forwarded one must stop the rank */
	stop_sigs_handle(SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	execve("/proc/self/exe", argv, envp);
	_exit(127);
}

static bool rank_running(int i, const void *r)
{
	return !((const struct spawn_rank *)r)[i].done;
}

/* "2,3,7-12": the ranks still running */
static const char *rank_list(const struct spawn_rank *r, int n, char *buf, size_t len)
{
	return str_int_set(rank_running, r, n, buf, len);
}

/* How one rank ended, "rank 2 exited with status 1", in buf. */
static void exit_text(int rank, int st, char *buf, size_t len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "rank %d exited with status %d", rank, WEXITSTATUS(st));
	else
		snprintf(buf, len, "rank %d killed by signal %d (%s)", rank, WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
}

/* Log how one rank ended; returns its status as a shell would (128 + signal). */
static int report_exit(int rank, int st, bool first)
{
	enum log_level lvl = first ? LOG_ERR : LOG_WARN;
	char text[96];

	if (WIFEXITED(st) && !WEXITSTATUS(st))
		return 0;
	exit_text(rank, st, text, sizeof(text));
	log_msg(lvl, LOG_LAUNCH, "%s", text);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * Reap until every rank is gone. SIGCHLD and the stop signals (util/stopsig.h) are
 * blocked by the caller and taken here with sigtimedwait. A failure starts the kill
 * clock: timeout_ns, and never less than the job's blame window (launch/blame_window.h:
 * while rank 0 runs it names the ranks that caused the failure, and a stuck one must
 * still be there to be asked; a fixed 2 s ended it mid-probe), SIGTERM, then SIGKILL. A stop signal is
 * forwarded to the process group and the ranks get SPAWN_INTERRUPT_GRACE_NS before
 * SIGKILL (the user wants the run stopped, now); a second one sends SIGKILL at once.
 * *signo: the first such signal, else 0.
 */
static int wait_ranks(struct spawn_rank *r, int n, pid_t pgid, uint64_t timeout_ns,
		      const sigset_t *set, int *signo, char *why, size_t whylen)
{
	size_t off = 0;
	uint64_t fail_t = 0, term_t = 0, grace = GS_MIN(timeout_ns, SPAWN_TERM_GRACE_NS);
	uint64_t term_at = 0; /* once a rank failed: when the others get SIGTERM */
	struct blame_window bw;
	int alive = n, first_rc = 0, st;
	bool killed = false, lingering = false;
	char list[256];

	grace = GS_MAX(grace, SPAWN_POLL_NS);
	blame_window_plan(timeout_ns, &bw);
	while (alive > 0) {
		pid_t pid;

		while (alive > 0 && (pid = waitpid(-pgid, &st, WNOHANG)) > 0) {
			int i, rc;

			for (i = 0; i < n && r[i].pid != pid; i++)
				;
			if (i == n)
				continue;
			r[i].done = true;
			alive--;
			rc = report_exit(i, st, !first_rc && !fail_t);
			if (rc && !first_rc) {
				first_rc = rc;
				if (why)
					exit_text(i, st, why, whylen);
				off = why ? strlen(why) : 0;
			}
			if (rc && !fail_t) {
				fail_t = time_now_ns();
				term_at = fail_t + GS_MAX(timeout_ns, bw.total_ms * 1000000ull);
			}
		}
		if (!alive)
			break;

		uint64_t now = time_now_ns(), wait = SPAWN_POLL_NS;

		/* Rank 0 gone after a failure: it alone gathers and writes the case's results,
		 * so the others have nothing left to finish and each learnt of the end from the
		 * bootstrap at once. One still here a moment later is hung (SIGSTOP, a call
		 * that never returns): waiting out the rest of timeout_ns helps nobody. */
		if (fail_t && r[0].done && !term_t)
			term_at = GS_MIN(term_at, now + SPAWN_LINGER_NS);

		/* Said only of ranks that really linger: most stop within a poll or two of
		 * the failure, and a promise of a long wait that never comes misleads. */
		if (fail_t && !lingering && !*signo && now >= fail_t + SPAWN_LINGER_NS && !term_t) {
			log_err(LOG_LAUNCH, "ranks %s still running %.1fs after the failure; stopping them in at most %.1fs",
				rank_list(r, n, list, sizeof(list)), (now - fail_t) / 1e9,
				(term_at - GS_MIN(now, term_at)) / 1e9);
			lingering = true;
		}

		if (fail_t && !term_t && now >= term_at) {
			log_err(LOG_LAUNCH, "terminating ranks %s (SIGTERM)",
				rank_list(r, n, list, sizeof(list)));
			/* the ones the failure did not end: hung or stopped, most likely */
			if (why && !*signo)
				str_appendf(why, whylen, &off, "; %s %s, still running %.1fs after it, %s terminated: hung or stopped",
					    alive > 1 ? "ranks" : "rank", list,
					    (now - fail_t) / 1e9, alive > 1 ? "were" : "was");
			killpg(pgid, SIGTERM);
			/* a stopped rank takes its SIGTERM only once continued */
			killpg(pgid, SIGCONT);
			term_t = now;
		} else if (term_t && !killed && now >= term_t + grace) {
			log_err(LOG_LAUNCH, "killing ranks %s (SIGKILL)",
				rank_list(r, n, list, sizeof(list)));
			killpg(pgid, SIGKILL);
			killed = true;
		}
		if (fail_t && !term_t)
			wait = GS_MIN(wait, term_at - GS_MIN(now, term_at));
		else if (term_t && !killed)
			wait = GS_MIN(wait, term_t + grace - GS_MIN(now, term_t + grace));
		if (fail_t && !lingering)
			wait = GS_MIN(wait, fail_t + SPAWN_LINGER_NS -
						    GS_MIN(now, fail_t + SPAWN_LINGER_NS));
		struct timespec ts = time_ns_ts(GS_MAX(wait, 1000000ull));
		int sig = sigtimedwait(set, NULL, &ts);

		if (stop_sig_is(sig) && *signo) {
			log_warn(LOG_LAUNCH, "got SIG%s again: killing ranks %s (SIGKILL)",
				 sigabbrev_np(sig), rank_list(r, n, list, sizeof(list)));
			killpg(pgid, SIGKILL);
			killed = true;
		} else if (stop_sig_is(sig)) {
			log_warn(LOG_LAUNCH, "got SIG%s, forwarding it to ranks %s",
				 sigabbrev_np(sig), rank_list(r, n, list, sizeof(list)));
			*signo = sig;
			killpg(pgid, sig);
			/* the forwarded signal is the polite stage: SIGKILL follows soon */
			now = time_now_ns();
			fail_t = fail_t ? fail_t : now;
			if (!term_t || term_t + grace > now + SPAWN_INTERRUPT_GRACE_NS) {
				term_t = now;
				grace = SPAWN_INTERRUPT_GRACE_NS;
			}
		}
	}
	return *signo ? 128 + *signo : first_rc;
}

int launch_spawn_local(int nranks, char *const argv[], const char *rendezvous, const char *token,
		       uint64_t timeout_ns, int *signo, char *why, size_t whylen)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL}, old_chld;
	sigset_t set, old_mask, child_mask;
	struct spawn_rank *r;
	char rdv[128];
	int listen_fd = -1, ret = 0, spawned = 0;
	pid_t pgid = 0, self = getpid();

	*signo = 0;
	if (why && whylen)
		*why = '\0';
	else
		why = NULL;
	if (nranks < 1 || !argv || !argv[0] || !token || strlen(token) > LAUNCH_TOKEN_MAX) {
		log_err(LOG_LAUNCH, "spawn: need at least one rank, an argv and a token (got %d)",
			nranks);
		return -EINVAL;
	}
	r = calloc((size_t)nranks, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (rendezvous && *rendezvous) {
		snprintf(rdv, sizeof(rdv), "%s", rendezvous);
	} else {
		listen_fd = listen_loopback(rdv, sizeof(rdv));
		if (listen_fd < 0) {
			ret = listen_fd;
			goto out_free;
		}
	}
	for (int i = 0; i < nranks; i++) {
		ret = build_env(&r[i], i, nranks, rdv, token, listen_fd);
		if (ret)
			goto out_env;
	}

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	stop_sigs_set(&set, false);
	pthread_sigmask(SIG_BLOCK, &set, &old_mask);
	/* the ranks take the forwarded signals even when our caller keeps them blocked */
	child_mask = old_mask;
	sigdelset(&child_mask, SIGCHLD);
	stop_sigs_set(&child_mask, true);
	/* SIG_IGN on SIGCHLD would auto-reap the ranks and hide their exit status. */
	sigaction(SIGCHLD, &dfl, &old_chld);
	for (int i = 0; i < nranks; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			int e = errno;

			log_err(LOG_LAUNCH, "fork rank %d: %s", i, strerror(e));
			if (pgid)
				killpg(pgid, SIGKILL);
			ret = -e;
			break;
		}
		if (pid == 0)
			child_exec(i, pgid, self, listen_fd, argv, r[i].envp, &child_mask);
		/* Both sides set the group: whichever runs first, the group exists. */
		setpgid(pid, pgid ? pgid : pid);
		if (!pgid)
			pgid = pid;
		r[i].pid = pid;
		spawned++;
	}
	if (listen_fd >= 0) {
		close(listen_fd);
		listen_fd = -1;
	}
	log_dbg(LOG_LAUNCH, "spawned %d ranks, rendezvous %s, process group %d", spawned, rdv,
		(int)pgid);
	if (spawned) {
		int rc = wait_ranks(r, spawned, pgid, ret ? 0 : timeout_ns, &set, signo, why,
				    whylen);

		if (!ret)
			ret = rc;
	}
	sigaction(SIGCHLD, &old_chld, NULL);
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
out_env:
	for (int i = 0; i < nranks; i++)
		free(r[i].envp);
	if (listen_fd >= 0)
		close(listen_fd);
out_free:
	free(r);
	return ret;
}
