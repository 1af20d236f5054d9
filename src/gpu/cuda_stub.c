/*
 * The GPU layer of a build without CUDA: the same API, every call logs once that
 * GPUs are unavailable and returns -ENOTSUP (or NULL / false).
 */
#include <errno.h>
#include <pthread.h>

#include "gpu/gpu.h"
#include "util/common.h"
#include "util/log.h"

static pthread_once_t stub_once = PTHREAD_ONCE_INIT;

static void stub_log(void)
{
	log_warn(LOG_GPU, "built without CUDA: GPUs unavailable (configure found no nvcc)");
}

static int stub(void)
{
	pthread_once(&stub_once, stub_log);
	return -ENOTSUP;
}

bool gpu_available(void)
{
	stub();
	return false;
}

int gpu_device_count(int *count)
{
	*count = 0;
	return stub();
}

int gpu_set_device(int dev GS_UNUSED)
{
	return stub();
}

int gpu_get_props(int dev GS_UNUSED, struct gpu_props *p GS_UNUSED)
{
	return stub();
}

int gpu_open(const struct gpu_opts *o GS_UNUSED, int local_rank GS_UNUSED,
	     struct gpu_ctx **out GS_UNUSED)
{
	return stub();
}

void gpu_close(struct gpu_ctx *ctx GS_UNUSED)
{
}

void *gpu_alloc(size_t bytes GS_UNUSED)
{
	stub();
	return NULL;
}

void gpu_free(void *p GS_UNUSED)
{
}

void *gpu_host_alloc(size_t bytes GS_UNUSED)
{
	stub();
	return NULL;
}

void gpu_host_free(void *p GS_UNUSED)
{
}

int gpu_host_register(void *p GS_UNUSED, size_t bytes GS_UNUSED)
{
	return stub();
}

int gpu_host_unregister(void *p GS_UNUSED)
{
	return stub();
}

bool gpu_is_device_ptr(const void *p GS_UNUSED)
{
	return false;
}

int gpu_memcpy_async(void *dst GS_UNUSED, const void *src GS_UNUSED, size_t bytes GS_UNUSED,
		     enum gpu_copy kind GS_UNUSED, struct gpu_stream *s GS_UNUSED)
{
	return stub();
}

int gpu_memcpy_batch_async(void *const *dst GS_UNUSED, const void *const *src GS_UNUSED,
			   const size_t *bytes GS_UNUSED, size_t n GS_UNUSED,
			   struct gpu_stream *s GS_UNUSED)
{
	return stub();
}

int gpu_memcpy(void *dst GS_UNUSED, const void *src GS_UNUSED, size_t bytes GS_UNUSED,
	       enum gpu_copy kind GS_UNUSED)
{
	return stub();
}

int gpu_memset_async(void *p GS_UNUSED, int byte GS_UNUSED, size_t bytes GS_UNUSED,
		     struct gpu_stream *s GS_UNUSED)
{
	return stub();
}

int gpu_ipc_export(void *base GS_UNUSED, struct gpu_ipc_handle *h GS_UNUSED)
{
	return stub();
}

int gpu_ipc_open(const struct gpu_ipc_handle *h GS_UNUSED, void **ptr GS_UNUSED)
{
	return stub();
}

int gpu_ipc_close(void *ptr GS_UNUSED)
{
	return stub();
}

struct gpu_stream *gpu_stream_create(bool high_priority GS_UNUSED)
{
	stub();
	return NULL;
}

void gpu_stream_destroy(struct gpu_stream *s GS_UNUSED)
{
}

int gpu_stream_query(struct gpu_stream *s GS_UNUSED)
{
	return stub();
}

int gpu_stream_sync(struct gpu_stream *s GS_UNUSED, int timeout_ms GS_UNUSED)
{
	return stub();
}

int gpu_stream_wait_event(struct gpu_stream *s GS_UNUSED, struct gpu_event *e GS_UNUSED)
{
	return stub();
}

struct gpu_event *gpu_event_create(bool timing GS_UNUSED)
{
	stub();
	return NULL;
}

void gpu_event_destroy(struct gpu_event *e GS_UNUSED)
{
}

int gpu_event_record(struct gpu_event *e GS_UNUSED, struct gpu_stream *s GS_UNUSED)
{
	return stub();
}

int gpu_event_query(struct gpu_event *e GS_UNUSED)
{
	return stub();
}

int gpu_event_sync(struct gpu_event *e GS_UNUSED, int timeout_ms GS_UNUSED)
{
	return stub();
}

int gpu_event_elapsed_ms(struct gpu_event *start GS_UNUSED, struct gpu_event *end GS_UNUSED,
			 double *ms GS_UNUSED)
{
	return stub();
}

int gpu_dmabuf_export(const void *ptr GS_UNUSED, size_t bytes GS_UNUSED, struct gpu_dmabuf *out)
{
	out->fd = -1;
	return stub();
}

void gpu_dmabuf_close(struct gpu_dmabuf *d GS_UNUSED)
{
}

int gpu_reduce(void *dst GS_UNUSED, const void *a GS_UNUSED, const void *b GS_UNUSED,
	       size_t count GS_UNUSED, enum dtype t GS_UNUSED, double scale GS_UNUSED,
	       struct gpu_stream *s GS_UNUSED)
{
	return stub();
}

int gpu_scale(void *buf GS_UNUSED, size_t count GS_UNUSED, enum dtype t GS_UNUSED,
	      double scale GS_UNUSED, struct gpu_stream *s GS_UNUSED)
{
	return stub();
}

int gpu_div(void *buf GS_UNUSED, size_t count GS_UNUSED, enum dtype t GS_UNUSED,
	    uint32_t divisor GS_UNUSED, struct gpu_stream *s GS_UNUSED)
{
	return stub();
}

int gpu_fill(void *buf GS_UNUSED, size_t count GS_UNUSED, uint64_t base GS_UNUSED,
	     enum dtype t GS_UNUSED, uint64_t seed GS_UNUSED, int rank GS_UNUSED,
	     int nranks GS_UNUSED, struct gpu_stream *s GS_UNUSED)
{
	return stub();
}

int gpu_verify(const void *buf GS_UNUSED, size_t count GS_UNUSED, uint64_t base GS_UNUSED,
	       enum dtype t GS_UNUSED, enum redop op GS_UNUSED, uint64_t seed GS_UNUSED,
	       int nranks GS_UNUSED, struct gpu_stream *s GS_UNUSED, int timeout_ms GS_UNUSED,
	       uint64_t *mismatches GS_UNUSED, uint64_t *first_bad GS_UNUSED)
{
	return stub();
}

int gpu_gemm(void *c GS_UNUSED, const void *a GS_UNUSED, const void *b GS_UNUSED, int m GS_UNUSED,
	     int n GS_UNUSED, int k GS_UNUSED, struct gpu_stream *s GS_UNUSED)
{
	return stub();
}

int gpu_gemm_with(enum gpu_gemm_kind kind GS_UNUSED, void *c GS_UNUSED, const void *a GS_UNUSED,
		  const void *b GS_UNUSED, int m GS_UNUSED, int n GS_UNUSED, int k GS_UNUSED,
		  struct gpu_stream *s GS_UNUSED)
{
	return stub();
}

int gpu_spin(uint64_t ns GS_UNUSED, int sm_count GS_UNUSED, struct gpu_stream *s GS_UNUSED)
{
	return stub();
}

int gpu_calibrate(struct gpu_stream *s GS_UNUSED, int timeout_ms GS_UNUSED,
		  double *tflops GS_UNUSED)
{
	return stub();
}

int gpu_mem_range(const void *p GS_UNUSED, void **base GS_UNUSED, size_t *bytes GS_UNUSED)
{
	return stub();
}

int gpu_calibrate_memory(struct gpu_stream *s GS_UNUSED, int timeout_ms GS_UNUSED,
			 struct gpu_mem_rates *out GS_UNUSED)
{
	return stub();
}
