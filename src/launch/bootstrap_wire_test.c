/*
 * Bootstrap framing: header round trip, every bound enforced, address splitting; the
 * bounded lookup's answers as -errno.
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
	/* PING and PONG: empty, the type after them unknown */
	h.type = BS_PONG;
	h.len = 0;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), 0);
	h.len = 1;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), -EPROTO);
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

/* The proofs bind token, role, rank, world size and both nonces. */
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
