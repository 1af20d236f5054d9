/* CUDA memory, copies, streams and events: thin wrappers that convert errors once. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "gpu/gpu.h"
#include "gpu/cuda_priv.h"
#include "util/log.h"
#include "util/timeutil.h"

static const enum cudaMemcpyKind copy_kinds[] = {
	[GPU_COPY_H2D] = cudaMemcpyHostToDevice,
	[GPU_COPY_D2H] = cudaMemcpyDeviceToHost,
	[GPU_COPY_D2D] = cudaMemcpyDeviceToDevice,
	[GPU_COPY_DEFAULT] = cudaMemcpyDefault,
};

static const char *const copy_names[] = {
	[GPU_COPY_H2D] = "H2D",
	[GPU_COPY_D2H] = "D2H",
	[GPU_COPY_D2D] = "D2D",
	[GPU_COPY_DEFAULT] = "default",
};

/* Device memory, or pinned host memory mapped for every device (portable). */
static void *mem_alloc(size_t bytes, bool host)
{
	void *p = NULL;
	cudaError_t e;

	if (gpu_probe())
		return NULL;
	e = host ? cudaHostAlloc(&p, bytes, cudaHostAllocPortable) : cudaMalloc(&p, bytes);
	if (e != cudaSuccess) {
		gpu_err(e, host ? "cudaHostAlloc" : "cudaMalloc", "bytes=%zu", bytes);
		return NULL;
	}
	return p;
}

/*
 * The probe, then a CUDA call whose one argument is a pointer (a free, an unregister, an
 * IPC close): 0, the probe's -ENODEV, or the call's -errno with its log line.
 */
static int ptr_call(cudaError_t (*call)(void *), const char *name, void *p)
{
	cudaError_t e;
	int rc = gpu_probe();

	if (rc)
		return rc;
	e = call(p);
	if (e != cudaSuccess)
		return gpu_err(e, name, "ptr=%p", p);
	return 0;
}

static void mem_free(void *p, bool host)
{
	if (p)
		(void)ptr_call(host ? cudaFreeHost : cudaFree, host ? "cudaFreeHost" : "cudaFree", p);
}

void *gpu_alloc(size_t bytes)
{
	return mem_alloc(bytes, false);
}

void gpu_free(void *p)
{
	mem_free(p, false);
}

void *gpu_host_alloc(size_t bytes)
{
	return mem_alloc(bytes, true);
}

void gpu_host_free(void *p)
{
	mem_free(p, true);
}

int gpu_host_register(void *p, size_t bytes)
{
	cudaError_t e;
	int rc = gpu_probe();

	if (rc)
		return rc;
	e = cudaHostRegister(p, bytes, cudaHostRegisterPortable);
	if (e != cudaSuccess)
		return gpu_err(e, "cudaHostRegister", "ptr=%p bytes=%zu", p, bytes);
	return 0;
}

int gpu_host_unregister(void *p)
{
	return ptr_call(cudaHostUnregister, "cudaHostUnregister", p);
}

bool gpu_is_device_ptr(const void *p)
{
	struct cudaPointerAttributes a;

	if (gpu_probe() || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
		cudaGetLastError(); /* a host pointer is an answer, not a sticky error */
		return false;
	}
	return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

/* A copy on stream s (async), or one that returns when done. */
static int mem_copy(void *dst, const void *src, size_t bytes, enum gpu_copy kind,
		    struct gpu_stream *s, bool async)
{
	cudaError_t e;
	int rc = gpu_probe();

	if (rc)
		return rc;
	if ((unsigned int)kind > GPU_COPY_DEFAULT)
		return -EINVAL;
	e = async ? cudaMemcpyAsync(dst, src, bytes, copy_kinds[kind], gpu_cu_stream(s))
		  : cudaMemcpy(dst, src, bytes, copy_kinds[kind]);
	if (e != cudaSuccess)
		return gpu_err(e, async ? "cudaMemcpyAsync" : "cudaMemcpy",
			       "%s dst=%p src=%p bytes=%zu", copy_names[kind], dst, src, bytes);
	return 0;
}

int gpu_memcpy_async(void *dst, const void *src, size_t bytes, enum gpu_copy kind,
		     struct gpu_stream *s)
{
	return mem_copy(dst, src, bytes, kind, s, true);
}

int gpu_memcpy_batch_async(void *const *dst, const void *const *src, const size_t *bytes,
			   size_t n, struct gpu_stream *s)
{
	cudaError_t e = cudaErrorNotSupported;
	int rc = gpu_probe();

	if (rc)
		return rc;
	if (!n)
		return 0;
#if CUDART_VERSION >= 12080
	{
		struct cudaMemcpyAttributes attr = { 0 };
		size_t idx = 0;

		/* the sources are read in stream order, like cudaMemcpyAsync's */
		attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
		e = cudaMemcpyBatchAsync(dst, src, bytes, n, &attr, &idx, 1, gpu_cu_stream(s));
		if (e == cudaSuccess)
			return 0;
		if (e != cudaErrorNotSupported && e != cudaErrorInvalidValue)
			return gpu_err(e, "cudaMemcpyBatchAsync", "%zu copies dst=%p src=%p", n,
				       dst[0], src[0]);
		(void)cudaGetLastError(); /* refused as a batch: copy one by one */
	}
#endif
	(void)e;
	for (size_t i = 0; i < n; i++) {
		rc = gpu_memcpy_async(dst[i], src[i], bytes[i], GPU_COPY_DEFAULT, s);
		if (rc)
			return rc;
	}
	return 0;
}

int gpu_memcpy(void *dst, const void *src, size_t bytes, enum gpu_copy kind)
{
	return mem_copy(dst, src, bytes, kind, NULL, false);
}

int gpu_memset_async(void *p, int byte, size_t bytes, struct gpu_stream *s)
{
	cudaError_t e;
	int rc = gpu_probe();

	if (rc)
		return rc;
	e = cudaMemsetAsync(p, byte, bytes, gpu_cu_stream(s));
	if (e != cudaSuccess)
		return gpu_err(e, "cudaMemsetAsync", "ptr=%p bytes=%zu", p, bytes);
	return 0;
}

_Static_assert(sizeof(cudaIpcMemHandle_t) == GPU_IPC_HANDLE_BYTES, "IPC handle size");

int gpu_ipc_export(void *base, struct gpu_ipc_handle *h)
{
	cudaIpcMemHandle_t mh;
	cudaError_t e;
	int rc = gpu_probe();

	if (rc)
		return rc;
	e = cudaIpcGetMemHandle(&mh, base);
	if (e != cudaSuccess)
		return gpu_err(e, "cudaIpcGetMemHandle", "ptr=%p", base);
	memcpy(h->bytes, &mh, sizeof(mh));
	return 0;
}

int gpu_ipc_open(const struct gpu_ipc_handle *h, void **ptr)
{
	cudaIpcMemHandle_t mh;
	cudaError_t e;
	int rc = gpu_probe();

	if (rc)
		return rc;
	memcpy(&mh, h->bytes, sizeof(mh));
	e = cudaIpcOpenMemHandle(ptr, mh, cudaIpcMemLazyEnablePeerAccess);
	if (e != cudaSuccess)
		return gpu_err(e, "cudaIpcOpenMemHandle", "handle of a peer's buffer");
	return 0;
}

int gpu_ipc_close(void *ptr)
{
	return ptr_call(cudaIpcCloseMemHandle, "cudaIpcCloseMemHandle", ptr);
}

struct gpu_stream *gpu_stream_create(bool high_priority)
{
	cudaStream_t st;
	cudaError_t e;
	int lo, hi;

	if (gpu_probe())
		return NULL;
	e = cudaDeviceGetStreamPriorityRange(&lo, &hi);
	if (e != cudaSuccess) {
		gpu_err(e, "cudaDeviceGetStreamPriorityRange", "high=%d", high_priority);
		return NULL;
	}
	e = cudaStreamCreateWithPriority(&st, cudaStreamNonBlocking, high_priority ? hi : lo);
	if (e != cudaSuccess) {
		gpu_err(e, "cudaStreamCreateWithPriority", "high=%d", high_priority);
		return NULL;
	}
	return (struct gpu_stream *)st;
}

/* A call on a stream or an event: 0, or -errno with a log line naming call and handle. */
static int handle_rc(cudaError_t e, const char *call, const char *what, void *obj)
{
	if (e == cudaSuccess)
		return 0;
	return gpu_err(e, call, "%s=%p", what, obj);
}

/* A destroy's error is logged and dropped: the caller has nothing left to undo. */
void gpu_stream_destroy(struct gpu_stream *s)
{
	if (s && !gpu_probe())
		(void)handle_rc(cudaStreamDestroy(gpu_cu_stream(s)), "cudaStreamDestroy", "stream",
				s);
}

/* A stream's or an event's query: 0 done, -EBUSY not yet (no log), else -errno logged. */
static inline int query_rc(cudaError_t e, const char *call, const char *what, void *obj)
{
	if (e == cudaErrorNotReady)
		return -EBUSY;
	return handle_rc(e, call, what, obj);
}

int gpu_stream_query(struct gpu_stream *s)
{
	int rc = gpu_probe();

	if (rc)
		return rc;
	return query_rc(cudaStreamQuery(gpu_cu_stream(s)), "cudaStreamQuery", "stream", s);
}

/* Poll until done: spin briefly for short waits, then back off with 20 us sleeps. */
static int wait_poll(int (*query)(void *), void *obj, int timeout_ms, const char *what)
{
	uint64_t start = time_now_ns();
	uint64_t limit = (uint64_t)timeout_ms * 1000000ull;
	struct timespec nap = { 0, 20000 };
	int rc;

	for (;;) {
		rc = query(obj);
		if (rc != -EBUSY)
			return rc;
		uint64_t el = time_now_ns() - start;

		if (el > limit) {
			log_err(LOG_GPU, "%s %p: not done after %d ms", what, obj, timeout_ms);
			return -ETIMEDOUT;
		}
		if (el > 200000)
			nanosleep(&nap, NULL);
	}
}

static int stream_query_cb(void *obj)
{
	return gpu_stream_query(obj);
}

static int event_query_cb(void *obj)
{
	return gpu_event_query(obj);
}

int gpu_stream_sync(struct gpu_stream *s, int timeout_ms)
{
	return wait_poll(stream_query_cb, s, timeout_ms, "gpu_stream_sync stream");
}

int gpu_stream_wait_event(struct gpu_stream *s, struct gpu_event *ev)
{
	cudaError_t e;
	int rc = gpu_probe();

	if (rc)
		return rc;
	e = cudaStreamWaitEvent(gpu_cu_stream(s), (cudaEvent_t)ev, 0);
	if (e != cudaSuccess)
		return gpu_err(e, "cudaStreamWaitEvent", "stream=%p event=%p", (void *)s,
			       (void *)ev);
	return 0;
}

struct gpu_event *gpu_event_create(bool timing)
{
	cudaEvent_t ev;
	cudaError_t e;

	if (gpu_probe())
		return NULL;
	e = cudaEventCreateWithFlags(&ev, timing ? cudaEventDefault : cudaEventDisableTiming);
	if (e != cudaSuccess) {
		gpu_err(e, "cudaEventCreateWithFlags", "timing=%d", timing);
		return NULL;
	}
	return (struct gpu_event *)ev;
}

void gpu_event_destroy(struct gpu_event *ev)
{
	if (ev && !gpu_probe())
		(void)handle_rc(cudaEventDestroy((cudaEvent_t)ev), "cudaEventDestroy", "event", ev);
}

int gpu_event_record(struct gpu_event *ev, struct gpu_stream *s)
{
	cudaError_t e;
	int rc = gpu_probe();

	if (rc)
		return rc;
	e = cudaEventRecord((cudaEvent_t)ev, gpu_cu_stream(s));
	if (e != cudaSuccess)
		return gpu_err(e, "cudaEventRecord", "event=%p stream=%p", (void *)ev, (void *)s);
	return 0;
}

int gpu_event_query(struct gpu_event *ev)
{
	int rc = gpu_probe();

	if (rc)
		return rc;
	return query_rc(cudaEventQuery((cudaEvent_t)ev), "cudaEventQuery", "event", ev);
}

int gpu_event_sync(struct gpu_event *ev, int timeout_ms)
{
	return wait_poll(event_query_cb, ev, timeout_ms, "gpu_event_sync event");
}

int gpu_event_elapsed_ms(struct gpu_event *start, struct gpu_event *end, double *ms)
{
	cudaError_t e;
	float f;
	int rc = gpu_probe();

	if (rc)
		return rc;
	e = cudaEventElapsedTime(&f, (cudaEvent_t)start, (cudaEvent_t)end);
	if (e != cudaSuccess)
		return gpu_err(e, "cudaEventElapsedTime", "start=%p end=%p", (void *)start,
			       (void *)end);
	*ms = f;
	return 0;
}
