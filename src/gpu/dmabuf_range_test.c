/* The dma-buf range rule (NCCL's and perftest's): page-rounded ends, offset into the range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpu/gpu.h"
#include "util/common.h"

static void test_range(void **state)
{
	static const struct {
		uintptr_t addr;
		uint64_t bytes, page;
		uintptr_t base;
		uint64_t off, len;
	} rows[] = {
	    {0x7f0000200000, 4096, 4096, 0x7f0000200000, 0, 4096},	/* aligned, one page */
	    {0x7f0000200000, 1, 4096, 0x7f0000200000, 0, 4096},		/* rounds up */
	    {0x7f0000200010, 4096, 4096, 0x7f0000200000, 0x10, 8192},	/* straddles two pages */
	    {0x7f0000200ff0, 32, 4096, 0x7f0000200000, 0xff0, 8192},
	    {0x7f0000210000, 1 << 20, 65536, 0x7f0000210000, 0, 1 << 20}, /* 64 KiB pages */
	    {0x7f0000213000, 100, 65536, 0x7f0000210000, 0x3000, 65536},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct gpu_dmabuf d = {.fd = -1};

		gpu_dmabuf_range(rows[i].addr, rows[i].bytes, rows[i].page, &d);
		assert_int_equal((uintptr_t)d.base, rows[i].base);
		assert_int_equal(d.offset, rows[i].off);
		assert_int_equal(d.len, rows[i].len);
		/* the MR's iova is base: addr's bytes are at iova + offset, all inside len */
		assert_true(d.offset + rows[i].bytes <= d.len);
		assert_int_equal(d.len % rows[i].page, 0);
		assert_int_equal(d.fd, -1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
