/*
 * The collective executor's memops (coll/exec.h) for gradients in GPU memory, the adapter
 * between the executor and gpu/ (which knows nothing of collectives): reductions
 * and avg's division run as our kernels on one stream per pipeline channel, completion is
 * an event per channel, and nothing blocks.
 *
 * Two ways for a buffer (chosen per buffer by the caller, who knows the path):
 *  - direct (GPUDirect RDMA): the executor's buffer and scratch are device memory that
 *    the NIC reads and writes; reduce/scale act on those pointers.
 *  - staged: the executor's buffer and scratch are pinned host mirrors of device buffers
 *    (gpu_memops_mirror). piece_start copies a piece device -> host before its first
 *    step; a reduce copies the received block host -> device, reduces on the GPU and
 *    copies the result back to the host mirror (the next step sends it from there);
 *    piece_done copies the piece host -> device. Copies and kernels of a channel are
 *    ordered on its stream; channels overlap each other and the wire. Pieces move in
 *    and out `batch` at a time as one copy each way (gpu_memops_batch), on a stream
 *    per direction; the last copies out are waited for at the collective's end.
 * Contract: an element is never reduced after a plain receive landed in it (true of every
 * AllReduce schedule: copies carry final values), so the device copy of a reduced block is
 * current when the next reduce of it is queued.
 * Built from gpu/'s API only: without a GPU (or CUDA) gpu_memops_create() returns NULL.
 */
#ifndef GS_COLL_GPU_MEMOPS_H
#define GS_COLL_GPU_MEMOPS_H

#include <stdint.h>

#include "coll/exec.h"

enum gpu_mirror { GPU_MIRROR_DATA = 0, GPU_MIRROR_SCRATCH, GPU_MIRROR_COUNT };

/* Staged pieces per submission by default (tests/gpu/memops_bench.c: 0.88x of a pinned copy
 * from 1 MiB pieces on the H200 at 8, 0.76x at 1; tests/gpu/RESULTS.md), and
 * the most gpu_memops_batch takes. */
#define GPU_MEMOPS_BATCH     8
#define GPU_MEMOPS_BATCH_MAX 64

struct gpu_memops;

/* Streams and events for `channels` channels on the current device; NULL (logged) without
 * a GPU or on failure. */
struct gpu_memops *gpu_memops_create(int channels);
void gpu_memops_destroy(struct gpu_memops *m);
/* The executor's view; valid until gpu_memops_destroy(). */
const struct coll_memops *gpu_memops_ops(struct gpu_memops *m);
/*
 * Stage buffer `which`: host (pinned, bytes long, the one registered with the transports)
 * mirrors dev. host = NULL drops the mirror (direct use). 0 or -EINVAL.
 */
int gpu_memops_mirror(struct gpu_memops *m, enum gpu_mirror which, void *host, void *dev,
		      uint64_t bytes);
/* Staged pieces moved per copy each way, 1..GPU_MEMOPS_BATCH_MAX (1: piece by piece on
 * the channel's stream, the pipeline before batching). 0 or -EINVAL. */
int gpu_memops_batch(struct gpu_memops *m, int pieces);
/* Bytes copied each way since creation (the staging traffic). */
void gpu_memops_traffic(const struct gpu_memops *m, uint64_t *d2h, uint64_t *h2d);

#endif
