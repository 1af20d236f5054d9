/*
 * GPU layer: device selection, memory, streams, dma-buf export and our kernels
 * (kernels/, CUDA C++), behind an interface that cuda_stub.c implements when configure
 * finds no CUDA.
 *
 * Availability contract: the binary links cudart statically and loads libcuda.so.1 at
 * run time. On a node without a driver (or built without CUDA) the first gpu_* call logs
 * ONE line ("no CUDA driver: GPUs unavailable", or "built without CUDA: ...") and every
 * gpu_* call returns -ENODEV (-ENOTSUP in a build without CUDA) or NULL; gpu_available()
 * is then false. Check gpu_available() before asking for a GPU to stay quiet.
 *
 * Errors: every cudaError_t is converted once, here, into -errno plus one log line
 * naming the CUDA call and the object ("cudaMalloc bytes=1048576: out of memory").
 *
 * Threads: all calls act on the calling thread's current device (gpu_set_device()).
 *
 * Fork: the first gpu_* call initialises CUDA (cuInit), which does not survive fork().
 * A launcher that forks local ranks must not call any gpu_* function, gpu_available()
 * included, in the parent before forking: each rank probes in its own process.
 */
#ifndef GS_GPU_GPU_H
#define GS_GPU_GPU_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#include "util/callbound.h"
#include "util/dtype.h"

enum gpu_tristate { GPU_AUTO = 0, GPU_ON, GPU_OFF };
enum gdr_level { GDR_LOC = 0, GDR_PIX, GDR_PXB, GDR_PHB, GDR_SYS };
enum gdr_mode { GDR_MODE_AUTO = 0, GDR_MODE_DMABUF, GDR_MODE_PEERMEM };

/* [gpu] section, resolved by config/. */
struct gpu_opts {
	char device[64];   /* "auto", "none", or a list "0,1,2,3" indexed by local rank */
	int gdr;           /* enum gpu_tristate */
	int gdr_level;     /* enum gdr_level */
	int gdr_read;      /* enum gpu_tristate */
	int gdr_mode;      /* enum gdr_mode */
};

#define GPU_DEVICE_NONE (-1)

/* Does [gpu] device ask for GPU buffers (anything but "none": auto or a list)? */
static inline bool gpu_opts_wanted(const struct gpu_opts *o)
{
	return strcmp(o->device, "none") != 0;
}

/* ---- Device selection (select.c: pure, built with or without CUDA) ---- */

/*
 * Resolve [gpu] device for one local rank among ndev visible devices:
 *  "auto"      -> local_rank % ndev (-ENODEV when ndev < 1);
 *  "none"      -> GPU_DEVICE_NONE;
 *  "2,3,0,1"   -> the entry at local_rank (-ERANGE when the list is shorter, or when
 *                 the entry is >= ndev and ndev >= 0; pass ndev < 0 to skip that check).
 * Returns the device index, GPU_DEVICE_NONE, or -EINVAL for a malformed spec (logged).
 */
int gpu_pick_device(const char *spec, int local_rank, int ndev);

/* ---- Devices ---- */

struct gpu_props {
	int index;
	char name[96];
	char pci_bus_id[16];     /* "0000:3b:00.0", lower case, as sysfs names it (topo/) */
	int sm_count;
	int cc_major, cc_minor;
	uint64_t mem_total;      /* bytes */
	uint64_t l2_bytes;
	bool dmabuf_supported;   /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED */
	bool gdr_supported;      /* CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED */
};

/* A driver is loaded and at least one device is visible. Logs once when not. */
bool gpu_available(void);
int gpu_device_count(int *count);
int gpu_set_device(int dev);
int gpu_get_props(int dev, struct gpu_props *p);

/* ---- The devices, asked within a bound (list.c: built with or without CUDA) ---- */

#define GPU_LIST_MAX 64
/* Where a wedged driver stops: the runtime's first call (cudaGetDeviceCount) initialises
 * the driver, cuInit, which waits on the kernel module. */
#define GPU_CALL_INIT "cuInit"

struct gpu_list {
	int count;                            /* devices CUDA shows; 0: none, or no driver
					       * (the GPU layer said why, once) */
	int rc[GPU_LIST_MAX];                 /* gpu_get_props' for each of the first
					       * GPU_LIST_MAX: 0 or -errno (logged) */
	struct gpu_props props[GPU_LIST_MAX];
};

/*
 * The devices and their properties, asked on a thread of their own within timeout_ns
 * (util/callbound.h): a driver wedged in the kernel fails this instead of hanging its
 * caller. 0 with *out malloc'd (the caller frees it). Else -ETIMEDOUT or -EINTR (a stop
 * signal), -ENOMEM; at names the call and what it was on ("cuInit", "CUDA driver";
 * "cudaGetDeviceProperties", "CUDA device 3"), why says it ("cuInit did not return within
 * 30s (driver wedged?)"). After that the stuck call holds the driver (and the GPU layer's
 * once-only probe): no gpu_* call may be made in this process.
 */
int gpu_list_within(struct gpu_list **out, uint64_t timeout_ns, struct callbound_at *at,
		    char *why, size_t whylen);
/*
 * The same listing as a group for a caller that runs it beside other groups within one
 * bound (callbound_run_all: the doctor's probes): g set up, its arg a struct gpu_list
 * (NULL without memory) that is the caller's to free once g->ret is 0.
 */
void gpu_list_group(struct callbound_group *g);

struct gpu_stream; /* a cudaStream_t */
struct gpu_event;  /* a cudaEvent_t */

/*
 * One rank's GPU: the selected device, its properties and two streams. comm runs the
 * collective's reduce kernels and copies at high priority; compute runs the synthetic
 * backward pass (gemm/spin). Owned by the caller of gpu_open(), freed by gpu_close().
 */
struct gpu_ctx {
	int dev;
	struct gpu_props props;
	struct gpu_stream *comm;
	struct gpu_stream *compute;
};

/*
 * Select the device for local_rank (gpu_pick_device), make it current, read its
 * properties and create the two streams. Returns int rather than a pointer because
 * callers must tell "no GPU here" (-ENODEV, -ENOTSUP; also for device = none) from a
 * failure. *out is set only on success.
 */
int gpu_open(const struct gpu_opts *o, int local_rank, struct gpu_ctx **out);
void gpu_close(struct gpu_ctx *ctx);

/* ---- Memory ---- */

/* Device memory (cudaMalloc); NULL on failure (logged). */
void *gpu_alloc(size_t bytes);
void gpu_free(void *p);
/* Pinned, portable host memory (cudaHostAlloc): pages are touched and locked here. */
void *gpu_host_alloc(size_t bytes);
void gpu_host_free(void *p);
/* Pin existing host memory for async copies; unregister before freeing it. */
int gpu_host_register(void *p, size_t bytes);
int gpu_host_unregister(void *p);
/* Is p device memory (cudaMalloc'd or managed)? false for host memory or without a GPU. */
bool gpu_is_device_ptr(const void *p);

enum gpu_copy {
	GPU_COPY_H2D = 0,
	GPU_COPY_D2H,
	GPU_COPY_D2D,
	GPU_COPY_DEFAULT, /* inferred from the pointers (unified addressing) */
};

/* Enqueue a copy on s (NULL = the legacy default stream); host memory should be pinned. */
int gpu_memcpy_async(void *dst, const void *src, size_t bytes, enum gpu_copy kind,
		     struct gpu_stream *s);
/*
 * Enqueue n copies (dst[i] <- src[i], bytes[i] each) on s as one submission: the copy
 * engines take the pieces at once (cudaMemcpyBatchAsync, CUDA 12.8+), where n
 * cudaMemcpyAsync calls each pay a submission; before 12.8, or where the driver refuses a
 * batch, n plain copies. The batch is in stream order as a whole, its copies in no order
 * among themselves (no two may overlap). Directions inferred from the pointers.
 */
int gpu_memcpy_batch_async(void *const *dst, const void *const *src, const size_t *bytes,
			   size_t n, struct gpu_stream *s);
/* Blocking copy (setup and tests only: it synchronises the device). */
int gpu_memcpy(void *dst, const void *src, size_t bytes, enum gpu_copy kind);
int gpu_memset_async(void *p, int byte, size_t bytes, struct gpu_stream *s);

/*
 * CUDA IPC between processes of one host (the cudaipc transport): export a handle of a
 * cudaMalloc'd buffer's base, ship its bytes through the bootstrap, open it in the peer.
 * The opened mapping stays valid until gpu_ipc_close(); the exporter must keep the buffer.
 */
#define GPU_IPC_HANDLE_BYTES 64

struct gpu_ipc_handle {
	unsigned char bytes[GPU_IPC_HANDLE_BYTES]; /* a cudaIpcMemHandle_t, opaque */
};

int gpu_ipc_export(void *base, struct gpu_ipc_handle *h);
/* Map a peer's buffer into this process (lazy peer access enabled); *ptr on success. */
int gpu_ipc_open(const struct gpu_ipc_handle *h, void **ptr);
int gpu_ipc_close(void *ptr);

/* ---- Streams and events (waits poll with a timeout: every wait is bounded) ---- */

struct gpu_stream *gpu_stream_create(bool high_priority);
void gpu_stream_destroy(struct gpu_stream *s);
/* 0 when all work on s is done, -EBUSY while some is pending. */
int gpu_stream_query(struct gpu_stream *s);
/* Wait for s to drain; -ETIMEDOUT after timeout_ms (logged). */
int gpu_stream_sync(struct gpu_stream *s, int timeout_ms);
int gpu_stream_wait_event(struct gpu_stream *s, struct gpu_event *e);

struct gpu_event *gpu_event_create(bool timing);
void gpu_event_destroy(struct gpu_event *e);
int gpu_event_record(struct gpu_event *e, struct gpu_stream *s);
/* 0 when the work before the record is done, -EBUSY before. */
int gpu_event_query(struct gpu_event *e);
int gpu_event_sync(struct gpu_event *e, int timeout_ms);
/* Milliseconds between two completed timing events. */
int gpu_event_elapsed_ms(struct gpu_event *start, struct gpu_event *end, double *ms);

/* ---- dma-buf export of device memory (GPUDirect RDMA without nvidia-peermem) ---- */

/*
 * The exported range covers [ptr, ptr + bytes) rounded out to host pages, as NCCL does:
 * base = ptr rounded down, len = the page-rounded length, offset = ptr - base.
 * Register it with ibv_reg_dmabuf_mr(pd, 0, len, (uintptr_t)base, fd, access): the MR's
 * iova equals the device virtual address, so ptr's data is at iova base + offset.
 * The caller owns fd and closes it with gpu_dmabuf_close() after deregistering the MR.
 */
struct gpu_dmabuf {
	int fd;
	uint64_t offset;
	uint64_t len;
	void *base;
};

/*
 * The allocation that holds a device pointer (cuMemGetAddressRange): CUDA IPC exports
 * whole allocations, so a transport sending into a buffer in the middle of one needs its
 * base. *base and *bytes of the cudaMalloc allocation containing p; -EINVAL (logged) when
 * p is not device memory, -ENODEV / -ENOTSUP without a driver / without CUDA.
 */
int gpu_mem_range(const void *p, void **base, size_t *bytes);

/*
 * The range above for [addr, addr + bytes) and a host page size (a power of two): what
 * NCCL (net.cc + reg.cc) and perftest's --use_cuda_dmabuf export. Pure; fd untouched.
 */
void gpu_dmabuf_range(uintptr_t addr, uint64_t bytes, uint64_t page, struct gpu_dmabuf *out);

/* -ENOTSUP (logged with the reason) when the device or driver cannot export dma-bufs. */
int gpu_dmabuf_export(const void *ptr, size_t bytes, struct gpu_dmabuf *out);
void gpu_dmabuf_close(struct gpu_dmabuf *d);

/* ---- Kernels (kernels/); all enqueue on s and return without waiting ---- */

/*
 * dst[i] = round_T((a[i] + b[i]) * scale), for count elements of type t. The add and the
 * multiply run in f32 (f64 for DT_F64) with IEEE round-to-nearest, and the result is
 * rounded once to T; scale == 1 skips the multiply, so a sum is exactly IEEE's and
 * bit-identical to coll/reduce.h's reduce_sum. In place (dst == a) is allowed; other
 * overlaps are not. Any alignment and count (16-byte vectors when the three pointers share
 * alignment).
 */
int gpu_reduce(void *dst, const void *a, const void *b, size_t count, enum dtype t, double scale,
	       struct gpu_stream *s);
/* buf[i] = round_T(buf[i] * scale). Not avg's rule: 1/n is inexact for n = 3 (gpu_div is). */
int gpu_scale(void *buf, size_t count, enum dtype t, double scale, struct gpu_stream *s);
/*
 * buf[i] = round_T(buf[i] / divisor): avg's final division, one IEEE division in f32 (f64)
 * as coll/reduce.h's reduce_div, bit for bit.
 */
int gpu_div(void *buf, size_t count, enum dtype t, uint32_t divisor, struct gpu_stream *s);

/*
 * The engine's verification pattern (util/pattern.h, as coll/verify.h's verify_fill):
 * buf[i] = rank's input at global index base + i of an AllReduce over nranks.
 */
int gpu_fill(void *buf, size_t count, uint64_t base, enum dtype t, uint64_t seed, int rank,
	     int nranks, struct gpu_stream *s);

/*
 * Compare an AllReduce result with the exact expectation bit for bit (as verify_check);
 * op is REDOP_SUM or REDOP_AVG. Waits for s (bounded by timeout_ms). Allocates and frees
 * a 16-byte result buffer (cudaFree synchronises the device): for verification passes,
 * not inside timed iterations. *mismatches = wrong elements, *first_bad = index (relative
 * to buf) of the first one, count when none (verify_check's convention).
 */
int gpu_verify(const void *buf, size_t count, uint64_t base, enum dtype t, enum redop op,
	       uint64_t seed, int nranks, struct gpu_stream *s, int timeout_ms,
	       uint64_t *mismatches, uint64_t *first_bad);

/*
 * C = A * B with bf16 A (m x k, row-major), B (k x n, row-major), fp32 accumulation and
 * bf16 C (m x n, row-major): our tensor-core GEMM (128x128 tiles, mma.sync, cp.async
 * pipeline; about 350-370 TFLOP/s on an H200 at 4096^3-8192^3, see gpu_bench).
 * n and k must be multiples of 8 and the pointers 16-byte aligned (-EINVAL otherwise):
 * callers size synthetic layers up to that. 2*m*n*k FLOP.
 */
int gpu_gemm(void *c, const void *a, const void *b, int m, int n, int k, struct gpu_stream *s);

enum gpu_gemm_kind {
	GPU_GEMM_DEFAULT = 0, /* what gpu_gemm() runs: GPU_GEMM_MMA_K64, the fastest measured */
	GPU_GEMM_MMA,         /* mma.sync m16n8k16 + ldmatrix, 4 warps of 64x64, BK 32 x 4 stages */
	GPU_GEMM_MMA_K64,     /* the same with BK 64 x 3 stages: half the barriers per FLOP */
	GPU_GEMM_WMMA,        /* WMMA 16x16x16, 8 warps of 64x32 (simple reference) */
	GPU_GEMM_KIND_COUNT,
};

/* gpu_gemm() with an explicit kernel: tests and benchmarks compare them. */
int gpu_gemm_with(enum gpu_gemm_kind kind, void *c, const void *a, const void *b, int m, int n,
		  int k, struct gpu_stream *s);

/*
 * Occupy every SM for ns nanoseconds (globaltimer): sm_count blocks of 1024 threads, half
 * an SM's threads each, so the comm stream's reduce kernels can still run beside it.
 */
int gpu_spin(uint64_t ns, int sm_count, struct gpu_stream *s);

/*
 * Run gpu_gemm at a few large sizes (4096^3, 8192^3) on s and return the best achieved
 * TFLOP/s: the workload's compute model uses it when gpu_tflops is 0. Allocates and
 * frees ~400 MiB; takes about a second. Waits bounded by timeout_ms.
 */
int gpu_calibrate(struct gpu_stream *s, int timeout_ms, double *tflops);

/*
 * What our memory-bound kernels reach on this GPU, for `gradsync gpu --calibrate --write`:
 * the streaming reduce (two reads and a write of 256 MiB f32 operands), the pace of
 * back-to-back tiny kernels (the floor), and the normalisation-shaped kernels of
 * kernels/norm.cu: a BatchNorm-like two-pass over a 32 x 256 x 56 x 56 f32 tensor (3x its
 * bytes move) and LayerNorm- and softmax-like rows (32768 rows of 1024 f32, 2x its bytes).
 * Rates are GB/s of the bytes each moves. Allocates and frees about 800 MiB.
 */
struct gpu_mem_rates {
	double stream_gbps;
	double floor_us;
	double bn_gbps;
	double layernorm_gbps;
	double softmax_gbps;
};

int gpu_calibrate_memory(struct gpu_stream *s, int timeout_ms, struct gpu_mem_rates *out);

/* ---- Calibration within a bound (calibrate.c: built with or without CUDA) ---- */

/* A calibration's first call: where the test hook stands in for a GPU on a node with none. */
#define GPU_CALL_SET_DEVICE "cudaSetDevice"

struct gpu_calibration {
	int rc;                   /* 0, or the GPU layer's -errno (logged) */
	double tflops;            /* gpu_calibrate's */
	struct gpu_mem_rates mem; /* gpu_calibrate_memory's, when asked for */
};

/*
 * gpu_calibrate on device dev, and with memory gpu_calibrate_memory, on a stream of its
 * own, as one bounded group within timeout_ns for all of it (util/callbound.h), each CUDA
 * call noted on "CUDA device DEV": a GPU or driver wedged mid-calibration fails this
 * instead of hanging its caller. 0 with *out filled (out->rc the calibration's outcome).
 * Else -ETIMEDOUT or -EINTR (a stop signal), -ENOMEM; at and why as gpu_list_within's
 * ("cudaEventSynchronize", "CUDA device 0": "cudaEventSynchronize did not return within
 * 30s (driver wedged?)"); no gpu_* call may be made in this process after that.
 */
int gpu_calibrate_within(int dev, bool memory, uint64_t timeout_ns, struct gpu_calibration *out,
			 struct callbound_at *at, char *why, size_t whylen);

#endif
