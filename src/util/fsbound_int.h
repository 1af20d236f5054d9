/*
 * fsbound internals shared by fsbound.c (the runner of a job, the record of a call still
 * stuck, and the writes of results) and fsbound_read.c (the reads of inputs: files,
 * stat, directory listings); callbound.c takes the stop signals around its waits the same
 * way (fsb_stop_begin, fsb_stop_end). A job holds its own copies of what it works on and
 * its results, so a call left running frees nothing its caller still uses.
 */
#ifndef GS_UTIL_FSBOUND_INT_H
#define GS_UTIL_FSBOUND_INT_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct fsb_job {
	/* the job's calls, on its thread: 0 or -errno */
	int (*fn)(struct fsb_job *j);
	/* in: the job's own copies, so that nothing is freed under a call left running */
	char path[PATH_MAX];       /* the file; fsb_make_unique_dir: the directory made */
	char tmp[PATH_MAX + 8];    /* PATH.tmp */
	char dir[PATH_MAX];        /* PATH's directory, synced after the rename */
	char remake[PATH_MAX];     /* "" = none */
	char parent[PATH_MAX];     /* fsb_make_unique_dir: where; fsb_probe: the directory */
	char name[256], sub[64];   /* fsb_make_unique_dir */
	char made[PATH_MAX];       /* fsb_make_unique_dir: the directory, once made */
	bool no_replace;
	bool direct;               /* writes: PATH itself, no PATH.tmp */
	bool nofollow;             /* reads: a symbolic link is refused */
	bool want_real;            /* reads: realpath(path) into real */
	char *data;                /* writes: in; reads: out; the probe: probe_text */
	char probe_text[8];
	size_t len;
	uint64_t max;              /* reads: the largest file taken */
	uint64_t start_ns;
	/* where it is: the call about to be made and its object, set together on the
	 * thread, read by abandon at the deadline */
	pthread_mutex_t at_lock;
	const char *at_op, *at_obj;
	char note[PATH_MAX];       /* fsb_walk: fsb_note's object, copied (at_obj then) */
	/* fsb_walk: the caller's walk, and arg's drop while arg is the job's */
	void (*walk_fn)(void *arg);
	void (*walk_drop)(void *arg);
	void *walk_arg;
	/* out */
	int ret;
	bool remade;
	struct stat st;            /* reads, fsb_stat: the file's */
	char real[PATH_MAX];       /* reads with want_real */
	char **names;              /* fsb_list: one block, NULL-terminated */
	size_t nnames;
	char why[256];             /* a reason beyond strerror (fs_open_regular's) */
	/* the caller's, valid until bounded_run returns: abandon fills them */
	const char **gave_op;      /* "fsync" */
	char *gave_obj;            /* its object, PATH_MAX bytes */
	char *out;                 /* fsb_make_unique_dir: the directory, when made */
	size_t out_len;
};

/* The stop signals around one wait (fsbound_stop.c). */
struct fsb_stop {
	volatile const sig_atomic_t *flag; /* what the wait looks at; NULL: nothing */
	bool held;                         /* fsbound's handler held for the wait */
	sigset_t unblocked;                /* stop signals this thread had blocked, opened */
};

/* Before a wait: s set up; 0, or -EINTR with why said when a stop signal fsbound took
 * already is ending the verb (nothing more is attempted). */
int fsb_stop_begin(struct fsb_stop *s, char *why, size_t whylen);
/* After it, given bounded_run's rc: the stop signal that ended the wait (rc -EINTR),
 * else 0. One that came as the call returned goes back to where it would have gone. */
int fsb_stop_end(struct fsb_stop *s, int rc);
/* The stop signal fsb_stop_taken was told of, else 0. */
int fsb_stop_taken_signo(void);

/* On the job's thread, before each call: the call ("fsync") and its object (a string
 * of the job that outlives the call). */
void fsb_at(struct fsb_job *j, const char *op, const char *obj);
/* A job doing fn; NULL with why saying ENOMEM. */
struct fsb_job *fsb_job_new(int (*fn)(struct fsb_job *j), char *why, size_t whylen);
void fsb_job_free(struct fsb_job *j);
/* path into j->path; -ENAMETOOLONG (why said, j freed) rather than a cut name, which
 * would name another file. */
int fsb_job_path(struct fsb_job *j, const char *path, char *why, size_t whylen);
/*
 * Run job j (fsb_job_new, its inputs set) within timeout_ns. 0 with j the caller's
 * again (j->ret the call's outcome, why filled on failure); -ETIMEDOUT with why filled,
 * j no longer the caller's (or freed, when refused).
 */
int fsb_job_run(struct fsb_job *j, uint64_t timeout_ns, char *why, size_t whylen);
/* fsb_job_run, then j freed: the call's outcome, for a job with nothing to hand back. */
int fsb_job_run_free(struct fsb_job *j, uint64_t timeout_ns, char *why, size_t whylen);

#endif
