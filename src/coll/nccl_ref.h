/*
 * transport = nccl: the reference AllReduce, handed whole to NVIDIA's libnccl.so.2,
 * loaded at run time (never linked), so the same binary runs where NCCL is absent and
 * says so in one line when asked for it.
 *
 * Contract: call after the GPU is selected (gpu_open) on the calling thread; every rank
 * of the job calls nccl_ref_open collectively, then the same sequence of allreduces.
 * NCCL's own limits apply: one rank per GPU (two ranks on one GPU fail at open with
 * NCCL's "invalid usage"). NVLink multicast (NVLS) is always switched off
 * (NCCL_NVLS_ENABLE=0 is set in the environment before the communicator is made).
 * Errors: -ENOENT when the library cannot be loaded, -ENOTSUP for a missing symbol or an
 * unsupported dtype/op, -EIO for an NCCL failure; each with one log line.
 */
#ifndef GS_COLL_NCCL_REF_H
#define GS_COLL_NCCL_REF_H

#include <stddef.h>
#include <stdint.h>

#include "util/dtype.h"

struct nccl_ref;

/* Broadcast len bytes from rank 0 to every rank (the bootstrap's bcast): 0 or -errno. */
typedef int (*nccl_ref_bcast_fn)(void *ctx, void *buf, size_t len);

/*
 * Load libnccl.so.2, make rank 0's unique id, broadcast it through bcast, and create the
 * communicator (ncclCommInitRank; it blocks until every rank joined, bounded by NCCL's
 * own bootstrap timeout). Every rank calls bcast exactly once, also when its load failed,
 * so the others never wait for it. local_rank is for the log only: the device is the
 * current one.
 */
int nccl_ref_open(int rank, int nranks, int local_rank, nccl_ref_bcast_fn bcast, void *ctx,
		  struct nccl_ref **out);

/*
 * In-place ncclAllReduce of count elements at devbuf, queued on stream (a cudaStream_t,
 * i.e. a struct gpu_stream *; NULL = legacy default stream). REDOP_AVG is ncclAvg. Returns
 * once queued: the caller waits on the stream (gpu_stream_sync) for the result.
 */
int nccl_ref_allreduce(struct nccl_ref *n, void *devbuf, uint64_t count, enum dtype dt,
		       enum redop op, void *stream);

/* "2.27.3": the loaded library's version (nccl_ref_open must have succeeded). */
const char *nccl_ref_version(const struct nccl_ref *n);

/* Destroy the communicator (the library stays loaded for the process); NULL is fine. */
void nccl_ref_close(struct nccl_ref *n);

#endif
