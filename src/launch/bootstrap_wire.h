/*
 * Bootstrap framing: the 16-byte frame header, the handshake records and their MACs,
 * per-type length bounds, and deadline-bounded I/O on non-blocking sockets. Private to
 * launch/.
 *
 * Frame (all integers big-endian):
 *   0  u32 magic "GSBS"   4  u16 version   6  u8 type   7  u8 op
 *   8  u32 seq            12 u32 len       16 payload (len bytes, len <= bs_type_max_len)
 * HELLO payload: u32 rank, u32 nranks, nonce_r[32]. CHALLENGE: nonce_0[32].
 * PROOF: HMAC-SHA256(token, "rank" transcript). WELCOME: HMAC-SHA256(token, "root"
 * transcript), where transcript = "gradsync-bootstrap-2" rank nranks nonce_r nonce_0
 * (bs_auth_mac). REFUSE payload: BS_REFUSED, always. ABORT payload: i32 failed rank,
 * text. BYE: empty. UP (rank -> 0), DOWN (0 -> rank): data. PING (0 -> rank): empty,
 * seq = rank 0's probe number. PONG (rank -> 0), seq = the PING's: what the rank's
 * application threads do (util/activity.h), sent by its reader thread at once, whatever
 * those threads do (bootstrap_probe): u32 abort_age_ms (how long the rank has known the
 * job aborted; 0xffffffff: it has not), then one BS_PONG_REC record per thread (1 to
 * ACT_THREADS, thread 0 first, in order):
 *   0  u32 age_ms   how long the thread has been in its state (capped)
 *   4  i32 peer     the peer it waits on, -1: none
 *   8  u32 seq      the collective's sequence number (0: none)
 *   12 u8  what     enum act_what
 *   13 u8  zero[3]
 * Version 3 added the PONG's payload (version 2's was empty).
 */
#ifndef GS_LAUNCH_BOOTSTRAP_WIRE_H
#define GS_LAUNCH_BOOTSTRAP_WIRE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/activity.h"

#define BS_MAGIC     0x47534253u /* "GSBS" */
#define BS_VERSION   3
#define BS_HDR_LEN   16
#define BS_NONCE_LEN 32
#define BS_MAC_LEN   32 /* SHA256_LEN */
#define BS_HELLO_LEN (8 + BS_NONCE_LEN)
/* The one answer to every refused connection: a stranger learns nothing from it. */
#define BS_REFUSED "refused"
/* Longest job token (bytes of the HMAC key). */
#define BS_TOKEN_MAX 256
/* Largest collective payload: an allgather of 4096 ranks x 16 KiB. */
#define BS_MAX_PAYLOAD (64u << 20)
#define BS_TEXT_MAX    1023
#define BS_PONG_REC    16
#define BS_PONG_MIN    (4 + BS_PONG_REC)
#define BS_PONG_MAX    (4 + BS_PONG_REC * ACT_THREADS)

enum bs_type {
	BS_HELLO = 1,
	BS_WELCOME,
	BS_REFUSE,
	BS_UP,
	BS_DOWN,
	BS_ABORT,
	BS_BYE,
	BS_CHALLENGE,
	BS_PROOF,
	BS_PING,
	BS_PONG,
	BS_TYPE_LAST = BS_PONG,
};

enum bs_op {
	BS_OP_NONE = 0,
	BS_OP_ALLGATHER,
	BS_OP_BARRIER,
	BS_OP_GATHERV,
	BS_OP_BCAST,
};

struct bs_hdr {
	uint32_t magic;
	uint16_t version;
	uint8_t type;
	uint8_t op;
	uint32_t seq;
	uint32_t len;
};

void bs_hdr_pack(const struct bs_hdr *h, uint8_t out[BS_HDR_LEN]);
/* Decode and check magic, version, type and length bound: 0, or -EPROTO and *why. */
int bs_hdr_unpack(const uint8_t in[BS_HDR_LEN], struct bs_hdr *h, const char **why);
const char *bs_op_name(uint8_t op);

void bs_hello_pack(uint32_t rank, uint32_t nranks, const uint8_t nonce[BS_NONCE_LEN],
		   uint8_t out[BS_HELLO_LEN]);
void bs_hello_unpack(const uint8_t in[BS_HELLO_LEN], uint32_t *rank, uint32_t *nranks,
		     uint8_t nonce[BS_NONCE_LEN]);

/* ABORT: failed_rank and reason (cut at BS_TEXT_MAX) into out (4 + BS_TEXT_MAX bytes);
 * its length. */
size_t bs_abort_pack(int32_t failed_rank, const char *reason, uint8_t *out);
/* len bytes (within the type's bounds) into *failed_rank and text (BS_TEXT_MAX + 1
 * bytes), NUL-terminated, every byte outside printable ASCII made '?': the text goes into
 * the receiver's logs. */
void bs_abort_unpack(const uint8_t *in, size_t len, int32_t *failed_rank, char *text);

/* PONG: n (1..ACT_THREADS) records s[i] of thread i into out (BS_PONG_MAX bytes); its
 * length. */
size_t bs_pong_pack(uint32_t abort_age_ms, const struct act_snap *s, int n, uint8_t *out);
/* len bytes (within the type's bounds) into s[ACT_THREADS], *n of them: 0, or -EPROTO (a
 * length not a whole number of records, a state past its table, a peer below -1,
 * padding not zero). */
int bs_pong_unpack(const uint8_t *in, size_t len, uint32_t *abort_age_ms, struct act_snap *s,
		   int *n);

enum bs_role { BS_ROLE_RANK, BS_ROLE_ROOT };
/*
 * The handshake's proof of the token by `role`: HMAC-SHA256(token, role label,
 * "gradsync-bootstrap-2", rank, nranks, nonce_r, nonce_0). Each side's nonce makes a
 * replayed proof useless, the label keeps one side's proof from serving as the other's.
 */
void bs_auth_mac(const char *token, size_t token_len, enum bs_role role, uint32_t rank,
		 uint32_t nranks, const uint8_t nonce_r[BS_NONCE_LEN],
		 const uint8_t nonce_0[BS_NONCE_LEN], uint8_t out[BS_MAC_LEN]);

/* Deadline-bounded I/O on a non-blocking socket: 0, -ETIMEDOUT, -EPIPE (EOF), -errno. */
int bs_write_full(int fd, const void *buf, size_t len, uint64_t deadline_ns);
int bs_read_full(int fd, void *buf, size_t len, uint64_t deadline_ns);
/* One frame: header then payload. */
int bs_send_frame(int fd, uint8_t type, uint8_t op, uint32_t seq, const void *data, size_t len,
		  uint64_t deadline_ns);

/*
 * getaddrinfo that never waits past deadline_ns (time_now_ns's clock; a resolver whose
 * server is silent holds a plain getaddrinfo for timeout x attempts x servers of
 * resolv.conf) nor, once *stop turns non-zero (optional: a stop signal's flag), past
 * BOUNDED_STOP_POLL_NS: util/bounded.h. 0 with *res to freeaddrinfo; else *why in
 * words (static text) and -ENOENT for a name that does not exist (EAI_NONAME,
 * EAI_NODATA: final), -EAGAIN for a temporary failure (EAI_AGAIN: worth a retry),
 * -ETIMEDOUT at the deadline and -EINTR when stopped (the lookup left to end on its
 * own), -ENOMEM, -EIO (EAI_FAIL), -EINVAL (a request getaddrinfo refuses), -errno
 * (EAI_SYSTEM).
 */
struct addrinfo;
int bs_resolve(const char *host, const char *port, const struct addrinfo *hints,
	       struct addrinfo **res, uint64_t deadline_ns, volatile const sig_atomic_t *stop,
	       const char **why);

/* "host:port" or "[v6addr]:port" -> host, port; 0 or -EINVAL. */
int bs_split_addr(const char *addr, char *host, size_t hlen, char *port, size_t plen);
/* "10.0.0.2:41234" ("[fe80::1]:41234") for the far end of fd, or for an address. */
const char *bs_peer_name(int fd, char *buf, size_t len);
struct sockaddr;
const char *bs_sockaddr_name(const struct sockaddr *sa, char *buf, size_t len);
/* TCP_NODELAY and keepalive probes, so a vanished host is noticed within ~15 s. */
void bs_tune_socket(int fd);

#endif
