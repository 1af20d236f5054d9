/*
 * The data buffers of a case: device memory registered directly for GPUDirect RDMA, or
 * device memory with a pinned host mirror the transports use (the case's gpath says
 * which), or, without a GPU, host memory. Allocated and touched at setup, never on the
 * data path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "coll/gpu_memops.h"
#include "util/log.h"
#include "util/shmem.h"

#define RUN_DBUF_TIMEOUT_MS 60000

/*
 * Host buffers are shmem allocations where possible: shm peers then reduce and copy
 * straight from them (one pass instead of two through the ring's slots). Pinned mirrors
 * of GPU buffers cannot be (the driver allocates them) and go through slots.
 */
static int host_alloc(struct run_comm *rc, struct run_dbuf *b, uint64_t bytes)
{
	if (rc->gpu.ctx) {
		b->host = gpu_host_alloc(bytes ? bytes : 1); /* pinned and touched */
		b->pinned = b->host != NULL;
	} else if ((b->host = shmem_alloc(bytes))) {
		b->shared = true; /* touched too */
	} else if (posix_memalign(&b->host, 4096, bytes ? bytes : 1)) {
		b->host = NULL;
	} else {
		/* touch every page now: a first touch on the data path costs ~15 us a page */
		memset(b->host, 0, bytes);
	}
	return b->host ? 0 : -ENOMEM;
}

static void host_free(struct run_dbuf *b)
{
	if (b->pinned)
		gpu_host_free(b->host);
	else if (b->shared)
		shmem_free(b->host);
	else
		free(b->host);
	b->host = NULL;
	b->pinned = b->shared = false;
}

/* With transport = nccl there is no comm of ours: the buffer is only described. */
static int dbuf_register(struct run_comm *rc, struct run_dbuf *b, uint64_t bytes)
{
	void *p = b->host ? b->host : b->dev;
	enum mem_kind kind = b->host ? MEM_HOST : MEM_CUDA;

	if (rc->coll)
		return coll_buf_register(rc->coll, &b->cb, p, bytes, kind);
	memset(&b->cb, 0, sizeof(b->cb));
	b->cb.ptr = p;
	b->cb.bytes = bytes;
	b->cb.kind = kind;
	return 0;
}

static void dbuf_deregister(struct run_comm *rc, struct run_dbuf *b)
{
	if (rc->coll)
		coll_buf_deregister(rc->coll, &b->cb);
}

int run_dbuf_alloc(struct run_comm *rc, struct run_dbuf *b, uint64_t bytes, int which)
{
	int ret;

	memset(b, 0, sizeof(*b));
	if (rc->gpu.ctx) {
		b->dev = gpu_alloc(bytes ? bytes : 1);
		if (!b->dev)
			return -ENOMEM;
		ret = gpu_memset_async(b->dev, 0, bytes, rc->gpu.ctx->comm);
		if (!ret)
			ret = gpu_stream_sync(rc->gpu.ctx->comm, RUN_DBUF_TIMEOUT_MS);
		if (ret)
			goto out_dev;
	}
	if (!rc->gpu.ctx || gdr_path_staged(&rc->gpu.path, which == GPU_MIRROR_SCRATCH)) {
		ret = host_alloc(rc, b, bytes);
		if (ret)
			goto out_dev;
	}
	ret = dbuf_register(rc, b, bytes);
	if (ret) {
		log_err(LOG_TRANSPORT, "register %llu bytes of %s memory with the case's transports: %s",
			(unsigned long long)bytes, b->host ? "host" : "GPU", strerror(-ret));
		goto out_host;
	}
	if (rc->gpu.ctx && b->host)
		ret = gpu_memops_mirror(rc->gpu.mem, which, b->host, b->dev, bytes);
	if (!ret)
		return 0;
	dbuf_deregister(rc, b);
out_host:
	host_free(b);
out_dev:
	gpu_free(b->dev);
	b->dev = NULL;
	return ret;
}

void run_dbuf_free(struct run_comm *rc, struct run_dbuf *b, int which)
{
	if (!b->cb.ptr)
		return;
	if (rc->gpu.mem)
		gpu_memops_mirror(rc->gpu.mem, which, NULL, NULL, 0);
	dbuf_deregister(rc, b);
	host_free(b);
	gpu_free(b->dev);
	b->dev = NULL;
	b->cb.ptr = NULL;
}
