/* memfit.c: the host bytes a case's rank allocates, and whether a host's ranks fit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/keys.h"
#include "run/run.h"

static void case_of(struct exp_case *c)
{
	char err[256];

	memset(c, 0, sizeof(*c));
	assert_int_equal(cfg_defaults(&c->cfg, err, sizeof(err)), 0);
}

static void test_host_bytes(void **state)
{
	struct exp_case c;

	(void)state;
	/* a sweep: its pristine copy and its work buffer, each the largest size */
	case_of(&c);
	c.cfg.collective.nsizes = 3;
	c.cfg.collective.sizes[0] = 4096;
	c.cfg.collective.sizes[1] = 64ull << 20;
	c.cfg.collective.sizes[2] = 1ull << 20;
	assert_int_equal(run_case_host_bytes(&c), 2 * (64ull << 20));
	/* GPU buffers: nothing certain on the host */
	snprintf(c.cfg.gpu.device, sizeof(c.cfg.gpu.device), "auto");
	assert_int_equal(run_case_host_bytes(&c), 0);
	/* a workload: the gradients, numel x the gradient's type */
	case_of(&c);
	snprintf(c.cfg.workload.model, sizeof(c.cfg.workload.model), "resnet50");
	c.cfg.workload.grad_dtype = DT_F32;
	assert_int_equal(run_case_host_bytes(&c), 25557032ull * 4);
	c.cfg.workload.grad_dtype = DT_BF16;
	assert_int_equal(run_case_host_bytes(&c), 25557032ull * 2);
	/* a model that does not build: the case fails on its own, no estimate */
	snprintf(c.cfg.workload.model, sizeof(c.cfg.workload.model), "custom");
	snprintf(c.cfg.workload.layers, sizeof(c.cfg.workload.layers), "a:x");
	assert_int_equal(run_case_host_bytes(&c), 0);
}

static void test_fits(void **state)
{
	(void)state;
	assert_true(run_memfit(8ull << 30, 2, 16ull << 30));
	assert_false(run_memfit(8ull << 30, 2, (16ull << 30) - 1));
	assert_true(run_memfit(0, 1024, 0));
	/* 64 GiB x 1024 ranks does not wrap to a small number */
	assert_false(run_memfit(64ull << 30, 1024, 1ull << 40));
	assert_false(run_memfit(UINT64_MAX, 3, UINT64_MAX));
}

static void test_need_text(void **state)
{
	char buf[128];

	(void)state;
	assert_string_equal(run_memfit_need(buf, sizeof(buf), 16ull << 30, 2),
			    "need 32GiB for their buffers (16GiB each)");
	assert_string_equal(run_memfit_need(buf, sizeof(buf), 32121044992ull, 1),
			    "needs 29.9GiB for its buffers (29.9GiB each)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_bytes),
		cmocka_unit_test(test_fits),
		cmocka_unit_test(test_need_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
