/*
 * A rank's stop signals around its bootstrap (run/stop.h): a handler that tells the job
 * through the bootstrap's signal fd once it is open, and raises bootstrap_opts.stop
 * before. Process-wide by nature: a signal handler can reach nothing else.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "run/stop.h"
#include "util/fsbound.h"
#include "util/log.h"
#include "util/stopsig.h"

static int stop_fd = -1;
static volatile sig_atomic_t stop_signo;
/* Before the bootstrap is open: the flag alone stops its wait (for the ranks, or rank 0). */
static volatile sig_atomic_t stop_by_flag;

static void on_stop_signal(int sig)
{
	int saved = errno;

	if (!stop_signo &&
	    (stop_fd >= 0 ? write(stop_fd, &(char){(char)sig}, 1) == 1 : stop_by_flag)) {
		stop_signo = sig;
		errno = saved;
		return;
	}
	/* the second one, or nowhere to tell: the default action, on return */
	signal(sig, SIG_DFL);
	raise(sig);
	errno = saved;
}

/*
 * Rank 0 waiting for the ranks (a node that never came up) tells those already there
 * and its verb ends as after the open; another rank connecting to a rank 0 not up yet,
 * or looking its name up, says what it was doing and exits 128 + the signal. One whose
 * handshake with rank 0 was under way finishes it, and run_stop_catch then tells the job
 * at once.
 */
void run_stop_early(struct bootstrap_opts *bo)
{
	stop_by_flag = 1;
	bo->stop = &stop_signo;
	/* a results file's wait too: a signal in it ends it, the job then told as ever */
	fsb_stop_watch(&stop_signo);
	stop_sigs_handle(on_stop_signal);
}

void run_stop_catch(struct bootstrap *bs)
{
	stop_fd = bootstrap_signal_fd(bs);
	stop_by_flag = 0;
	/* one that came between the open and now: the job hears of it too */
	if (stop_signo && stop_fd >= 0 && write(stop_fd, &(char){(char)stop_signo}, 1) != 1)
		log_warn(LOG_LAUNCH, "stop signal: write to the bootstrap: %s", strerror(errno));
	stop_sigs_handle(on_stop_signal);
}

void run_stop_release(void)
{
	stop_sigs_handle(SIG_DFL);
	fsb_stop_watch(NULL);
	stop_fd = -1;
	stop_by_flag = 0;
}

int run_stop_signo(void)
{
	return stop_signo;
}
