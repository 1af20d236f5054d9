/*
 * shm transport internals shared by shm.c (ops, setup) and shm_progress.c (moving bytes
 * through the slot ring): the layout of a directed pair's segment beyond the common
 * part (shm_pair.h) and the transport state. The protocol opens shm_progress.c.
 */
#ifndef GS_TRANSPORT_SHM_PRIV_H
#define GS_TRANSPORT_SHM_PRIV_H

#include <stdatomic.h>
#include <stdint.h>

#include "transport/shm/shm_pair.h"

#define SHM_SEG_MAGIC	  0x67736d72696e6732ull /* "gsmring2" */
#define SHM_DESC_MISMATCH 1u

struct shm_desc {
	uint64_t tag;
	uint64_t msg_len;
	uint64_t off;
	uint32_t len;
	uint32_t flags;
};

/* One directed pair's segment: the common header, the slot ring, then the slots. */
struct shm_seg_hdr {
	struct shm_pair_hdr pair;
	uint32_t nslots;
	uint32_t slot_size;
	uint64_t data_off;		     /* bytes from the segment start to slot 0 */
	_Alignas(64) _Atomic uint64_t head;  /* slots published by the sender */
	_Alignas(64) _Atomic uint64_t tail;  /* slots released by the receiver */
	_Alignas(64) struct shm_desc desc[]; /* nslots entries */
};

struct shm_priv {
	struct shm_pair_core c; /* first: progress gets the core and casts back */
	uint32_t nslots;
	uint32_t slot_size;
};

static inline struct shm_seg_hdr *shm_hdr(const struct shm_pair_seg *s)
{
	return (struct shm_seg_hdr *)s->hdr;
}

/* shm_progress.c: shm_pair_proto.progress. */
int shm_progress(struct shm_pair_core *c);

#endif
