/*
 * shm transport internals: the layout of one directed ring segment (shared between
 * exactly two processes) and the calls that create, attach and unmap it.
 * The protocol spoken through it opens shm_progress.c.
 */
#ifndef GS_TRANSPORT_SHM_SEG_H
#define GS_TRANSPORT_SHM_SEG_H

#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#define SHM_SEG_MAGIC	  0x67736d72696e6731ull /* "gsmring1" */
#define SHM_CTS_CAP	  1024
#define SHM_DESC_MISMATCH 1u

struct shm_cts {
	uint64_t tag;
	uint64_t len;
};

struct shm_desc {
	uint64_t tag;
	uint64_t msg_len;
	uint64_t off;
	uint32_t len;
	uint32_t flags;
};

struct shm_seg_hdr {
	uint64_t magic;
	uint64_t job_id;
	int32_t sender;
	int32_t receiver;
	int32_t receiver_pid;
	_Atomic int32_t sender_pid; /* non-zero once the sender has mapped the segment */
	uint32_t nslots;
	uint32_t slot_size;
	uint64_t data_off;			/* bytes from the segment start to slot 0 */
	_Alignas(64) _Atomic uint64_t head;	/* slots published by the sender */
	_Alignas(64) _Atomic uint64_t tail;	/* slots released by the receiver */
	_Alignas(64) _Atomic uint64_t cts_head; /* CTS entries published by the receiver */
	_Alignas(64) _Atomic uint64_t cts_tail; /* CTS entries consumed by the sender */
	_Alignas(64) struct shm_cts cts[SHM_CTS_CAP];
	struct shm_desc desc[]; /* nslots entries */
};

struct shm_seg {
	struct shm_seg_hdr *hdr;
	char *data;
	size_t size;
	char name[64];
};

/* Receiver side: create, size, map and touch the segment for sender -> receiver. */
int shm_seg_create(struct shm_seg *s, uint64_t job_id, int sender, int receiver, uint32_t nslots,
		   uint32_t slot_size);
/* Sender side: map the receiver's segment (waits for it, bounded by deadline_ns),
 * announce our pid and unlink the name: from here on nothing leaks if we die. */
int shm_seg_attach(struct shm_seg *s, uint64_t job_id, int sender, int receiver,
		   uint64_t deadline_ns, volatile const int *abort_flag);
/* Unmap; also unlinks the name if it still exists (failed or partial setup). */
void shm_seg_destroy(struct shm_seg *s);

#endif
