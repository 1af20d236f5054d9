/* The executor's memops on the GPU: kernels and staging copies per channel stream (gpu_memops.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "coll/gpu_memops.h"
#include "util/common.h"
#include "util/log.h"

struct mirror {
	char *host;
	char *dev;
	uint64_t bytes;
};

struct gpu_memops {
	struct coll_memops ops;
	int channels;
	struct gpu_stream *st[COLL_MAX_CHANNELS];
	struct gpu_event *ev[COLL_MAX_CHANNELS];
	struct mirror mir[GPU_MIRROR_COUNT];
	uint64_t d2h, h2d;
	/* staged pieces in and out, batch pieces per submission (gpu_memops_batch) */
	int batch;
	struct gpu_stream *in_st, *out_st;
	struct gpu_event *out_ev;
	uint64_t coll_lo, coll_hi; /* the collective's bytes of the data mirror; hi 0 = none */
	struct in_win {		   /* two batches copied in ahead, queued on in_st */
		uint64_t lo, hi;
		struct gpu_event *ev; /* recorded after the batch */
	} win[2];
	int win_new;		 /* win[win_new] was queued last */
	uint64_t out_lo, out_hi; /* pieces done, their copy out deferred */
	uint64_t out_piece;	 /* their size (the last may be shorter) */
	bool end_queued;
};

/* The device address of p when p lies in mirror w's host range, else NULL. */
static char *to_dev(const struct gpu_memops *m, enum gpu_mirror w, const void *p, uint64_t len)
{
	const struct mirror *x = &m->mir[w];
	const char *c = p;

	if (!x->host || c < x->host || c + len > x->host + x->bytes)
		return NULL;
	return x->dev + (c - x->host);
}

static bool chan_ok(const struct gpu_memops *m, int chan)
{
	return chan >= 0 && chan < m->channels;
}

static int mark(struct gpu_memops *m, int chan, int ret)
{
	return ret ? ret : gpu_event_record(m->ev[chan], m->st[chan]);
}

static int mo_reduce(void *ctx, int chan, void *dst, const void *src, uint64_t count,
		     enum dtype dt)
{
	struct gpu_memops *m = ctx;
	uint64_t len = count * dtype_size(dt);
	char *ddst, *dsrc;
	int ret;

	if (!chan_ok(m, chan))
		return -EINVAL;
	ddst = to_dev(m, GPU_MIRROR_DATA, dst, len);
	if (!ddst) /* direct: both are device memory */
		return mark(m, chan, gpu_reduce(dst, dst, src, count, dt, 1.0, m->st[chan]));
	dsrc = to_dev(m, GPU_MIRROR_SCRATCH, src, len);
	if (!dsrc) {
		log_err(LOG_GPU, "staged reduce chan=%d: source %p outside the scratch mirror", chan,
			src);
		return -EINVAL;
	}
	ret = gpu_memcpy_async(dsrc, src, len, GPU_COPY_H2D, m->st[chan]);
	if (!ret)
		ret = gpu_reduce(ddst, ddst, dsrc, count, dt, 1.0, m->st[chan]);
	if (!ret)
		ret = gpu_memcpy_async(dst, ddst, len, GPU_COPY_D2H, m->st[chan]);
	m->h2d += len;
	m->d2h += len;
	return mark(m, chan, ret);
}

/* avg's division: the device copy is refreshed first, whoever wrote the host block last. */
static int mo_scale(void *ctx, int chan, void *buf, uint64_t count, enum dtype dt,
		    uint32_t divisor)
{
	struct gpu_memops *m = ctx;
	uint64_t len = count * dtype_size(dt);
	char *dbuf;
	int ret;

	if (!chan_ok(m, chan))
		return -EINVAL;
	dbuf = to_dev(m, GPU_MIRROR_DATA, buf, len);
	if (!dbuf)
		return mark(m, chan, gpu_div(buf, count, dt, divisor, m->st[chan]));
	ret = gpu_memcpy_async(dbuf, buf, len, GPU_COPY_H2D, m->st[chan]);
	if (!ret)
		ret = gpu_div(dbuf, count, dt, divisor, m->st[chan]);
	if (!ret)
		ret = gpu_memcpy_async(buf, dbuf, len, GPU_COPY_D2H, m->st[chan]);
	m->h2d += len;
	m->d2h += len;
	return mark(m, chan, ret);
}

static int mo_query(void *ctx, int chan)
{
	struct gpu_memops *m = ctx;
	int ret;

	if (!chan_ok(m, chan))
		return -EINVAL;
	ret = gpu_event_query(m->ev[chan]);
	return ret == 0 ? 1 : ret == -EBUSY ? 0 : ret;
}

/* A staged piece's range checked against the data mirror; false after a log line. */
static bool piece_ok(const struct gpu_memops *m, int chan, uint64_t off, uint64_t bytes)
{
	const struct mirror *x = &m->mir[GPU_MIRROR_DATA];

	if (!chan_ok(m, chan))
		return false;
	if (off > x->bytes || bytes > x->bytes - off) {
		log_err(LOG_GPU, "staged piece chan=%d: %llu bytes at %llu overrun the %llu-byte mirror",
			chan, (unsigned long long)bytes, (unsigned long long)off,
			(unsigned long long)x->bytes);
		return false;
	}
	return true;
}

/*
 * Staged pieces go in (device -> host mirror) `batch` at a time, one submission of
 * piece-sized copies on in_st, two batches ahead of the executor, and out (host ->
 * device) once `batch` adjacent ones are done, likewise on out_st, the rest at coll_end:
 * the copy engines lose per copy submitted while both directions run (1 MiB pieces one
 * by one reached 0.77x of a pinned copy on the H200, one batch of 8-16 of them 0.90x,
 * tests/gpu/RESULTS.md). A piece waits on the batch that brought it in (its channel's
 * stream waits on the batch's event); nothing on the device reads a piece's device range
 * between its last reduce and the end, so its copy out may wait.
 */

/* Queue [lo, hi) of the data mirror as piece-sized copies, one submission per
 * GPU_MEMOPS_BATCH_MAX of them, on s. */
static int batch_copy(struct gpu_memops *m, struct gpu_stream *s, uint64_t lo, uint64_t hi,
		      uint64_t piece, bool in)
{
	struct mirror *x = &m->mir[GPU_MIRROR_DATA];
	void *dst[GPU_MEMOPS_BATCH_MAX];
	const void *src[GPU_MEMOPS_BATCH_MAX];
	size_t len[GPU_MEMOPS_BATCH_MAX], n = 0;
	int ret = 0;

	if (in)
		m->d2h += hi - lo;
	else
		m->h2d += hi - lo;
	for (uint64_t at = lo; at < hi && !ret; at += piece) {
		len[n] = GS_MIN(piece, hi - at);
		dst[n] = in ? x->host + at : x->dev + at;
		src[n] = in ? x->dev + at : x->host + at;
		if (++n == GPU_MEMOPS_BATCH_MAX || at + piece >= hi) {
			ret = gpu_memcpy_batch_async(dst, src, len, n, s);
			n = 0;
		}
	}
	return ret;
}

/* One staged piece in or out on its channel's stream (batch 1, or outside a collective). */
static int piece_copy(struct gpu_memops *m, int chan, uint64_t off, uint64_t bytes, bool in)
{
	struct mirror *x = &m->mir[GPU_MIRROR_DATA];

	if (in)
		m->d2h += bytes;
	else
		m->h2d += bytes;
	return mark(m, chan, in ? gpu_memcpy_async(x->host + off, x->dev + off, bytes,
						   GPU_COPY_D2H, m->st[chan])
				: gpu_memcpy_async(x->dev + off, x->host + off, bytes,
						   GPU_COPY_H2D, m->st[chan]));
}

/*
 * What a piece's start or end needs no batch for: nothing staged, a bad range, batch 1
 * or no collective begun (piece_copy). True when the piece is dealt with, *ret its result.
 */
static bool piece_alone(struct gpu_memops *m, int chan, uint64_t off, uint64_t bytes, bool in,
			int *ret)
{
	if (!m->mir[GPU_MIRROR_DATA].host)
		*ret = chan_ok(m, chan) ? 0 : -EINVAL;
	else if (!piece_ok(m, chan, off, bytes))
		*ret = -EINVAL;
	else if (m->batch == 1 || !m->coll_hi)
		*ret = piece_copy(m, chan, off, bytes, in);
	else
		return false;
	return true;
}

/* No batch queued in: the next piece starts a window of its own. */
static void windows_reset(struct gpu_memops *m)
{
	m->win[0].lo = m->win[0].hi = m->win[1].lo = m->win[1].hi = 0;
}

/* Queue the batch of pieces from lo into window w. */
static int in_queue(struct gpu_memops *m, int w, uint64_t lo, uint64_t piece)
{
	uint64_t hi = GS_MIN(lo + (uint64_t)m->batch * piece, m->coll_hi);
	int ret = batch_copy(m, m->in_st, lo, hi, piece, true);

	if (!ret)
		ret = gpu_event_record(m->win[w].ev, m->in_st);
	m->win[w].lo = lo;
	m->win[w].hi = ret ? lo : hi;
	m->win_new = w;
	return ret;
}

static int mo_piece_start(void *ctx, int chan, uint64_t off, uint64_t bytes)
{
	struct gpu_memops *m = ctx;
	int w, ret = 0;

	if (piece_alone(m, chan, off, bytes, true, &ret))
		return ret;
	for (w = 0; w < 2; w++)
		if (off >= m->win[w].lo && off + bytes <= m->win[w].hi)
			break;
	if (w == 2) { /* the first piece, or one outside both windows */
		w = 1 - m->win_new;
		ret = in_queue(m, w, off, bytes);
	}
	/* entering the newer window: the older one's pieces all started, refill it */
	if (!ret && w == m->win_new && m->win[w].hi < m->coll_hi)
		ret = in_queue(m, 1 - w, m->win[w].hi, bytes);
	if (ret)
		return ret;
	return mark(m, chan, gpu_stream_wait_event(m->st[chan], m->win[w].ev));
}

/* Queue the deferred copy out of the pieces done. */
static int out_flush(struct gpu_memops *m)
{
	int ret;

	if (m->out_hi == m->out_lo)
		return 0;
	ret = batch_copy(m, m->out_st, m->out_lo, m->out_hi, m->out_piece, false);
	if (!ret)
		ret = gpu_event_record(m->out_ev, m->out_st);
	m->out_lo = m->out_hi = 0;
	return ret;
}

static int mo_piece_done(void *ctx, int chan, uint64_t off, uint64_t bytes)
{
	struct gpu_memops *m = ctx;
	int ret = 0;

	if (piece_alone(m, chan, off, bytes, false, &ret))
		return ret;
	/* the channel's own work is done (the executor waited on it): no event to mark */
	if (m->out_hi != m->out_lo && m->out_hi == off && bytes <= m->out_piece) {
		m->out_hi += bytes;
	} else {
		ret = out_flush(m);
		m->out_lo = off;
		m->out_hi = off + bytes;
		m->out_piece = bytes;
	}
	if (!ret && m->out_hi - m->out_lo >= (uint64_t)m->batch * m->out_piece)
		ret = out_flush(m);
	return ret;
}

static int mo_coll_begin(void *ctx, uint64_t off, uint64_t bytes)
{
	struct gpu_memops *m = ctx;

	m->coll_lo = off;
	m->coll_hi = m->mir[GPU_MIRROR_DATA].host ? off + bytes : 0;
	windows_reset(m);
	m->out_lo = m->out_hi = 0;
	m->end_queued = false;
	return 0;
}

static int mo_coll_end(void *ctx)
{
	struct gpu_memops *m = ctx;
	int ret;

	if (!m->end_queued) {
		ret = out_flush(m);
		if (ret)
			return ret;
		m->end_queued = true;
		m->coll_hi = 0;
		windows_reset(m);
	}
	/* a never recorded event reads as done */
	ret = gpu_event_query(m->out_ev);
	return ret == 0 ? 1 : ret == -EBUSY ? 0 : ret;
}

struct gpu_memops *gpu_memops_create(int channels)
{
	struct gpu_memops *m;
	int i;

	if (channels < 1 || channels > COLL_MAX_CHANNELS) {
		log_err(LOG_GPU, "gpu memops: %d channels (1..%d)", channels, COLL_MAX_CHANNELS);
		return NULL;
	}
	if (!gpu_available())
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->channels = channels;
	m->batch = GPU_MEMOPS_BATCH;
	m->in_st = gpu_stream_create(true);
	m->out_st = gpu_stream_create(true);
	m->win[0].ev = gpu_event_create(false);
	m->win[1].ev = gpu_event_create(false);
	m->out_ev = gpu_event_create(false);
	if (!m->in_st || !m->out_st || !m->win[0].ev || !m->win[1].ev || !m->out_ev) {
		gpu_memops_destroy(m);
		return NULL;
	}
	for (i = 0; i < channels; i++) {
		m->st[i] = gpu_stream_create(true);
		m->ev[i] = gpu_event_create(false);
		if (!m->st[i] || !m->ev[i]) {
			gpu_memops_destroy(m);
			return NULL;
		}
	}
	m->ops = (struct coll_memops){
		.name = "gpu",
		.ctx = m,
		.reduce = mo_reduce,
		.scale = mo_scale,
		.query = mo_query,
		.piece_start = mo_piece_start,
		.piece_done = mo_piece_done,
		.coll_begin = mo_coll_begin,
		.coll_end = mo_coll_end,
	};
	return m;
}

void gpu_memops_destroy(struct gpu_memops *m)
{
	int i;

	if (!m)
		return;
	for (i = 0; i < m->channels; i++) {
		if (m->st[i])
			gpu_stream_sync(m->st[i], 10000);
		gpu_event_destroy(m->ev[i]);
		gpu_stream_destroy(m->st[i]);
	}
	if (m->in_st)
		gpu_stream_sync(m->in_st, 10000);
	if (m->out_st)
		gpu_stream_sync(m->out_st, 10000);
	gpu_event_destroy(m->win[0].ev);
	gpu_event_destroy(m->win[1].ev);
	gpu_event_destroy(m->out_ev);
	gpu_stream_destroy(m->in_st);
	gpu_stream_destroy(m->out_st);
	free(m);
}

const struct coll_memops *gpu_memops_ops(struct gpu_memops *m)
{
	return &m->ops;
}

int gpu_memops_mirror(struct gpu_memops *m, enum gpu_mirror which, void *host, void *dev,
		      uint64_t bytes)
{
	if ((unsigned int)which >= GPU_MIRROR_COUNT || (host && !dev))
		return -EINVAL;
	m->mir[which] = (struct mirror){ host, host ? dev : NULL, host ? bytes : 0 };
	if (which == GPU_MIRROR_DATA)
		m->ops.name = host ? "gpu staged" : "gpu";
	return 0;
}

int gpu_memops_batch(struct gpu_memops *m, int pieces)
{
	if (pieces < 1 || pieces > GPU_MEMOPS_BATCH_MAX)
		return -EINVAL;
	m->batch = pieces;
	return 0;
}

void gpu_memops_traffic(const struct gpu_memops *m, uint64_t *d2h, uint64_t *h2d)
{
	*d2h = m->d2h;
	*h2d = m->h2d;
}
