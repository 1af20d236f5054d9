/* Rails on the DGX fixture: GPU k leaves through mlx5_k; host ranks spread per NUMA node. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "topo/rail.h"
#include "topo/test_sysfs.h"

static void test_rails(void **state)
{
	struct topo *t = topo_load_fixture("dgx-h100");

	(void)state;
	for (int g = 0; g < 8; g++) {
		char want[8];

		snprintf(want, sizeof(want), "mlx5_%d", g);
		assert_string_equal(t->nics[topo_rail_nic(t, g, -1, 7 - g)].name, want);
	}
	/* host buffers: local ranks on node 1 take mlx5_4..7 in turn, unbound ranks all 8 */
	assert_string_equal(t->nics[topo_rail_nic(t, -1, 1, 0)].name, "mlx5_4");
	assert_string_equal(t->nics[topo_rail_nic(t, -1, 1, 5)].name, "mlx5_5");
	assert_string_equal(t->nics[topo_rail_nic(t, -1, -1, 9)].name, "mlx5_1");
	free(t);
	t = topo_load_fixture("ci-vm");
	assert_int_equal(topo_rail_nic(t, -1, 0, 0), -ENOENT);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
