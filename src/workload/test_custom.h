/*
 * Test-only: build the custom model of a layers string ("name:params[:gflops], ...")
 * into *tl, failing the test when it does not build. Include after <cmocka.h>.
 */
#ifndef GS_WORKLOAD_TEST_CUSTOM_H
#define GS_WORKLOAD_TEST_CUSTOM_H

#include <stdio.h>
#include <string.h>

#include "workload/model.h"

static inline void test_build_custom(const char *layers, struct tensor_list *tl)
{
	struct workload_opts w;

	memset(&w, 0, sizeof(w));
	snprintf(w.model, sizeof(w.model), "custom");
	snprintf(w.layers, sizeof(w.layers), "%s", layers);
	assert_int_equal(model_build(&w, tl), 0);
}

#endif
