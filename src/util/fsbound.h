/*
 * The writes (and the reads back) of a run's results, each within a timeout: a file
 * system that stops answering (a hard-mounted NFS directory whose server went away)
 * blocks open, write, fsync and rename for ever, and a run must fail saying so instead.
 *
 * Each call runs on a thread of its own (util/bounded.h), one per file. A call that does
 * not return in time is left running and frees what it holds when it returns, if ever
 * (one in uninterruptible sleep cannot be cancelled; the process's exit may wait in the
 * kernel until it returns). While it has not, every later call of this process is
 * refused at once with -ETIMEDOUT: the next would only wait as long again on the same
 * directory (a run writes into one). Process-wide by nature: the stuck thread is the
 * process's.
 *
 * The why of a failure is strerror, or for -ETIMEDOUT the call that did not return and
 * where: "fsync of /r/q-1/cases/0001.json.tmp did not return within 30s: is its file
 * system (nfs4 at /r) reachable?".
 */
#ifndef GS_UTIL_FSBOUND_H
#define GS_UTIL_FSBOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fsb_write {
	const char *path;
	const void *data;     /* copied: the caller may free it whatever the outcome */
	size_t len;
	const char *remake;   /* a directory made again (mkdir -p) when it is gone; NULL none */
	bool no_replace;      /* link(2) it in: an existing file is kept (-EEXIST) */
	bool remade;          /* out: remake was gone and was made again */
};

/*
 * Write w->data to w->path whole and durable within timeout_ns: PATH.tmp written and
 * fsync'ed, renamed (linked, with no_replace) onto PATH, PATH's directory fsync'ed. A
 * reader never sees half a file; after a power cut PATH is whole or absent. 0 or -errno,
 * why filled (see above); PATH.tmp is removed after a failure that returned.
 */
int fsb_write(struct fsb_write *w, uint64_t timeout_ns, char *why, size_t whylen);
/* The regular file path, at most max bytes, read whole into *data (malloc'd, NUL added)
 * within timeout_ns. 0 or -errno, why filled (fs_open_regular's reasons too). */
int fsb_read(const char *path, uint64_t max, uint64_t timeout_ns, char **data, size_t *len,
	     char *why, size_t whylen);
/*
 * The start of a run: fs_make_unique_dir(parent, name) into out, its subdirectory sub
 * (NULL none), then the probe of fsb_probe in it, within timeout_ns for all of it. 0 or
 * -errno, why filled; on -ETIMEDOUT out holds the directory when it was made.
 */
int fsb_make_unique_dir(const char *parent, const char *name, const char *sub, char *out,
			size_t len, uint64_t timeout_ns, char *why, size_t whylen);
/* Does dir answer? A small file written, fsync'ed, renamed and removed in it (the steps
 * of a results file) within timeout_ns: 0 or -errno, why filled. */
int fsb_probe(const char *dir, uint64_t timeout_ns, char *why, size_t whylen);

#endif
