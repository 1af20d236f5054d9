/* Private to the executor (comm.c, exec.c, p2p.c): the communicator's state and helpers. */
#ifndef GS_COLL_COMM_H
#define GS_COLL_COMM_H

#include "coll/exec.h"

#define COMM_SCHED_CACHE	64
#define COMM_POLL_BATCH		32
/* a CPU per rank: an empty poll round yields once every this many */
#define COMM_SPINS_BEFORE_YIELD 1024
/*
 * a CPU per rank: once a wait is this long, every round that reads the clock yields,
 * timed: a yield that took longer than COMM_YIELD_BUSY_NS ran someone else on our CPU
 * (a peer the scheduler put beside us, another job), and the wait is contended until a
 * yield comes back at once (comm_idle). A yield that finds nobody takes 0.7 us on the
 * 2-core VM.
 */
#define COMM_YIELD_PROBE_NS 20000ull
#define COMM_YIELD_BUSY_NS 5000ull
/*
 * contended: yield every round as on a crowded host, and sleep in the transport after
 * this long. A spinning rank then keeps from the CPU the task its data waits on, and a
 * sleeper is woken first when the data comes (tests/bench/tcp_wake.c under a load
 * average of 7: round trip avg 47-66 us with this, 70-94 us sleeping at 200 us as on a
 * crowded host, 153-180 us spinning 30 us first without the probe).
 */
#define COMM_CONTENDED_WAIT_AFTER_NS 30000ull
/* crowded host: empty rounds spun before every further one yields (comm_idle_action) */
#define COMM_CROWDED_SPINS 2
/* crowded host: how long a wait yields before a transport that can sleep is asked to */
#define COMM_CROWDED_WAIT_AFTER_NS 200000ull
/* a CPU per rank: the clock is read on one empty round in this many (comm_idle) */
#define COMM_CLOCK_EVERY 16
#define COMM_WAIT_MS 1
/*
 * After this long without progress the executor naps COMM_NAP_NS between polls. A nap
 * lasts far longer than asked (nanosleep of 20 us takes ~100 us on this VM: timer slack
 * plus the hypervisor), and a rank that naps keeps its peer waiting: at 200 us two ranks
 * on two CPUs fell into napping in turn, every AllReduce paying a nap (2 ranks shm 16 KiB:
 * p50 3.6 us, or 62-490 us per AllReduce in one run of three). At 20x a nap's real length
 * no nap can make the peer's wait long enough for it to nap in turn.
 */
#define COMM_NAP_AFTER_NS 2000000ull
/*
 * A CPU per rank: a transport that can sleep until news is asked to after this long
 * without any. Not sooner, for the nap's reason: a wake-up on the VM costs 40-100 us
 * (loopback tcp ping-pong, 4 KiB: RTT p50 13 us spinning, 31-99 us sleeping), so a rank
 * woken late made its peer wait past a short threshold, sleep and be woken late in
 * turn (at 30 us: 2 ranks tcp 4 KiB fell into 100-170 us per AllReduce in half the runs).
 * Ranks that share a CPU are caught by the timed yields (COMM_YIELD_PROBE_NS) instead.
 */
#define COMM_WAIT_AFTER_NS COMM_NAP_AFTER_NS
#define COMM_NAP_NS 20000

/* Message tag: seq(26) | piece(24) | step(12) | ord(2); wraps are harmless (see comm.c). */
static inline uint64_t comm_tag(uint32_t seq, uint64_t piece, uint32_t step, uint32_t ord)
{
	return ((uint64_t)(seq & 0x3ffffff) << 38) | ((piece & 0xffffff) << 14) |
	       ((uint64_t)(step & 0xfff) << 2) | (ord & 3);
}

struct comm_cached {
	bool valid;
	int algo;
	uint64_t count;
	uint64_t used; /* LRU stamp */
	struct sched s;
};

/* A piece's life: piece_start hook, the schedule's steps, piece_done hook. */
enum comm_phase {
	PHASE_START = 0,
	PHASE_STEPS,
	PHASE_DONE,
};

/* One piece in flight. */
struct comm_slot {
	bool active;
	bool mem_wait;	/* waiting on memops query before the next phase */
	uint8_t phase;	/* enum comm_phase */
	uint8_t posted; /* bit i: recv i posted, bit 4+i: send i posted */
	uint8_t done;	/* same bits: completed */
	uint8_t fused;	/* bit i: recv i is reduced by the transport (post_recv_reduce) */
	bool gated_in;	/* staggered schedule: admitted into the current step */
	uint32_t step;
	uint64_t piece;
	uint64_t base; /* element offset of the piece within the call's range */
	const struct sched *s;
	uint64_t scratch_off;		   /* bytes: this slot's scratch region */
	uint64_t rscratch[SCHED_MAX_XFER]; /* bytes: receive i's place in the slot's region */
	/* receive i, then send i (posted bit) -> the transfer's entry in coll_comm.xlog */
	uint32_t xlog[2 * SCHED_MAX_XFER];
};

/* Per peer, the union of the intervals in which a send to it (a receive from it) was
 * outstanding: what coll_peer_busy reports. */
struct comm_peer_wait {
	uint64_t busy_ns[2];  /* [0] receives, [1] sends */
	uint64_t since_ns[2]; /* when the open count last left 0 */
	uint64_t bytes[2];
	uint32_t open[2];     /* transfers in flight */
};

/* Every transfer, posted and completed (coll_xfers); allocated and touched when the
 * comm is made, so that logging one is two stores. */
struct comm_xfer_log {
	struct coll_xfer *x; /* COLL_XFER_LOG entries */
	uint32_t n;
	uint64_t lost_ns; /* post time of the first transfer that did not fit; 0: none */
};

struct coll_comm {
	int rank;
	int nranks;
	struct transport **peer_tp;
	uint8_t *peer_ti; /* peer -> index into tps */
	struct transport *tps[COLL_MAX_TRANSPORTS];
	int ntp;
	volatile const int *abort_flag;
	uint64_t timeout_ns;
	const struct coll_memops *mem;
	int max_channels;
	int local_size; /* node layout for hierarchical (coll_comm_cfg) */
	bool crowded;   /* coll_comm_cfg */
	bool peer_here; /* comm_idle: a peer last ran on our CPU (idle as if crowded) */
	bool contended; /* comm_idle: the last yield ran someone else on our CPU */
	uint64_t chunk_size; /* coll_comm_cfg: 0 = auto */
	struct activity *act; /* coll_comm_cfg: NULL = none */
	uint64_t idle_now;    /* comm_idle: its last clock read */
	struct comm_slot *slots;
	struct comm_peer_wait *wait; /* nranks entries */
	struct comm_xfer_log xlog;
	uint32_t seq; /* collective sequence number, same on every rank */
	uint64_t stamp;
	struct comm_cached cache[COMM_SCHED_CACHE];
};

/* A transfer with peer was posted (comm_wait_open: returns its entry in the transfer log,
 * COMM_XLOG_NONE when the log is full) or completed (comm_wait_close, given that entry). */
#define COMM_XLOG_NONE UINT32_MAX
uint32_t comm_wait_open(struct coll_comm *c, int peer, bool is_send, uint64_t bytes, uint64_t tag,
			uint64_t now);
void comm_wait_close(struct coll_comm *c, int peer, bool is_send, uint32_t xlog, uint64_t now);

/* The schedule for (algo, count), built on first use. NULL on error (logged). */
const struct sched *comm_sched(struct coll_comm *c, int algo, uint64_t count, int *err);

/*
 * Called when a poll round made no progress: 0 to keep spinning, -ECONNABORTED when the
 * abort flag is up, -ETIMEDOUT when nothing completed since *idle_since for the comm's
 * timeout. The caller logs what it waited on. *spins counts the empty rounds of this
 * wait, *idle_since (0: not read yet) is when it began; the caller zeroes both on
 * progress. The clock is read only on some rounds (comm_idle_reads_clock), and kept in
 * c->idle_now.
 */
int comm_idle(struct coll_comm *c, uint64_t *idle_since, uint32_t *spins);
/* Does empty round number spins (1 = the first) read the clock? Pure (comm_test.c). */
bool comm_idle_reads_clock(bool crowded, uint32_t spins);

/*
 * What the transport to peer still holds or waits on, as "; roce peer 1: ..." for the end
 * of a stalled collective's error line (transport_ops.pending), or "" when it says nothing.
 */
const char *comm_pending(const struct coll_comm *c, int peer, char *buf, size_t len);

/*
 * comm_idle's policy, pure (comm_test.c): after `spins` empty poll rounds and idle_ns
 * without progress, spin on, yield the CPU, nap COMM_NAP_NS, or sleep in the transport
 * until news (can_wait: one transport with ops->wait, host memops). crowded: more ranks
 * than CPUs on this host, or a peer last ran on our CPU; contended: our last yield ran
 * another task.
 */
enum comm_idle_act {
	COMM_IDLE_SPIN,
	COMM_IDLE_YIELD,
	COMM_IDLE_NAP,
	COMM_IDLE_WAIT,
};
enum comm_idle_act comm_idle_action(bool crowded, bool contended, bool can_wait,
				    uint32_t spins, uint64_t idle_ns);

#endif
