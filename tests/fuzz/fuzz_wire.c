/*
 * libFuzzer harness for the bootstrap wire decoder (src/launch/bootstrap_wire.c): what a
 * stranger can send to rank 0's port. The first input byte picks the path:
 *   0: the rest is a byte stream read as frames (header decode, length bound, payload
 *      consumed, HELLO decoded and its proof computed, ABORT checked) from a buffer;
 *   1: the same stream written into a socketpair and read back frame by frame with the
 *      deadline-bounded reader, as rank 0 reads a connection;
 *   2: the rest is a rendezvous address for bs_split_addr().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "launch/bootstrap_wire.h"
#include "util/timeutil.h"

/* What a decoded frame must satisfy whatever the input was. */
static void check_frame(const struct bs_hdr *h, const uint8_t *payload, size_t len)
{
	if (h->magic != BS_MAGIC || h->version != BS_VERSION || h->len != len ||
	    h->len > BS_MAX_PAYLOAD)
		abort();
	if (h->type == BS_HELLO) {
		uint8_t nonce[BS_NONCE_LEN], zero[BS_NONCE_LEN] = { 0 }, mac[BS_MAC_LEN];
		uint32_t rank, nranks;

		if (len != BS_HELLO_LEN)
			abort();
		bs_hello_unpack(payload, &rank, &nranks, nonce);
		/* what rank 0 computes next from a stranger's HELLO */
		bs_auth_mac("fuzz-token", 10, BS_ROLE_RANK, rank, nranks, nonce, zero, mac);
	}
	if (h->type == BS_ABORT && len < 4)
		abort();
	if (h->type == BS_PONG) {
		struct act_snap s[ACT_THREADS];
		uint32_t age;
		int n;

		/* what rank 0 decodes from a rank's answer: states within their tables */
		if (!bs_pong_unpack(payload, len, &age, s, &n))
			for (int i = 0; i < n; i++)
				if (s[i].what >= ACT_COUNT || s[i].peer < -1 || !*act_name(s[i].what))
					abort();
	}
	if (!bs_op_name(h->op))
		abort();
}

static void decode_buffer(const uint8_t *p, size_t n)
{
	while (n >= BS_HDR_LEN) {
		struct bs_hdr h;
		const char *why = NULL;

		if (bs_hdr_unpack(p, &h, &why)) {
			if (!why || !*why)
				abort();
			return;
		}
		p += BS_HDR_LEN;
		n -= BS_HDR_LEN;
		if (h.len > n)
			return; /* truncated payload: the reader would wait, then time out */
		check_frame(&h, p, h.len);
		p += h.len;
		n -= h.len;
	}
}

static void decode_socket(const uint8_t *p, size_t n)
{
	int sv[2];
	uint8_t hdr[BS_HDR_LEN], *payload;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv))
		abort();
	/* inputs are capped well below the socket buffer, so this never blocks */
	if (n && write(sv[0], p, n) != (ssize_t)n)
		abort();
	close(sv[0]);
	for (;;) {
		struct bs_hdr h;
		const char *why = NULL;
		uint64_t deadline = time_now_ns() + 50 * 1000000ull;

		if (bs_read_full(sv[1], hdr, sizeof(hdr), deadline))
			break;
		if (bs_hdr_unpack(hdr, &h, &why))
			break;
		/* a header may announce 64 MiB; what can arrive is at most what was written */
		if (h.len > n)
			break;
		payload = malloc(h.len ? h.len : 1);
		if (!payload)
			abort();
		if (bs_read_full(sv[1], payload, h.len, deadline)) {
			free(payload);
			break;
		}
		check_frame(&h, payload, h.len);
		free(payload);
	}
	close(sv[1]);
}

static void decode_addr(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1), host[256], port[16];

	if (!s)
		abort();
	memcpy(s, p, n);
	s[n] = '\0';
	if (bs_split_addr(s, host, sizeof(host), port, sizeof(port)) == 0) {
		if (!host[0] || !port[0] || strlen(host) >= sizeof(host))
			abort();
		for (const char *c = port; *c; c++)
			if (*c < '0' || *c > '9')
				abort();
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size || size > 65536)
		return 0;
	switch (data[0] % 3) {
	case 0:
		decode_buffer(data + 1, size - 1);
		break;
	case 1:
		decode_socket(data + 1, size - 1);
		break;
	default:
		decode_addr(data + 1, size - 1);
		break;
	}
	return 0;
}
