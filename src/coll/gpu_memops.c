/* The executor's memops on the GPU: kernels and staging copies per channel stream (gpu_memops.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "coll/gpu_memops.h"
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

static int mo_copy(struct gpu_memops *m, int chan, uint64_t off, uint64_t bytes, bool in)
{
	struct mirror *x = &m->mir[GPU_MIRROR_DATA];

	if (!chan_ok(m, chan))
		return -EINVAL;
	if (!x->host)
		return 0;
	if (off > x->bytes || bytes > x->bytes - off) {
		log_err(LOG_GPU, "staged piece chan=%d: %llu bytes at %llu overrun the %llu-byte mirror",
			chan, (unsigned long long)bytes, (unsigned long long)off,
			(unsigned long long)x->bytes);
		return -EINVAL;
	}
	if (in)
		m->d2h += bytes;
	else
		m->h2d += bytes;
	return mark(m, chan, in ? gpu_memcpy_async(x->host + off, x->dev + off, bytes,
						   GPU_COPY_D2H, m->st[chan])
				: gpu_memcpy_async(x->dev + off, x->host + off, bytes,
						   GPU_COPY_H2D, m->st[chan]));
}

static int mo_piece_start(void *ctx, int chan, uint64_t off, uint64_t bytes)
{
	return mo_copy(ctx, chan, off, bytes, true);
}

static int mo_piece_done(void *ctx, int chan, uint64_t off, uint64_t bytes)
{
	return mo_copy(ctx, chan, off, bytes, false);
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

void gpu_memops_traffic(const struct gpu_memops *m, uint64_t *d2h, uint64_t *h2d)
{
	*d2h = m->d2h;
	*h2d = m->h2d;
}
