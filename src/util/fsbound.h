/*
 * The writes of a run's results and the reads of every file a user names (an experiment,
 * its includes, a report, a run directory), each within a timeout: a file system that
 * stops answering (a hard-mounted NFS directory whose server went away, a FUSE mount
 * whose daemon stopped) blocks open, read, stat, write, fsync and rename for ever, and
 * gradsync must fail saying so instead.
 *
 * Each call runs on a thread of its own (util/bounded.h), one per file: some 20-100 us
 * each (a loaded 2-core VM), next to 1 us for a stat; `gradsync report` of 200 run
 * directories makes 400 of them, 20-60 ms of its 0.25 s. A call that does not return
 * in time is left running and frees what it holds when it returns, if ever (one in
 * uninterruptible sleep cannot be cancelled; the process's exit may wait in the kernel
 * until it returns). While it has not, every later call of this process is refused at
 * once with -ETIMEDOUT: the next would only wait as long again on the same directory (a
 * run writes into one, a report reads one run's files after another). Process-wide by
 * nature: the stuck thread is the process's.
 *
 * The why of a failure is strerror, or for -ETIMEDOUT the call that did not return and
 * where: "fsync of /r/q-1/cases/0001.json.tmp did not return within 30s: is its file
 * system (nfs4 at /r) reachable?".
 *
 * A stop signal (util/stopsig.h: SIGINT, SIGTERM, SIGHUP) that comes while a caller waits
 * ends the wait as promptly (FSB_STOP_GRACE_NS): -EINTR, "stopped by SIGINT while the
 * open of /r/inc.ini was pending" (a call that returns within the grace is done as
 * usual). Where the signal goes decides the rest:
 * - to a handler of the program's, which registered its flag (fsb_stop_watch): the
 *   flag is looked at, what comes after is the owner's (its report of what ran: a call
 *   made once the flag is up is not stopped by it);
 * - blocked on the waiting thread, for its owner's sigtimedwait: fsbound's handler takes
 *   it for the wait, then it is pending for its owner again;
 * - at its default action: fsbound's handler takes it for the wait; a call left pending
 *   is said, every later call is refused, and fsb_stop_signo() tells main to end as the
 *   default action would have (128 + the signal). One that came as the call returned
 *   is given back to its default action at once.
 * An ignored signal (nohup, a shell's background job) is no stop.
 */
#ifndef GS_UTIL_FSBOUND_H
#define GS_UTIL_FSBOUND_H

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

/*
 * The bound where no experiment gives one: the experiment file itself and its includes
 * (read before [report] write_timeout is known, of which this is the default), the files
 * it names, and the commands that take no experiment (their --timeout's default).
 */
#define FSB_TIMEOUT_DEFAULT "30s"
uint64_t fsb_timeout_default_ns(void);

/* How long a call still under way when a stop signal comes may take to return. */
#define FSB_STOP_GRACE_NS 250000000ull
/*
 * How long a write the program begins once it is ending on a stop it took (fsb_stop_taken)
 * may take: the run's status and report after Ctrl-C, which the user still wants. Long
 * enough for a slow disk that answers (an NFS fsync of a large report.json), short enough
 * that one that stopped answering does not keep them [report] write_timeout more.
 */
#define FSB_STOP_WRITE_GRACE_NS 2000000000ull

/*
 * A program's own handler of the stop signals raises *flag (non-zero: the signal); NULL
 * when it no longer takes them. The flag must stay valid until then.
 */
void fsb_stop_watch(volatile const sig_atomic_t *flag);
/* The stop signal fsbound's handler took in place of its default action, else 0. */
int fsb_stop_signo(void);
/*
 * The program took stop signal sig itself (sigtimedwait: the driver of `gradsync run`) and
 * is ending: each write begun from now on (fsb_write) is bounded by FSB_STOP_WRITE_GRACE_NS
 * where its timeout is longer. The user asked to stop: a directory that no longer answers
 * must not keep them [report] write_timeout more. One not done within the grace is given
 * up on as a stop's (-EINTR), why naming the call: "stopped by SIGTERM: the open of
 * /r/status.tmp did not return within its grace (2s)"; every later call is refused.
 * 0: none taken (the bounds as given again).
 */
void fsb_stop_taken(int sig);

/*
 * A call of this process given up on (its bound passed, or a stop signal came) that has
 * not returned yet: true with what filled, "the open of /r/cases/0001.json.tmp" (the
 * first of them); while it is, every call is refused at once.
 */
bool fsb_pending(char *what, size_t len);

/* A call given up on, said in why: its file system did not answer within the bound
 * (-ETIMEDOUT) or a stop signal came while it waited (-EINTR). Either way the caller
 * reads or writes nothing more there. */
static inline bool fsb_gave_up(int ret)
{
	return ret == -ETIMEDOUT || ret == -EINTR;
}

struct fsb_write {
	const char *path;
	const void *data;     /* copied: the caller may free it whatever the outcome */
	size_t len;
	const char *remake;   /* a directory made again (mkdir -p) when it is gone; NULL none */
	bool no_replace;      /* link(2) it in: an existing file is kept (-EEXIST) */
	bool direct;          /* PATH itself written, no PATH.tmp (remake, no_replace unused) */
	bool remade;          /* out: remake was gone and was made again */
};

/*
 * Write w->data to w->path whole and durable within timeout_ns: PATH.tmp written and
 * fsync'ed, renamed (linked, with no_replace) onto PATH, PATH's directory fsync'ed. A
 * reader never sees half a file; after a power cut PATH is whole or absent. 0 or -errno,
 * why filled (see above); PATH.tmp is removed after a failure that returned. With direct,
 * PATH is opened (made, emptied) and written as a user named it, for output that may be
 * a device or a FIFO (/dev/stdout, a pipe to a reader): fsync'ed where it can be.
 */
int fsb_write(struct fsb_write *w, uint64_t timeout_ns, char *why, size_t whylen);
struct fsb_read {
	const char *path;
	uint64_t max;          /* the largest file taken: -EFBIG beyond */
	bool nofollow;         /* a symbolic link is refused (-ELOOP) */
	bool want_real;        /* real filled: realpath(path), before it is opened */
	char *data;            /* out: the bytes, NUL added; malloc'd, the caller frees */
	size_t len;            /* out */
	struct stat st;        /* out: the file's, from the descriptor read */
	char real[PATH_MAX];   /* out, with want_real */
};

/*
 * The regular file r->path read whole within timeout_ns (fs_open_regular: a FIFO or a
 * device is refused, never waited on). 0 or -errno, why filled (fs_open_regular's
 * reasons too); r->data NULL after a failure.
 */
int fsb_read(struct fsb_read *r, uint64_t timeout_ns, char *why, size_t whylen);
/* fsb_read, the bytes then read as a stream (fclose frees them); NULL with why filled
 * and errno set. r->data is the stream's, not the caller's. */
FILE *fsb_fopen(struct fsb_read *r, uint64_t timeout_ns, char *why, size_t whylen);
/* stat(path) within timeout_ns: 0 or -errno (-ENOENT: nothing there), why filled. */
int fsb_stat(const char *path, struct stat *st, uint64_t timeout_ns, char *why,
	     size_t whylen);
/* The names in directory dir, "." and ".." left out, sorted (strcmp), within timeout_ns:
 * *names one malloc'd block (free(*names) frees all), NULL-terminated, *n of them. 0 or
 * -errno, why filled. */
int fsb_list(const char *dir, char ***names, size_t *n, uint64_t timeout_ns, char *why,
	     size_t whylen);
/* mkdir(path) within timeout_ns: 0 when made or already there, else -errno, why filled. */
int fsb_mkdir(const char *path, uint64_t timeout_ns, char *why, size_t whylen);
/*
 * The start of a run: fs_make_unique_dir(parent, name) into out, its subdirectory sub
 * (NULL none), then the probe of fsb_probe in it, within timeout_ns for all of it. 0 or
 * -errno, why filled; on -ETIMEDOUT out holds the directory when it was made.
 */
int fsb_make_unique_dir(const char *parent, const char *name, const char *sub, char *out,
			size_t len, uint64_t timeout_ns, char *why, size_t whylen);
/*
 * A walk of many small calls bounded as a whole: a sysfs tree's hundreds of attributes
 * (20-100 us of a thread each would cost as much as the reads). fn(arg) on a thread of
 * its own within timeout_ns, noting each call that may block with fsb_note before it.
 * 0 once fn has returned: arg is the caller's again, fn's outcome in it. Else -errno
 * (fsb_gave_up, or refused, or ENOMEM), why filled, and arg the walk's: drop(arg) runs
 * once fn returns (at once when fn never ran); the caller must not touch arg again. what
 * names what fn works on (its root), for a walk given up on before its first note. On a
 * walk's own thread fn(arg) is called right there, within the bound of that walk.
 */
int fsb_walk(void (*fn)(void *arg), void *arg, void (*drop)(void *arg), const char *what,
	     uint64_t timeout_ns, char *why, size_t whylen);
/* On a walk's thread: the call about to be made ("open") and its object (copied); on any
 * other thread nothing, so that a helper shared with callers outside walks may note. */
void fsb_note(const char *op, const char *obj);
/* Does dir answer? A small file written, fsync'ed, renamed and removed in it (the steps
 * of a results file) within timeout_ns: 0 or -errno, why filled. */
int fsb_probe(const char *dir, uint64_t timeout_ns, char *why, size_t whylen);

#endif
