/*
 * cudaipc transport internals shared by cudaipc.c (ops, setup, posts) and
 * cudaipc_progress.c (copies, completions).
 *
 * Protocol of one directed pair S -> R, control through the segment R created (setup
 * and the CTS queue are shm_pair.h's; no payload ever goes through the segment: the
 * bytes move GPU to GPU):
 *   1. R registers its buffer once (mr_reg): cudaIpcGetMemHandle of the allocation.
 *   2. R posts a receive: it appends CTS {tag, len} to the segment's CTS queue (seq =
 *      its position in that queue) and where[seq] = {handle, offset in allocation}.
 *   3. S pops CTS entries and matches them to its posted sends by tag (FIFO per tag).
 *   4. S opens the handle (once per peer allocation, cached), queues cudaMemcpyAsync
 *      device to device into the mapping on its stream for R, records an event.
 *   5. When the event has completed, S appends FIN {seq, status} to the FIN queue and
 *      completes the send; R pops FIN and completes the receive of that seq.
 *      A length mismatch skips 4: FIN carries -EMSGSIZE and both sides complete so.
 * R keeps at most CIPC_CAP receives announced and not finished (its CTS floor is the
 * FIN tail), so neither queue can overflow. Single producer / single consumer on every
 * index, C11 acquire/release.
 */
#ifndef GS_TRANSPORT_CUDAIPC_PRIV_H
#define GS_TRANSPORT_CUDAIPC_PRIV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpu/gpu.h"
#include "transport/shm/shm_pair.h"
#include "transport/transport.h"

#define CIPC_SEG_MAGIC 0x6763697063736732ull /* "gcipcsg2" */
#define CIPC_CAP       SHM_PAIR_CTS_CAP	     /* FIN entries per directed pair */
#define CIPC_NEVENTS   256		     /* copies in flight, all peers */
#define CIPC_MAPS      64		     /* opened peer allocations cached per peer */

/*
 * The device operations the transport needs: the GPU layer's in a real run, a host
 * emulation in the unit test (so the protocol is tested where there is no GPU).
 */
struct cipc_dev {
	bool (*available)(void);
	/* Allocation holding p: its base and size. */
	int (*mem_range)(const void *p, void **base, size_t *bytes);
	int (*ipc_export)(void *base, struct gpu_ipc_handle *h);
	int (*ipc_open)(const struct gpu_ipc_handle *h, void **ptr);
	int (*ipc_close)(void *ptr);
	struct gpu_stream *(*stream_create)(void);
	void (*stream_destroy)(struct gpu_stream *s);
	int (*copy)(void *dst, const void *src, size_t bytes, struct gpu_stream *s);
	struct gpu_event *(*event_create)(void);
	void (*event_destroy)(struct gpu_event *e);
	int (*event_record)(struct gpu_event *e, struct gpu_stream *s);
	int (*event_query)(struct gpu_event *e); /* 0 done, -EBUSY pending, else -errno */
};

extern const struct cipc_dev cipc_gpu_dev;

struct cipc_fin {
	uint64_t seq;
	int64_t status; /* 0 or -EMSGSIZE */
};

/* One directed pair's segment: the common header (with the CTS queue), where each CTS'
 * bytes go (parallel to the CTS queue), then FIN. */
struct cipc_seg_hdr {
	struct shm_pair_hdr pair;
	struct shm_pair_where where[SHM_PAIR_CTS_CAP];
	_Alignas(64) _Atomic uint64_t fin_head; /* written by S */
	_Alignas(64) _Atomic uint64_t fin_tail; /* written by R */
	_Alignas(64) struct cipc_fin fin[CIPC_CAP];
};

static inline struct cipc_seg_hdr *cipc_hdr(const struct shm_pair_seg *s)
{
	return (struct cipc_seg_hdr *)s->hdr;
}

struct tp_mr {
	char *addr;
	size_t len;
	uint64_t alloc_off; /* addr - allocation base */
	struct gpu_ipc_handle h;
};

struct cipc_map {
	bool used;
	int busy; /* copies in flight into it */
	uint64_t stamp;
	struct gpu_ipc_handle h;
	char *ptr;
};

/* The transport's own per-peer state; the common part is core.links[peer]. */
struct cipc_peer {
	struct gpu_stream *stream;  /* my copies into this peer's memory */
	struct shm_pair_q inflight; /* copies issued, in stream order */
	struct cipc_map maps[CIPC_MAPS];
};

/* A send's copy in flight, beside its request (pair_req_index). */
struct cipc_copy {
	struct gpu_event *ev; /* its completion */
	struct cipc_map *map; /* the mapping it copies into */
};

struct cipc_priv {
	struct shm_pair_core c; /* first: progress gets the core and casts back */
	const struct cipc_dev *dev;
	struct cipc_peer *peers;
	struct cipc_copy *copy; /* SHM_PAIR_NREQS */
	struct gpu_event *events[CIPC_NEVENTS];
	int nfree_events;
	uint64_t stamp;
	uint64_t copies;
};

/*
 * Open with explicit device operations (the unit test's emulation); cudaipc_ops' open
 * is this with cipc_gpu_dev.
 */
int cudaipc_open_with(struct transport *t, const struct transport_env *env,
		      const struct cipc_dev *dev);

/* cudaipc_progress.c: shm_pair_proto.progress. */
int cipc_progress(struct shm_pair_core *c);

#endif
