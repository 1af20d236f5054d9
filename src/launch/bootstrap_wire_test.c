/*
 * Bootstrap framing: header round trip, every bound enforced, the PONG's records, address
 * splitting; the bounded lookup's answers as -errno.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "launch/bootstrap_wire.h"
#include "util/timeutil.h"

static void test_wire_header(void **state)
{
	struct bs_hdr h = {.magic = BS_MAGIC,
			   .version = BS_VERSION,
			   .type = BS_UP,
			   .op = BS_OP_BCAST,
			   .seq = 77,
			   .len = 1000},
		      g;
	uint8_t buf[BS_HDR_LEN];
	const char *why = NULL;
	char host[64], port[8];

	(void)state;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), 0);
	assert_int_equal(g.seq, 77);
	assert_int_equal(g.len, 1000);
	assert_int_equal(g.op, BS_OP_BCAST);
	h.len = BS_MAX_PAYLOAD + 1;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), -EPROTO);
	assert_string_equal(why, "length out of bounds");
	h.len = 3;
	h.type = BS_HELLO;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), -EPROTO);
	/* PING: empty; PONG: the abort's age and one record per thread; the type after
	 * them unknown */
	h.type = BS_PING;
	h.len = 0;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), 0);
	h.len = 1;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), -EPROTO);
	h.type = BS_PONG;
	for (uint32_t len = 0; len <= BS_PONG_MAX + 1; len++) {
		h.len = len;
		bs_hdr_pack(&h, buf);
		assert_int_equal(bs_hdr_unpack(buf, &g, &why),
				 len >= BS_PONG_MIN && len <= BS_PONG_MAX ? 0 : -EPROTO);
	}
	h.type = BS_TYPE_LAST + 1;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), -EPROTO);
	assert_string_equal(why, "unknown message type");
	h.type = 99;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), -EPROTO);
	assert_string_equal(why, "unknown message type");
	h.type = BS_UP;
	h.version = BS_VERSION + 1;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), -EPROTO);
	/* version 1 sent the token itself in HELLO: such a rank is refused */
	h.version = 1;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), -EPROTO);
	assert_string_equal(why, "unsupported protocol version");
	assert_int_equal(bs_split_addr("[::1]:80", host, sizeof(host), port, sizeof(port)), 0);
	assert_string_equal(host, "::1");
	assert_string_equal(port, "80");
	assert_int_equal(bs_split_addr("10.0.0.1:29500", host, sizeof(host), port, sizeof(port)),
			 0);
	assert_string_equal(host, "10.0.0.1");
	assert_int_equal(bs_split_addr("h:x", host, sizeof(host), port, sizeof(port)), -EINVAL);
	assert_int_equal(bs_split_addr(":1", host, sizeof(host), port, sizeof(port)), -EINVAL);
	assert_int_equal(bs_split_addr("h:", host, sizeof(host), port, sizeof(port)), -EINVAL);
}

/* A PONG round trip, and every field out of its table refused. */
static void test_pong(void **state)
{
	struct act_snap in[ACT_THREADS] = {
		{ .thread = ACT_THREAD_MAIN, .what = ACT_CASE, .peer = -1, .age_ms = 31000 },
		{ .thread = ACT_THREAD_COMM, .what = ACT_RECV, .peer = 2, .seq = 1287,
		  .age_ms = 4200 },
	};
	struct act_snap out[ACT_THREADS];
	uint8_t frame[BS_PONG_MAX];
	uint32_t age;
	size_t len;
	int n;

	(void)state;
	len = bs_pong_pack(1500, in, ACT_THREADS, frame);
	assert_int_equal(len, BS_PONG_MAX);
	assert_int_equal(bs_pong_unpack(frame, len, &age, out, &n), 0);
	assert_int_equal(n, ACT_THREADS);
	assert_int_equal(age, 1500);
	for (int i = 0; i < ACT_THREADS; i++) {
		assert_int_equal(out[i].thread, i);
		assert_int_equal(out[i].what, in[i].what);
		assert_int_equal(out[i].peer, in[i].peer);
		assert_int_equal(out[i].seq, in[i].seq);
		assert_int_equal(out[i].age_ms, in[i].age_ms);
	}
	/* one thread: the main thread's record only; not heard of the abort */
	len = bs_pong_pack(ACT_NO_ABORT, in, 1, frame);
	assert_int_equal(len, BS_PONG_MIN);
	assert_int_equal(bs_pong_unpack(frame, len, &age, out, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(age, ACT_NO_ABORT);
	/* a length between records, a state past the table, a peer below -1, padding */
	assert_int_equal(bs_pong_unpack(frame, BS_PONG_MIN + 1, &age, out, &n), -EPROTO);
	assert_int_equal(bs_pong_unpack(frame, BS_PONG_MIN - 1, &age, out, &n), -EPROTO);
	frame[4 + 12] = ACT_COUNT;
	assert_int_equal(bs_pong_unpack(frame, BS_PONG_MIN, &age, out, &n), -EPROTO);
	bs_pong_pack(0, in, 1, frame);
	frame[4 + 4] = frame[4 + 5] = frame[4 + 6] = 0xff;
	frame[4 + 7] = 0xfe; /* -2 */
	assert_int_equal(bs_pong_unpack(frame, BS_PONG_MIN, &age, out, &n), -EPROTO);
	bs_pong_pack(0, in, 1, frame);
	frame[4 + 15] = 1;
	assert_int_equal(bs_pong_unpack(frame, BS_PONG_MIN, &age, out, &n), -EPROTO);
	assert_int_equal(n, 0);
}

/* The proofs bind token, role, rank, world size and both nonces. */
/* ABORT: the failed rank (negative too) and the reason back; a long reason cut at
 * BS_TEXT_MAX; bytes a log should not hold made '?' on the receiving side */
static void test_abort_frame(void **state)
{
	uint8_t frame[4 + BS_TEXT_MAX];
	char text[BS_TEXT_MAX + 1], longer[BS_TEXT_MAX + 50];
	int32_t failed;
	size_t len;

	(void)state;
	len = bs_abort_pack(3, "rank 3: waits on recv from peer 2", frame);
	assert_int_equal(len, 4 + strlen("rank 3: waits on recv from peer 2"));
	assert_int_equal(frame[3], 3);
	bs_abort_unpack(frame, len, &failed, text);
	assert_int_equal(failed, 3);
	assert_string_equal(text, "rank 3: waits on recv from peer 2");

	len = bs_abort_pack(-1, "bell\a and\nnewline \xc3\xa9", frame);
	bs_abort_unpack(frame, len, &failed, text);
	assert_int_equal(failed, -1);
	assert_string_equal(text, "bell? and?newline ??");

	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	len = bs_abort_pack(1, longer, frame);
	assert_int_equal(len, 4 + BS_TEXT_MAX);
	bs_abort_unpack(frame, len, &failed, text);
	assert_int_equal(strlen(text), BS_TEXT_MAX);
}

static void test_auth_mac(void **state)
{
	uint8_t nr[BS_NONCE_LEN], n0[BS_NONCE_LEN], m[BS_MAC_LEN], o[BS_MAC_LEN];
	uint8_t hello[BS_HELLO_LEN];
	uint32_t rank, nranks;
	uint8_t back[BS_NONCE_LEN];

	(void)state;
	memset(nr, 1, sizeof(nr));
	memset(n0, 2, sizeof(n0));
	bs_auth_mac("tok", 3, BS_ROLE_RANK, 1, 4, nr, n0, m);
	bs_auth_mac("tok", 3, BS_ROLE_RANK, 1, 4, nr, n0, o);
	assert_memory_equal(m, o, sizeof(m));
	bs_auth_mac("tok", 3, BS_ROLE_ROOT, 1, 4, nr, n0, o);
	assert_memory_not_equal(m, o, sizeof(m));
	bs_auth_mac("tok", 3, BS_ROLE_RANK, 2, 4, nr, n0, o);
	assert_memory_not_equal(m, o, sizeof(m));
	bs_auth_mac("tok", 3, BS_ROLE_RANK, 1, 5, nr, n0, o);
	assert_memory_not_equal(m, o, sizeof(m));
	bs_auth_mac("tok", 3, BS_ROLE_RANK, 1, 4, n0, nr, o);
	assert_memory_not_equal(m, o, sizeof(m));
	bs_auth_mac("tok2", 4, BS_ROLE_RANK, 1, 4, nr, n0, o);
	assert_memory_not_equal(m, o, sizeof(m));
	bs_hello_pack(3, 8, nr, hello);
	bs_hello_unpack(hello, &rank, &nranks, back);
	assert_int_equal(rank, 3);
	assert_int_equal(nranks, 8);
	assert_memory_equal(back, nr, sizeof(nr));
}

/*
 * bs_resolve without a name server: a numeric address comes back, a name where only
 * numbers are allowed is getaddrinfo's EAI_NONAME, -ENOENT in its words (a name that
 * does not exist: the caller stops at once), a bad service -EINVAL.
 */
static void test_resolve_answers(void **state)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
	uint64_t deadline = time_now_ns() + 5000000000ull;
	volatile sig_atomic_t stop = 0;
	struct addrinfo *ai = NULL;
	const char *why = NULL;

	(void)state;
	assert_int_equal(bs_resolve("127.0.0.1", "29500", &hints, &ai, deadline, &stop, &why), 0);
	assert_non_null(ai);
	assert_int_equal(ai->ai_family, AF_INET);
	freeaddrinfo(ai);
	assert_int_equal(bs_resolve("node17", "29500", &hints, &ai, deadline, &stop, &why),
			 -ENOENT);
	assert_string_equal(why, gai_strerror(EAI_NONAME));
	hints.ai_socktype = -1;
	assert_int_equal(bs_resolve("127.0.0.1", "29500", &hints, &ai, deadline, NULL, &why),
			 -EINVAL);
	assert_string_equal(why, gai_strerror(EAI_SOCKTYPE));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth_mac),
		cmocka_unit_test(test_wire_header),
		cmocka_unit_test(test_resolve_answers),
		cmocka_unit_test(test_pong),
		cmocka_unit_test(test_abort_frame),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
