/*
 * shm transport internals shared by shm.c (ops, setup) and shm_progress.c (moving bytes
 * through the slot ring or straight from the sender's buffer): the layout of a directed
 * pair's segment beyond the common part (shm_pair.h), the transport state and the
 * direct-or-slots policy. The protocol opens shm_progress.c.
 */
#ifndef GS_TRANSPORT_SHM_PRIV_H
#define GS_TRANSPORT_SHM_PRIV_H

#include <stdatomic.h>
#include <stdint.h>

#include "transport/shm/shm_pair.h"
#include "util/shmem.h"

#define SHM_SEG_MAGIC	  0x67736d72696e6735ull /* "gsmring5" */
#define SHM_DESC_MISMATCH 1u
#define SHM_DESC_DIRECT	  2u /* no slot data: the message lies in the sender's buffer */
/* Peer allocations a receiver keeps mapped per sender (data, scratch, a spare). */
#define SHM_MAPS 4

/*
 * Smallest message sent direct under shm_copy = auto, with a CPU per rank or not (more
 * ranks than CPUs: crowded). Measured on the 2-core VM, slots against direct interleaved
 * (tests/bench/RESULTS.md, "shm: direct against slots"): with 2 ranks slots were ahead up
 * to 128 KiB messages (0.62-0.73x) and direct from 512 KiB (1.18-3.5x) on the machine
 * loaded by other work; quiet ("shm: slots to 1 MiB, 2 ranks without linear"; rd, p50,
 * 3 runs each) the VM swings between a slow and a fast state for minutes at a time, and
 * slots led at 256 KiB in both (19 against 51-55 us slow, 12 against 15.5 fast) and at
 * 512 KiB slow (40 against 87-104; fast a tie, 27.7 against 28.2); direct from 1 MiB in
 * both (180 against 195 slow, 51 against 64 fast; 4 MiB 200 against 244). With 4 ranks,
 * where auto runs linear for small messages (one message each way per non-root rank),
 * slots led up to 128 KiB (4, 16, 64 KiB AllReduces 2.5x, 2.3x, 2.75x faster, 128 KiB
 * 1.4x, medians of 5-6), were within the noise from 256 KiB to 1 MiB and behind at 4 MiB
 * (0.78x): the same crossover ("Crowded shm: slots again for small messages"). A
 * direct send completes only once the receiver has read it, one more hand-over per
 * message: the linear root's result sends waited for each of its three receivers to be
 * scheduled before its AllReduce could end, where from slots it leaves once it copied.
 * Direct pays where the copy it saves is big.
 */
#define SHM_DIRECT_MIN ((uint32_t)TP_SHM_DIRECT_MIN_MIB << 20)

struct shm_desc {
	uint64_t tag;
	uint64_t msg_len;
	uint64_t off;
	uint32_t len;
	uint32_t flags;
	/* SHM_DESC_DIRECT: the sender's allocation (its descriptor number, unique id, size)
	 * and the message's offset in it; the receiver maps it through the sender's pidfd */
	int32_t src_fd;
	uint32_t slot; /* the data slot holding the bytes (len > 0) */
	uint64_t src_id;
	uint64_t src_size;
	uint64_t src_off;
};

/* One directed pair's segment: the common header, the slot ring, then the slots. */
struct shm_seg_hdr {
	struct shm_pair_hdr pair;
	uint32_t nslots;
	uint32_t slot_size;
	uint64_t data_off;	    /* bytes from the segment start to slot 0 */
	_Atomic uint32_t direct_ok; /* set by R: it can map S's buffers (S may send direct) */
	_Alignas(64) _Atomic uint64_t head;  /* slots published by the sender */
	_Alignas(64) _Atomic uint64_t tail;  /* slots released by the receiver */
	/* doorbells (shm_wait.c): a side that published bumps the other side's bell, and
	 * wakes it when it sleeps on the bell */
	_Alignas(64) _Atomic uint32_t bell_r; /* rung by S: slots published, CTS consumed */
	_Atomic uint32_t r_sleeps;	      /* R waits on bell_r */
	_Alignas(64) _Atomic uint32_t bell_s; /* rung by R: CTS posted, slots released */
	_Atomic uint32_t s_sleeps;	      /* S waits on bell_s */
	/* the CPU the sender last made progress on, -1 before (shm_cpu_publish): the receiver
	 * reads it (shm_peer_on_cpu); stored only when it changes, so the line stays shared
	 * while the sender stays put */
	_Alignas(64) _Atomic int32_t s_cpu;
	_Alignas(64) struct shm_desc desc[]; /* nslots entries */
};

/* A sender's allocation mapped read-only by this receiver. */
struct shm_map {
	uint64_t id; /* the sender's shmem id; 0 = unused */
	const char *ptr;
	size_t size;
	uint64_t stamp; /* last use, for eviction */
};

/* Per send request (parallel to the core's requests): where its bytes lie for direct. */
struct shm_src {
	bool shared;
	struct shmem_loc loc; /* of the message's first byte */
	uint64_t slot;	      /* direct, once published: its desc's ring index */
};

struct shm_priv {
	struct shm_pair_core c; /* first: progress gets the core and casts back */
	uint32_t nslots;
	uint32_t slot_size;
	int copy;		   /* enum tp_shm_copy */
	struct shm_src *src;	   /* SHM_PAIR_NREQS */
	struct shm_pair_q *direct; /* per peer: direct sends waiting for the receiver */
	struct shm_map *maps;	   /* per peer: SHM_MAPS of its allocations */
	uint32_t *slot_next;	   /* per peer: the data slot our next copy fills */
	uint64_t stamp;
	int cpu; /* the CPU last published in our segments' s_cpu; -2: none yet */
	bool stream; /* the current collective's direct copies stream (shm_use_stream) */
};

/* Bump a bell; wake its side when it sleeps on it (shm_wait.c). Only on a crowded host:
 * elsewhere nobody sleeps on a bell (shm_wait says -EOPNOTSUPP). */
void shm_bell_ring(const struct shm_pair_core *c, _Atomic uint32_t *bell, _Atomic uint32_t *sleeps);
/* transport_ops.wait: sleep until a peer rings one of our bells, or timeout_ms. */
int shm_wait(struct transport *t, int timeout_ms);
/* Publish the CPU we run on in every segment of ours, when it changed (shm_progress). */
void shm_cpu_publish(struct shm_priv *s);
/* transport_ops.peer_on_cpu: a peer's last published CPU is cpu. */
bool shm_peer_on_cpu(struct transport *t, int cpu);
/* transport_ops.coll_begin: the collective's size sets whether its copies stream. */
void shm_coll_begin(struct transport *t, uint64_t bytes);

/*
 * Send len bytes direct (the receiver reads them from our buffer) rather than through
 * slots? copy: enum tp_shm_copy; shared: our buffer is mappable; reachable: the receiver
 * said it can map it. Pure (shm_test.c).
 */
bool shm_use_direct(int copy, uint64_t len, bool shared, bool reachable);

/*
 * Smallest collective (bytes of each rank's buffer, transport_ops.coll_begin) whose
 * direct messages are copied (not reduced) with streaming stores (gs_copy_stream): the
 * ranks' buffers together outgrow the cache, so a copy's destination is not read from
 * it again, and a plain copy's read of each destination line (write allocate) is
 * traffic wasted. The message size cannot tell: the default 1 MiB chunk makes 1 MiB
 * messages of every AllReduce from 2 MiB. Measured on the 2-core VM, 2 ranks, streaming
 * against plain copies interleaved (tests/bench/RESULTS.md, "2-rank shm: streaming
 * stores for the all-gather's direct copies"): 64 MiB and 256 MiB faster in every run
 * (medians 1.18-1.7x), 16 MiB ahead in two runs of three, 4 MiB behind (0.82x: two
 * ranks' 4 MiB stay in the cache for the next reduce); 8 MiB unmeasured, so the
 * smallest size that gained. Only where every rank has a CPU: 4 ranks on the 2 CPUs
 * gained nothing at 16 and 64 MiB (0.95x, 1.00x, medians of 6).
 */
#define SHM_STREAM_MIN (16u << 20)

/* Copy direct messages of a collective over coll_bytes with streaming stores? crowded:
 * this host's ranks outnumber its CPUs. Pure (shm_test.c). */
bool shm_use_stream(uint64_t coll_bytes, bool crowded);

/*
 * The data slot a sender fills next, of nslots; *next is its cursor. empty: the ring holds
 * no message (head == tail), so it starts over at slot 0. Slots so go in turn and a held
 * one is never handed out (at most nslots - 1 are held, the last ones handed out), and a
 * flow of small messages keeps to slot 0: on the 2-core VM a page not written lately cost
 * 10-20 us at its next touch, and the 8 slots of 1 MiB in turn made the first 8 AllReduces
 * of each size 50-300 us (from 2-17). Pure (shm_test.c).
 */
uint32_t shm_slot_take(uint32_t *next, uint32_t nslots, bool empty);

static inline struct shm_seg_hdr *shm_hdr(const struct shm_pair_seg *s)
{
	return (struct shm_seg_hdr *)s->hdr;
}

/* shm_progress.c: shm_pair_proto.progress. */
int shm_progress(struct shm_pair_core *c);

#endif
