/* PCI config space parsing on hand-built buffers: capability walks, ACS, Relaxed Ordering. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "topo/pcicfg.h"

/* A config space: PCIe cap at 0x40 (after a power-management cap at 0x50 -> chain), port
 * type, Device Control, and an ACS extended cap behind an AER one when acs >= 0. */
static void build(uint8_t *c, int type, unsigned devctl, int acs)
{
	memset(c, 0, PCICFG_EXT_LEN);
	c[0x06] = 0x10;		  /* status: capability list */
	c[0x34] = 0x50;		  /* first: PM at 0x50 */
	c[0x50] = 0x01, c[0x51] = 0x40; /* PM -> 0x40 */
	c[0x40] = 0x10, c[0x41] = 0x00; /* PCIe, last */
	c[0x42] = (uint8_t)(type << 4 | 2);
	c[0x48] = devctl & 0xff, c[0x49] = devctl >> 8;
	if (acs < 0)
		return;
	/* AER at 0x100 -> ACS at 0x148 */
	c[0x100] = 0x01, c[0x102] = 0x81, c[0x103] = 0x14; /* id 1, v1, next 0x148 */
	c[0x148] = 0x0d, c[0x14a] = 0x01;
	c[0x14c] = 0x5f;
	c[0x14e] = acs & 0xff, c[0x14f] = (uint8_t)(acs >> 8);
}

static void test_parse(void **state)
{
	static const struct {
		int type;
		unsigned devctl;
		int acs, want_ro, want_acs;
	} rows[] = {
	    {PCICFG_ENDPOINT, 0x2810, -1, 1, -ENOENT},
	    {PCICFG_ENDPOINT, 0x2800, -1, 0, -ENOENT},
	    {PCICFG_SWITCH_DOWN, 0, 0x001d, 0, 0x001d},
	    {PCICFG_SWITCH_DOWN, 0, 0x0000, 0, 0},
	    {PCICFG_ROOT_PORT, 0x10, 0x0011, 1, 0x0011},
	};
	static uint8_t c[PCICFG_EXT_LEN];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		build(c, rows[i].type, rows[i].devctl, rows[i].acs);
		assert_int_equal(pcicfg_find_cap(c, sizeof(c), 0x10), 0x40);
		assert_int_equal(pcicfg_port_type(c, sizeof(c)), rows[i].type);
		assert_int_equal(pcicfg_relaxed_ordering(c, sizeof(c)), rows[i].want_ro);
		assert_int_equal(pcicfg_acs_ctrl(c, sizeof(c)), rows[i].want_acs);
	}
}

/* What an unprivileged read returns (64 bytes) is "unknown", never "off". */
static void test_short_read(void **state)
{
	static uint8_t c[PCICFG_EXT_LEN];

	(void)state;
	build(c, PCICFG_SWITCH_DOWN, 0x10, 0x1d);
	assert_int_equal(pcicfg_relaxed_ordering(c, 64), -ENODATA);
	assert_int_equal(pcicfg_acs_ctrl(c, 64), -ENODATA);
	assert_int_equal(pcicfg_acs_ctrl(c, 256), -ENODATA);
	assert_int_equal(pcicfg_relaxed_ordering(c, 256), 1);
}

/* A looping or absent capability list ends; names of the set ACS bits. */
static void test_loops_and_names(void **state)
{
	static uint8_t c[PCICFG_EXT_LEN];
	char buf[96];

	(void)state;
	build(c, PCICFG_ENDPOINT, 0, -1);
	c[0x41] = 0x50; /* PCIe -> PM -> PCIe ... */
	assert_int_equal(pcicfg_find_cap(c, sizeof(c), 0x05), 0);
	c[0x06] = 0; /* no capability list at all */
	assert_int_equal(pcicfg_port_type(c, sizeof(c)), -ENOENT);
	assert_string_equal(pcicfg_acs_str(0x1d, buf, sizeof(buf)),
			    "SrcValid ReqRedir CmpltRedir UpstreamFwd");
	assert_string_equal(pcicfg_acs_str(0, buf, sizeof(buf)), "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_short_read),
	    cmocka_unit_test(test_loops_and_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
