/* Bootstrap framing: header round trip, every bound enforced, address splitting. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "launch/bootstrap_wire.h"

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
	h.type = 99;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), -EPROTO);
	assert_string_equal(why, "unknown message type");
	h.type = BS_UP;
	h.version = 2;
	bs_hdr_pack(&h, buf);
	assert_int_equal(bs_hdr_unpack(buf, &g, &why), -EPROTO);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wire_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
